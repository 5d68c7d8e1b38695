"""giok inside Claude Code: the plugin in integrations/claude-code/ and the hooks it runs.

The first tests run `giok hook EVENT` (and `giok boot --format claude-hook`) as Claude Code
does: the hook's JSON on stdin, a subprocess, stdout parsed. The last ones drive the real
Claude Code CLI (`claude`, from .tools/, see .ci/setup-node-tools.sh) with the plugin installed
in a temporary config dir, against a local stand-in for the Anthropic Messages API on
127.0.0.1 (streaming SSE, as the CLI asks for); nothing reaches the internet."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_giok
from giok.edges.mcp import TOOLS
from giok.text import token_count as tokens
from stand_in import Reply, StandIn, anthropic_message, anthropic_stream

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "integrations" / "claude-code"
CLAUDE = ROOT / ".tools" / "node_modules" / ".bin" / "claude"
needs_claude = pytest.mark.skipif(
    not CLAUDE.exists(),
    reason="the Claude Code CLI is not installed in .tools/ "
    "(run .ci/setup-node-tools.sh; it needs node >= 18 and the npm registry)",
)


def hook(event: str, data: dict | None, *args, env=None) -> subprocess.CompletedProcess:
    payload = {"session_id": "5e55a0b1-aaaa-bbbb-cccc-000000000001", "hook_event_name": event, **(data or {})}
    return run_giok(
        "-w", "zeon", "hook", event, *args, input=json.dumps(payload), env={**FAST, **(env or {})}
    )


FAST = {"GIOK_EMBEDDINGS": "fake"}  # keyword evidence decides; no model to load in every hook process


def answer(out: subprocess.CompletedProcess) -> dict:
    assert out.returncode == 0, out.stderr
    assert out.stdout, out.stderr
    return json.loads(out.stdout)["hookSpecificOutput"]


def transcript(path: Path, *turns: tuple[str, str]) -> Path:
    rows = []
    for asked, said in turns:
        rows.append({"type": "user", "message": {"role": "user", "content": asked}})
        rows.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": said}]},
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- the hooks, as Claude Code runs them ------------------------------------------------------
def test_each_event_is_answered_with_its_own_name(ws):
    ws.remember("Seojun wants the result first, then the reasons.", layer="M0")
    start = answer(hook("SessionStart", {"source": "startup"}))
    assert start["hookEventName"] == "SessionStart"
    assert "result first, then the reasons" in start["additionalContext"]
    prompt = answer(
        hook("UserPromptSubmit", {"prompt": "What did Seojun tell us about the result and the reasons?"})
    )
    assert prompt["hookEventName"] == "UserPromptSubmit"
    assert "result first" in prompt["additionalContext"]
    # the older recipe, `giok boot --format claude-hook`, answers the event its input names
    for event in ("SessionStart", "UserPromptSubmit"):
        out = run_giok(
            "-w",
            "zeon",
            "boot",
            "--format",
            "claude-hook",
            input=json.dumps({"hook_event_name": event}),
            env=FAST,
        )
        assert answer(out)["hookEventName"] == event
    stop = run_giok(
        "-w", "zeon", "boot", "--format", "claude-hook", input=json.dumps({"hook_event_name": "Stop"})
    )
    assert stop.returncode == 0
    assert stop.stdout == ""
    assert "takes no context" in stop.stderr


def test_prompt_recall_brings_only_what_the_prompt_needs(ws):
    ws.remember("The staging server for the QRT pipeline runs on port 8443.", layer="M90")
    for i in range(30):
        ws.remember(
            f"The QRT pipeline staging checklist item {i}: verify port 8443 shard {i} before the release.",
            layer="M30",
        )
    for prompt in ("hi!", "What is the capital of France?", "Write a haiku about autumn leaves."):
        out = hook("UserPromptSubmit", {"prompt": prompt})
        assert out.returncode == 0, (prompt, out.stdout)
        assert out.stdout == "", (prompt, out.stdout)
    unrelated = hook("UserPromptSubmit", {"prompt": "Did we decide where the wedding photographer parks?"})
    assert unrelated.returncode == 0, unrelated.stdout
    assert unrelated.stdout == "", unrelated.stdout
    found = answer(hook("UserPromptSubmit", {"prompt": "Which port does our QRT staging server use?"}))[
        "additionalContext"
    ]
    assert "8443" in found
    assert tokens.count(found) <= 300
    assert found.count("\n- ") <= 3


def test_precompact_never_blocks_the_compaction(ws, tmp_path):
    cases = {
        "missing transcript": {"transcript_path": str(tmp_path / "gone.jsonl")},
        "no transcript named": {},
        "empty transcript": {"transcript_path": str(transcript(tmp_path / "empty.jsonl"))},
    }
    for why, data in cases.items():
        out = hook("PreCompact", {"trigger": "auto", **data})
        assert out.returncode == 0, why
        assert out.stdout == "", why
        assert out.stderr.startswith("giok hook PreCompact: "), (why, out.stderr)
    nowhere = hook(
        "PreCompact",
        {"transcript_path": str(tmp_path / "gone.jsonl")},
        env={"GIOK_HOME": str(tmp_path / "none")},
    )
    assert nowhere.returncode == 0
    assert "giok hook PreCompact" in nowhere.stderr
    not_json = run_giok("-w", "zeon", "hook", "PreCompact", input="{not json")
    assert not_json.returncode == 0
    assert not_json.stdout == ""
    assert not_json.stderr.startswith("giok hook PreCompact: ")

    good = transcript(
        tmp_path / "s.jsonl",
        ("Which index should the memory use?", "We decided to use SQLite with FTS5 for the memory index."),
    )
    out = hook("PreCompact", {"trigger": "manual", "transcript_path": str(good)})
    assert out.returncode == 0
    assert out.stdout == ""
    assert "flushed" in out.stderr
    assert "SQLite with FTS5" in ws.read_text("MEMORY.md")  # a decision's one home
    assert "context-flush: hard" in ws.read_text(ws.diary_path())


def test_stop_writes_one_short_diary_line_per_turn(ws, tmp_path):
    path = transcript(
        tmp_path / "t.jsonl", ("Please rename the launch checklist to release checklist " * 8, "Done.")
    )
    out = hook(
        "Stop",
        {
            "transcript_path": str(path),
            "stop_hook_active": False,
            "last_assistant_message": "Renamed it; the old name is gone everywhere.",
        },
    )
    assert out.returncode == 0
    assert out.stdout == ""
    diary = ws.read_text(ws.diary_path())
    [line] = [l for l in diary.splitlines() if "Claude Code 5e55a0b1:" in l]
    assert "asked Please rename the launch checklist" in line
    assert "→ Renamed it" in line
    assert len(line) < 400
    again = hook("Stop", {"transcript_path": str(path), "stop_hook_active": True})
    assert again.returncode == 0
    assert ws.read_text(ws.diary_path()) == diary  # Claude continuing: no second line
    # this session's own lines are in its context already: its next prompt does not recall them
    out = hook("UserPromptSubmit", {"prompt": "Did we rename the launch checklist?"})
    assert "Claude Code 5e55a0b1" not in out.stdout


def test_unknown_event_and_missing_workspace_exit_zero(tmp_path):
    out = run_giok("hook", "Notification", input=json.dumps({"hook_event_name": "Notification"}))
    assert out.returncode == 0
    assert out.stdout == ""
    assert "nothing to do" in out.stderr
    out = run_giok("-w", "nobody", "hook", "SessionStart", input="{}", env={"GIOK_HOME": str(tmp_path / "h")})
    assert out.returncode == 0
    assert json.loads(out.stdout)["systemMessage"].startswith(
        "giok SessionStart failed: "
    )  # the user sees it
    assert out.stderr.startswith("giok hook SessionStart: ")


# -- the plugin's files ---------------------------------------------------------------------
def test_plugin_wires_every_event_and_the_mcp_server():
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "giok"
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop"}
    for event, groups in hooks.items():
        [group] = groups
        assert [h["command"] for h in group["hooks"]] == [f"giok hook {event}"]
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["giok"]
    assert server["command"] == "giok"
    assert server["args"] == ["mcp"]
    skill = (PLUGIN / "skills" / "giok" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: giok\ndescription: ")
    named = set(re.findall(r"`((?:memory|crossview)_\w+)`", skill))
    assert {"memory_recall", "memory_remember", "memory_decide"} <= named <= set(TOOLS)


# -- the real Claude Code -------------------------------------------------------------------
def _answer(request: dict, ids: Iterator[int]) -> Reply | dict:
    """POST /v1/messages: the script's answer, streamed as server-sent events when asked."""
    not_found = Reply(
        {"type": "error", "error": {"type": "not_found_error", "message": request["path"]}}, 404
    )
    if request["method"] != "POST":
        return not_found
    if "count_tokens" in request["path"]:
        return {"input_tokens": 100}
    if request["path"].split("?")[0] != "/v1/messages":
        return not_found
    body = request["body"] or {}
    usage = {
        "input_tokens": 100,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    reply = anthropic_message(_script(body), id=f"msg_{next(ids)}", model=body.get("model"), usage=usage)
    if not body.get("stream"):
        return reply
    done = anthropic_stream(reply, output_tokens=5)
    done.headers["connection"] = "close"
    return done


GIOK_TOOL = "mcp__plugin_giok_giok__"


def _script(body: dict) -> list[dict]:
    """The model's part: on the session's first turn it calls a read tool and a write tool of
    giok's; otherwise it answers in one line (a summary when asked to compact)."""
    messages = body.get("messages") or []
    tools = {t.get("name") for t in body.get("tools") or []}
    if len(messages) == 1 and f"{GIOK_TOOL}memory_task_list" in tools:
        return [
            {"type": "tool_use", "id": "toolu_read", "name": f"{GIOK_TOOL}memory_task_list", "input": {}},
            {
                "type": "tool_use",
                "id": "toolu_write",
                "name": f"{GIOK_TOOL}memory_state",
                "input": {"section": "phase", "text": "testing the plugin"},
            },
        ]
    if "summary" in json.dumps(messages[-1:]).lower():
        return [{"type": "text", "text": "<summary>We talked about tea.</summary>"}]
    return [{"type": "text", "text": "Noted."}]


def _tool_results(requests: list[dict]) -> dict[str, dict]:
    found = {}
    for body in requests:
        for message in body.get("messages") or []:
            for block in message["content"] if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


@pytest.fixture
def messages_api():
    ids = itertools.count(1)
    with StandIn(lambda request: _answer(request, ids), protocol="HTTP/1.1") as api:
        yield api


def _claude_env(tmp_path: Path, api, ws) -> dict:
    home = tmp_path / "user"
    home.mkdir(exist_ok=True)
    bin_dir = Path(sys.executable).parent  # where the `giok` entry point is
    keep = {
        k: os.environ[k]
        for k in ("GIOK_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "PYTHONPATH")
        if k in os.environ
    }
    return {
        **keep,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "GIOK_WORKSPACE": ws.name,
        "GIOK_EMBEDDINGS": "fake",
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "MCP_TIMEOUT": "600000",  # a hang guard for the server's start on a busy machine (default 30 s)
        "NO_PROXY": "127.0.0.1",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }


def _claude(args, env, cwd, input=None, timeout=600):
    return subprocess.run(
        [str(CLAUDE), *args], env=env, cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout
    )


@needs_claude
def test_plugin_passes_claude_plugin_validate(tmp_path):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
    }
    for target in (PLUGIN / ".claude-plugin" / "plugin.json", PLUGIN / ".claude-plugin" / "marketplace.json"):
        out = _claude(["plugin", "validate", "--strict", str(target)], env, tmp_path, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "Validation passed" in out.stdout, out.stdout + out.stderr


def _install(env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """The documented install (docs/integrations/claude-code.md's `install` block), with the
    real `claude` first on PATH: the plugin, auto-memory off, the read-only tools allowed."""
    [command] = [b for name, b in _doc_blocks().items() if name == "install"]
    return subprocess.run(
        ["sh", "-c", command],
        env={**env, "PATH": f"{CLAUDE.parent}{os.pathsep}{env['PATH']}"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard: two `claude plugin` commands on a busy machine
    )


def _doc_blocks() -> dict[str, str]:
    text = (ROOT / "docs" / "integrations" / "claude-code.md").read_text("utf-8")
    return dict(re.findall(r"<!-- giok-test: (\S+) -->\n```[\w-]*\n(.*?)\n```", text, re.S))


def _wait_for_giok_tools(proc: subprocess.Popen) -> None:
    """Ask Claude Code (stream-json control requests) for its MCP servers' status until giok's
    is connected: the first prompt then goes out with giok's tools however slowly the server
    started. Fails when the server ends in another state than pending."""
    for n in itertools.count():
        request = {"type": "control_request", "request_id": f"mcp-{n}", "request": {"subtype": "mcp_status"}}
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            event = json.loads(line)
            if event.get("type") == "control_response":
                break
        else:
            raise AssertionError("Claude Code ended before it said how its MCP servers are")
        servers = event["response"]["response"]["mcpServers"]
        [giok] = [s for s in servers if s["name"] == "plugin:giok:giok"]
        if giok["status"] == "connected":
            return
        assert giok["status"] == "pending", giok
        threading.Event().wait(0.2)  # between two questions; what is waited on is the status


@needs_claude
def test_claude_code_with_the_plugin_installed(ws, tmp_path, messages_api):
    """The documented install, then `claude -p` in stream-json mode: four turns and a /compact."""
    ws.remember("Seojun drinks oolong tea every afternoon.", layer="M90")
    env = _claude_env(tmp_path, messages_api, ws)
    project = tmp_path / "project"
    project.mkdir()  # no settings of its own: what the install did is all there is
    out = _install(env, project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Successfully installed plugin: giok@giok" in out.stdout, out.stdout + out.stderr
    settings = json.loads((Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    assert settings["autoMemoryEnabled"] is False
    assert settings["enabledPlugins"] == {"giok@giok": True}

    prompts = ["What tea do I drink in the afternoon?", "Thanks.", "And in the morning?", "Good.", "/compact"]
    # --no-session-persistence: Claude Code writes no transcript, so PreCompact gets a path to nothing
    proc = subprocess.Popen(
        [
            str(CLAUDE),
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--no-session-persistence",
            "--model",
            "claude-sonnet-4-5",
            "--debug-file",
            str(tmp_path / "debug.log"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=project,
        text=True,
    )
    results, init = [], None
    timer = threading.Timer(900, proc.kill)  # a hang guard, not a measure: nothing below waits on a clock
    timer.start()
    try:
        _wait_for_giok_tools(proc)
        for prompt in prompts:
            proc.stdin.write(
                json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n"
            )
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                if event.get("type") == "system" and event.get("subtype") == "init":
                    init = event
                if event.get("type") == "result":
                    results.append(event)
                    break
        proc.stdin.close()
        proc.wait(600)
    finally:
        timer.cancel()
    debug = (tmp_path / "debug.log").read_text(errors="replace")
    assert len(results) == len(prompts), proc.stderr.read()[-2000:]
    assert all(not r["is_error"] for r in results), results
    assert init
    assert {"name": "plugin:giok:giok", "status": "connected"} in init["mcp_servers"]

    first = messages_api.bodies("/v1/messages")[0]
    said = json.dumps(first["messages"])
    assert "SessionStart hook additional context: # Boot context: zeon" in said  # boot text
    assert "Seojun drinks oolong tea every afternoon" in said
    assert "UserPromptSubmit hook additional context: giok memory" in said  # the prompt's recall
    tools = {t["name"] for t in first.get("tools", [])}  # giok's tools on the first turn
    assert {f"mcp__plugin_giok_giok__{name}" for name in TOOLS} <= tools
    assert "# auto memory" not in json.dumps(
        first.get("system")
    )  # the install turned Claude's own memory off
    used = _tool_results(messages_api.bodies("/v1/messages"))  # the first turn's calls reached giok's server
    assert json.loads(used["toolu_read"]["content"]) == {"tasks": []}
    assert used["toolu_write"].get("is_error")
    assert "permission" in json.dumps(used["toolu_write"])  # writes ask
    assert [d["tool_name"] for d in results[0]["permission_denials"]] == [f"{GIOK_TOOL}memory_state"]

    assert "PreCompact:manual [giok hook PreCompact] completed with status 0" in debug
    assert "source=compact" in debug
    assert "Compaction blocked" not in debug  # compacted, after a giok error
    assert "compact" in results[-1]["result"].lower() or results[-1]["subtype"] == "success"
    diary = ws.read_text(ws.diary_path())
    assert "asked What tea do I drink in the afternoon?" in diary  # Stop's diary line
    assert "Hook returned incorrect event name" not in debug
    shutil.rmtree(tmp_path / "user", ignore_errors=True)


# -- what the user sees: a failing hook, a resumed session, giok doctor --------------------------
def _no_identity(ws, tmp_path) -> dict:
    """A workspace whose commits took their git identity from the global config of the HOME it
    was made in, run where HOME (and so ~/.gitconfig) is another: every commit fails."""
    subprocess.run(["git", "-C", str(ws.root), "config", "--unset", "user.name"], check=True)
    subprocess.run(["git", "-C", str(ws.root), "config", "--unset", "user.email"], check=True)
    (tmp_path / "empty-gitconfig").write_text("")
    return {"GIT_CONFIG_GLOBAL": str(tmp_path / "empty-gitconfig")}


def test_a_failing_hook_says_why_in_one_line_the_user_sees(ws, tmp_path):
    out = hook("Stop", {"last_assistant_message": "Renamed it."}, env=_no_identity(ws, tmp_path))
    assert out.returncode == 0  # never blocks
    shown = json.loads(out.stdout)["systemMessage"]
    assert shown.startswith("giok Stop failed: no git identity in ")
    assert "\n" not in shown
    assert "giok hook Stop: no git identity" in out.stderr  # the debug log keeps it too
    compact = hook("PreCompact", {"transcript_path": str(tmp_path / "gone.jsonl")})
    assert compact.stdout == ""  # PreCompact's stdout would become the summary's instructions


def test_a_resumed_session_gets_a_short_note_not_the_boot_again(ws):
    ws.remember("Seojun wants the result first, then the reasons.", layer="M0")
    start = answer(hook("SessionStart", {"source": "startup"}))["additionalContext"]
    resumed = answer(hook("SessionStart", {"source": "resume"}))
    assert resumed["hookEventName"] == "SessionStart"
    note = resumed["additionalContext"]
    assert "resumed" in note
    assert "workspace zeon" in note
    assert "result first" not in note
    assert len(note) < len(start) / 3
    for source in ("clear", "compact"):  # the context is gone: the whole boot again
        assert "result first" in answer(hook("SessionStart", {"source": source}))["additionalContext"]


def _plain_env(tmp_path: Path) -> dict:
    home = tmp_path / "user"
    home.mkdir(exist_ok=True)
    return {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "GIOK_HOME": os.environ["GIOK_HOME"],
        "GIT_CONFIG_GLOBAL": os.environ["GIT_CONFIG_GLOBAL"],
        "GIT_CONFIG_NOSYSTEM": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


@needs_claude
def test_doctor_sees_the_installed_plugin_and_hooks_added_twice(ws, tmp_path):
    env = _plain_env(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    out = _install(env, project)
    assert out.returncode == 0, out.stdout + out.stderr

    def hooks_findings():
        done = run_giok("-w", "zeon", "doctor", "--json", cwd=project, env=env)
        return [f for f in json.loads(done.stdout)["findings"] if f["check"] == "hooks"]

    assert hooks_findings() == []  # the plugin runs the hooks: nothing to add by hand
    by_hand = _doc_blocks()["settings.json"].replace("-w zeon", "")  # the "Without the plugin" hooks
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(by_hand)
    [twice] = hooks_findings()
    assert twice["severity"] == "warning"
    assert "giok@giok" in twice["message"]
    assert "twice" in twice["message"]
    assert "remove giok's hooks" in twice["fix"]


@needs_claude
def test_claude_code_resumed_session_has_the_boot_once(ws, tmp_path, messages_api):
    """`claude -p` with the plugin, then `claude -p --resume` of that session: the resumed
    session's request holds the boot context once (the first session's) and the resume note."""
    ws.remember("Seojun drinks oolong tea every afternoon.", layer="M90")
    env = _claude_env(tmp_path, messages_api, ws)
    project = tmp_path / "project"
    project.mkdir()
    assert _install(env, project).returncode == 0
    args = ["-p", "--output-format", "json", "--model", "claude-sonnet-4-5", "--strict-mcp-config"]
    first = _claude([*args, "Good morning, who are you?"], env, project)
    assert first.returncode == 0, first.stdout + first.stderr
    session = json.loads(first.stdout)["session_id"]
    again = _claude([*args, "--resume", session, "What did I ask before?"], env, project)
    assert again.returncode == 0, again.stdout + again.stderr
    resumed = json.dumps(messages_api.bodies("/v1/messages")[-1]["messages"])
    assert resumed.count("# Boot context: zeon") == 1
    assert "this session was resumed" in resumed


@needs_claude
def test_a_failing_stop_hook_shows_on_the_interactive_screen(ws, tmp_path, messages_api):
    """The interactive `claude` in a pseudo-terminal, the plugin installed, a workspace that
    cannot commit: after the turn the user sees why giok wrote no diary line."""
    import pty
    import select

    env = {**_claude_env(tmp_path, messages_api, ws), **_no_identity(ws, tmp_path), "TERM": "xterm-256color"}
    project = tmp_path / "project"
    project.mkdir()
    assert _install(env, project).returncode == 0
    state = Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json"  # first-run dialogs already answered
    state.write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]], "rejected": []},
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        )
    )
    pid, fd = pty.fork()
    if pid == 0:  # the child: Claude Code on the terminal
        os.chdir(project)
        debug = ["--debug-file", str(tmp_path / "debug.log")]
        os.execve(str(CLAUDE), [str(CLAUDE), "--model", "claude-sonnet-4-5", *debug], env)
    screen, typed, hook_done = b"", False, None
    timer = threading.Timer(600, lambda: os.kill(pid, 9))  # a hang guard
    timer.start()
    try:
        while hook_done is None or time.monotonic() < hook_done + 120:  # drawn long after the hook: never
            if hook_done is None and "Hook Stop (Stop) success" in _read(tmp_path / "debug.log"):
                hook_done = time.monotonic()
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                try:
                    screen += os.read(fd, 65536)
                except OSError:
                    break  # the terminal closed: Claude Code ended
            text = re.sub(r"\s|\x1b\[[0-9;?]*[a-zA-Z]", "", screen.decode(errors="replace"))
            if not typed and "forshortcuts" in text:  # the prompt is ready
                os.write(fd, b"Please rename the checklist.")
                threading.Event().wait(0.3)  # a terminal's pace: the app reads the text before Enter
                os.write(fd, b"\r")
                typed = True
            if "Stopsays:giokStopfailed:nogitidentity" in text:
                break
    finally:
        timer.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
    assert typed, text[-2000:]
    assert "Stopsays:giokStopfailed:nogitidentity" in text, text[-2000:]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
