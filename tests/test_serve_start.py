"""Starting and stopping `giok serve` and `giok web` (issue 24), as real processes:

- the URL is printed once the socket listens (`--port 0` prints the port it got), so a client
  that reads the line can connect at once;
- a port in use is one clear error, a non-zero exit, no URL printed and no token left behind;
- the token `giok web` makes lives as long as the command: Ctrl-C or SIGTERM revokes it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys

import httpx
import pytest

from giok.edges.server.tokens import Tokens

FAILED = 120  # seconds before a test calls a process stuck; never waited out when it works


def giok(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "giok", *args],
        env={**os.environ, "GIOK_EMBEDDINGS": "fake"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.fixture
def busy_port():
    with socket.create_server(("127.0.0.1", 0)) as held:  # listening: the port is in use
        yield held.getsockname()[1]


@pytest.mark.parametrize("command", ["serve", "web"])
def test_a_busy_port_is_one_clear_error_with_no_url_and_no_token(ws, busy_port, command):
    args = [command, "--port", str(busy_port)] + (["--no-open"] if command == "web" else [])
    proc = giok(*args)
    out, err = proc.communicate(timeout=FAILED)
    assert proc.returncode != 0
    assert err.strip().splitlines() == [
        f"Error: 127.0.0.1:{busy_port} is already in use (another giok serve?): choose another --port"
    ]
    assert "http://" not in out + err and "#token=" not in out
    assert Tokens(ws.home).list() == []  # nothing minted for a server that never ran


def test_giok_serve_listens_when_it_says_so_on_the_port_it_names(ws):
    proc = giok("serve", "--port", "0")
    try:
        line = proc.stderr.readline()  # type: ignore[union-attr]
        found = re.match(r"giok serve: listening on http://127\.0\.0\.1:(\d+)/ ", line)
        assert found, line
        with socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=FAILED):
            pass  # no retry: the line comes after the socket listens
    finally:
        proc.terminate()
        proc.wait(FAILED)


@pytest.mark.skipif(not socket.has_ipv6, reason="this system has no IPv6")
def test_giok_serve_on_every_address_answers_at_the_url_it_prints(ws):
    """`--host ::` (every address): the printed URL answers. Before: the socket was IPv6-only
    and the URL named 127.0.0.1, so the connection was refused."""
    proc = giok("serve", "--host", "::", "--port", "0")
    try:
        for line in proc.stderr:  # type: ignore[union-attr]  # a warning (not loopback), then the URL
            if found := re.match(r"giok serve: listening on (http://(\S+):\d+/) ", line):
                break
        else:
            raise AssertionError("no URL printed")
        answer = httpx.get(found.group(1) + "api/workspaces", timeout=FAILED)
        assert answer.status_code == 401  # the server answered (no token given)
    finally:
        proc.terminate()
        proc.wait(FAILED)


@pytest.mark.parametrize(
    ("stop", "pinned"),
    [(signal.SIGINT, ()), (signal.SIGTERM, ("--allowed-host", "memory.example.org"))],
    ids=["ctrl-c", "sigterm-pinned"],
)
def test_giok_web_revokes_its_token_when_it_stops(ws, stop, pinned):
    """(Pinned to another Host, the page's own URL is still answered.)"""
    proc = giok("web", "--no-open", "--port", "0", *pinned)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        found = re.match(r"giok web: (http://127\.0\.0\.1:\d+/)#token=(giok_\S+)$", line.strip())
        assert found, line
        url, secret = found.groups()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}, timeout=FAILED) as c:
            assert c.get("/api/workspaces").status_code == 200
        assert [t.name for t in Tokens(ws.home).list()] == ["web"]
        proc.send_signal(stop)
        proc.wait(FAILED)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(FAILED)
    assert proc.returncode == 0, proc.stderr.read()  # type: ignore[union-attr]
    assert Tokens(ws.home).list() == []  # the URL's token no longer opens anything
    assert Tokens(ws.home).verify(secret) is None


@pytest.mark.parametrize(
    ("serve", "said"),
    [
        ({"header_timeout": "soon"}, "serve.header_timeout in the home config must be a positive number"),
        ({"max_body": 0}, "serve.max_body in the home config must be a positive number"),
        ({"allowed_hosts": "memory.example.org"}, "serve.allowed_hosts in the home config must be a list"),
        ({"body_timout": 5}, "unknown key(s) in the home config's serve: body_timout"),
        (5, "serve in the home config must be an object, not 5"),
    ],
)
def test_a_bad_serve_setting_stops_the_start_with_one_line(ws, serve, said):
    ws.home.update(lambda c: c.update({"serve": serve}))
    proc = giok("serve", "--port", "0")
    out, err = proc.communicate(timeout=FAILED)
    assert proc.returncode == 2
    assert len(err.strip().splitlines()) == 1 and said in err and "listening" not in out + err
