"""What `giok serve` takes from a connection (issue 23): a real `giok serve` process on a real
loopback socket, spoken to byte by byte where a well-behaved client would not go.

- a body over the limit costs the server nothing: a declared Content-Length is refused before a
  byte of the body is read, a chunked body is cut as it streams (the server's peak RSS is read
  from /proc);
- headers over the limit are a 431, sent at once or trickled;
- a slow client (headers or body trickled, or nothing sent) is answered 408 and cut off at the
  deadline (a server started with 1-second deadlines; the tests wait for the server to close the
  socket, the timeout on the socket is only there so old code fails instead of hanging);
- Host is pinned: to loopback names by default, to `--allowed-host` names when given;
- a date that is no date, JSON nested 20k deep and a blob id in `log/` are each a clear 4xx;
- none of it is a server error: each server's output, read to the end once it stopped, holds
  no traceback and no "internal error" (`stop`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from giok.edges.server.tokens import Tokens
from giok.store import git
from serve_support import make_home

FAILED = 60.0  # seconds on a socket before a test calls the server stuck (old code), never waited out
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)/")
MB = 1_000_000


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    home: Path
    tokens: dict[str, str]
    stderr: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def peak_rss(self) -> int:
        """The server process's peak resident memory so far, bytes (VmHWM)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]

    def reset_peak(self) -> int:
        """Start the peak over at the present resident memory (clear_refs 5, Linux) and return
        it: the growth measured from here is this check's, whatever came before. Where the
        kernel refuses, the peak so far of a server started for this check alone."""
        with contextlib.suppress(OSError):
            Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")
        return self.peak_rss()


def start(root: Path, name: str, serve_config: dict | None = None, *args: str) -> Server:
    """`giok serve --port 0` over a fresh home; returns once it printed that it listens."""
    home, _ = make_home(root / name)
    if serve_config:
        home.update(lambda c: c.update({"serve": serve_config}))
    tokens = Tokens(home)
    made = {
        "write": tokens.create(["zeon"], "write")[0],
        "owner": tokens.create(["zeon"], "read", owner=True)[0],
    }
    env = {
        **os.environ,
        "GIOK_HOME": str(home.path),
        "GIT_CONFIG_GLOBAL": str(root / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "giok", "serve", "--port", "0", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:  # the event: the line the server prints once its socket listens
        lines.append(line)
        found = LISTENING.search(line)
        if found:
            break
    else:
        raise AssertionError(f"giok serve did not say it listens: {''.join(lines)}")
    server = Server(proc, int(found.group(1)), home.path, made, lines)
    server.reader = threading.Thread(target=lambda: server.stderr.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    server.reader.start()
    return server


def stop(server: Server) -> None:
    """Stop the server, read what it printed to the end, and check that nothing it was sent
    was a server error: every refusal is a refusal (no traceback, no "internal error")."""
    server.proc.terminate()
    server.proc.wait(FAILED)
    assert server.reader is not None
    server.reader.join(FAILED)  # the pipe is closed: the reader has read everything
    assert not server.reader.is_alive()
    text = "".join(server.stderr)
    for sign in ("Traceback", "Exception in ASGI", " failed: "):  # " failed: ": a 500 (api.py)
        assert sign not in text, text[-3000:]


@contextlib.contextmanager
def serving(tmp_path_factory, name: str, config: dict | None = None, *args: str) -> Iterator[Server]:
    """A server of its own for the tests that use it, stopped and checked (`stop`) after them."""
    root = tmp_path_factory.mktemp(f"serve-{name}")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_CONFIG_GLOBAL", str(root / "gitconfig"))
        server = start(root, name, config, *args)
        try:
            yield server
        finally:
            stop(server)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    """The default limits (1 MB bodies, 32 KiB headers), bound to loopback."""
    with serving(tmp_path_factory, "default") as server:
        yield server


@pytest.fixture
def fresh_srv(tmp_path_factory):
    """The default limits, in a server started for one test (its memory is that test's)."""
    with serving(tmp_path_factory, "fresh") as server:
        yield server


@pytest.fixture(scope="module")
def slow_srv(tmp_path_factory):
    """1-second deadlines for headers and body; answers to memory.example.org only."""
    config = {"header_timeout": 1, "body_timeout": 1}
    with serving(tmp_path_factory, "slow", config, "--allowed-host", "memory.example.org") as server:
        yield server


@pytest.fixture(scope="module")
def patient_srv(tmp_path_factory):
    """Deadlines far beyond any wait of a test (a busy machine's client is never cut off)."""
    config = {"header_timeout": 10 * FAILED, "body_timeout": 10 * FAILED}
    with serving(tmp_path_factory, "patient", config) as server:
        yield server


# -- raw HTTP ---------------------------------------------------------------------------------
def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=FAILED)


def head(
    server: Server, method: str, path: str, token: str | None = None, host: str | None = None, **extra
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{server.port}'}"]
    if token:
        lines.append(f"Authorization: Bearer {server.tokens[token]}")
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset after its answer
    counts as closed: the answer is still read)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        except TimeoutError:
            raise AssertionError(f"the server kept the connection open for {FAILED:g} s") from None
        if not chunk:
            return data
        data += chunk


def one_answer(sock: socket.socket) -> bytes:
    """One response on a connection kept open (it has a Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    top, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: (\d+)", top).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += sock.recv(65536)
    return top + b"\r\n\r\n" + body


def status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer.split(b" ", 2)[1])


def error(answer: bytes) -> str:
    return json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]


def send_until_refused(sock: socket.socket, total: int, chunked: bool = False) -> int:
    """Send up to `total` body bytes as fast as the server takes them; the bytes sent before
    the server stopped taking them."""
    piece = b"x" * 65536
    frame = (b"%x\r\n" % len(piece)) + piece + b"\r\n" if chunked else piece
    sent = 0
    try:
        while sent < total:
            sock.sendall(frame)
            sent += len(piece)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    except TimeoutError:
        raise AssertionError(
            f"the server stopped reading but kept the connection open for {FAILED:g} s"
        ) from None
    return sent


# -- bodies -----------------------------------------------------------------------------------
def test_a_declared_body_over_the_limit_is_refused_before_a_byte_of_it_is_read(srv):
    with connect(srv) as sock:
        sock.sendall(head(srv, "POST", "/api/w/zeon/remember", "write", Content_Length=400 * MB))
        answer = until_closed(sock)  # not one byte of the body sent
    assert status(answer) == 413
    assert error(answer) == "request body over 1,000,000 bytes (Content-Length: 400,000,000)"


def warmed(server) -> int:
    """The server after one refused body on the measured path (its code and buffers loaded),
    its peak memory started over: what a test measures next is the body's cost alone."""
    with connect(server) as sock:
        sock.sendall(head(server, "POST", "/api/w/zeon/remember", "write", Transfer_Encoding="chunked"))
        sock.sendall(b"%x\r\n" % (MB + 1) + b"x" * (MB + 1) + b"\r\n")
        until_closed(sock)
    return server.reset_peak()


# Held whole, 64 MB sent would cost at least 64 MB; the bound leaves room for allocator noise.
NOT_HELD = 32 * MB


def test_a_400_mb_post_by_a_write_token_costs_the_server_no_memory(fresh_srv):
    before = warmed(fresh_srv)
    with connect(fresh_srv) as sock:
        sock.sendall(head(fresh_srv, "POST", "/api/w/zeon/remember", "write", Content_Length=400 * MB))
        sent = send_until_refused(sock, 64 * MB)
        answer = until_closed(sock)
    assert sent < 64 * MB  # the server closed the connection instead of reading on
    assert status(answer) == 413
    assert fresh_srv.peak_rss() - before < NOT_HELD


def test_a_chunked_body_is_counted_as_it_streams_and_cut_at_the_limit(fresh_srv, srv):
    before = warmed(fresh_srv)
    with connect(fresh_srv) as sock:
        sock.sendall(head(fresh_srv, "POST", "/api/w/zeon/remember", "write", Transfer_Encoding="chunked"))
        sent = send_until_refused(sock, 64 * MB, chunked=True)
        until_closed(sock)
    assert sent < 64 * MB
    assert fresh_srv.peak_rss() - before < NOT_HELD
    with connect(srv) as sock:  # and the answer, when the client stops at the limit's edge
        sock.sendall(head(srv, "POST", "/api/w/zeon/remember", "write", Transfer_Encoding="chunked"))
        sock.sendall(b"%x\r\n" % (MB + 1) + b"x" * (MB + 1) + b"\r\n")
        answer = until_closed(sock)
    assert status(answer) == 413
    assert error(answer) == "request body over 1,000,000 bytes"


def test_a_body_under_the_limit_is_still_written(srv):
    text = "The badge printer is in room 4"
    body = json.dumps({"text": text}).encode() + b" " * 900_000  # JSON allows the blanks
    with connect(srv) as sock:
        sock.sendall(
            head(
                srv,
                "POST",
                "/api/w/zeon/remember",
                "write",
                Content_Length=len(body),
                Content_Type="application/json",
                Connection="close",
            )
            + body
        )
        answer = until_closed(sock)
    assert status(answer) == 200, answer[:300]
    assert text in (srv.home.parent / "zeon" / "MEMORY.md").read_text()


# -- headers ----------------------------------------------------------------------------------
def test_headers_over_the_limit_sent_at_once_are_a_431(srv):
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/api/workspaces", "write", X_Pad="p" * 100_000))
        answer = until_closed(sock)
    assert status(answer) == 431
    assert error(answer) == "request headers over 32,768 bytes"


def test_headers_over_the_limit_trickled_in_are_a_431(srv):
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/api/workspaces", "write")[:-2])  # the blank line not yet
        try:
            for _ in range(20):  # 20 headers of 4 KB: past 32 KiB, never ended
                sock.sendall(b"X-Pad: " + b"p" * 4000 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = until_closed(sock)
    assert status(answer) == 431
    assert error(answer) == "request headers over 32,768 bytes"


# -- Host ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["rebound.example", "rebound.example:8765", "127.0.0.2"])
def test_a_loopback_server_refuses_another_host_by_default(srv, host):
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/api/workspaces", "write", host=host, Connection="close"))
        answer = until_closed(sock)
    assert status(answer) == 421
    assert "does not answer to Host" in error(answer) and "--allowed-host" in error(answer)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"])
def test_a_loopback_server_answers_to_loopback_names(srv, host):
    with connect(srv) as sock:
        sock.sendall(
            head(srv, "GET", "/api/workspaces", "write", host=f"{host}:{srv.port}", Connection="close")
        )
        assert status(until_closed(sock)) == 200


def test_allowed_host_pins_the_server_to_that_name(slow_srv):
    answers = {}
    for host in ("memory.example.org", f"127.0.0.1:{slow_srv.port}"):
        with connect(slow_srv) as sock:
            sock.sendall(head(slow_srv, "GET", "/api/workspaces", "write", host=host, Connection="close"))
            answers[host] = status(until_closed(sock))
    assert answers == {"memory.example.org": 200, f"127.0.0.1:{slow_srv.port}": 421}


# -- slow clients (deadlines of 1 s) -----------------------------------------------------------
def test_headers_never_finished_are_answered_408_and_cut_off(slow_srv):
    with connect(slow_srv) as sock:
        sock.sendall(head(slow_srv, "GET", "/api/workspaces", "write", host="memory.example.org")[:-2])
        answer = until_closed(sock)
    assert status(answer) == 408
    assert error(answer) == "the request headers did not arrive within 1 s"


def test_headers_trickled_a_byte_at_a_time_do_not_keep_the_connection(slow_srv):
    """A deadline, not an idle timer: a byte every 0.1 s would take 30 s for these headers."""
    request = head(slow_srv, "GET", "/api/workspaces", "write", host="memory.example.org", X_Pad="p" * 200)
    with connect(slow_srv) as sock:
        for byte in request:
            readable, _, _ = select.select(
                [sock], [], [], 0.1
            )  # the pace of the trickle; the server's close ends it
            if readable:
                break
            sock.sendall(bytes([byte]))
        else:
            raise AssertionError("the server took every byte of trickled headers")
        answer = until_closed(sock)
    assert status(answer) == 408


def test_a_body_never_finished_is_answered_408_and_cut_off(slow_srv):
    with connect(slow_srv) as sock:
        sock.sendall(
            head(
                slow_srv,
                "POST",
                "/api/w/zeon/remember",
                "write",
                host="memory.example.org",
                Content_Length=100,
            )
            + b'{"text": "half'
        )
        answer = until_closed(sock)
    assert status(answer) == 408
    assert error(answer) == "the request body did not arrive within 1 s"
    assert "half" not in (slow_srv.home.parent / "zeon" / "MEMORY.md").read_text()


def test_a_connection_that_sends_nothing_is_closed(slow_srv):
    with connect(slow_srv) as sock:
        assert until_closed(sock) == b""


def test_two_requests_on_one_connection_are_both_answered(patient_srv):
    """The deadlines count per request: a kept-alive connection is answered twice."""
    with connect(patient_srv) as sock:
        sock.sendall(head(patient_srv, "GET", "/api/workspaces", "write"))
        first = one_answer(sock)
        sock.sendall(head(patient_srv, "GET", "/api/w/zeon/tasks", "write", Connection="close"))
        second = until_closed(sock)
    assert status(first) == 200 and status(second) == 200


# -- bad input that was a 500 ------------------------------------------------------------------
def get(server: Server, path: str, token: str = "write") -> bytes:
    with connect(server) as sock:
        sock.sendall(head(server, "GET", path, token, Connection="close"))
        return until_closed(sock)


def test_a_day_that_is_no_date_is_a_400(srv):
    answer = get(srv, "/api/w/zeon/diary/9999-99-99")
    assert status(answer) == 400
    assert error(answer) == "'9999-99-99' is not a day YYYY-MM-DD"


def test_json_nested_20k_deep_is_a_400(srv):
    body = b"[" * 20_000 + b"]" * 20_000
    body = b'{"text": ' + body + b"}"
    with connect(srv) as sock:
        sock.sendall(
            head(srv, "POST", "/api/w/zeon/remember", "write", Content_Length=len(body), Connection="close")
            + body
        )
        answer = until_closed(sock)
    assert status(answer) == 400
    assert error(answer) == "the body's JSON is nested too deep"


def test_log_shows_commits_only_not_a_blob(srv):
    zeon = srv.home.parent / "zeon"
    blob = git.run(zeon, "rev-parse", "HEAD:MEMORY.md").stdout.strip()
    commit = git.run(zeon, "rev-parse", "HEAD").stdout.strip()
    answer = get(srv, f"/api/w/zeon/log/{blob}", "owner")
    assert status(answer) == 404
    assert b"staging server" not in answer
    assert status(get(srv, f"/api/w/zeon/log/{commit[:12]}", "owner")) == 200
