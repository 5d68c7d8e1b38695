"""What the shared index's exact ranking costs where pgvector is older than 0.8 (not a test;
prints figures).

    .venv/bin/python bench/pg_exact.py [--sizes 10000 50000] [--queries 15] [--pgserver DIR]

Where pgvector has no iterative index scan (before 0.8), giok's shared index ranks a
workspace's rows exactly (`retrieval/pg.py`, `vector_candidates`: the order's expression is not
the HNSW index's), since an HNSW scan stops at `ef_search` rows of every workspace before the
WHERE and can miss this one's nearest. This starts a PostgreSQL (pgserver, from `--pgserver DIR`
when given: a folder `pip install --no-deps --target DIR pgserver==0.1.4` filled, pgvector 0.6.2;
else the installed one), fills giok's table shape (two workspaces of N random unit 384-d
vectors each, `vector` or `halfvec` as the server has it, an HNSW index) and times the query
giok sends, both ways: the HNSW order and the exact one, `ef_search` 200, 50 rows, the median
and 90th percentile wall time of `--queries` random questions, and how many of the exact
nearest 50 the HNSW order returned.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000], help="rows per workspace")
    parser.add_argument("--queries", type=int, default=15)
    parser.add_argument("--pgserver", type=Path, help="a folder holding another pgserver build")
    args = parser.parse_args()
    if args.pgserver:
        sys.path.insert(0, str(args.pgserver))
    import numpy as np
    import pgserver  # type: ignore[import-untyped]
    import psycopg
    from pgvector import HalfVector, Vector  # type: ignore[import-untyped]
    from pgvector.psycopg import register_vector  # type: ignore[import-untyped]

    root = Path(tempfile.mkdtemp(prefix="giok-pg-exact-"))
    server = pgserver.get_server(root, cleanup_mode="stop")
    rng = np.random.default_rng(0)
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            register_vector(conn)
            version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[
                0
            ]
            half = tuple(int(x) for x in version.split(".")[:2]) >= (0, 7)
            kind, wrap = ("halfvec", HalfVector) if half else ("vector", Vector)
            print(f"pgvector {version}: {kind} columns, pgserver from {Path(pgserver.__file__).parent}")
            for n in args.sizes:
                conn.execute("DROP TABLE IF EXISTS bench_chunks")
                conn.execute(
                    f"CREATE TABLE bench_chunks (ws TEXT, cid BIGINT, embedding {kind}(384),"
                    " PRIMARY KEY (ws, cid))"
                )
                for ws in ("mine", "another"):
                    x = rng.normal(size=(n, 384)).astype(np.float32)
                    x /= np.linalg.norm(x, axis=1, keepdims=True)
                    with (
                        conn.cursor() as cur,
                        cur.copy(
                            "COPY bench_chunks (ws, cid, embedding) FROM STDIN WITH (FORMAT BINARY)"
                        ) as copy,
                    ):
                        copy.set_types(["text", "int8", kind])
                        for i, row in enumerate(x):
                            copy.write_row((ws, i, wrap(row)))
                conn.execute("SET maintenance_work_mem = '512MB'")
                start = time.perf_counter()
                conn.execute(f"CREATE INDEX ON bench_chunks USING hnsw (embedding {kind}_ip_ops)")
                build = time.perf_counter() - start
                conn.execute("ANALYZE bench_chunks")
                found: dict[str, list[set[int]]] = {}
                for label, order in (("HNSW order", "embedding <#> %s"), ("exact", "(embedding <#> %s) + 0")):
                    times, found[label] = [], []
                    qrng = np.random.default_rng(1)
                    for _ in range(args.queries):
                        q = qrng.normal(size=384).astype(np.float32)
                        q /= np.linalg.norm(q)
                        start = time.perf_counter()
                        with conn.transaction():
                            conn.execute("SET LOCAL hnsw.ef_search = 200")
                            rows = conn.execute(
                                f"SELECT cid, -(embedding <#> %s) FROM bench_chunks WHERE ws = %s"
                                f" ORDER BY {order} LIMIT 50",
                                (wrap(q), "mine", wrap(q)),
                            ).fetchall()
                        times.append((time.perf_counter() - start) * 1000)
                        found[label].append({c for c, _ in rows})
                    got = np.mean([len(f) for f in found[label]])
                    print(
                        f"{n:>9,} rows a workspace (two), {label:>10}: median {np.median(times):6.1f} ms,"
                        f" p90 {np.percentile(times, 90):6.1f} ms, {got:.0f} rows; index build {build:.0f} s"
                    )
                overlap = np.mean(
                    [
                        len(a & b) / max(1, len(b))
                        for a, b in zip(found["HNSW order"], found["exact"], strict=True)
                    ]
                )
                print(f"{'':>9}  the HNSW order returned {overlap:.3f} of the exact nearest 50")
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
