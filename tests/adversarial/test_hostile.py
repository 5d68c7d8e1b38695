"""Hostile input at the edges, through real processes: `giok search --batch` fed bad bytes and
too much of it, the MCP server fed raw JSON-RPC garbage over stdio, and paths that try to leave
the workspace (MCP memory_get, the memory tool, CLI arguments). Each gets one clear error, the
process keeps serving, and nothing outside the workspace is read."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from conftest import run_giok
from giok.edges.memory_tool import MemoryTool

OUTSIDE = "outside-secret-7f3a tangerine"


@pytest.fixture
def filled(ws, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    ws.remember("Seojun drinks dark roast coffee every morning", layer="M90")
    (ws.root.parent / "outside.md").write_text(OUTSIDE + "\n")
    return ws


def _batch(data: bytes, *extra, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "giok", "search", "--batch", "-", "-w", "zeon", *extra],
        input=data,
        capture_output=True,
        timeout=timeout,
    )


def _one_error(proc: subprocess.CompletedProcess) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


# -- search --batch ---------------------------------------------------------------------------
def test_batch_with_invalid_utf8_is_one_clear_error(filled):
    proc = _batch(b"coffee\n\xff\xfe roast\nmorning\n")
    err = _one_error(proc)
    assert proc.returncode == 2
    assert "line 2" in err
    assert "UTF-8" in err
    answered = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["query"] for a in answered] == ["coffee"]  # the lines before it were answered


def test_batch_file_over_the_cap_is_refused_before_any_search(filled, tmp_path):
    queries = tmp_path / "q.txt"
    queries.write_bytes(b"coffee\n" * 200_000)
    started = time.monotonic()
    out = run_giok("search", "--batch", str(queries), "-w", "zeon")
    assert time.monotonic() - started < 30
    assert out.returncode == 2, out.stdout[:200]
    assert out.stdout == "", out.stdout[:200]
    assert "1,000" in _one_error(subprocess.CompletedProcess([], 2, b"", out.stderr.encode()))


def test_batch_on_a_pipe_stops_at_the_cap(filled):
    proc = _batch(b"?\n" * 200_000)  # "?" has no words: answered at once
    err = _one_error(proc)
    assert proc.returncode == 2
    assert "1,000" in err
    assert len(proc.stdout.splitlines()) == 1000


def test_batch_long_lines_nul_bytes_and_empty_lines(filled):
    data = b"coffee\n\n   \n" + b"y" * 3_000_000 + b"\nrois\x00ter\ncoffee\r\n"
    proc = _batch(data)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 4  # empty and blank lines are skipped
    assert out[0]["results"]
    assert out[3]["results"]
    assert "too long" in out[1]["error"]
    assert len(out[1]["query"]) < 1000
    assert "binary" in out[2]["error"]


# -- MCP over raw JSON-RPC ------------------------------------------------------------------------
class RawServer:
    """`giok mcp` in a subprocess, spoken to in raw JSON-RPC lines."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "giok", "mcp", "-w", "zeon"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, raw):
        self.proc.stdin.write((raw if isinstance(raw, bytes) else json.dumps(raw).encode()) + b"\n")
        self.proc.stdin.flush()

    def request(self, id_, method, params=None):
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})})

    def next(self, timeout=30) -> dict:
        return self.lines.get(timeout=timeout)

    def answers(self, ids, timeout=60) -> dict:
        got, deadline = {}, time.monotonic() + timeout
        while set(ids) - set(got):
            msg = self.next(max(0.1, deadline - time.monotonic()))
            got[msg.get("id")] = msg
        return got

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def raw_server(filled):
    server = RawServer({**os.environ})
    server.request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"},
        },
    )
    assert server.next()["result"]["serverInfo"]["name"] == "giok"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield server
    assert "Traceback" not in server.close()


def test_mcp_protocol_errors_and_the_server_keeps_serving(raw_server):
    raw_server.send(b"this is not json {")
    parse = raw_server.next()
    assert parse["id"] is None
    assert parse["error"]["code"] == -32700
    raw_server.send(b'{"hello": "world"}')
    invalid = raw_server.next()
    assert invalid["id"] is None
    assert invalid["error"]["code"] == -32600
    raw_server.request(2, "tools/call", {"name": "no_such_tool", "arguments": {}})
    raw_server.request(3, "tools/call", {"name": "memory_get", "arguments": "MEMORY.md"})
    raw_server.request(4, "tools/call", {"name": "memory_search", "arguments": {"k": "many"}})
    raw_server.request(5, "tools/list")
    raw_server.request(6, "tools/call", {"name": "memory_search", "arguments": {"query": "coffee"}})
    got = raw_server.answers([2, 3, 4, 5, 6])
    assert got[2]["error"]["code"] == -32602
    assert "no_such_tool" in got[2]["error"]["message"]
    assert got[3]["error"]["code"] == -32602
    # arguments that fail the tool's input schema are a tool execution error the model can read
    # and correct (MCP 2025-11-25, SEP-1303), not a protocol error
    assert got[4]["result"]["isError"] is True
    assert "invalid arguments" in got[4]["result"]["content"][0]["text"]
    assert len(got[5]["result"]["tools"]) > 5
    assert "coffee" in got[6]["result"]["content"][0]["text"]
    assert not got[6]["result"].get("isError")


# -- path escapes -----------------------------------------------------------------------------
ESCAPES = [  # refused everywhere
    "../outside.md",
    "../../outside.md",
    "memory/../../outside.md",
    "MEMORY.md/../../outside.md",
    " ../outside.md",
    "memory/..",
    "/etc/passwd",
    "{outside}",
    "%2e%2e/outside.md",
    "memory/%2e%2e/%2e%2e/outside.md",
    "..%2foutside.md",
    "%2E%2E%2Foutside.md",
    "memory/..%5c..%5coutside.md",
    "memory\\..\\..\\outside.md",
    "MEMORY.md\x00.txt",
    "memory/\x00/x.md",
    "\x00",
    "memory/" + "a" * 5000 + ".md",
    "memory/" + "x/" * 3000 + "a.md",
    "memory/" + "a" * 300 + ".md",
]
ODD = ["~/outside.md", "file://{outside}"]  # plain names inside the workspace: refused or kept inside


def _paths(ws, kinds=(ESCAPES, ODD)) -> list[str]:
    outside = str(ws.root.parent / "outside.md")
    return [p.replace("{outside}", outside) for kind in kinds for p in kind]


def test_mcp_memory_get_refuses_every_escape(raw_server, filled):
    paths = _paths(filled)
    for i, path in enumerate(paths, 10):
        raw_server.request(i, "tools/call", {"name": "memory_get", "arguments": {"path": path}})
    got = raw_server.answers(list(range(10, 10 + len(paths))))
    for i, path in enumerate(paths, 10):
        result = got[i]["result"]
        text = result["content"][0]["text"]
        assert result["isError"] is True, (path, text)
        assert text.startswith("Error: "), (path[:80], text[:200])
        assert "internal error" not in text, (path[:80], text[:200])
        assert OUTSIDE not in json.dumps(got[i])


@pytest.mark.parametrize("command", ["view", "create", "str_replace", "insert", "delete", "rename"])
def test_memory_tool_refuses_every_escape(filled, command):
    tool = MemoryTool(filled)
    around = sorted(p.name for p in filled.root.parent.iterdir())
    before = (filled.root.parent / "outside.md").read_bytes()
    for path in _paths(filled):
        for given in (path, "/memories/" + path):
            params = {
                "command": command,
                "path": given,
                "file_text": "x",
                "old_str": OUTSIDE,
                "new_str": "y",
                "insert_line": 0,
                "insert_text": "x",
                "old_path": given,
                "new_path": "/memories/notes/stolen.md",
            }
            result = tool.tool_result({"id": "t1", "input": params})  # never raises: a tool error
            inside = given.startswith("/memories/") and path.startswith(
                "/"
            )  # /memories//etc/x: a folder inside
            if (path in _paths(filled, (ESCAPES,)) and not inside) or command != "create":
                assert result.get("is_error") is True, (command, given[:80], result["content"][:200])
                assert result["content"].startswith("Error: ")
                assert OUTSIDE not in result["content"]
    assert (filled.root.parent / "outside.md").read_bytes() == before
    assert sorted(p.name for p in filled.root.parent.iterdir()) == around  # nothing written beside it
    assert not (filled.root / "notes" / "stolen.md").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["-w", "../outside", "show"],
        ["-w", "/etc", "show"],
        ["trace", "../../outside.md"],
        ["trace", "%2e%2e/outside"],
        ["forget", "../outside.md", "--reason", "x"],
        ["history", "../../etc/passwd"],
        ["init", "x", "--name", "../evil"],
        ["-w", "zeon\x01", "show"],
        ["-w", "a" * 5000, "show"],
        ["crossview", "ack", "../../x"],
    ],
)
def test_cli_path_arguments_are_refused(filled, args):
    out = run_giok(
        *(["-w", "zeon"] if "-w" not in args and args[0] != "init" else []), *args, cwd=filled.root
    )
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("Error: ")
    assert OUTSIDE not in out.stdout + out.stderr
