"""The shared index backend: PostgreSQL + pgvector (docs/teams.md, "Shared index").

The workspace files stay the source of truth and the local SQLite index (`giok.retrieval.index`)
stays the sync engine: it reads the files, chunks them and embeds only what changed. After each
sync, `PgIndex` mirrors the workspace's chunks into one shared PostgreSQL table (rows added and
removed by chunk id, nothing re-embedded) and answers the retrieval calls from there:

- keyword candidates: PostgreSQL full text over giok's own pre-computed terms and Hangul bigrams
  (`giok.text.terms`: the same Korean stems as SQLite's FTS5), a tsvector written literally
  (no PostgreSQL parsing, stemming or stop words), terms weighted A and bigrams B, found by a
  GIN index and ranked by FTS5's own bm25 formula computed in SQL (`ts_rank` ranked otherwise
  and half the keyword top 10 differed: docs/teams.md);
- vector candidates: an HNSW index (inner product over unit vectors = cosine) over `halfvec`
  columns: float16, as the SQLite index stores them (half the bytes, rows small enough to stay
  out of TOAST), computed in float32;
- chunk rows and document frequencies; the scope rule in the WHERE of every query that reads
  candidates or rows (`giok.retrieval.index.Reader` on each row's `reader` key, as SQLite does),
  so a chunk the searcher may not see never leaves the server.

`PgIndex` offers the calls `giok.retrieval.search` makes of an `Index` (`matrix`, `keyword_search`,
`doc_freq`, `rows`), so the hybrid scoring and cut-offs run unchanged over its
candidates. Its `matrix()` holds no vectors: `mat @ qvec` asks the HNSW index for the top
candidates, and `rows(ids)` fills in the exact cosines of every row it returns (keyword hits and
diary neighbours included), which is all the scoring reads.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, ClassVar

import numpy as np

from giok.errors import IndexError_, InvalidInput
from giok.providers import embeddings
from giok.retrieval.index import Index, Reader, decode_vector
from giok.text.terms import VERSION as TERMS_VERSION

TABLE_VERSION = "3"  # in the table name: a new layout gets a new table (rebuilt by the next publish)
POOL = 100  # candidates per query from HNSW (search.POOL)
EF_SEARCH = 200
BULK = 5000  # rows in one publish from which the HNSW index is rebuilt rather than grown
BACKENDS = ("sqlite", "postgres")
BUILD_MEMORY = (512 << 20, 4 << 30)  # maintenance_work_mem for an HNSW build: the graph's size, within these


# What identifies a chunk row's content (its id is only local to one machine's SQLite index).
def _sig(t: str = "") -> str:
    """The signature expression; the analysis version is part of it, so rows whose keyword
    terms another analysis made are written again."""
    parts = [f"'{TERMS_VERSION}'", f"{t}hash", f"{t}path", f"{t}start_line", f"{t}superseded"]
    parts.append(f"coalesce({t}scope, '')")
    parts.append(
        f"coalesce({t}category, '')"
    )  # the entry type (search's standing): rows from before it are written again
    return " || ':' || ".join(parts)


_COLUMNS = (
    "id",
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


def _half(vec: np.ndarray | None):
    from pgvector import HalfVector

    return None if vec is None else HalfVector(np.asarray(vec, dtype=np.float32))


def _connect(dsn: str):
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError as exc:  # pragma: no cover - the extra is not installed
        raise InvalidInput("the postgres backend needs the extra: pip install 'giok[postgres]'") from exc
    try:
        conn = psycopg.connect(dsn, autocommit=True)
    except psycopg.Error as exc:
        raise IndexError_(f"cannot connect to PostgreSQL at {_redact(dsn)}: {exc}".strip()) from exc
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    return conn


def _redact(dsn: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", re.sub(r"password=\S+", "password=***", dsn))


def settings(ws) -> dict:
    """The home config's `"index": {"backend": "sqlite" | "postgres", "dsn": "..."}`."""
    conf = ws.home.setting("index", None) or {}
    if not isinstance(conf, dict):
        raise InvalidInput('config key "index" must be {"backend": "sqlite" | "postgres", "dsn": ...}')
    backend = conf.get("backend", "sqlite")
    if backend not in BACKENDS:
        raise InvalidInput(f"index backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if backend == "postgres" and not conf.get("dsn"):
        raise InvalidInput('the postgres index backend needs "dsn" in the home config\'s "index"')
    return {"backend": backend, "dsn": conf.get("dsn")}


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


class PgIndex:
    """A workspace's index in PostgreSQL (see the module doc). `PgIndex.for_workspace(ws, dsn)`."""

    def __init__(self, local: Index, ws_name: str, dsn: str):
        self.local = local
        self.ws_name = ws_name
        self.dsn = dsn
        self.conn = _connect(dsn)
        self.table = table_for(local.embedder)
        self._create()
        self._published: int | None = None
        self._nulls = False
        self._mean: float | None = None
        self._df: dict[tuple[str, bool], int] = {}  # documents per term (and prefix), kept per publish
        self._n: int | None = None  # chunks, kept per publish
        self._ids: np.ndarray | None = None
        self._pending: tuple[np.ndarray, np.ndarray] | None = None  # (qvec, cos array) of the running search
        self._vecs: dict[int, np.ndarray] = {}

    _open: ClassVar[dict[tuple[str, str], PgIndex]] = {}

    @classmethod
    def for_workspace(cls, ws, dsn: str, embedder: embeddings.Embedder | None = None) -> PgIndex:
        local = Index.local_for_workspace(ws, embedder)
        key = (str(local.db_path), dsn)
        cached = cls._open.get(key)
        if cached and cached.local is local:
            return cached
        made = cls._open[key] = cls(local, ws.name, dsn)
        return made

    def __getattr__(self, name: str) -> Any:  # everything else (embed_pending, purge, ...) is local
        return getattr(self.local, name)

    @property
    def embedder(self) -> embeddings.Embedder:
        return self.local.embedder

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

    def _create(self) -> None:
        dim = int(self.local.embedder.dim)
        t = self.table
        self.conn.execute(
            f"""CREATE TABLE IF NOT EXISTS {t} (
            ws TEXT NOT NULL, id BIGINT NOT NULL, key TEXT, path TEXT, start_line INT, end_line INT,
            text TEXT, layer TEXT, scope TEXT, lang TEXT, date TEXT, expires TEXT,
            superseded BOOLEAN NOT NULL DEFAULT FALSE, source TEXT, priority INT, terms TEXT, sig TEXT,
            reader TEXT NOT NULL DEFAULT '*',
            tsv TSVECTOR, ntok INT, embedding HALFVEC({dim}), PRIMARY KEY (ws, id));
            ALTER TABLE {t} ADD COLUMN IF NOT EXISTS category TEXT;
            CREATE INDEX IF NOT EXISTS {t}_tsv ON {t} USING gin (tsv);
            CREATE INDEX IF NOT EXISTS {t}_hnsw ON {t} USING hnsw (embedding halfvec_ip_ops);"""
        )

    # -- sync: the local index, then its rows mirrored ----------------------------------------
    def sync(self) -> dict:
        stats = self.local.sync()
        self.publish()
        return stats

    def rebuild(self) -> dict:
        stats = self.local.rebuild()
        self.conn.execute(f"DELETE FROM {self.table} WHERE ws = %s", (self.ws_name,))
        self._published = None
        self.publish()
        return stats

    def publish(self) -> int:
        """Mirror the local index's chunks: add the ids PostgreSQL lacks (or has without a vector
        yet), drop the ids the local index no longer has. Returns rows written."""
        gen = self.local.generation()
        if self._published == gen and not self._missing_vectors():
            return 0
        local = dict(self.local.db.execute(f"SELECT id, {_sig()} FROM memories").fetchall())
        remote = {
            i: (sig, null)
            for i, sig, null in self.conn.execute(
                f"SELECT id, sig, embedding IS NULL FROM {self.table} WHERE ws = %s", (self.ws_name,)
            )
        }
        gone = [i for i in remote if i not in local]
        # another machine's index may give one id to another chunk: compared by signature
        todo = sorted(i for i, sig in local.items() if i not in remote or remote[i][0] != sig or remote[i][1])
        bulk = len(todo) >= BULK
        with self.conn.transaction():
            if gone:
                self.conn.execute(
                    f"DELETE FROM {self.table} WHERE ws = %s AND id = ANY(%s)", (self.ws_name, gone)
                )
            if bulk:  # building the HNSW graph once: ~3x faster than growing it
                self.conn.execute(f"DROP INDEX IF EXISTS {self.table}_hnsw")
            for start in range(0, len(todo), 2000):
                self._insert(todo[start : start + 2000])
            if bulk:  # the graph (every workspace's rows) in memory, or the build slows several-fold
                rows = self.conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]
                need = int(2.2 * rows * (2 * self.embedder.dim + 64))
                mem = min(max(need, BUILD_MEMORY[0]), BUILD_MEMORY[1])
                self.conn.execute(f"SET LOCAL maintenance_work_mem = '{mem // (1 << 20)}MB'")
                self._create()
        if bulk:  # hint bits and planner statistics now, not during the first searches
            self.conn.execute(f"VACUUM ANALYZE {self.table}")
        self._published, self._ids, self._mean, self._df, self._n = gen, None, None, {}, None
        self._nulls = bool(
            self.conn.execute(
                f"SELECT 1 FROM {self.table} WHERE ws = %s AND embedding IS NULL LIMIT 1", (self.ws_name,)
            ).fetchone()
        )
        return len(todo)

    def _missing_vectors(self) -> bool:
        """True when rows went out without a vector (`defer_vectors`) that the local index now has."""
        return self._nulls and not self.local.pending_vectors()

    def purge(self, texts, ids=(), paths=()) -> int:
        """`Index.purge`, then the purged chunks leave PostgreSQL at once (a forget is not left
        searchable in the shared index until the next sync)."""
        n = self.local.purge(texts, ids, paths)
        self._published = None
        self.publish()
        return n

    def _insert(self, ids: list[int]) -> None:
        marks = ",".join("?" * len(ids))
        rows = self.local.db.execute(
            f"SELECT {_sig('m.')}, m.id, m.key, m.path, m.start_line, m.end_line, m.text, m.layer, m.scope,"
            f" m.lang, m.date, m.expires, m.superseded, m.source, m.priority, f.terms, f.grams, c.vector,"
            f" m.reader, m.category"
            f" FROM memories m"
            f" JOIN memories_fts f ON f.rowid = m.id LEFT JOIN embedding_cache c ON c.hash = m.hash"
            f" AND c.model = ? WHERE m.id IN ({marks})",
            [self.embedder.identity, *ids],
        ).fetchall()
        out = []
        for r in rows:
            sig, r = r[0], r[1:]
            vec = _half(decode_vector(r[16])) if r[16] else None
            out.append(
                (
                    self.ws_name,
                    *r[:11],
                    bool(r[11]),
                    *r[12:15],
                    sig,
                    *_tsvector((r[14] or "").split(), (r[15] or "").split()),
                    vec,
                    r[17],
                    r[18],
                )
            )
        with self.conn.cursor() as cur:
            cur.execute(f"DELETE FROM {self.table} WHERE ws = %s AND id = ANY(%s)", (self.ws_name, ids))
            cur.executemany(
                f"INSERT INTO {self.table} (ws, id, key, path, start_line, end_line, text, layer, scope,"
                " lang, date, expires, superseded, source, priority, terms, sig, tsv, ntok, embedding,"
                " reader, category)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                " CAST(%s AS tsvector), %s, %s, %s, %s)",
                out,
            )

    # -- retrieval: what search calls ---------------------------------------------------------
    def generation(self) -> int:
        return self.local.generation()

    def matrix(self) -> tuple[np.ndarray, Any]:
        if self._ids is None:
            got = self.conn.execute(
                f"SELECT id FROM {self.table} WHERE ws = %s ORDER BY id", (self.ws_name,)
            ).fetchall()
            self._ids = np.fromiter((r[0] for r in got), dtype=np.int64, count=len(got))
        return self._ids, _Vectors(self, self._ids)

    def vector_candidates(
        self, qvec: np.ndarray, limit: int = POOL, where: str = "", args=()
    ) -> list[tuple[int, float]]:
        """(id, cosine) of the `limit` nearest chunks by the HNSW index (approximate)."""
        with self.conn.transaction():
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, limit)}")
            self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            got = self.conn.execute(
                f"SELECT id, -(embedding <#> %s) FROM {self.table} WHERE ws = %s"
                f"{' AND ' + where if where else ''} ORDER BY embedding <#> %s LIMIT %s",
                (_half(qvec), self.ws_name, *args, _half(qvec), limit),
            ).fetchall()
        return [(int(i), float(c)) for i, c in got]

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
        got = self.conn.execute(
            f"""WITH q(i, term, idf) AS (SELECT * FROM unnest(%s::int[], %s::text[], %s::float8[])),
            f AS (
                SELECT c.id, c.ntok, q.i, q.idf,
                       sum((SELECT sum(CASE WHEN w = 'A' THEN 1.0 ELSE 0.3 END)
                            FROM unnest(u.weights) w)) AS freq
                FROM {self.table} c CROSS JOIN LATERAL unnest(c.tsv) u JOIN q ON ({match})
                WHERE c.ws = %s AND c.tsv @@ CAST(%s AS tsquery){" AND " + where if where else ""}
                GROUP BY c.id, c.ntok, q.i, q.idf)
            SELECT id, sum(idf * freq * 2.2 / (freq + 1.2 * (0.25 + 0.75 * ntok / %s))) AS r
            FROM f GROUP BY id ORDER BY r DESC, id LIMIT %s""",
            (list(range(len(items))), items, idf, self.ws_name, q, *args, self._avgdl(), limit),
        ).fetchall()
        return [(int(i), float(r)) for i, r in got]

    def _count(self, where: str, *args) -> int:
        sql = f"SELECT count(*) FROM {self.table} WHERE ws = %s AND {where}"
        return int(self.conn.execute(sql, (self.ws_name, *args)).fetchone()[0])

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
            got = self.conn.execute(
                f"SELECT avg(ntok) FROM {self.table} WHERE ws = %s", (self.ws_name,)
            ).fetchone()[0]
            self._mean = float(got or 1.0) or 1.0
        return self._mean

    def doc_freq(self, terms: list[str]) -> tuple[dict[str, int], int]:
        if not terms:
            return {}, 0
        df = {t: n for t in terms if (n := self._hits(t))}
        return df, self._total()

    def rows(self, ids: list[int], reader: Reader | None = None) -> dict[int, dict]:
        out: dict[int, dict] = {}
        cols = ", ".join(_COLUMNS)
        where, args = _where(reader)
        got = self.conn.execute(  # binary: 300 vectors parsed from text took most of a search
            f"SELECT {cols}, embedding FROM {self.table} WHERE ws = %s AND id = ANY(%s)"
            f"{' AND ' + where if where else ''}",
            (self.ws_name, list(ids), *args),
            binary=True,
        ).fetchall()
        self._vecs = {}
        for r in got:
            row = dict(zip(_COLUMNS, r[:-1], strict=True))
            row["superseded"] = int(row["superseded"])
            out[row["id"]] = row
            if r[-1] is not None:
                self._vecs[row["id"]] = np.asarray(r[-1].to_numpy(), dtype=np.float32)
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
        size = self.conn.execute("SELECT pg_total_relation_size(%s::regclass)", (self.table,)).fetchone()[0]
        chunks = self.conn.execute(
            f"SELECT count(*) FROM {self.table} WHERE ws = %s", (self.ws_name,)
        ).fetchone()[0]
        data.update(
            backend="postgres",
            dsn=_redact(self.dsn),
            table=self.table,
            pg_chunks=int(chunks),
            pg_bytes=int(size),
        )
        return data

    def close(self) -> None:
        self.conn.close()
