"""`giok mcp` spoken to in raw JSON-RPC lines over stdio, no SDK on this side: what a client sends
byte for byte, its answers read by a thread. Shared by the tests and bench/first_contact.py."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

TIMEOUT = 300  # seconds for any one answer: generous, for a busy machine
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


class RawServer:
    """`python -m giok mcp -w WORKSPACE` with `env` in `cwd`; its stderr is piped (and given by
    `close`) or, with `quiet`, dropped."""

    def __init__(self, env: dict, cwd: Path, workspace: str, quiet: bool = False):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "giok", "mcp", "-w", workspace],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if quiet else subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue = queue.Queue()
        out = self.proc.stdout
        threading.Thread(target=lambda: [self.lines.put(x) for x in out], daemon=True).start()  # type: ignore[union-attr]
        self._id = 100

    def send(self, *messages: dict) -> None:
        data = "".join(json.dumps({"jsonrpc": "2.0", **m}) + "\n" for m in messages)
        self.proc.stdin.write(data.encode())  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def answer(self, wanted: int) -> dict:
        while True:
            message = json.loads(self.lines.get(timeout=TIMEOUT))
            if message.get("id") == wanted:
                return message

    def request(self, method: str, params: dict | None = None) -> dict:
        """Send one request (the next id) and wait for its answer."""
        self._id += 1
        self.send({"id": self._id, "method": method, "params": params or {}})
        return self.answer(self._id)

    def handshake(self, initialized: bool = True) -> dict:
        """`initialize` (answered), then `notifications/initialized`, which starts the warm-up."""
        answer = self.request("initialize", HELLO)
        if initialized:
            self.send({"method": "notifications/initialized"})
        return answer

    def call(self, tool: str, arguments: dict, meta: dict | None = None) -> dict:
        """A tools/call's result."""
        params: dict = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)["result"]

    def close(self) -> str:
        """Close stdin, wait for the exit; the stderr it wrote ('' when dropped)."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(TIMEOUT)
        err = self.proc.stderr
        return err.read().decode() if err else ""
