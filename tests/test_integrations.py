"""The integration recipes in docs/integrations/ work as written: each block marked
`<!-- giok-test: NAME -->` is extracted and run (Claude Code's .mcp.json, hooks and CLAUDE.md,
the OpenClaw adoption, the plain Python loop)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from giok import Home, Workspace
from giok.edges.mcp import TOOLS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "integrations"
BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"<!-- giok-test: (\S+) -->\n```[\w-]*\n(.*?)\n```", re.S)


def blocks(name: str) -> dict[str, str]:
    return dict(_BLOCK.findall((DOCS / name).read_text("utf-8")))


def env(**extra) -> dict:
    """The environment a user's shell would have: giok on PATH, the test's home."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


def sh(command: str, cwd: Path, input: str = "", **extra) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", "-c", command],
        cwd=cwd,
        env=env(**extra),
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_marked_block_exists():
    assert set(blocks("claude-code.md")) == {"install", ".mcp.json", "settings.json", "CLAUDE.md"}
    assert set(blocks("openclaw.md")) == {"adopt.sh", "install.sh"}
    assert set(blocks("python-loop.md")) == {"examples/agent_loop.py", "agent_loop.out"}


def test_mcp_json_starts_the_server(ws):
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    entry = json.loads(blocks("claude-code.md")[".mcp.json"])["mcpServers"]["giok"]
    assert entry["type"] == "stdio"
    command = shutil.which(entry["command"], path=str(BIN))
    assert command, "the giok entry point is not installed next to this Python"
    keep = {
        k: os.environ[k]
        for k in ("GIOK_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "PYTHONPATH")
        if k in os.environ
    }  # PYTHONPATH: the SDK's minimal environment would run another tree's giok
    params = StdioServerParameters(command=command, args=entry["args"], env=keep, cwd=str(ws.root.parent))

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            soul = await s.call_tool("memory_get", {"path": "SOUL.md"})
            return names, soul

    names, soul = anyio.run(session)
    assert names == set(TOOLS)
    assert not soul.is_error
    assert soul.structured_content["text"] == ws.read_text("SOUL.md").rstrip("\n")


def test_session_start_hook_injects_the_boot_context(ws, tmp_path):
    ws.remember("Seojun wants the result first, then the reasons.", layer="M0")
    hooks = json.loads(blocks("claude-code.md")["settings.json"])["hooks"]
    [group] = hooks["SessionStart"]
    assert set(group["matcher"].split("|")) == {"startup", "resume", "clear", "compact"}
    [hook] = group["hooks"]
    out = sh(
        hook["command"], tmp_path, input=json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)["hookSpecificOutput"]
    assert payload["hookEventName"] == "SessionStart"
    assert "result first, then the reasons" in payload["additionalContext"]


def _transcript(path: Path) -> None:
    rows = [
        {"type": "user", "message": {"role": "user", "content": "Which index should the memory use?"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "We decided to use SQLite with FTS5 for the memory index."},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
                ],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Next step: write the migration script tomorrow."}],
            },
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_precompact_hook_flushes_the_transcript_once(ws, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    transcript = tmp_path / "session.jsonl"
    _transcript(transcript)
    [group] = json.loads(blocks("claude-code.md")["settings.json"])["hooks"]["PreCompact"]
    command = group["hooks"][0]["command"]
    hook = json.dumps(
        {
            "session_id": "abc123",
            "transcript_path": str(transcript),
            "hook_event_name": "PreCompact",
            "trigger": "auto",
            "custom_instructions": "",
        }
    )
    out = sh(command, project, input=hook, CLAUDE_PROJECT_DIR=str(project))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""  # nothing is injected into the conversation
    diary = ws.read_text(ws.diary_path())
    assert "context-flush" in diary  # a pointer: the decision itself is kept once, in MEMORY.md
    assert "SQLite with FTS5" not in diary
    assert "SQLite with FTS5" in ws.read_text("MEMORY.md")
    commits = len(ws.log(100))
    again = sh(command, project, input=hook, CLAUDE_PROJECT_DIR=str(project))
    assert again.returncode == 0, again.stderr
    assert ws.read_text(ws.diary_path()) == diary
    assert len(ws.log(100)) == commits  # once per compaction


def test_claude_md_names_only_real_tools():
    text = blocks("claude-code.md")["CLAUDE.md"]
    named = set(re.findall(r"`((?:memory|crossview)_\w+)`", text))
    assert named
    assert named <= set(TOOLS)
    assert {"memory_recall", "memory_remember"} <= named


def test_python_loop_is_the_example_and_runs(tmp_path):
    doc = blocks("python-loop.md")
    example = ROOT / "examples" / "agent_loop.py"
    assert doc["examples/agent_loop.py"] == example.read_text("utf-8").rstrip("\n")
    code_lines = [l for l in example.read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]
    assert len(code_lines) <= 35
    out = subprocess.run(
        [sys.executable, str(example)],
        cwd=tmp_path,
        env=env(GIOK_EMBEDDINGS="fake"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr

    def parse(text):  # "decision answer level | message"
        return [(line.split(" | ")[0].split(), line.split(" | ")[1]) for line in text.splitlines()]

    got, want = parse(out.stdout), parse(doc["agent_loop.out"])
    assert [(g[0][0], g[0][-1], g[1]) for g in got] == [
        (w[0][0], w[0][-1], w[1]) for w in want
    ]  # decision, level
    assert got[1][0][1] == "found"
    assert got[2][0][1:3] == [
        "not",
        "needed",
    ]  # the first answer depends on the embedder
    [name] = Home().workspaces()
    ws = Workspace.open(name)
    assert "ship the memory essay on Friday" in ws.read_text("MEMORY.md")
    diary = ws.read_text(ws.diary_path())
    assert "context-flush: soft, session loop-demo" in diary
    assert "2 decisions in MEMORY.md" in diary  # a pointer, not a second copy of the text


def _openclaw_workspace(home: Path) -> Path:
    root = home / ".openclaw" / "workspace"
    (root / "memory").mkdir(parents=True)
    files = {
        "AGENTS.md": (
            "# AGENTS.md\n\n## Session start\n- Read SOUL.md, USER.md, today and yesterday in memory/.\n"
        ),
        "SOUL.md": "# SOUL.md\n\nI am Zeon. Calm, precise, brief.\n",
        "USER.md": "# USER.md\n\n- Name: Seojun\n- Timezone: Asia/Seoul\n",
        "IDENTITY.md": "# IDENTITY.md\n\n- Name: Zeon\n- Emoji: 🦞\n",
        "MEMORY.md": "# MEMORY.md\n\n- Seojun drinks oolong tea, never coffee after noon.\n"
        "- The QRT pipeline posts at 0, 8 and 16 o'clock.\n",
        "memory/2026-03-01.md": "# 2026-03-01\n\n- Set up the Telegram group with four agents.\n",
    }
    for rel, text in files.items():
        (root / rel).write_text(text, "utf-8")
    return root


def test_openclaw_workspace_is_adopted_in_place(tmp_path, giok_home):
    fake_home = tmp_path / "user"
    root = _openclaw_workspace(fake_home)
    before = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    out = sh(blocks("openclaw.md")["adopt.sh"], tmp_path, HOME=str(fake_home), GIOK_EMBEDDINGS="fake")
    assert out.returncode == 0, out.stdout + out.stderr
    after = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git/" not in p.relative_to(root).as_posix() + "/"
    }
    assert all(after[rel] == data for rel, data in before.items())  # nothing of OpenClaw's was touched
    assert not any(rel.startswith("memory/") and rel not in before for rel in after)  # no template diary
    assert (root / ".git").is_dir()
    assert Home().workspaces()["zeon"]["path"] == str(root.resolve())
    assert "oolong tea" in out.stdout  # `giok show` reads the hand-written MEMORY.md
    ws = Workspace.open("zeon")
    result = ws.remember("Seojun moved the QRT slot to 9 o'clock.", layer="M90")
    assert result.entry.id in ws.read_text("MEMORY.md")
    assert "oolong tea" in ws.read_text("MEMORY.md")
    found = sh(
        "giok -w zeon search 'oolong tea' --mode keyword --json",
        tmp_path,
        HOME=str(fake_home),
        GIOK_EMBEDDINGS="fake",
    )
    assert found.returncode == 0, found.stderr
    assert any("oolong" in r["text"] for r in json.loads(found.stdout)["results"])


def test_reference_docs_cover_every_tool_and_command():
    mcp_doc = (ROOT / "docs" / "mcp.md").read_text("utf-8")
    assert all(f"`{name}(" in mcp_doc for name in TOOLS), [n for n in TOOLS if f"`{n}(" not in mcp_doc]
    crossview_doc = (ROOT / "docs" / "crossview.md").read_text("utf-8")
    for command in ("crossview send", "crossview inbox", "crossview ack"):
        assert command in crossview_doc
    from giok.edges.cli import main

    for name in ("send", "inbox", "ack"):  # get_command: command modules load on demand
        assert main.get_command(None, "crossview").commands[name].help
    assert main.get_command(None, "mcp").help
