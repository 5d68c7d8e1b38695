"""The shared PostgreSQL index across machines (not a test; prints figures).

    PYTHONPATH=src .venv/bin/python bench/shared_index.py [--chunks 10000] [--turns 6]
        [--bound 90] [--dir /tmp/giok-shared-bench]

1. Churn. Machine A writes a workspace of N chunks (diary files, as bench/scale.py; the fake
   384-d embedder: the model is not what is measured) and indexes it in two steps, as a
   workspace that grew; it pushes to a bare git remote, machine B clones it and indexes it at
   once, so the two local indexes number the same chunks differently. Both homes search one
   PostgreSQL (a pgserver under --dir). The machines then take turns searching
   (each search syncs and publishes first); per turn: rows of the shared table written again,
   added or deleted (every row's ctid and xmin compared before and after), as a share of the
   table, and the search's wall time. Target: <= 5 % of the table per turn at 10k chunks.
2. Frozen server. Every server process is stopped (SIGSTOP); then: a new `giok search` process,
   and a process whose connection was open before the freeze, each searching once. Printed:
   seconds until each gives its error (or "hung" after --bound seconds), and the error line.
   Target: <= 30 s, with the default timeouts (connect 5 s, statement 10 s).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = 100

HOLD = """
import sys, time
from giok import Workspace
from giok.retrieval.search import search
ws = Workspace.open(sys.argv[1])
search(ws, "warm the connection")
print("ready", flush=True)
sys.stdin.readline()
t = time.perf_counter()
try:
    search(ws, "after the freeze")
    print("answered", flush=True)
except Exception as exc:
    print(f"error after {time.perf_counter() - t:.1f} s: {type(exc).__name__}: {exc}", flush=True)
"""


def git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def words(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(6000)})


def write_days(
    root: Path, first: int, count: int, per_file: int, rng: random.Random, vocab: list[str]
) -> None:
    for f in range(first, first + count):
        day = time.strftime("%Y-%m-%d", time.gmtime((20000 + f) * 86400))
        lines = [f"# {day}", ""]
        for i in range(per_file):
            text = " ".join(rng.choice(vocab) for _ in range(rng.randint(6, 14)))
            lines.append(f"- {i % 24:02d}:{i % 60:02d} {text}")
        (root / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n", "utf-8")


def home_for(base: Path, name: str, dsn: str):
    from giok import Home

    home = Home(base / name)
    home.update(
        lambda c: c.update(
            embeddings={"provider": "fake", "dim": 384}, index={"backend": "postgres", "dsn": dsn}
        )
    )
    return home


def snapshot(dsn: str, table: str) -> set[tuple[str, str]]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        return {(a, b) for a, b in conn.execute(f"SELECT ctid::text, xmin::text FROM {table}")}


def remember(root: Path, first: int, count: int, rng: random.Random, vocab: list[str]) -> None:
    """Entries appended to MEMORY.md by hand (ids b-000000...), as the write path leaves them."""
    mem = root / "MEMORY.md"
    lines = "".join(
        f"- {' '.join(rng.choice(vocab) for _ in range(8))} <!-- id: b-{i:06x} -->\n"
        for i in range(first, first + count)
    )
    mem.write_text(mem.read_text("utf-8") + lines, "utf-8")


def machines(base: Path, dsn: str, chunks: int):
    """Machine A's workspace, grown in two steps and indexed after each (half the diary days and
    entries, then the rest: MEMORY.md is read again, its chunks get new local ids), and machine
    B's clone of it, indexed at once."""
    from giok import Workspace
    from giok.retrieval import index
    from giok.store import remote

    rng = random.Random(chunks)
    vocab = words(rng)
    per_file = max(1, chunks // FILES)
    home_a = home_for(base, "home-a", dsn)
    os.environ["GIOK_HOME"] = str(home_a.path)
    a, _ = Workspace.init(base / "a" / "bench", name="bench", user="Seojun", home=home_a)
    for step in range(2):
        write_days(a.root, step * FILES // 2, FILES // 2, per_file, rng, vocab)
        remember(a.root, step * 50, 50, rng, vocab)
        index.Index.local_for_workspace(a).sync()
    git(a.root, "add", "-A")
    git(a.root, "commit", "-qm", "bench: the diary")
    bare = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    remote.add(a, "origin", str(bare))
    remote.sync(a)
    subprocess.run(["git", "clone", "-q", str(bare), str(base / "b" / "bench")], check=True)
    home_b = home_for(base, "home-b", dsn)
    b, _ = Workspace.init(base / "b" / "bench", name="bench", user="Seojun", home=home_b)
    index.Index.local_for_workspace(b).sync()  # built at once: other local ids
    return a, b, vocab


def search_on(ws, query: str) -> float:
    """`giok search` on the machine holding ws, a process of its own (as a user runs it: each
    publishes before it searches). Returns its wall time."""
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "giok", "search", query],
        cwd=ws.root,
        env={**os.environ, "GIOK_HOME": str(ws.home.path), "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - t


def churn(a, b, dsn: str, turns: int, vocab: list[str]) -> None:
    from giok.retrieval import index, pg

    rng = random.Random(7)
    table = pg.table_for(index.Index.local_for_workspace(a).embedder)
    took = search_on(a, "first publish")
    print(f"machine A's first `giok search` (publishes the workspace): {took:.1f} s")
    print(f"shared table {table}: {len(snapshot(dsn, table))} rows")
    worst = 0.0
    for turn in range(turns):
        who, ws = ("B", b) if turn % 2 == 0 else ("A", a)
        before = snapshot(dsn, table)
        took = search_on(ws, " ".join(rng.choice(vocab) for _ in range(3)))
        after = snapshot(dsn, table)
        changed = max(len(after - before), len(before - after))  # row versions written or removed
        share = 100 * changed / max(1, len(after))
        worst = max(worst, share)
        print(
            f"turn {turn + 1}: machine {who} `giok search`: {changed} rows written"
            f" ({share:.2f} % of {len(after)}), {took:.2f} s"
        )
    print(f"worst turn: {worst:.2f} % of the table rewritten (target <= 5 %)")


def server_pids(pgdata: Path) -> list[int]:
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    out = [postmaster]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                out.append(int(entry))
    return out


def frozen(ws, pgdata: Path, bound: float) -> None:
    env = {**os.environ, "GIOK_HOME": str(ws.home.path), "PYTHONWARNINGS": "ignore"}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "ready"
    pids = server_pids(pgdata)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        t = time.perf_counter()
        try:
            out = subprocess.run(
                [sys.executable, "-m", "giok", "search", "frozen"],
                cwd=ws.root,
                env=env,
                capture_output=True,
                text=True,
                timeout=bound,
            )
            line = (out.stderr.strip().splitlines() or ["(no error line)"])[-1]
            print(
                f"frozen server, new `giok search`: exit {out.returncode} after"
                f" {time.perf_counter() - t:.1f} s: {line}"
            )
        except subprocess.TimeoutExpired:
            print(f"frozen server, new `giok search`: hung (killed after {bound:.0f} s)")
        t = time.perf_counter()
        holder.stdin.write("go\n")
        holder.stdin.flush()
        try:
            said, _ = holder.communicate(timeout=bound)
            print(
                f"frozen server, connection open before: {said.strip()}"
                f" (waited {time.perf_counter() - t:.1f} s)"
            )
        except subprocess.TimeoutExpired:
            print(f"frozen server, connection open before: hung (killed after {bound:.0f} s)")
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        holder.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument(
        "--bound", type=float, default=90.0, help="seconds before a frozen wait counts as hung"
    )
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="giok-shared-bench-"))
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    os.environ["GIT_CONFIG_GLOBAL"] = str(base / "gitconfig")
    os.environ["GIOK_JUDGEMENT"] = "rules"
    import pgserver  # type: ignore[import-untyped]

    pgdata = base / "pg"
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    dsn = server.get_uri()
    try:
        t = time.perf_counter()
        a, b, vocab = machines(base, dsn, args.chunks)
        print(
            f"{args.chunks} chunks on two machines (A grown in two steps, B cloned):"
            f" {time.perf_counter() - t:.1f} s"
        )
        churn(a, b, dsn, args.turns, vocab)
        frozen(a, pgdata, args.bound)
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
