"""A running `giok mcp` answers Claude Code's prompt hook for it, on a Unix socket of the home.

The hook (`giok hook UserPromptSubmit`, through giok.edges.hookline) runs on every prompt. In
its own process it pays for the CLI, numpy, the search modules and the embedding model each
time; this server has them loaded, so the hook hands it the prompt and prints its answer. The
answer is `hooks.respond`'s, the very function the CLI runs, for the same input, workspace and
environment; anything that would make it differ is declined, and the hook then runs in full:

- only the process holding `<home>/run/hook.lock` (an flock, released by the kernel when that
  process ends) listens, so of several `giok mcp` of one home (one per Claude Code session)
  exactly one serves, and another takes over, at once, when it ends;
- the socket lives in a folder only the user can enter (mode 0700), is itself mode 0600, and on
  Linux each connection's peer must be the same user (SO_PEERCRED);
- a request whose giok environment (`hookline.environment`: the GIOK_ and GIT_ variables, the
  home, the clock) differs from this process's, or whose event is not one it serves, is declined;
- while this server's own index is still loading, a request for its workspace waits up to
  HOOK_WAIT seconds, then is declined (the hook does the work itself rather than answer from
  keywords).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
import struct
import sys
import threading
from collections.abc import Mapping
from typing import Any

from giok.edges import hooks
from giok.edges.hookline import MAX_REQUEST, PROTOCOL, SERVED, environment
from giok.locations import hook_lock, hook_socket, private_dir, run_dir

HOOK_WAIT = 10.0  # seconds a hook waits for this server's warm-up before doing the work itself


class HookServer:
    """Serve `giok hook` requests for the home of `ws` (the MCP server's workspace), with
    `warm` (its giok.edges.mcp.WarmUp) gating searches of that workspace."""

    def __init__(self, ws, warm, env: Mapping[str, str]):
        """`env`: the environment this process started with (the entry point's to read)."""
        self.ws = ws
        self.warm = warm
        self.env = environment(env)
        self.home = str(ws.home.path)
        self.path = hook_socket(self.home, env)
        self._server: socketserver.UnixStreamServer | None = None
        self._lock_fd: int | None = None
        self._closed = threading.Event()
        self._state = threading.Lock()  # _closed and _server change together

    def start(self) -> HookServer:
        """Take the socket in a daemon thread: at once if no other process of this home holds
        it, else as soon as that process ends."""
        threading.Thread(target=self._run, name="giok-hook-socket", daemon=True).start()
        return self

    def _run(self) -> None:
        import fcntl

        try:
            if not private_dir(run_dir(self.home), create=True):
                return
            if not private_dir(os.path.dirname(self.path), create=True):
                return
            fd = os.open(hook_lock(self.home), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            print(f"giok mcp: not answering hooks ({exc})", file=sys.stderr)
            return
        fcntl.flock(fd, fcntl.LOCK_EX)  # blocks while another process serves this home
        self._lock_fd = fd
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)  # the socket of a process that ended without removing it
            server = _Server(self.path, _Handler)
            server.owner = self
            os.chmod(self.path, 0o600)
        except OSError as exc:
            print(f"giok mcp: not answering hooks ({exc})", file=sys.stderr)
            self._give_up()
            return
        with self._state:
            if self._closed.is_set():  # closed meanwhile: give the socket up at once
                server.server_close()
                self._give_up()
                return
            self._server = server
        server.serve_forever(poll_interval=0.5)

    def close(self) -> None:
        """Stop listening and give the socket up (for another process of this home to take)."""
        with self._state:
            self._closed.set()
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()  # returns once serve_forever has (it is always entered once set)
            server.server_close()
            self._give_up()

    def _give_up(self) -> None:
        """Remove the socket and release the lock (only ever called by its holder)."""
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)  # releases the flock

    def answer(self, request: Any) -> dict:
        """The answer to one request: {"stdout", "stderr"} as the CLI would print them, or
        {"fallback": why} when the hook should run in full."""
        if not isinstance(request, dict) or request.get("v") != PROTOCOL:
            return {"fallback": "an unknown request"}
        if request.get("env") != self.env:
            return {"fallback": "another environment"}
        raw, cwd = request.get("input"), request.get("cwd")
        if not isinstance(raw, str) or not isinstance(cwd, str):
            return {"fallback": "an unknown request"}
        try:
            event = hooks.served_event(str(request.get("event") or ""), hooks.parse_input(raw))
        except ValueError:
            event = ""  # the CLI's error message: let it say it
        if event not in SERVED:
            return {"fallback": f"event {event!r} is not served here"}
        spec = request.get("workspace")
        try:
            ws = self._workspace(spec if isinstance(spec, str) else None, cwd)
        except Exception:  # the CLI's error message for a workspace it cannot open
            return {"fallback": "the workspace does not open here"}
        if not self._ready(ws):
            return {"fallback": "the index is still loading"}
        out, err = self._respond(event, raw, request.get("budget"), ws)
        return {"stdout": out, "stderr": err}

    def _workspace(self, spec: str | None, cwd: str):
        from pathlib import Path

        from giok.workspace import Workspace

        ws = Workspace.open(spec, home=self.ws.home, cwd=Path(cwd), settings=self.ws.home.settings)
        return self.ws if ws.root == self.ws.root else ws

    def _ready(self, ws) -> bool:
        warm = self.warm
        if warm is None or ws is not self.ws or not warm.started.is_set():
            return True
        return warm.ready.wait(HOOK_WAIT)

    def _respond(self, event: str, raw: str, budget, ws) -> tuple[str, str]:
        warm = self.warm
        if warm is None or ws is not self.ws or warm.side_by_side("memory_recall"):
            return hooks.respond(event, raw, budget, lambda: ws)
        with warm.lock:  # a shared index: one search at a time, as the MCP tools do
            return hooks.respond(event, raw, budget, lambda: ws)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    owner: HookServer


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server: _Server = self.server  # type: ignore[assignment]
        if not _same_user(self.connection):
            return
        try:
            line = self.rfile.readline(MAX_REQUEST + 1)
            request = json.loads(line) if len(line) <= MAX_REQUEST else None
        except ValueError:
            request = None
        try:
            answer = server.owner.answer(request)
        except Exception as exc:  # a bug: the hook runs in full and says nothing of it
            print(f"giok mcp: a hook request failed: {exc!r}", file=sys.stderr)
            answer = {"fallback": "internal error"}
        with contextlib.suppress(OSError):
            self.wfile.write(json.dumps(answer, ensure_ascii=False).encode("utf-8"))


def _same_user(conn: socket.socket) -> bool:
    """Whether the process at the other end is this user's (Linux: SO_PEERCRED; elsewhere the
    folder's and the socket's modes are the only check)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    try:
        _pid, uid, _gid = struct.unpack(
            "3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
        )
    except OSError:
        return False
    return uid == os.getuid()
