"""The shared index backend: PostgreSQL + pgvector (docs/teams.md, "Shared index").

The workspace files stay the source of truth and the local SQLite index (`giok.retrieval.index`)
stays the sync engine: it reads the files, chunks them and embeds only what changed. After each
sync, `PgIndex` mirrors the workspace's chunks into one shared PostgreSQL table (rows added and
removed by content, nothing re-embedded) and answers the retrieval calls from there:

- rows belong to the **workspace's identity**, not its name: a digest of the first commit of
  its git history (`identity`), the same on every clone and different for another team's
  workspace of the same name; each row is keyed by a **chunk id computed from its content**
  (path, lines, text and what the index derived from them: `chunk_id`), so two machines holding
  the same files publish the same rows and write nothing;
- a forget leaves a **tombstone** per workspace identity (a keyed digest of the forgotten
  chunk's text, and the entry id; never the text): no publish writes tombstoned content again,
  from any machine, and no row holding it is returned;
- every statement has a deadline (`giok.settings`: connect 5 s, statement 10 s): a server that
  stops answering, refuses or dies mid-publish gives one `IndexError_`, the local index and the
  files stay as they were and the publish runs again at the next search;
- keyword candidates: PostgreSQL full text over giok's own pre-computed terms and Hangul bigrams
  (`giok.text.terms`: the same Korean stems as SQLite's FTS5), a tsvector written literally
  (no PostgreSQL parsing, stemming or stop words), terms weighted A and bigrams B, found by a
  GIN index and ranked by FTS5's own bm25 formula computed in SQL (`ts_rank` ranked otherwise
  and half the keyword top 10 differed: docs/teams.md);
- vector candidates: an HNSW index (inner product over unit vectors = cosine) over `halfvec`
  columns: float16, as the SQLite index stores them (half the bytes, rows small enough to stay
  out of TOAST), computed in float32 (`vector` columns where pgvector is older than 0.7);
  where pgvector is older than 0.8 (no iterative index scan), a workspace's rows ranked exactly;
- chunk rows and document frequencies; the scope rule in the WHERE of every query that reads
  candidates or rows (`giok.retrieval.rows.Reader` on each row's `reader` key, as SQLite does),
  so a chunk the searcher may not see never leaves the server.

`PgIndex` is a `giok.retrieval.backend.SearchIndex`, as the local `Index` is (`matrix`,
`keyword_search`, `doc_freq`, `rows`, ...; what is the local index's, such as `embed_pending`,
it hands to the local index it is built on), so the hybrid scoring and cut-offs run unchanged
over its candidates. The ids it hands out are the local index's (consecutive lines of a diary are
consecutive ids, which search's neighbour rule reads); each maps to its row's chunk id. Its
`matrix()` holds no vectors: `mat @ qvec` asks the HNSW index for the top candidates, and
`rows(ids)` fills in the exact cosines of every row it returns (keyword hits and diary
neighbours included), which is all the scoring reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import re
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from giok.errors import IndexError_, InvalidInput
from giok.providers import embeddings
from giok.retrieval.backend import LocalIndex, SearchIndex
from giok.retrieval.rows import Reader, decode_vector, holds
from giok.store import git
from giok.text.terms import VERSION as TERMS_VERSION

TABLE_VERSION = "4"  # in the table name: a new layout gets a new table (rebuilt by the next publish)
POOL = 100  # candidates per query from HNSW (search.POOL)
EF_SEARCH = 200
BULK = 5000  # rows in one publish from which the HNSW index is rebuilt rather than grown
BATCH = 500  # rows a publish writes per round trip (each round trip well inside the statement timeout)
BUILD_RATE = 200  # rows/s an HNSW build is allowed beyond the statement timeout (measured 612 at 1M)
BACKENDS = ("sqlite", "postgres")
BUILD_MEMORY = (512 << 20, 4 << 30)  # maintenance_work_mem for an HNSW build: the graph's size, within these
TOMBSTONES = "giok_tombstones"  # (ws, kind, value): what was forgotten, per workspace identity
PENDING = "shared-tombstones.json"  # in .giok/: tombstones the shared index has not taken yet
LOCAL_ID = "shared-index-id"  # in .giok/: the identity of a workspace with no commit yet
ROOT_CACHE = "shared-index-root"  # in .giok/: "HEAD first-commit", the walk's last answer

# The local index's columns a chunk id covers: what a row shows or is filtered by, and `hash`
# (the text embedded, so a new vector is a new row).
_LOCAL = (
    "key",
    "path",
    "start_line",
    "end_line",
    "text",
    "layer",
    "scope",
    "lang",
    "date",
    "expires",
    "superseded",
    "source",
    "priority",
    "category",
    "reader",
    "hash",
)
_COLUMNS = (
    "key",
    "path",
    "start_line",
    "end_line",
    "text",
    "layer",
    "scope",
    "lang",
    "date",
    "expires",
    "superseded",
    "source",
    "priority",
    "terms",
    "category",
)


def chunk_id(row: tuple) -> int:
    """A chunk's identity from its content (the `_LOCAL` columns and the analysis version): a
    signed 64-bit digest, the same on every machine indexing the same file."""
    raw = "\x1f".join("\x00" if v is None else str(v) for v in (TERMS_VERSION, *row))
    digest = hashlib.sha256(raw.encode("utf-8", errors="surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def identity(root: Path, data_dir: Path) -> tuple[str, str]:
    """(the workspace's key in the shared tables, the secret its content digests are keyed with).

    The secret is the id of the first commit of the workspace's history (the root reached by
    first parents from HEAD): it travels with git, so every clone has it, and two workspaces
    created apart have different ones (giok's first commit carries a random workspace id). The
    key is a digest of it, so the database never holds the secret. A workspace with no commit
    yet has a random identity of this machine (`.giok/shared-index-id`; no clone of it can
    exist) until its first commit; a shallow clone cannot see its first commit: one clear error."""
    gitdir = git.git_dir(root)
    if gitdir is not None and (git.common_dir(gitdir) / "shallow").exists():
        raise InvalidInput(
            f"the shared index needs the workspace's whole history and {root} is a shallow clone:"
            f" run `git -C {root} fetch --unshallow`"
        )
    first = _first_commit(root, data_dir)
    if first:
        secret = "git:" + first
    else:
        path = data_dir / LOCAL_ID
        try:
            secret = path.read_text("ascii").strip()
        except (OSError, UnicodeDecodeError):
            secret = ""
        if not secret.startswith("local:"):
            secret = "local:" + os.urandom(16).hex()
            path.write_text(secret + "\n", "ascii")
    return _key(secret), secret


def _first_commit(root: Path, data_dir: Path) -> str | None:
    """The root commit reached from HEAD by first parents (None: no commit yet). Walking a long
    history takes a while (0.7 s at 50k commits), so the answer is kept in .giok/ with the HEAD
    it was found from, and reused while that HEAD is still an ancestor of the current one."""
    head = git.head_id(root)
    if head is None:
        return None
    cache = data_dir / ROOT_CACHE
    try:
        seen, first = cache.read_text("ascii").split()
    except (OSError, UnicodeDecodeError, ValueError):
        seen = first = ""
    if not (
        first
        and (
            seen == head
            or git.run(root, "merge-base", "--is-ancestor", seen, "HEAD", check=False).returncode == 0
        )
    ):
        proc = git.run(root, "rev-list", "--first-parent", "--max-parents=0", "HEAD", check=False)
        roots = proc.stdout.split() if proc.returncode == 0 else []
        if not roots:
            return None
        first = roots[-1]
    if seen != head:
        with contextlib.suppress(OSError):
            cache.write_text(f"{head} {first}\n", "ascii")
    return first


def _key(secret: str) -> str:
    return hashlib.sha256(f"giok-workspace:{secret}".encode()).hexdigest()[:32]


def _retired(data_dir: Path) -> str | None:
    """The key of the identity this machine gave the workspace before its first commit, if
    that identity is no longer its own (its rows go at the next publish)."""
    try:
        secret = (data_dir / LOCAL_ID).read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return _key(secret) if secret.startswith("local:") else None


def _column_vector(vec: np.ndarray | None, halfvec: bool = True):
    """A vector as the table's column holds it: `halfvec` (float16), or `vector` where the table
    was made by a pgvector older than 0.7, which has no halfvec."""
    from pgvector import HalfVector, Vector

    return None if vec is None else (HalfVector if halfvec else Vector)(np.asarray(vec, dtype=np.float32))


HNSW_SINCE = (0, 5)  # pgvector's first version with the HNSW index
HALFVEC_SINCE = (0, 7)  # … with halfvec (before it, the table's vectors are `vector`)
ITERATIVE_SINCE = (0, 8)  # … with iterative index scans (before it, a search ranks exactly)


def _version(text: str | None) -> tuple[int, ...]:
    """pgvector's version ("0.6.2") as numbers; () when unknown."""
    found = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(found.group(1)), int(found.group(2))) if found else ()


def _driver():
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError as exc:  # pragma: no cover - the extra is not installed
        raise InvalidInput("the postgres backend needs the extra: pip install 'giok[postgres]'") from exc
    return psycopg, register_vector


def _redact(dsn: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", re.sub(r"password=\S+", "password=***", dsn))


def settings(ws) -> dict:
    """The home config's `"index": {"backend": "sqlite" | "postgres", "dsn": "...",
    "connect_timeout": s, "statement_timeout": s}`; the timeouts default to giok.settings'
    (GIOK_PG_CONNECT_TIMEOUT, GIOK_PG_STATEMENT_TIMEOUT)."""
    conf = ws.home.setting("index", None) or {}
    if not isinstance(conf, dict):
        raise InvalidInput('config key "index" must be {"backend": "sqlite" | "postgres", "dsn": ...}')
    backend = conf.get("backend", "sqlite")
    if backend not in BACKENDS:
        raise InvalidInput(f"index backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if backend == "postgres" and not conf.get("dsn"):
        raise InvalidInput('the postgres index backend needs "dsn" in the home config\'s "index"')
    return {"backend": backend, "dsn": conf.get("dsn"), **_timeouts(ws, conf)}


def _configured(ws) -> bool:
    conf = ws.home.setting("index", None)
    return isinstance(conf, dict) and conf.get("backend") == "postgres"


def _timeouts(ws, conf: dict) -> dict[str, float]:
    out = {}
    for key, default in (
        ("connect_timeout", ws.settings.pg_connect_timeout),
        ("statement_timeout", ws.settings.pg_statement_timeout),
    ):
        value = conf.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
            raise InvalidInput(f'"index": {{"{key}": ...}} must be a number of seconds, more than 0')
        out[key] = float(value)
    return out


# The chunk tables of this layout (a `content` column): a forget deletes from each of them.
_LAYOUT_TABLES = """SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE c.relkind = 'r' AND c.relname LIKE 'giok\\_chunks\\_%' AND a.attname = 'content'
    AND NOT a.attisdropped"""


def table_for(embedder: embeddings.Embedder) -> str:
    """One table per embedding model (a vector column has one dimension; a model change never
    mixes vectors): giok_chunks_<8 hex of the model identity>."""
    return "giok_chunks_" + hashlib.sha256(f"{TABLE_VERSION}:{embedder.identity}".encode()).hexdigest()[:8]


def tsquery(items: list[str], prefix: bool = False) -> str:
    """giok's query terms as a tsquery literal: each term quoted, OR-ed (as `quote_fts`)."""
    star = ":*" if prefix else ""
    quoted = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" + star for t in items if t and t.strip()]
    return " | ".join(quoted)


def _tsvector(terms: list[str], grams: list[str]) -> tuple[str, int]:
    """(tsvector literal, token count) of a chunk's terms (weight A) and bigrams (weight B), one
    position per occurrence so bm25 sees each term's frequency (no PostgreSQL parsing, stemming
    or stop words: the lexemes are giok's own terms)."""
    where: dict[str, list[str]] = {}
    n = 0
    for weight, items in (("A", terms), ("B", grams)):
        for t in items:
            n += 1
            where.setdefault(t, []).append(f"{min(n, 16383)}{weight}")
    quoted = (
        "'" + t.replace("\\", "\\\\").replace("'", "''") + "':" + ",".join(p[:256]) for t, p in where.items()
    )
    return " ".join(quoted), n


def _from_fts(fts_query: str) -> tuple[list[str], bool]:
    """The terms of a `quote_fts` string (what search hands `keyword_search`)."""
    found = re.findall(r'"((?:[^"]|"")*)"(\*?)', fts_query)
    return [t.replace('""', '"') for t, _ in found], any(s for _, s in found)


def visible_sql(user: str | None, thread: str | None, include_superseded: bool = False) -> tuple[str, list]:
    """The scope rule of `search._visible` as a WHERE clause: workspace and task: entries for
    all, user:U only for U, thread:T only in T (`Reader`); superseded rows only when asked."""
    sql, args = Reader(user, thread).where(mark="%s")
    if not include_superseded:
        sql += " AND NOT superseded"
    return sql, list(args)


def _where(reader: Reader | None, column: str = "reader") -> tuple[str, list[str]]:
    return reader.where(column, "%s") if reader is not None else ("", [])


class _Vectors:
    """Stands in for the (n, dim) matrix: `mat @ qvec` is one HNSW query."""

    def __init__(self, index: PgIndex, ids: np.ndarray):
        self.index, self.ids = index, ids
        self.shape = (len(ids), index.embedder.dim)

    def __matmul__(self, qvec: np.ndarray) -> np.ndarray:
        return self.index.vector_scores(np.asarray(qvec, dtype=np.float32), self.ids)


class PgIndex(SearchIndex):
    """A workspace's index in PostgreSQL (see the module doc). `PgIndex.for_workspace(ws, dsn, local)`."""

    def __init__(
        self,
        local: LocalIndex,
        ws_name: str,
        dsn: str,
        ws_id: tuple[str, str],
        timeouts: tuple[float, float] = (5.0, 10.0),
    ):
        self.local = local
        self.ws_name = ws_name
        self.ws_id, self._secret = ws_id  # the rows' workspace key; the secret digests are keyed with
        self.dsn = dsn
        self.connect_timeout, self.statement_timeout = timeouts
        self.table = table_for(local.embedder)
        self._conn: Any = None  # opened at the first statement (a forget purges locally without it)
        self._nesting = threading.local()  # each thread's depth in `_talk` (servers search in threads)
        self._watch: set[object] = set()  # the deadlines now running
        self._guard = threading.Lock()
        self._cut: float | None = None  # the deadline that cut the connection
        self._published: int | None = None
        self._nulls = False
        self._mean: float | None = None
        self._df: dict[tuple[str, bool], int] = {}  # documents per term (and prefix), kept per publish
        self._n: int | None = None  # chunks, kept per publish
        self._ids: np.ndarray | None = None  # local ids of the published chunks, sorted
        self._cid_of: dict[int, int] = {}  # local id -> chunk id
        self._id_of: dict[int, int] = {}  # chunk id -> local id
        self._pending: tuple[np.ndarray, np.ndarray] | None = None  # (qvec, cos array) of the running search
        self._vecs: dict[int, np.ndarray] = {}
        self._retire: str | None = None  # the key of a commitless identity this workspace had
        self._halfvec = True  # the table's vectors are halfvec (pgvector 0.7+), else vector (read at connect)
        self._iterative = True  # pgvector 0.8+: a filtered HNSW scan goes on until it has enough

    _open: ClassVar[dict[tuple[str, str], PgIndex]] = {}

    @classmethod
    def for_workspace(cls, ws, dsn: str, local: LocalIndex) -> PgIndex:
        """The shared index of workspace `ws` at `dsn`, over its local index `local`
        (`Index.local_for_workspace(ws)`); one per local index and dsn in a process."""
        key = (str(local.db_path), dsn)
        cached = cls._open.get(key)
        if cached and cached.local is local:
            return cached
        conf = settings(ws) if _configured(ws) else _timeouts(ws, {})
        ident = identity(ws.root, ws.data_dir)
        timeouts = (conf["connect_timeout"], conf["statement_timeout"])
        made = cls._open[key] = cls(local, ws.name, dsn, ident, timeouts)
        if ident[1].startswith("git:"):
            made._retire = _retired(ws.data_dir)
        return made

    # -- what is the local index's: its model, its sync's switches and notes, its file
    @property
    def embedder(self) -> embeddings.Embedder:
        return self.local.embedder

    @embedder.setter
    def embedder(self, value: embeddings.Embedder) -> None:
        self.local.embedder = value

    @property
    def defer_vectors(self) -> bool:  # the MCP warm-up sets it: it is the local sync's switch
        return self.local.defer_vectors

    @defer_vectors.setter
    def defer_vectors(self, value: bool) -> None:
        self.local.defer_vectors = value

    @property
    def notes(self) -> list[str]:
        return self.local.notes

    @notes.setter
    def notes(self, value: list[str]) -> None:
        self.local.notes = value

    @property
    def progress(self) -> Callable[[int, int, int, int], None] | None:  # the local sync reports it
        return self.local.progress

    @progress.setter
    def progress(self, value: Callable[[int, int, int, int], None] | None) -> None:
        self.local.progress = value

    @property
    def home(self) -> Path | None:
        return self.local.home

    @home.setter
    def home(self, value: Path | None) -> None:
        self.local.home = value

    @property
    def db(self) -> sqlite3.Connection:
        return self.local.db

    @db.setter
    def db(self, value: sqlite3.Connection) -> None:
        self.local.db = value

    def check_model(self) -> None:
        self.local.check_model()

    def pending_vectors(self) -> int:
        return self.local.pending_vectors()

    def embed_pending(self, lock: AbstractContextManager | None = None) -> int:
        return self.local.embed_pending(lock)

    def date_ids(self, prefix: str, limit: int, reader: Reader | None = None) -> list[int]:
        """`Index.date_ids`, answered by the local index (whose ids this index hands out)."""
        return self.local.date_ids(prefix, limit, reader)

    # -- the connection: deadlines, and one clear error ------------------------------------------
    @property
    def conn(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._connect()
        return self._conn

    def _connect(self) -> None:
        psycopg, register_vector = _driver()
        with self._talk(self.connect_timeout + self.statement_timeout):
            self._conn = None
            self._conn = psycopg.connect(
                self.dsn, autocommit=True, connect_timeout=max(2, math.ceil(self.connect_timeout))
            )
            self._conn.execute(
                f"SET statement_timeout = {int(self.statement_timeout * 1000)};"
                " CREATE EXTENSION IF NOT EXISTS vector"
            )
            register_vector(self._conn)
            found = self._conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            version = _version(found[0] if found else None)
            if version < HNSW_SINCE:
                raise psycopg.NotSupportedError(
                    f"pgvector {found[0] if found else '(unknown)'} has no HNSW index:"
                    " giok's shared index needs pgvector 0.5 or newer"
                )
            self._iterative = version >= ITERATIVE_SINCE
            # a table made before (by another pgvector) keeps its own column type
            kind = self._conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
                (self.table,),
            ).fetchone()
            self._halfvec = str(kind[0]).startswith("halfvec") if kind else version >= HALFVEC_SINCE
            self._create()

    @contextlib.contextmanager
    def _talk(self, seconds: float | None = None) -> Iterator[None]:
        """Wraps every exchange with PostgreSQL. A deadline (`seconds`; None: the statement
        timeout; 0: none): past it the connection is cut, so a server that stopped answering
        (frozen, or a network gone quiet) cannot hang giok (its own statement_timeout cannot fire
        then). The outermost one turns any failure into one `IndexError_`."""
        psycopg, _ = _driver()
        limit = self.statement_timeout if seconds is None else seconds
        token, timer = object(), None
        if limit:
            with self._guard:
                self._watch.add(token)
            timer = threading.Timer(limit, self._hang_up, (token, limit))
            timer.daemon = True
            timer.start()
        depth = self._nesting.depth = getattr(self._nesting, "depth", 0) + 1
        try:
            yield
        except psycopg.Error as exc:
            if depth > 1:
                raise
            raise self._fault(exc) from exc
        finally:
            self._nesting.depth = depth - 1
            if timer is not None:
                with self._guard:
                    self._watch.discard(token)
                timer.cancel()

    def _hang_up(self, token: object, limit: float) -> None:
        """The deadline passed: shut the connection's socket (the blocked call then fails)."""
        with self._guard:
            if token not in self._watch or self._conn is None:
                return
            self._cut = limit
            # (the connection may be closing under us: then there is nothing to cut)
            with (
                contextlib.suppress(Exception),
                socket.socket(fileno=os.dup(self._conn.pgconn.socket)) as sock,
            ):
                sock.shutdown(socket.SHUT_RDWR)

    def _fault(self, exc: Exception) -> IndexError_:
        """One line for what went wrong; the connection and every cache of its answers dropped
        (the next call reconnects and publishes again)."""
        psycopg, _ = _driver()
        where = f"PostgreSQL at {_redact(self.dsn)}"
        detail = _redact((str(exc).strip().splitlines() or [type(exc).__name__])[0])
        if self._cut is not None:
            msg = f"{where} did not answer within {self._cut:g} s (statement timeout)"
        elif self._conn is None:
            why = (
                f"within {self.connect_timeout:g} s"
                if isinstance(exc, psycopg.errors.ConnectionTimeout)
                else ""
            )
            msg = f"cannot connect to {where}{' ' + why if why else ''}: {detail}"
        elif isinstance(exc, psycopg.errors.QueryCanceled):
            msg = f"{where} cancelled a statement after {self.statement_timeout:g} s (statement timeout)"
        elif self._conn.closed or self._conn.broken:
            msg = f"lost the connection to {where}: {detail}"
        else:
            msg = f"{where}: {detail}"
        self._drop()
        return IndexError_(
            msg + "; the files and this machine's index are unchanged (the shared index is"
            " brought up to date at the next search)"
        )

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn, self._cut, self._published, self._ids = None, None, None, None
        self._mean, self._df, self._n = None, {}, None

    def _create(self) -> None:
        """The workspace's table, with `halfvec` columns, or `vector` where pgvector has no
        halfvec (`_halfvec` False: older than 0.7, as Ubuntu 24.04 packages it)."""
        dim = int(self.local.embedder.dim)
        t = self.table
        column, ops = ("HALFVEC", "halfvec_ip_ops") if self._halfvec else ("VECTOR", "vector_ip_ops")
        self.conn.execute(
            f"""CREATE TABLE IF NOT EXISTS {t} (
            ws TEXT NOT NULL, cid BIGINT NOT NULL, content TEXT NOT NULL, key TEXT, path TEXT,
            start_line INT, end_line INT, text TEXT, layer TEXT, scope TEXT, lang TEXT, date TEXT,
            expires TEXT, superseded BOOLEAN NOT NULL DEFAULT FALSE, source TEXT, priority INT,
            terms TEXT, category TEXT, reader TEXT NOT NULL DEFAULT '*',
            tsv TSVECTOR, ntok INT, embedding {column}({dim}), PRIMARY KEY (ws, cid));
            CREATE INDEX IF NOT EXISTS {t}_tsv ON {t} USING gin (tsv);
            CREATE INDEX IF NOT EXISTS {t}_hnsw ON {t} USING hnsw (embedding {ops});
            CREATE TABLE IF NOT EXISTS {TOMBSTONES} (ws TEXT NOT NULL, kind TEXT NOT NULL,
            value TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (ws, kind, value));"""
        )

    # -- sync: the local index, then its rows mirrored ----------------------------------------
    def sync(self) -> dict:
        stats = self.local.sync()
        self.publish()
        return stats

    def rebuild(self) -> dict:
        stats = self.local.rebuild()
        with self._talk():
            self.conn.execute(f"DELETE FROM {self.table} WHERE ws = %s", (self.ws_id,))
        self._published = None
        self.publish()
        return stats

    def digest(self, text: str) -> str:
        """The content digest of a chunk's text, keyed with the workspace's secret (a reader of
        the database alone cannot test a guess at forgotten text against a tombstone)."""
        data = text.encode("utf-8", errors="surrogateescape")
        return hmac.new(self._secret.encode(), data, hashlib.sha256).hexdigest()[:32]

    def _local_rows(self) -> dict[int, tuple[int, str, str | None, bool]]:
        """chunk id -> (local id, content digest, entry id, has a vector) of every local chunk."""
        cols = ", ".join(f"m.{c}" for c in _LOCAL)
        got = self.local.db.execute(
            f"SELECT m.id, {cols}, c.hash IS NOT NULL FROM memories m"
            " LEFT JOIN embedding_cache c ON c.hash = m.hash AND c.model = ?",
            (self.embedder.identity,),
        ).fetchall()
        return {chunk_id(r[1:-1]): (r[0], self.digest(r[5]), r[12], bool(r[-1])) for r in got}

    def publish(self) -> int:
        """Mirror the local index's chunks by chunk id: add the ones PostgreSQL lacks (or holds
        without a vector the local index now has), drop the ones this workspace no longer has,
        never write tombstoned content. Returns rows written (added and deleted)."""
        self._send_tombstones()
        if self._retire:
            self._drop_retired()
        gen = self.local.generation()
        if self._published == gen and not self._missing_vectors():
            return 0
        local = self._local_rows()
        with self._talk():
            keep, remote, gone, todo = self._plan(local)
        if gone or todo:  # under the workspace's lock, planned again: another machine may have written
            with self._talk(0), self.conn.transaction():
                with self._talk():
                    self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
                    keep, remote, gone, todo = self._plan(local)
                self._write(keep, gone, todo)
            if len(todo) >= BULK:  # hint bits and planner statistics now, not during the first searches
                self._vacuum()
        self._adopt(keep)
        self._published, self._mean, self._df, self._n = gen, None, {}, None
        self._nulls = any(remote.get(c, True) and not v[3] for c, v in keep.items())
        return len(gone) + len(todo)

    def _drop_retired(self) -> None:
        """The workspace got its first commit: the rows and tombstones this machine kept under
        its commitless identity go (no other machine could have used it)."""
        with self._talk(0), self.conn.transaction():
            with self._talk():
                tables = [r[0] for r in self.conn.execute(_LAYOUT_TABLES).fetchall()]
            for table in [*tables, TOMBSTONES]:
                with self._talk():
                    self.conn.execute(f"DELETE FROM {table} WHERE ws = %s", (self._retire,))
        (self.local.db_path.parent / LOCAL_ID).unlink(missing_ok=True)
        self._retire = None

    def _plan(self, local: dict) -> tuple[dict, dict, list[int], list[int]]:
        """(the local chunks to publish, PostgreSQL's {chunk id: no vector}, chunk ids to
        delete, chunk ids to write)."""
        tomb = set(
            self.conn.execute(f"SELECT kind, value FROM {TOMBSTONES} WHERE ws = %s", (self.ws_id,)).fetchall()
        )
        keep = {
            c: v for c, v in local.items() if ("content", v[1]) not in tomb and ("entry", v[2]) not in tomb
        }
        remote = dict(
            self.conn.execute(
                f"SELECT cid, embedding IS NULL FROM {self.table} WHERE ws = %s", (self.ws_id,)
            ).fetchall()
        )
        gone = [c for c in remote if c not in keep]
        todo = sorted(c for c, v in keep.items() if c not in remote or (remote[c] and v[3]))
        return keep, remote, gone, todo

    def _write(self, keep: dict, gone: list[int], todo: list[int]) -> None:
        bulk = len(todo) >= BULK
        if gone:
            with self._talk():
                self.conn.execute(
                    f"DELETE FROM {self.table} WHERE ws = %s AND cid = ANY(%s)", (self.ws_id, gone)
                )
        if bulk:  # building the HNSW graph once: ~3x faster than growing it
            with self._talk():
                self.conn.execute(f"DROP INDEX IF EXISTS {self.table}_hnsw")
        for start in range(0, len(todo), BATCH):
            with self._talk():
                self._insert({keep[c][0]: (c, keep[c][1]) for c in todo[start : start + BATCH]})
        if bulk:  # the graph (every workspace's rows) in memory, or the build slows several-fold
            with self._talk():
                rows = self.conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]
            need = int(2.2 * rows * ((2 if self._halfvec else 4) * self.embedder.dim + 64))
            mem = min(max(need, BUILD_MEMORY[0]), BUILD_MEMORY[1])
            allowance = self.statement_timeout + rows / BUILD_RATE
            with self._talk(allowance):
                self.conn.execute(
                    f"SET LOCAL maintenance_work_mem = '{mem // (1 << 20)}MB';"
                    f" SET LOCAL statement_timeout = {int(allowance * 1000)}"
                )
                self._create()

    def _vacuum(self) -> None:
        with self._talk():
            rows = self.conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]
        allowance = self.statement_timeout + rows / BUILD_RATE
        with self._talk(allowance):
            self.conn.execute(f"SET statement_timeout = {int(allowance * 1000)}")
            self.conn.execute(f"VACUUM ANALYZE {self.table}")
            self.conn.execute(f"SET statement_timeout = {int(self.statement_timeout * 1000)}")

    def _adopt(self, keep: dict) -> None:
        """The id map of what was published: local ids (what search hands around) <-> chunk ids."""
        self._id_of = {c: v[0] for c, v in keep.items()}
        self._cid_of = {v[0]: c for c, v in keep.items()}
        self._ids = np.array(sorted(self._cid_of), dtype=np.int64)

    def _lock_key(self) -> int:
        return int.from_bytes(hashlib.sha256(f"giok:{self.ws_id}".encode()).digest()[:8], "big", signed=True)

    def _missing_vectors(self) -> bool:
        """True when rows went out without a vector (`defer_vectors`) that the local index now has."""
        return self._nulls and not self.local.pending_vectors()

    def _insert(self, todo: dict[int, tuple[int, str]]) -> None:
        """Write the rows of these local ids ({local id: (chunk id, content digest)}); a row the
        local index changed since it was planned is left for the next publish."""
        conn = self.conn  # connected first: the column type (`_halfvec`) is read at connect
        marks = ",".join("?" * len(todo))
        cols = ", ".join(f"m.{c}" for c in _LOCAL)
        rows = self.local.db.execute(
            f"SELECT m.id, {cols}, f.terms, f.grams, c.vector FROM memories m"
            f" JOIN memories_fts f ON f.rowid = m.id LEFT JOIN embedding_cache c ON c.hash = m.hash"
            f" AND c.model = ? WHERE m.id IN ({marks})",
            [self.embedder.identity, *todo],
        ).fetchall()
        out = []
        for r in rows:
            cid, content = todo[r[0]]
            if chunk_id(r[1:17]) != cid:
                continue
            row = dict(zip(_LOCAL, r[1:17], strict=True))
            vec = _column_vector(decode_vector(r[19]), self._halfvec) if r[19] else None
            tsv, ntok = _tsvector((r[17] or "").split(), (r[18] or "").split())
            row.update(superseded=bool(row["superseded"]), terms=r[17])
            out.append((self.ws_id, cid, content, *(row[c] for c in _COLUMNS), row["reader"], tsv, ntok, vec))
        names = ", ".join(_COLUMNS)
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {self.table} (ws, cid, content, {names}, reader, tsv, ntok, embedding)"
                f" VALUES (%s, %s, %s, {', '.join(['%s'] * len(_COLUMNS))}, %s, CAST(%s AS tsvector), %s, %s)"
                f" ON CONFLICT (ws, cid) DO UPDATE SET embedding"
                f" = coalesce(EXCLUDED.embedding, {self.table}.embedding)",
                out,
            )

    # -- forgetting: tombstones ---------------------------------------------------------------
    def purge(self, texts, ids=(), paths=()) -> int:
        """`Index.purge`, and the shared index at once: a tombstone per forgotten chunk (its
        content digest) and entry id, kept in PostgreSQL for this workspace identity, and every
        row holding the text deleted, whichever machine published it. The tombstones wait in
        .giok/ until PostgreSQL has them (a publish sends them first), so a server that is down
        delays them and never loses them."""
        self._bury(self._forgotten(texts, ids))
        try:
            n = self.local.purge(texts, ids, paths)
        finally:
            try:
                self._send_tombstones(texts)
            except IndexError_ as exc:
                raise IndexError_(f"forgotten here, not yet in the shared index: {exc}") from exc
        self._published = None
        self.publish()
        return n

    def _forgotten(self, texts, ids) -> list[list[str]]:
        """[kind, value] tombstones for a forget: the content digest of every local chunk holding
        one of `texts` or coming from one of the entry `ids`, and the ids."""
        needles = [t.casefold() for t in texts if t and t.strip()]
        ids = [str(i) for i in ids]
        clauses = ["giok_holds(text, ?)"] * len(needles) + ["source = ?"] * len(ids)
        marks = [["entry", i] for i in ids]
        if clauses:
            self.local.db.create_function("giok_holds", 2, holds, deterministic=True)
            got = self.local.db.execute(
                f"SELECT DISTINCT text FROM memories WHERE {' OR '.join(clauses)}", [*needles, *ids]
            )
            marks += [["content", self.digest(r[0])] for r in got]
        return marks

    def _pending_file(self) -> Path:
        return self.local.db_path.parent / PENDING

    def _waiting(self) -> list[list[str]]:
        try:
            got = json.loads(self._pending_file().read_text("utf-8"))
        except (OSError, ValueError):
            return []
        return (
            [[str(k), str(v)] for k, v in got if k in ("content", "entry")] if isinstance(got, list) else []
        )

    def _bury(self, marks: list[list[str]]) -> None:
        from giok.store.fsutil import atomic_write

        if marks:
            both = list(dict.fromkeys(map(tuple, self._waiting() + marks)))
            atomic_write(self._pending_file(), json.dumps(both).encode())

    def _send_tombstones(self, texts=()) -> None:
        """The waiting tombstones into PostgreSQL, and the rows they (or `texts`) name deleted
        from every table of this layout, in one transaction under the workspace's lock."""
        marks = self._waiting()
        needles = [t for t in texts if t and t.strip()]
        if not marks and not needles:
            return
        with self._talk(0), self.conn.transaction():
            with self._talk():
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
                tables = [r[0] for r in self.conn.execute(_LAYOUT_TABLES).fetchall()]
            for table in tables:
                for needle in needles:  # another machine's chunk holding the text: its digest too
                    with self._talk():
                        got = self.conn.execute(
                            f"SELECT DISTINCT content FROM {table} WHERE ws = %s"
                            " AND strpos(lower(text), lower(%s)) > 0",
                            (self.ws_id, needle),
                        ).fetchall()
                    marks += [["content", r[0]] for r in got]
            with self._talk(), self.conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {TOMBSTONES} (ws, kind, value) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    [(self.ws_id, k, v) for k, v in dict.fromkeys(map(tuple, marks))],
                )
            content = [v for k, v in marks if k == "content"]
            entries = [v for k, v in marks if k == "entry"]
            for table in tables:
                with self._talk():
                    self.conn.execute(
                        f"DELETE FROM {table} WHERE ws = %s AND (content = ANY(%s) OR source = ANY(%s))",
                        (self.ws_id, content, entries),
                    )
        self._pending_file().unlink(missing_ok=True)
        self._published = None

    # -- retrieval: what search calls ---------------------------------------------------------
    def generation(self) -> int:
        return self.local.generation()

    def matrix(self) -> tuple[np.ndarray, Any]:
        if self._ids is None:  # not published by this process: the id map from both sides
            local = self._local_rows()
            with self._talk():
                self._adopt(self._plan(local)[0])
        assert self._ids is not None
        return self._ids, _Vectors(self, self._ids)

    def _local_ids(self, got) -> list[tuple[int, float]]:
        """(chunk id, score) rows as (local id, score); a chunk this machine does not hold (another
        machine published it since) is left out."""
        return [(self._id_of[c], float(x)) for c, x in got if c in self._id_of]

    def vector_candidates(
        self, qvec: np.ndarray, limit: int = POOL, where: str = "", args=()
    ) -> list[tuple[int, float]]:
        """(id, cosine) of the `limit` nearest chunks by the HNSW index (approximate). Where
        pgvector is older than 0.8, an HNSW scan stops at `ef_search` rows of every workspace and
        reader before the WHERE, so it could miss this workspace's nearest: the workspace's rows
        are ranked exactly instead (the order's expression is not the index's)."""
        with self._talk(), self.conn.transaction():
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, limit)}")
            if self._iterative:
                self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            q = _column_vector(qvec, self._halfvec)
            order = "embedding <#> %s" if self._iterative else "(embedding <#> %s) + 0"
            got = self.conn.execute(
                f"SELECT cid, -(embedding <#> %s) FROM {self.table} WHERE ws = %s"
                f"{' AND ' + where if where else ''} ORDER BY {order} LIMIT %s",
                (q, self.ws_id, *args, q, limit),
            ).fetchall()
        return self._local_ids(got)

    def cosines(self, qvec: np.ndarray, reader: Reader | None = None) -> np.ndarray:
        """`Index.cosines`: the HNSW top POOL among the rows `reader` may see (the WHERE filters)."""
        return self.vector_scores(np.asarray(qvec, dtype=np.float32), self.matrix()[0], reader)

    def vector_scores(self, qvec: np.ndarray, ids: np.ndarray, reader: Reader | None = None) -> np.ndarray:
        """A cosine per id: exact for the HNSW top POOL, -2 (below any cosine) elsewhere until
        `rows()` fills in the rows the scoring reads."""
        cos = np.full(len(ids), -2.0, dtype=np.float32)
        where, args = _where(reader)
        for cid, c in self.vector_candidates(qvec, POOL, where, args):
            pos = int(np.searchsorted(ids, cid))
            if pos < len(ids) and ids[pos] == cid:
                cos[pos] = c
        self._pending = (qvec, cos)
        return cos

    def keyword_search(
        self, fts_query: str, limit: int, reader: Reader | None = None
    ) -> list[tuple[int, float]]:
        items, prefix = _from_fts(fts_query)
        where, args = _where(reader, "c.reader")
        return self.keyword_candidates(items, limit, prefix, where, args)

    def keyword_candidates(
        self, items: list[str], limit: int, prefix: bool = False, where: str = "", args=()
    ) -> list[tuple[int, float]]:
        """(id, bm25) of the best `limit` chunks having any of the terms: FTS5's bm25 (k1 1.2,
        b 0.75, terms weighted 1.0 and bigrams 0.3, as `Index.keyword_search`) computed in SQL
        from the tsvector's positions, so both backends rank keyword candidates alike."""
        items = [t for t in dict.fromkeys(items) if t and t.strip()]
        q = tsquery(items, prefix)
        if not q:
            return []
        total = self._total()
        if not total:
            return []
        idf = []
        for t in items:
            hits = self._hits(t, prefix)
            idf.append(max(1e-6, math.log((total - hits + 0.5) / (hits + 0.5))))
        match = "u.lexeme = q.term" + (" OR left(u.lexeme, length(q.term)) = q.term" if prefix else "")
        with self._talk():
            got = self.conn.execute(
                f"""WITH q(i, term, idf) AS (SELECT * FROM unnest(%s::int[], %s::text[], %s::float8[])),
                f AS (
                    SELECT c.cid, c.ntok, q.i, q.idf,
                           sum((SELECT sum(CASE WHEN w = 'A' THEN 1.0 ELSE 0.3 END)
                                FROM unnest(u.weights) w)) AS freq
                    FROM {self.table} c CROSS JOIN LATERAL unnest(c.tsv) u JOIN q ON ({match})
                    WHERE c.ws = %s AND c.tsv @@ CAST(%s AS tsquery){" AND " + where if where else ""}
                    GROUP BY c.cid, c.ntok, q.i, q.idf)
                SELECT cid, sum(idf * freq * 2.2 / (freq + 1.2 * (0.25 + 0.75 * ntok / %s))) AS r
                FROM f GROUP BY cid ORDER BY r DESC, cid LIMIT %s""",
                (list(range(len(items))), items, idf, self.ws_id, q, *args, self._avgdl(), limit),
            ).fetchall()
        return self._local_ids(got)

    def _count(self, where: str, *args) -> int:
        sql = f"SELECT count(*) FROM {self.table} WHERE ws = %s AND {where}"
        with self._talk():
            return int(self.conn.execute(sql, (self.ws_id, *args)).fetchone()[0])

    def _hits(self, term: str, prefix: bool = False) -> int:
        """Chunks holding `term` (a prefix of a term), counted once per publish."""
        key = (term, prefix)
        if key not in self._df:
            self._df[key] = self._count("tsv @@ CAST(%s AS tsquery)", tsquery([term], prefix))
        return self._df[key]

    def _total(self) -> int:
        """Chunks of this workspace, counted once per publish (a count over every row each
        search was a tenth of PostgreSQL's search time at 100k chunks)."""
        if self._n is None:
            self._n = self._count("TRUE")
        return self._n

    def _avgdl(self) -> float:
        """Mean tokens per chunk (terms and bigrams), as FTS5's bm25 uses; kept per publish."""
        if self._mean is None:
            with self._talk():
                got = self.conn.execute(
                    f"SELECT avg(ntok) FROM {self.table} WHERE ws = %s", (self.ws_id,)
                ).fetchone()[0]
            self._mean = float(got or 1.0) or 1.0
        return self._mean

    def doc_freq(self, terms: list[str]) -> tuple[dict[str, int], int]:
        if not terms:
            return {}, 0
        df = {t: n for t in terms if (n := self._hits(t))}
        return df, self._total()

    def rows(self, ids: list[int], reader: Reader | None = None) -> dict[int, dict]:
        """The rows of `ids` that `reader` may see, never one a tombstone names."""
        out: dict[int, dict] = {}
        cids = [self._cid_of[i] for i in ids if i in self._cid_of]
        cols = ", ".join(f"c.{c}" for c in _COLUMNS)
        where, args = _where(reader, "c.reader")
        with self._talk():
            got = self.conn.execute(  # binary: 300 vectors parsed from text took most of a search
                f"SELECT c.cid, {cols}, c.embedding FROM {self.table} c WHERE c.ws = %s AND c.cid = ANY(%s)"
                f"{' AND ' + where if where else ''}"
                f" AND NOT EXISTS (SELECT 1 FROM {TOMBSTONES} b WHERE b.ws = c.ws AND b.kind = 'content'"
                " AND b.value = c.content)"
                f" AND NOT EXISTS (SELECT 1 FROM {TOMBSTONES} b WHERE b.ws = c.ws AND b.kind = 'entry'"
                " AND b.value = c.source)",
                (self.ws_id, cids, *args),
                binary=True,
            ).fetchall()
        self._vecs = {}
        for r in got:
            if r[0] not in self._id_of:
                continue
            row = dict(zip(_COLUMNS, r[1:-1], strict=True))
            row["id"] = lid = self._id_of[r[0]]
            row["superseded"] = int(row["superseded"])
            out[lid] = row
            if r[-1] is not None:
                self._vecs[lid] = np.asarray(r[-1].to_numpy(), dtype=np.float32)
        if self._pending is not None and self._ids is not None:
            qvec, cos = self._pending
            for cid, vec in self._vecs.items():
                pos = int(np.searchsorted(self._ids, cid))
                if pos < len(self._ids) and self._ids[pos] == cid:
                    cos[pos] = float(vec @ qvec)
        return out

    def baseline(self) -> dict[tuple[str, str], np.ndarray]:
        return self.local.baseline()

    def status(self) -> dict:
        data = self.local.status()
        with self._talk():
            size = self.conn.execute("SELECT pg_total_relation_size(%s::regclass)", (self.table,)).fetchone()[
                0
            ]
            chunks = self.conn.execute(
                f"SELECT count(*) FROM {self.table} WHERE ws = %s", (self.ws_id,)
            ).fetchone()[0]
        data.update(
            backend="postgres",
            dsn=_redact(self.dsn),
            table=self.table,
            workspace_id=self.ws_id,
            pg_chunks=int(chunks),
            pg_bytes=int(size),
        )
        return data

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
