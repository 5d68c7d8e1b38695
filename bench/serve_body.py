"""Server memory for a huge request body: the peak RSS growth of a real `giok serve` process
while a write token POSTs a 200 MB body to /api/w/zeon/remember (the limit is 1 MB).

    PYTHONPATH=src .venv/bin/python bench/serve_body.py [--mb 200] [--before COMMIT]

Two bodies, each against a fresh server process (peak RSS only rises, so one server per case):
a declared `Content-Length: 200000000` streamed as fast as the server takes it, and the same
amount `Transfer-Encoding: chunked`. For each: the MB the server let the client send, its answer,
and the growth of the server's VmHWM (/proc/PID/status) over its value after a first request.
`--before COMMIT` runs the same against that commit's code (a temporary `git worktree`), in the
same run: the target is growth ≤ 50 MB (issue 23).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MB = 1_000_000
PIECE = b"x" * 65536


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


def _request(port: int, head: bytes, body_bytes: int, chunked: bool) -> tuple[int, str, float]:
    """Send head and up to body_bytes of body; (bytes sent, the answer's status line, seconds)."""
    frame = (b"%x\r\n" % len(PIECE)) + PIECE + b"\r\n" if chunked else PIECE
    began = time.perf_counter()
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=300) as sock:
        sock.sendall(head)
        try:
            while sent < body_bytes:
                sock.sendall(frame)
                sent += len(PIECE)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n" in answer:
                    break
        except ConnectionResetError:
            pass
    line = answer.split(b"\r\n", 1)[0].decode("latin-1") or "(connection closed, no answer)"
    return sent, line, time.perf_counter() - began


def _case(src: Path, tmp: Path, chunked: bool, body_mb: int) -> dict:
    """One fresh home and server from `src`; the body sent; the figures."""
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "GIOK_HOME": str(tmp / "home"),
        "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"),
        "GIOK_EMBEDDINGS": "fake",
    }

    def giok(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "giok", *args], env=env, capture_output=True, text=True, check=True
        ).stdout

    giok("init", str(tmp / "zeon"), "--name", "zeon", "--user", "Seojun")
    token = json.loads(giok("token", "create", "--workspace", "zeon", "--scope", "write", "--json"))["token"]
    port = _free_port()  # the old code cannot print the port it got: the same way for both
    server = subprocess.Popen(
        [sys.executable, "-m", "giok", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        auth = f"Authorization: Bearer {token}\r\nHost: 127.0.0.1:{port}\r\n"
        while True:  # the old code prints its URL before it listens: poll
            try:
                _request(
                    port,
                    f"GET /api/workspaces HTTP/1.1\r\n{auth}Connection: close\r\n\r\n".encode(),
                    0,
                    False,
                )
                break
            except ConnectionRefusedError:
                if server.poll() is not None:
                    raise SystemExit(f"giok serve from {src} did not start") from None
                time.sleep(0.1)
        before = _peak_rss(server.pid)
        framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {body_mb * MB}"
        head = f"POST /api/w/zeon/remember HTTP/1.1\r\n{auth}{framing}\r\n\r\n".encode()
        sent, answer, seconds = _request(port, head, body_mb * MB, chunked)
        growth = _peak_rss(server.pid) - before
    finally:
        server.terminate()
        server.wait(60)
    return {"sent": sent, "answer": answer, "seconds": seconds, "growth": growth}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="body size, MB (default 200)")
    parser.add_argument(
        "--before", metavar="COMMIT", help="also measure this commit's code, in a git worktree"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="giok-bench-body-") as tmp_dir:
        tmp = Path(tmp_dir)
        codes = [("this tree", REPO / "src")]
        if args.before:
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(REPO),
                    "worktree",
                    "add",
                    "--detach",
                    "-q",
                    str(tmp / "before"),
                    args.before,
                ],
                check=True,
            )
            codes.insert(0, (f"before {args.before[:10]}", tmp / "before" / "src"))
        try:
            print(f"giok serve, a write token POSTs {args.mb} MB to /api/w/zeon/remember (limit 1 MB)")
            print(f"{'code':<18} {'body':<16} {'sent MB':>8} {'seconds':>8} {'RSS growth MB':>14}  answer")
            for label, src in codes:
                for chunked in (False, True):
                    case = tmp / f"{label.split()[0]}-{'chunked' if chunked else 'length'}"
                    case.mkdir()
                    got = _case(src, case, chunked, args.mb)
                    body = "chunked" if chunked else "Content-Length"
                    print(
                        f"{label:<18} {body:<16} {got['sent'] / MB:>8.1f} {got['seconds']:>8.1f} "
                        f"{got['growth'] / MB:>14.1f}  {got['answer']}"
                    )
        finally:
            if args.before:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tmp / "before")],
                    check=False,
                )


if __name__ == "__main__":
    main()
