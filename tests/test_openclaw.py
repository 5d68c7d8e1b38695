"""giok inside OpenClaw: adoption order (`giok init --openclaw`, detection), IDENTITY.md in
boot, skills/ and BOOTSTRAP.md out of search, and the TypeScript plugin
(integrations/openclaw/) against a stub host and the real openclaw package on Node 24."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_giok
from giok.lifecycle import boot
from giok.workspace import Workspace
from stand_in import Reply, StandIn, anthropic_message, anthropic_stream

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "integrations" / "openclaw"
TOOLS = REPO / ".tools"
NODE = next(
    (p for p in sorted((TOOLS / "node24" / "node_modules").glob("node-linux-*/bin/node"))),
    TOOLS / "node24" / "none",
)
OPENCLAW = TOOLS / "openclaw" / "node_modules" / "openclaw" / "openclaw.mjs"
OPENCLAW_OWNED = ("SOUL.md", "AGENTS.md", "USER.md", "TOOLS.md", "HEARTBEAT.md")


def commits(root: Path) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()


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
    own = {
        "AGENTS.md": "# AGENTS.md - Your Workspace\n\n## Every Session\n- Read SOUL.md\n",
        "IDENTITY.md": "# IDENTITY.md - Who Am I?\n\n- **Name:** Zeon\n- **Emoji:** 🦞\n",
        "BOOTSTRAP.md": "# BOOTSTRAP.md - Hello, World\n\nYou just woke up. Ask who you are.\n",
    }
    for rel, text in own.items():
        (root / rel).write_text(text)
    out = cli("init", root, "--name", "zeon", "--json")
    data = json.loads(out.output)
    assert data["openclaw"] is True
    assert not set(data["created"]) & set(OPENCLAW_OWNED)
    for rel, text in own.items():
        assert (root / rel).read_text() == text
    assert not (root / "SOUL.md").exists()
    assert not (root / "USER.md").exists()
    assert commits(root)[0] == "giok: init workspace zeon"
    # --no-openclaw is the way to get giok's templates anyway
    out = cli("init", root, "--name", "zeon", "--no-openclaw", "--json")
    assert "SOUL.md" in json.loads(out.output)["created"]
    assert (root / "AGENTS.md").read_text() == own["AGENTS.md"]


def test_init_detects_the_openclaw_default_workspace_folder_before_openclaw_ran(
    tmp_path, giok_home, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    root = tmp_path / "user" / ".openclaw" / "workspace-sion"
    _ws, created = Workspace.init(root, name="sion", home=giok_home)
    assert not set(created) & set(OPENCLAW_OWNED)
    assert "MEMORY.md" in created
    _other, created = Workspace.init(tmp_path / "plain", name="plain", home=giok_home)
    assert set(OPENCLAW_OWNED) <= set(created)


def test_identity_md_is_in_boot_and_skills_and_bootstrap_are_not_searched(ws, fake_embeddings):
    # fake embeddings: what is indexed is the question, not the ranking
    (ws.root / "IDENTITY.md").write_text(
        "# IDENTITY.md - Who Am I?\n\n- **Name:** Zeon\n- **Vibe:** calm lobster\n"
    )
    (ws.root / "BOOTSTRAP.md").write_text("# BOOTSTRAP.md\n\nAsk the human which lobster vibe they want.\n")
    (ws.root / "skills/lobster").mkdir(parents=True)
    (ws.root / "skills/lobster/SKILL.md").write_text("---\nname: lobster\n---\nHow to cook a lobster vibe.\n")
    (ws.root / "notes").mkdir()
    (ws.root / "notes/skills.md").write_text("Seojun's lobster vibe notes: keep it calm.\n")
    text = boot.build(ws).text
    assert "Identity (IDENTITY.md)" in text
    assert "calm lobster" in text
    paths = {r.path for r in ws.search("lobster vibe", k=10, mode="keyword")}
    assert "notes/skills.md" in paths
    assert "BOOTSTRAP.md" not in paths
    assert not any(p.startswith("skills/") for p in paths)


# -- the plugin ----------------------------------------------------------------------------------
needs_node = pytest.mark.skipif(
    not NODE.exists(), reason="Node 24 is not in .tools/ (run .ci/setup-openclaw.sh)"
)
needs_openclaw = pytest.mark.skipif(
    not (NODE.exists() and OPENCLAW.exists()), reason="openclaw is not in .tools/ (run .ci/setup-openclaw.sh)"
)


def node_env(ws, tmp_path) -> dict:
    giok = tmp_path / "bin" / "giok"
    giok.parent.mkdir(exist_ok=True)
    giok.write_text(f'#!/bin/sh\nexec {sys.executable} -m giok "$@"\n')
    giok.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{giok.parent}:{NODE.parent}:{os.environ['PATH']}",
        "GIOK_WORKSPACE": "zeon",
        "HOME": str(tmp_path / "userhome"),
        "GIOK_EMBEDDINGS": "fake",
    }


@needs_node
def test_plugin_against_a_stub_host(ws, tmp_path):
    """`npm test` in integrations/openclaw: the plugin's register(api) on a stub host, in a giok
    home of its own. memory_search/memory_get with OpenClaw's names and result shape, boot text
    as bootstrap context, token counts to the watchdog, cross-view messages as system events
    into the sibling's session; the caller's home (the user's, here this test's with two
    workspaces) gets no diary line, no commit and no message."""
    Workspace.init(tmp_path / "sion", name="sion", user="Seojun", home=ws.home)
    before = {name: commits(root) for name, root in (("zeon", ws.root), ("sion", tmp_path / "sion"))}
    env = {**node_env(ws, tmp_path), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    npm = shutil.which("npm", path=env["PATH"])
    out = subprocess.run(
        [npm, "test", "--silent"] if npm else [str(NODE), str(PLUGIN / "test" / "stub-host.ts")],
        cwd=PLUGIN,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["tools"] == ["memory_search", "memory_get"]
    search = report["search"]
    assert search["results"]
    assert {"path", "startLine", "endLine", "score", "snippet", "source"} <= set(search["results"][0])
    assert any(r["path"] == "MEMORY.md" and "Friday" in r["snippet"] for r in search["results"])
    assert report["get"] == {
        "path": "notes/launch.md",
        "text": "line two\nline three: Friday",
        "truncated": True,
        "nextFrom": 5,
    }
    assert report["getMissing"]["error"]
    assert report["getMissing"]["text"] == ""
    assert "The launch moved to Friday." in report["bootstrap"]
    assert report["bootFiles"] == 2  # OpenClaw's own files stay; giok's boot text is one more
    assert report["watch"] == {"tokens": 120000, "level": "soft"}
    watchdog, crossview = report["systemEvents"]
    assert watchdog["sessionKey"] == "agent:zeon:main"
    assert "giok flush --session s-1" in watchdog["text"]
    assert crossview == {
        "text": "[단톡방 크로스뷰] zeon: Please check the GPU budget.",
        "sessionKey": "agent:sion:main",
    }
    assert report["delivered"] == 1
    assert report["again"] == 0  # acked once OpenClaw took it
    after = {name: commits(root) for name, root in (("zeon", ws.root), ("sion", tmp_path / "sion"))}
    assert after == before  # the user's home untouched
    assert "Please check the GPU budget." not in Workspace.open("sion", home=ws.home).read_text(
        Workspace.open("sion", home=ws.home).diary_path()
    )
    assert not list((tmp_path / "tmp").glob("giok-openclaw-test-*"))  # its own home removed


@needs_openclaw
def test_plugin_typechecks_against_the_openclaw_plugin_sdk(tmp_path):
    """`tsc -p tsconfig.json` (the TypeScript openclaw ships) with the plugin's
    `OpenClawPluginApi` import resolved to the installed openclaw."""
    work = tmp_path / "plugin"
    shutil.copytree(PLUGIN, work)
    (work / "node_modules").symlink_to(OPENCLAW.parent.parent)
    tsc = OPENCLAW.parent.parent / "typescript" / "bin" / "tsc"
    out = subprocess.run(
        [str(NODE), str(tsc), "-p", "tsconfig.json"], cwd=work, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stdout + out.stderr


def openclaw_env(ws, tmp_path, config: dict) -> dict:
    """A fresh OpenClaw state folder whose openclaw.json loads the plugin from this tree."""
    env = node_env(ws, tmp_path)
    state = tmp_path / "openclaw-state"
    state.mkdir()
    (state / "openclaw.json").write_text(json.dumps(config))
    env.update(OPENCLAW_STATE_DIR=str(state), OPENCLAW_HOME=str(tmp_path / "userhome"))
    return env


def plugin_config(ws, **extra) -> dict:
    return {
        "plugins": {
            "load": {"paths": [str(PLUGIN)]},
            "allow": ["giok-memory"],
            "slots": {"memory": "giok-memory"},
            "entries": {
                "memory-core": {"enabled": False},
                "giok-memory": {
                    "enabled": True,
                    "hooks": {"allowConversationAccess": True},
                    "config": {"workspace": "zeon"},
                },
            },
        },
        "agents": {"defaults": {"workspace": str(ws.root)}},
        **extra,
    }


def openclaw(env, *args, timeout=900) -> subprocess.CompletedProcess:
    """One openclaw command; `timeout` is a hang guard (an `openclaw agent` turn took over 240 s
    beside two busy processes), not a measure."""
    return subprocess.run(
        [str(NODE), str(OPENCLAW), *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@needs_openclaw
def test_the_real_openclaw_loads_the_plugin(ws, tmp_path):
    """`openclaw plugins inspect giok-memory --runtime --json`: OpenClaw's own loader accepts
    the plugin as the memory slot with its tools, the bootstrap hook, llm_output and the service."""
    out = openclaw(
        openclaw_env(ws, tmp_path, plugin_config(ws)),
        "plugins",
        "inspect",
        "giok-memory",
        "--runtime",
        "--json",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    info = json.loads(out.stdout[out.stdout.index("{") :])
    assert info["plugin"]["status"] == "loaded"
    assert info["plugin"]["kind"] == "memory"
    assert [t["names"] for t in info["tools"]] == [["memory_search"], ["memory_get"]]
    assert info["customHooks"] == [{"name": "giok-boot", "events": ["agent:bootstrap"]}]
    assert info["typedHooks"] == [{"name": "llm_output"}]
    assert info["services"] == ["giok-crossview"]
    assert not [d for d in info["diagnostics"] if d["level"] in ("warn", "error")]


@needs_openclaw
def test_the_documented_install_needs_no_terminal(ws, tmp_path):
    """docs/integrations/openclaw.md's install block with the real openclaw, stdin from
    /dev/null and no controlling terminal (a script, CI, an agent's shell): nothing asks, and
    OpenClaw's loader then has giok-memory as the memory slot with the workspace."""
    [command] = [b for name, b in _doc_blocks().items() if name == "install.sh"]
    env = openclaw_env(ws, tmp_path, {})
    wrapper = tmp_path / "bin" / "openclaw"
    wrapper.write_text(f'#!/bin/sh\nexec "{NODE}" "{OPENCLAW}" "$@"\n')
    wrapper.chmod(0o755)
    out = subprocess.run(
        ["sh", "-c", command],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # no controlling terminal
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard: two openclaw commands on a busy machine
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "cancelled" not in out.stdout + out.stderr
    config = json.loads((Path(env["OPENCLAW_STATE_DIR"]) / "openclaw.json").read_text())
    assert config["plugins"]["slots"]["memory"] == "giok-memory"
    assert config["plugins"]["entries"]["memory-core"]["enabled"] is False
    assert config["plugins"]["entries"]["giok-memory"]["config"] == {
        "workspace": "zeon",
        "agents": {"main": "zeon"},
    }
    info = openclaw(env, "plugins", "inspect", "giok-memory", "--runtime", "--json", timeout=900)
    assert info.returncode == 0, info.stderr + info.stdout
    plugin = json.loads(info.stdout[info.stdout.index("{") :])["plugin"]
    assert (plugin["status"], plugin["kind"]) == ("loaded", "memory")


def _doc_blocks() -> dict[str, str]:
    text = (REPO / "docs" / "integrations" / "openclaw.md").read_text("utf-8")
    return dict(re.findall(r"<!-- giok-test: (\S+) -->\n```[\w-]*\n(.*?)\n```", text, re.S))


@needs_openclaw
def test_real_openclaw_setup_and_giok_init_in_either_order(tmp_path, giok_home):
    """`giok init --openclaw` then `openclaw setup --baseline --workspace DIR`: OpenClaw's
    templates are written, giok's files stay; `openclaw setup` first, then `giok init`: detected,
    none of OpenClaw's files touched. Either way boot carries SOUL.md and IDENTITY.md."""
    env = {
        **os.environ,
        "HOME": str(tmp_path / "userhome"),
        "OPENCLAW_STATE_DIR": str(tmp_path / "state"),
        "GIOK_EMBEDDINGS": "fake",
    }
    first = tmp_path / "giok-first"
    assert run_giok("init", first, "--name", "zeon", "--openclaw", env=env).returncode == 0
    memory = (first / "MEMORY.md").read_bytes()
    out = openclaw(env, "setup", "--baseline", "--workspace", str(first), timeout=900)
    assert out.returncode == 0, out.stderr + out.stdout
    assert {"SOUL.md", "AGENTS.md", "IDENTITY.md"} <= {p.name for p in first.iterdir()}
    assert (first / "MEMORY.md").read_bytes() == memory

    second = tmp_path / "openclaw-first"
    env["OPENCLAW_STATE_DIR"] = str(tmp_path / "state2")
    assert openclaw(env, "setup", "--baseline", "--workspace", str(second), timeout=900).returncode == 0
    theirs = {p.name: p.read_bytes() for p in second.iterdir() if p.is_file()}
    assert "IDENTITY.md" in theirs
    out = run_giok("init", second, "--name", "sion", "--json", env=env)
    assert json.loads(out.stdout)["openclaw"] is True
    assert all((second / name).read_bytes() == data for name, data in theirs.items())
    for name, _root in (("zeon", first), ("sion", second)):
        text = boot.build(Workspace.open(name, home=giok_home)).text
        assert "Who I am (SOUL.md)" in text, name
        assert "Identity (IDENTITY.md)" in text, name
        assert not [p for p in Workspace.open(name, home=giok_home).check() if p["severity"] == "error"]


def openclaw_messages_api() -> StandIn:
    """A streaming Messages API on 127.0.0.1 for OpenClaw's anthropic-messages provider: asked
    "When is the launch?" it calls memory_search (directly, or through OpenClaw's tool_call when
    the tools sit behind its compact tool-search surface); every other call gets text."""
    search = {"query": "launch Friday"}

    def answer(request: dict) -> Reply:
        body = request["body"]
        tools = [t.get("name") for t in body.get("tools", [])]
        text = json.dumps(body["messages"])
        asked = "When is the launch?" in text and "tool_result" not in text  # heartbeat turns get text
        if asked and "memory_search" in tools:
            content = [_tool_use(0, "memory_search", search)]
        elif asked and "tool_call" in tools:
            content = [_tool_use(0, "tool_call", {"id": "memory_search", "args": search})]
        else:
            content = [{"type": "text", "text": "The launch is on Friday."}]
        usage = {"input_tokens": 110000, "output_tokens": 1}
        return anthropic_stream(anthropic_message(content, usage=usage), output_tokens=20)

    return StandIn(answer)


def _tool_use(i: int, name: str, args: dict) -> dict:
    return {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@needs_openclaw
def test_a_real_openclaw_gateway_uses_giok(ws, tmp_path):
    """`openclaw gateway run` with the plugin and a local Messages API stand-in, then
    `openclaw agent --agent main --session-key agent:main:main -m "When is the launch?"`: the
    system prompt carries giok's boot text, the model's memory_search runs giok and its hit
    reaches the model, the watchdog gets OpenClaw's token counts; then a cross-view message sent
    to this agent reaches its live session as a system event in the next model call."""
    ws.remember("The launch moved to Friday.", layer="M90")
    Workspace.init(tmp_path / "sion", name="sion", user="Seojun", home=ws.home)
    api = openclaw_messages_api()
    model = {
        "id": "m1",
        "name": "m1",
        "reasoning": False,
        "input": ["text"],
        "contextWindow": 150000,
        "maxTokens": 1000,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    config = plugin_config(
        ws,
        models={
            "providers": {
                "stub": {
                    "baseUrl": api.url,
                    "apiKey": "test-key",
                    "api": "anthropic-messages",
                    "models": [model],
                }
            }
        },
    )
    config["agents"]["defaults"]["model"] = {"primary": "stub/m1"}
    config["plugins"]["entries"]["giok-memory"]["config"] = {
        "workspace": "zeon",
        "agents": {"main": "zeon"},
        "crossviewPollSeconds": 1,
    }
    port = free_port()
    env = openclaw_env(ws, tmp_path, config)
    env.update(OPENCLAW_GATEWAY_TOKEN="test-gateway-token", OPENCLAW_GATEWAY_PORT=str(port))
    log = open(tmp_path / "gateway.log", "w")  # noqa: SIM115 - the gateway's stdout; closed in finally
    gateway = subprocess.Popen(
        [
            str(NODE),
            str(OPENCLAW),
            "gateway",
            "run",
            "--port",
            str(port),
            "--auth",
            "token",
            "--bind",
            "loopback",
            "--allow-unconfigured",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def ready():
            log_text = (tmp_path / "gateway.log").read_text(errors="replace")
            return re.search(r"\[gateway\]\S*\s+\S*ready", log_text)

        wait_for(ready, 900)  # the log is coloured: [gateway]<esc>[39m <esc>[36mready
        out = openclaw(
            env,
            "agent",
            "--agent",
            "main",
            "--session-key",
            "agent:main:main",
            "--message",
            "When is the launch?",
            "--json",
        )
        assert out.returncode == 0, out.stderr[-3000:] + out.stdout[-3000:]
        assert "The launch is on Friday." in out.stdout
        sent = run_giok("crossview", "send", "Please check the GPU budget.", "-w", "sion", env=env)
        assert sent.returncode == 0, sent.stderr
        wait_for(
            lambda: any(
                "sion: Please check the GPU budget." in json.dumps(r["messages"], ensure_ascii=False)
                for r in api.bodies()
            ),
            900,
        )
        # the llm_output hook's `giok watch` runs beside the reply: on a busy machine it may not
        # have written yet, and stopping the gateway's process group would stop it
        wait_for(lambda: _watched(ws.root / ".giok" / "watchdog.json"), 900)
    finally:
        os.killpg(gateway.pid, 15)
        gateway.wait(300)
        log.close()
        api.close()
    first = next(r for r in api.bodies() if "When is the launch?" in json.dumps(r["messages"]))
    system = json.dumps(first["system"], ensure_ascii=False)
    assert "GIOK_BOOT.md" in system
    assert "# Boot context: zeon" in system
    results = [
        c
        for r in api.bodies()
        for m in r["messages"]
        if isinstance(m["content"], list)
        for c in m["content"]
        if c.get("type") == "tool_result"
    ]
    assert results
    assert "giok-memory:memory_search" in json.dumps(results)
    assert "The launch moved to Friday." in json.dumps(results)
    assert "MEMORY.md" in json.dumps(results)
    event = next(
        r
        for r in api.bodies()
        if "sion: Please check the GPU budget." in json.dumps(r["messages"], ensure_ascii=False)
    )
    assert "System: [" in json.dumps(event["messages"], ensure_ascii=False)  # OpenClaw's system-event line
    inbox = json.loads(run_giok("crossview", "inbox", "-w", "zeon", "--json", env=env).stdout)["messages"]
    assert [m["acked"] is not None for m in inbox] == [True]
    watch = json.loads((ws.root / ".giok" / "watchdog.json").read_text())
    assert {s["window"] for s in watch["sessions"].values()} == {150000}
    assert all(110000 <= s["used"] < 150000 for s in watch["sessions"].values())  # the last call, not the sum


def _watched(path) -> bool:
    """Has the watchdog written a session's state?"""
    try:
        return bool(json.loads(path.read_text()).get("sessions"))
    except (OSError, ValueError):
        return False


def wait_for(check, timeout: float) -> None:
    import time

    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.5)
