"""The search index: one SQLite file per workspace, `.giok/index.sqlite` (WAL mode).

Everything in it is derived from the workspace files and can be rebuilt (`giok index
--rebuild`). `sync` brings it up to date before every search, synchronously: files whose
size and mtime are unchanged are skipped, changed files are re-chunked, only chunks whose
embedding input is not already cached are embedded, and deleted files and entries leave the
index, the vectors and the embedding cache at once. Schema: see docs/search.md.

A search does not stat every file each time (`Freshness`): within `rescan` seconds of its last
full scan, a process's sync reads the workspace lock's stamp (every giok write, in any process,
rewrites it as it finishes) and one mtime per folder (a file created, deleted or renamed into
place, as editors' safe saves and git do), and scans every file only when one of them moved. A
file rewritten in place by hand is seen by the first search of a process, and by any search
`rescan` seconds after that process's last full scan (docs/search.md, "Freshness").
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

import numpy as np

from giok.errors import IndexError_
from giok.providers import embeddings
from giok.retrieval.backend import LocalIndex, SearchIndex
from giok.retrieval.chunks import Chunk, chunk_file
from giok.retrieval.rows import Reader, encode_vector, holds, reader_key
from giok.settings import BLAS_THREADS
from giok.store import layout
from giok.store.clock import now
from giok.store.fsutil import lock_stamp
from giok.text.terms import VERSION as TERMS_VERSION

# 4: search terms changed (a name's 이 stripped, Han and Kana as bigrams): old rows must be rebuilt.
# 5: vectors stored as float16 (half the bytes; computed in float32): the cached float32 vectors
#    of an older index are converted, not re-embedded (`_drop_derived`); each row's `reader` key
#    (the scope rule in SQL: `Reader`).
SCHEMA_VERSION = "5"
HALF_SINCE = 5  # the first schema version whose vectors are float16
FILENAME = layout.INDEX  # in .giok/
_SKIP_DIRS = layout.SKIP_DIRS  # what the index never reads: giok.store.layout
_SKIP_FILES = layout.SKIP_FILES
_MAX_FILE = 4 * 1024 * 1024
WAL_TRIM = 1000  # chunks stored by one sync from which its WAL is checkpointed and truncated

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    path TEXT NOT NULL, start_line INTEGER, end_line INTEGER,
    text TEXT NOT NULL, category TEXT, priority INTEGER, tags TEXT,
    layer TEXT, scope TEXT, lang TEXT, date TEXT, expires TEXT, superseded INTEGER DEFAULT 0,
    source TEXT, hash TEXT NOT NULL, created_at TEXT, reader TEXT NOT NULL DEFAULT '*');
CREATE INDEX IF NOT EXISTS memories_path ON memories(path);
CREATE INDEX IF NOT EXISTS memories_source ON memories(source);
CREATE INDEX IF NOT EXISTS memories_hash ON memories(hash);
CREATE TABLE IF NOT EXISTS embedding_cache (hash TEXT, model TEXT, vector BLOB, PRIMARY KEY (hash, model));
CREATE VIEW IF NOT EXISTS memory_vectors AS
    SELECT m.*, c.vector AS embedding FROM memories m
    JOIN embedding_cache c ON c.hash = m.hash AND c.model = (SELECT value FROM meta WHERE key = 'model');
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(terms, grams);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_vocab USING fts5vocab(memories_fts, 'row');
"""


def _printable(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _half(blob: bytes | None) -> bytes | None:
    """An older index's float32 vector blob as float16 (schema versions before HALF_SINCE);
    None for a blob that is no float32 vector."""
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        return None
    return encode_vector(np.frombuffer(blob, dtype=np.float32))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:32]


def embedding_key(text: str) -> str:
    """The key of a text's vector in the embedding cache (`embedding_cache.hash`)."""
    return content_hash(_printable(text))


VECTORS_PENDING = "vectors-pending"  # meta key: a deferred sync left chunks without vectors
BUSY_TIMEOUT = 30.0  # seconds a connection waits for another process's write; $GIOK_INDEX_BUSY_TIMEOUT
RESCAN = 2.0  # seconds a process's syncs may skip the per-file scan; $GIOK_INDEX_RESCAN (settings)
# A folder changed this close before a scan may change again with the same mtime: file
# systems stamp with a coarse clock (one tick, a few ms) or in whole seconds (FAT, ext3, HFS+).
RACY_NS = 100_000_000
RACY_COARSE_NS = 2_000_000_000  # for a folder whose mtime is a whole second


def _racy_margin(mtime_ns: int) -> int:
    return RACY_COARSE_NS if mtime_ns % 1_000_000_000 == 0 else RACY_NS


def _signature(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of a file that is replaced or rewritten when it changes (the home
    config: written atomically); (0, 0, 0) when there is none; None when it cannot be trusted
    yet: changed within the racy margin, when a second change may keep the same mtime."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0)
    except OSError:
        return None
    if time.time_ns() - st.st_mtime_ns < _racy_margin(st.st_mtime_ns):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class Freshness:
    """What one full scan saw, for the cheap check of the next syncs of this process: the
    workspace lock's stamp read before the scan, every folder the scan read with its mtime (read
    before the folder was listed), and when the scan began. A folder whose mtime lies within
    RACY_NS of the scan's start may change again with the same mtime (file systems keep coarse
    times), so then the next sync scans again (RACY_NS, RACY_COARSE_NS)."""

    began: float  # time.monotonic()
    stamp: bytes
    folders: tuple[tuple[str, int], ...]
    files: int
    racy: bool
    # what was derived from the workspace's files while this scan holds (`Index.while_fresh`)
    kept: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def holds(self, lock: Path, within: float) -> bool:
        """Whether nothing a sync would see can have changed, short of a file rewritten in place
        by hand: the scan is younger than `within` seconds, no giok write finished since
        (the lock's stamp), and no folder gained, lost or renamed an entry (its mtime)."""
        if self.racy or time.monotonic() - self.began >= within or lock_stamp(lock) != self.stamp:
            return False
        try:
            return all(os.stat(folder).st_mtime_ns == mtime for folder, mtime in self.folders)
        except OSError:
            return False


class _Analyser:
    """The keyword terms and Hangul bigrams of texts, as `terms()` and `grams()` give them, with
    each distinct word analysed once per sync (both are concatenations over `words()`; a
    1,000-file sync spent most of its time re-stemming the same words)."""

    def __init__(self) -> None:
        self._memo: dict[str, tuple[list[str], list[str]]] = {}

    def __call__(self, text: str) -> tuple[str, str]:
        from giok.text.crossing import index_terms
        from giok.text.terms import grams, terms, words

        out_terms: list[str] = []
        out_grams: list[str] = []
        found = words(text)
        for word in found:
            hit = self._memo.get(word)
            if hit is None:
                hit = self._memo[word] = (terms(word), grams(word))
            out_terms += hit[0]
            out_grams += hit[1]
        out_terms += index_terms(text, found)  # the other script's keys and the lexicon's phrases
        return " ".join(out_terms), " ".join(out_grams)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _serial(method: _Method) -> _Method:
    """The method drives the index's one SQLite connection: one thread at a time (`Index.lock`)."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return cast(_Method, run)


SMALL_MATRIX = 400_000  # numbers: OpenBLAS multiplies a vector by so few on one thread anyway


def _blas_for_one_query(size: int) -> AbstractContextManager:
    """One BLAS thread for a query vector times a matrix of `size` numbers, unless the
    environment names BLAS threads (the entry points set 1; a library user's own choice is
    kept). A pool of threads multiplied 2,000-10,000 × 384 rows for 3.4-6 ms CPU, one thread
    for 0.2-0.8 ms (the same cosines); below SMALL_MATRIX OpenBLAS uses one thread by itself
    and the switch would cost more than the product (~0.06 ms)."""
    if size <= SMALL_MATRIX or any(os.environ.get(name) for name in BLAS_THREADS):
        return nullcontext()
    return embeddings.blas_threads(1)


ROW_CACHE = 50_000  # rows an index keeps in memory between searches of one generation


@dataclass
class _RowCache:
    """The rows `Index.rows` has read in one generation of the index (every write bumps it)."""

    gen: int
    rows: dict[int, dict] = field(default_factory=dict)
    # per reader (its allowed keys; None: every row): ids the SQL did not return to it
    absent: dict[frozenset[str] | None, set[int]] = field(default_factory=dict)


@dataclass
class _Vectors:
    """Every chunk's vector as of one index generation (`Index.matrix`), with the visibility
    masks computed over it, per reader."""

    gen: int
    ids: np.ndarray
    mat: np.ndarray
    masks: dict[Reader, np.ndarray] = field(default_factory=dict)


class IndexBusy(IndexError_):
    """Another process held the index's write lock longer than the busy timeout."""


def busy_timeout() -> float:
    try:
        return max(0.0, float(os.environ.get("GIOK_INDEX_BUSY_TIMEOUT", BUSY_TIMEOUT)))
    except ValueError:
        return BUSY_TIMEOUT


def _is_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and any(w in str(exc) for w in ("locked", "busy"))


def _retrying(fn, what: str, timeout: float):
    """fn() with bounded retries while SQLite says busy or locked (also the cases where its busy
    handler does not wait, e.g. a stale WAL snapshot), for `timeout` seconds in all."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise IndexBusy(
                    f"the search index is busy: another giok process held it for over {timeout:g} s "
                    f"while {what} (set GIOK_INDEX_BUSY_TIMEOUT to wait longer); try again"
                ) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


class Index(LocalIndex):
    """An open index for one workspace. `Index.for_workspace(ws)` reuses one per process.

    Threads may share it (`giok serve` and `giok mcp` answer searches of one workspace at once):
    each use of its SQLite connection holds `lock` (re-entrant), a sync or write for its whole
    transaction, a read for one statement; what a search spends most of its time on, embedding
    the query and scoring, runs outside it. `matrix` gives a thread the same vectors from one
    sync to its next, so the calls of one search agree although another thread's write moves
    the index on meanwhile."""

    _open: ClassVar[dict[str, Index]] = {}
    # (workspace root, home) -> (the home config's signature, the home's settings, the index): `_kept`
    _chosen: ClassVar[dict[tuple[str, str], tuple[tuple[int, int, int], Any, Index]]] = {}
    _opening: ClassVar[threading.Lock] = threading.Lock()
    # Optional callable(files_done, files_total, texts_done, texts_total) that a sync calls as
    # it reads changed files and embeds texts (the CLI shows progress with it; a 0 total means
    # "not this stage"); the library itself prints nothing.
    progress: Callable[[int, int, int, int], None] | None = None
    # True: a sync stores rows and keyword terms only and leaves the vectors to
    # `embed_pending` (the MCP server's warm-up answers from keywords meanwhile).
    defer_vectors = False

    def __init__(
        self,
        root: Path,
        db_path: Path,
        embedder: embeddings.Embedder,
        busy: float | None = None,
        rescan: float = RESCAN,
    ):
        self.root = Path(root)
        self.busy = busy_timeout() if busy is None else busy  # seconds: giok.settings
        self.rescan = rescan  # seconds: giok.settings (GIOK_INDEX_RESCAN); 0: every sync scans
        self._fresh: Freshness | None = None  # what this process's last full scan saw
        self._lock_path = self.root / layout.DATA_DIR / layout.LOCK
        self._folders: list[tuple[str, int]] = []  # folders the running scan read, with their mtimes
        self.db_path = Path(db_path)
        self.embedder = embedder
        self.notes: list[str] = []
        self.lock = threading.RLock()  # held by whoever drives the connection (`_serial`)
        self._local = threading.local()  # per thread: `vectors`, the `_Vectors` it reads
        self._vectors: _Vectors | None = None  # the newest vectors read, shared
        self._baseline: dict[tuple[str, str], np.ndarray] | None = None
        self._rows: _RowCache | None = None  # rows read in the current generation (`rows`)
        self.home: Path | None = None  # the giok home: where model-wide data is cached
        self._texts = [0, 0]  # texts embedded / to embed by the running sync (for `progress`)
        self._connect()

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def for_workspace(cls, ws, embedder: embeddings.Embedder | None = None) -> SearchIndex:
        """The workspace's index on the backend the home config names (`"index": {"backend":
        "postgres", "dsn": ...}`: `giok.retrieval.pg.PgIndex` over the local index; both are a
        `SearchIndex`).

        The local index chosen with the configured model is kept for the next call while the
        home config is unchanged (`Index._kept`: one stat, not the config read twice)."""
        from giok.retrieval import pg

        if embedder is None and (kept := cls._kept(ws)) is not None:
            return kept
        signature = _signature(ws.home.config_path)  # taken before the read: a later change is seen
        conf = pg.settings(ws)
        if conf["backend"] == "postgres":
            return pg.PgIndex.for_workspace(ws, conf["dsn"], cls.local_for_workspace(ws, embedder))
        index = cls.local_for_workspace(ws, embedder)
        if embedder is None and signature is not None:
            cls._chosen[(str(ws.root), str(ws.home.path))] = (signature, ws.home.settings, index)
        return index

    @classmethod
    def _kept(cls, ws) -> Index | None:
        """The local index `for_workspace` chose for this workspace and home, when the home config
        has the same stat signature (inode, size, mtime) as then, the home the same settings, and
        the index is still the open one of its file (the model, the backend and the file are
        then what they were); None otherwise."""
        kept = cls._chosen.get((str(ws.root), str(ws.home.path)))
        if kept is None:
            return None
        signature, settings, index = kept
        same_settings = settings is ws.home.settings or settings == ws.home.settings
        if not same_settings or _signature(ws.home.config_path) != signature:
            return None
        if cls._open.get(str(index.db_path)) is not index or not index._same_file():
            return None
        return index

    @classmethod
    def local_for_workspace(cls, ws, embedder: embeddings.Embedder | None = None) -> Index:
        from giok.providers import baseline

        embedder = baseline.neutral(embedder or embeddings.get(embeddings.settings(ws.home)), ws.home.path)
        db = ws.data_dir / FILENAME
        with cls._opening:  # two threads' first searches open one index, not two
            cached = cls._open.get(str(db))
            if cached and cached.embedder is embedder and cached._same_file():
                return cached
            if cached:
                with cached.lock:
                    cached.close()
            index = cls(ws.root, db, embedder, ws.settings.index_busy_timeout, ws.settings.index_rescan)
            index.home = ws.home.path
            cls._open[str(db)] = index
            return index

    def _same_file(self) -> bool:
        try:
            return os.stat(self.db_path).st_ino == self._inode
        except FileNotFoundError:
            return False

    def _connect(self) -> None:
        existed = self.db_path.exists()
        self.timeout = self.busy
        try:
            _retrying(self._open_db, "opening it", self.timeout)
        except IndexBusy:
            self.close()
            raise
        except sqlite3.DatabaseError as exc:  # a corrupt file, never a busy one: rebuilt from the files
            self.close()
            self._remove_files()
            self.notes.append(f"index file {self.db_path} was unreadable ({exc}); rebuilt it from the files")
            self._open_db()
        if not existed:
            self.notes.append("index created")

    def _open_db(self) -> None:
        self.close()
        self.db = sqlite3.connect(
            self.db_path, timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA secure_delete=ON")
        self.db.execute("PRAGMA synchronous=NORMAL")
        version = self._meta_raw("schema")
        if version not in (None, SCHEMA_VERSION):
            self._drop_derived(version)
            version = None
        elif version is not None and self._meta_raw("terms") != TERMS_VERSION:
            self._drop_derived(version, f"keyword terms of another analysis (version {TERMS_VERSION} now)")
            version = None
        self.db.executescript(SCHEMA)
        self.db.execute("SELECT count(*) FROM memories_fts").fetchone()
        if version is None:
            self._set_meta("schema", SCHEMA_VERSION)
            self._set_meta("terms", TERMS_VERSION)
        self._inode = os.stat(self.db_path).st_ino

    def _drop_derived(self, version: str, why: str | None = None) -> None:
        """Another schema version: drop every derived table but keep cached vectors (an older
        index's float32 vectors converted to float16; a version this code does not know, or a
        vector it cannot convert: those go too, to be embedded again, never misread). One
        transaction: a crash leaves the old version whole, or the new one without its meta."""
        try:
            old: int | None = int(version)
        except ValueError:
            old = None
        self.db.execute("BEGIN IMMEDIATE")
        still = self._meta_raw("schema") == version and (
            why is None or self._meta_raw("terms") != TERMS_VERSION
        )
        if not still:  # another process changed it over while this one waited: converting twice garbles
            self.db.execute("COMMIT")
            return
        try:
            self.db.execute("DROP VIEW IF EXISTS memory_vectors")
            for table in ("memories_vocab", "memories_fts", "memories", "files", "meta", "baseline"):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            if old is None or old > int(SCHEMA_VERSION):
                self.db.execute("DROP TABLE IF EXISTS embedding_cache")
            elif old < HALF_SINCE:
                self.db.create_function("giok_half", 1, _half, deterministic=True)
                with contextlib.suppress(sqlite3.OperationalError):  # no cache table: nothing to convert
                    self.db.execute("UPDATE embedding_cache SET vector = giok_half(vector)")
                    self.db.execute("DELETE FROM embedding_cache WHERE vector IS NULL")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        why = why or f"index schema {version} replaced by {SCHEMA_VERSION}"
        self.notes.append(f"{why}; re-indexing from the files")

    @_serial
    def _meta_raw(self, key: str):
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.db_path) + suffix)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    def _begin(self, what: str) -> None:
        """BEGIN IMMEDIATE (the write lock), waiting and retrying up to the busy timeout."""
        _retrying(lambda: self.db.execute("BEGIN IMMEDIATE"), what, self.timeout)

    # -- model identity --------------------------------------------------------------------
    @property
    def model(self) -> str | None:
        return self._meta_raw("model")

    @_serial
    def check_model(self) -> None:
        built = self.model
        wanted = self.embedder.identity
        if built and built != wanted:
            raise IndexError_(
                f"the index was built with embedding model {built}, but the configured model is "
                f"{wanted}; run `giok index --rebuild` (vectors of two models are never mixed)"
            )

    # -- sync ------------------------------------------------------------------------------
    @_serial
    def sync(self, full: bool = False) -> dict:
        """Bring the index up to date with the files. Returns counts of what changed.

        Purges that forget recorded (it could not get the write lock) run first, inside the
        same transaction, and are checked again after the commit: nothing they cover is
        returned once sync has returned.

        Without `full`, the per-file scan is skipped while this process's last one still holds
        (`Freshness.holds`: no giok write finished since, no folder changed, at most `rescan`
        seconds ago) and nothing else is due (a recorded purge, vectors a deferred sync left)."""
        self.check_model()
        self._local.vectors = None  # this thread's next search reads the vectors as they are now
        started = time.perf_counter()
        if not full and self._still_fresh():
            assert self._fresh is not None
            return {"files": self._fresh.files, "changed": 0, "removed": 0, "embedded": 0, "ms": 0.0}
        self._fresh = None
        stamp, began = lock_stamp(self._lock_path), time.monotonic()
        wall = time.time_ns()
        background = self._background_due()
        self._texts = [0, len(background)]
        stats = self._sync_once()
        for _ in range(2):  # a purge recorded while this sync ran; its paths are re-read after it
            if stats.pop("idle", False) or (not stats.pop("purged", 0) and not self._pending()):
                break  # idle: nothing changed and nothing was pending a moment ago (one look, not two)
            more = self._sync_once()
            for key in ("changed", "removed", "embedded"):
                stats[key] += more[key]
            stats["purged"] = more.get("purged", 0)
        stats.pop("purged", None)
        if self.rescan > 0:
            folders = tuple(self._folders)
            racy = any(mtime >= wall - _racy_margin(mtime) for _, mtime in folders)
            self._fresh = Freshness(began, stamp, folders, stats["files"], racy)
        if background:  # the model-wide baseline, once per model: part of the first build
            self.baseline()
            self._texts[0] += len(background)
            self._report(0, 0, *self._texts)
        stats["ms"] = round((time.perf_counter() - started) * 1000, 1)
        return stats

    def _still_fresh(self) -> bool:
        """Whether this sync may skip the scan (see `sync`)."""
        fresh = self._fresh
        if fresh is None or not fresh.holds(self._lock_path, self.rescan):
            return False
        if self._pending():
            return False
        return self.defer_vectors or not self._meta_raw(VECTORS_PENDING)

    def while_fresh(self, key: str, compute: Callable[[], Any]) -> Any:
        """compute(), kept while this process's last full scan holds (`Freshness`): a value
        derived from the workspace's files (search's user, from USER.md) is derived again when
        a sync would see them change. Call it after `sync`; without a kept scan (GIOK_INDEX_RESCAN
        = 0) it computes every time."""
        fresh = self._fresh
        if fresh is None:
            return compute()
        try:
            return fresh.kept[key]
        except KeyError:
            value = fresh.kept[key] = compute()
            return value

    def _sync_once(self) -> dict:
        self._folders = []
        on_disk = dict(self._scan())
        known = {row[0]: row[1:] for row in self.db.execute("SELECT path, size, mtime_ns, hash FROM files")}
        stats = {"files": len(on_disk), "changed": 0, "removed": 0, "embedded": 0}
        changed = [rel for rel, st in on_disk.items() if known.get(rel, (None, None))[:2] != st]
        if not self.defer_vectors and self._meta_raw(VECTORS_PENDING):
            unembedded = set(self._unembedded_paths()) & set(on_disk)
            changed += [rel for rel in sorted(unembedded) if rel not in changed]
            for rel in unembedded:
                known.pop(rel, None)  # re-chunked even though unchanged: their vectors are missing
        gone = [rel for rel in known if rel not in on_disk]
        if not (changed or gone or self._pending()):
            return {**stats, "idle": True}
        self._begin("syncing it")
        try:
            if self.model is None:
                self._set_meta("model", self.embedder.identity)
            self._drop_paths(gone)
            self.db.executemany("DELETE FROM files WHERE path=?", [(rel,) for rel in gone])
            stats["removed"] = len(gone)
            chunks = self._read_changed(changed, on_disk, known)
            stats["changed"] = len(changed)
            todo = self._store(chunks)
            if self.defer_vectors:
                if todo:
                    self._set_meta(VECTORS_PENDING, "1")
            else:
                stats["embedded"] = self._embed_into_cache(todo)
                self.db.execute("DELETE FROM meta WHERE key=?", (VECTORS_PENDING,))
            applied = self._apply_pending()
            self._prune_cache()
            self._bump()
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        if len(chunks) >= WAL_TRIM:
            self._trim_wal()
        if applied:
            for path in applied:
                path.unlink(missing_ok=True)
            self._scrub_quietly()
            stats["purged"] = len(applied)
        return stats

    def _trim_wal(self) -> None:
        """After a big sync the WAL file is as large as everything it wrote (half the bytes of a
        fresh index): fold it into the database and truncate it. Readers in the way only make
        it wait for a later checkpoint; never an error."""
        with contextlib.suppress(sqlite3.OperationalError):
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()

    def _background_due(self) -> list[str]:
        """The background texts a search will embed for this model's baseline (none once cached)."""
        from giok.providers import baseline as background

        if self.defer_vectors or not self.embedder.relative or self._baseline is not None:
            return []
        if background.cached(self.embedder, self.home):
            return []
        return background.texts()

    def _report(self, files: int, total_files: int, texts: int, total_texts: int) -> None:
        """Tell `progress` (when set) how far this sync is: files read, texts embedded."""
        if self.progress is not None:
            self.progress(files, total_files, texts, total_texts)

    def _read_changed(self, changed: list[str], on_disk: dict, known: dict) -> list[Chunk]:
        """Read and chunk every changed file; files whose content hash is unchanged only get their
        new size and mtime. Old rows of re-chunked files are dropped. Returns the new chunks."""
        touched: list[tuple] = []
        rechunked: list[tuple] = []
        chunks: list[Chunk] = []
        for done, rel in enumerate(changed, 1):
            stat = on_disk[rel]
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue
            digest = content_hash(data.decode("utf-8", errors="replace"))
            old = known.get(rel)
            if old and old[2] == digest:
                touched.append((*stat, rel))
                continue
            # Parse the bytes as the file model does (surrogateescape), so derived entry ids match
            # `giok show`; store and embed text with any invalid bytes shown as U+FFFD.
            if b"\x00" not in data:
                for chunk in chunk_file(rel, data.decode("utf-8", errors="surrogateescape")):
                    chunk.text, chunk.embed_text = _printable(chunk.text), _printable(chunk.embed_text)
                    chunks.append(chunk)
            rechunked.append((rel, *stat, digest))
            if done % 50 == 0:
                self._report(done, len(changed), 0, 0)
        self.db.executemany("UPDATE files SET size=?, mtime_ns=? WHERE path=?", touched)
        self._drop_paths([r[0] for r in rechunked])
        self.db.executemany(
            "INSERT OR REPLACE INTO files(path, size, mtime_ns, hash) VALUES (?, ?, ?, ?)", rechunked
        )
        self._report(len(changed), len(changed), 0, 0)
        return chunks

    def _store(self, chunks: list[Chunk]) -> dict[str, str]:
        """Insert the rows and keyword terms of `chunks` (ids in file order, after the last one).
        Returns {content hash: text to embed} of those with no vector of this model yet."""
        if not chunks:
            return {}
        from giok.text.terms import language

        analyse = _Analyser()
        hashes = [content_hash(c.embed_text) for c in chunks]
        have = self._cached(hashes, self.embedder.identity)
        todo = {h: c.embed_text for c, h in zip(chunks, hashes, strict=True) if h not in have}
        first = (self.db.execute("SELECT max(id) FROM memories").fetchone()[0] or 0) + 1
        stamp = now().isoformat(timespec="seconds")
        rows, fts = [], []
        for rowid, (chunk, h) in enumerate(zip(chunks, hashes, strict=True), first):
            rows.append(
                (
                    rowid,
                    chunk.key,
                    chunk.path,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.text,
                    chunk.category,
                    chunk.priority,
                    None,
                    chunk.layer,
                    chunk.scope,
                    language(chunk.text),
                    chunk.date,
                    chunk.expires,
                    int(chunk.superseded),
                    chunk.source,
                    h,
                    chunk.date or stamp,
                    reader_key(chunk.scope),
                )
            )
            fts.append((rowid, *analyse(chunk.text)))
        self.db.executemany(
            "INSERT INTO memories(id, key, path, start_line, end_line, text, category, priority, tags, layer,"
            " scope, lang, date, expires, superseded, source, hash, created_at, reader)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        self.db.executemany("INSERT INTO memories_fts(rowid, terms, grams) VALUES (?, ?, ?)", fts)
        return todo

    def _embed(self, todo: dict[str, str]) -> Iterator[list[tuple[str, str, bytes]]]:
        """Embed the texts of `todo` in batches across files; yields each batch's cache rows."""
        model, step = self.embedder.identity, max(1, self.embedder.batch_size)
        items = list(todo.items())
        for start in range(0, len(items), step):
            part = items[start : start + step]
            vectors = self.embedder.embed([text for _, text in part], "passage")
            yield [(h, model, encode_vector(vec)) for (h, _), vec in zip(part, vectors, strict=True)]

    def _embed_into_cache(self, todo: dict[str, str]) -> int:
        done = 0
        self._texts[1] += len(todo)
        for rows in self._embed(todo):
            self.db.executemany(
                "INSERT OR REPLACE INTO embedding_cache(hash, model, vector) VALUES (?, ?, ?)", rows
            )
            done += len(rows)
            self._texts[0] += len(rows)
            self._report(0, 0, *self._texts)
        return done

    # -- vectors built after the keyword index (the MCP server's warm-up) ---------------------
    def _unembedded(self) -> str:
        return (
            "FROM memories m WHERE NOT EXISTS (SELECT 1 FROM embedding_cache c"
            " WHERE c.hash = m.hash AND c.model = ?)"
        )

    def _unembedded_paths(self) -> list[str]:
        sql = f"SELECT DISTINCT m.path {self._unembedded()}"
        return [r[0] for r in self.db.execute(sql, (self.embedder.identity,))]

    @_serial
    def pending_vectors(self) -> int:
        """How many chunks have no vector of the configured model yet (a sync with
        `defer_vectors` leaves them for `embed_pending`); keyword search finds them already."""
        sql = f"SELECT count(*) {self._unembedded()}"
        return int(self.db.execute(sql, (self.embedder.identity,)).fetchone()[0])

    def embed_pending(self, lock: AbstractContextManager | None = None) -> int:
        """Embed the chunks a deferred sync left without vectors, batch by batch: the model runs
        outside `lock` (held by whoever else drives this connection) and outside the write lock;
        each batch is stored in a short transaction of its own. Returns the vectors added."""
        guard = lock if lock is not None else nullcontext()
        with guard, self.lock:
            todo: dict[str, str] = {}
            wanted = set(self._unembedded_hashes())
            for rel in self._unembedded_paths():
                try:
                    text = (self.root / rel).read_bytes().decode("utf-8", errors="surrogateescape")
                except OSError:
                    continue
                for chunk in chunk_file(rel, text):
                    h = content_hash(_printable(chunk.embed_text))
                    if h in wanted:
                        todo[h] = _printable(chunk.embed_text)
        added = 0
        for rows in self._embed(todo):
            with guard, self.lock:
                self._begin("storing vectors")
                try:
                    self.db.executemany(
                        "INSERT OR IGNORE INTO embedding_cache(hash, model, vector) VALUES (?, ?, ?)", rows
                    )
                    self._bump()
                    self.db.execute("COMMIT")
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise
            added += len(rows)
            self._report(0, 0, added, len(todo))
        with guard, self.lock:
            if not self.pending_vectors():
                self.db.execute("DELETE FROM meta WHERE key=?", (VECTORS_PENDING,))
        self._local.vectors = None
        return added

    def _unembedded_hashes(self) -> list[str]:
        sql = f"SELECT DISTINCT m.hash {self._unembedded()}"
        return [r[0] for r in self.db.execute(sql, (self.embedder.identity,))]

    # -- purges forget could not run yet ----------------------------------------------------
    def _pending(self) -> list[Path]:
        folder = layout.index_pending(self.db_path)
        try:
            names = os.listdir(folder)  # every sync looks: one call, most often for no folder at all
        except OSError:
            return []
        return sorted(folder / name for name in names if name.endswith(".json"))

    def _apply_pending(self) -> list[Path]:
        """Run every recorded purge (the caller holds the write lock). Returns the records run."""
        records = self._pending()
        for record in records:
            try:
                item = json.loads(record.read_text("utf-8"))
            except (OSError, ValueError):
                continue  # half-written by a writer still at it; the next sync runs it
            ids, paths, hashes = (list(map(str, item.get(k) or [])) for k in ("ids", "paths", "hashes"))
            drop = self._ids_where(
                ["source = ?"] * len(ids) + ["path = ?"] * len(paths) + ["hash = ?"] * len(hashes),
                [*ids, *paths, *hashes],
            )
            self._drop_ids(drop)
            for h in hashes:
                self.db.execute(
                    "DELETE FROM embedding_cache WHERE hash=? AND hash NOT IN (SELECT hash FROM memories)",
                    (h,),
                )
            for path in paths:
                self.db.execute("UPDATE files SET size=-1 WHERE path=?", (path,))  # re-read at the next sync
        return records

    def _ids_where(self, clauses: list[str], args: list) -> list[int]:
        if not clauses:
            return []
        return [r[0] for r in self.db.execute(f"SELECT id FROM memories WHERE {' OR '.join(clauses)}", args)]

    def _scrub_quietly(self) -> None:
        try:
            self.scrub()
        except IndexBusy:
            self.notes.append(
                "index file not compacted yet (busy); deleted rows are gone, their pages are freed later"
            )

    def _scan(self):
        """(path, (size, mtime_ns)) of every file the index reads; each folder read and its
        mtime, taken before it is listed, go to `_folders` (the cheap check of `Freshness`)."""
        root = str(self.root)
        cut = len(root) + 1
        try:
            stack = [(root, os.stat(root).st_mtime_ns)]
        except OSError:
            return
        while stack:
            folder, mtime = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            self._folders.append((folder, mtime))
            for entry in entries:
                rel = entry.path[cut:].replace(os.sep, "/")
                if layout.skipped(entry.name, rel):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    try:
                        stack.append((entry.path, entry.stat(follow_symlinks=False).st_mtime_ns))
                    except OSError:
                        continue
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_size <= _MAX_FILE:
                        yield rel, (st.st_size, st.st_mtime_ns)

    def _cached(self, hashes: list[str], model: str) -> set[str]:
        """Which of these content hashes already have a vector of this model."""
        found: set[str] = set()
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            found.update(
                h
                for (h,) in self.db.execute(
                    f"SELECT hash FROM embedding_cache WHERE model=? AND hash IN ({marks})", (model, *part)
                )
            )
        return found

    @_serial
    def seed_vectors(self, source: Path) -> int:
        """Copy into this index the vectors of its model that the index file `source` holds and
        this one lacks, before this index's first sync (after it, nothing: returns 0). A past
        state's index (`giok search --at`) is made beside the live one: seeded from it, its first
        search embeds only what changed since, not the whole tree. `source` is opened read-only;
        one of another schema is left alone."""
        if not source.is_file() or source.resolve() == self.db_path.resolve():
            return 0
        if self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:
            return 0
        try:
            peer = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, timeout=self.busy)
        except sqlite3.Error:
            return 0
        try:
            row = peer.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if not row or row[0] != SCHEMA_VERSION:
                return 0
            rows = peer.execute(
                "SELECT hash, model, vector FROM embedding_cache WHERE model=?", (self.embedder.identity,)
            ).fetchall()
        except sqlite3.Error:  # no such table, busy, unreadable: nothing seeded, the search embeds
            return 0
        finally:
            peer.close()
        before = self.db.total_changes
        self._begin("seeding vectors")
        try:
            self.db.executemany(
                "INSERT OR IGNORE INTO embedding_cache(hash, model, vector) VALUES (?, ?, ?)", rows
            )
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return self.db.total_changes - before

    def _drop_paths(self, paths: list[str]) -> None:
        ids: list[int] = []
        for start in range(0, len(paths), 500):
            part = paths[start : start + 500]
            marks = ",".join("?" * len(part))
            ids += [r[0] for r in self.db.execute(f"SELECT id FROM memories WHERE path IN ({marks})", part)]
        self._drop_ids(ids)

    def _drop_ids(self, ids: list[int]) -> None:
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", part)
            self.db.execute(f"DELETE FROM memories WHERE id IN ({marks})", part)

    def _prune_cache(self) -> None:
        """Vectors of texts no chunk holds any more leave the cache with them."""
        self.db.execute(
            "DELETE FROM embedding_cache WHERE model != ? OR hash NOT IN (SELECT hash FROM memories)",
            (self.embedder.identity,),
        )

    def _bump(self) -> None:
        gen = int(self._meta_raw("generation") or 0) + 1
        self._set_meta("generation", str(gen))

    # -- rebuild / purge / status -------------------------------------------------------------
    @_serial
    def rebuild(self) -> dict:
        """Drop every derived row (keeping cached vectors of the configured model) and re-sync."""
        self._begin("rebuilding it")
        self._drop_ids([r[0] for r in self.db.execute("SELECT id FROM memories")])
        self.db.execute("DELETE FROM files")
        self.db.execute("DELETE FROM embedding_cache WHERE model != ?", (self.embedder.identity,))
        self._set_meta("model", self.embedder.identity)
        self._bump()
        self.db.execute("COMMIT")
        self._vectors = None
        return self.sync(full=True)

    @_serial
    def purge(self, texts, ids=(), paths=()) -> int:
        """Remove every chunk containing one of `texts` (case-insensitive, as forget matches
        the files), whose source id is in `ids`, or that comes from one of `paths` (files
        forget just edited: their chunks are re-read at the next sync). The vectors and cache
        rows of the chunks that held the text go too, and the bytes are scrubbed from the file."""
        needles = [t.casefold() for t in texts if t and t.strip()]
        ids, paths = list(ids), list(paths)
        clauses = (
            ["giok_holds(text, ?)"] * len(needles) + ["source = ?"] * len(ids) + ["path = ?"] * len(paths)
        )
        if not clauses:
            return 0
        self.db.create_function("giok_holds", 2, holds, deterministic=True)
        where = " OR ".join(clauses)
        try:
            self._begin("forget purged it")
        except IndexBusy:
            self._record_purge(clauses[: len(needles) + len(ids)], [*needles, *ids], ids, paths)
            raise
        try:
            rows = self.db.execute(
                f"SELECT id, path, hash FROM memories WHERE {where}", [*needles, *ids, *paths]
            ).fetchall()
            hit = {
                r[0]
                for r in self.db.execute(
                    "SELECT hash FROM memories WHERE "
                    + (" OR ".join(clauses[: len(needles) + len(ids)]) or "0"),
                    [*needles, *ids],
                )
            }
            self._drop_ids([r[0] for r in rows])
            for h in hit:
                if not self.db.execute("SELECT 1 FROM memories WHERE hash=? LIMIT 1", (h,)).fetchone():
                    self.db.execute("DELETE FROM embedding_cache WHERE hash=?", (h,))
            for path in {r[1] for r in rows} | set(paths):
                self.db.execute("UPDATE files SET size=-1 WHERE path=?", (path,))  # re-read at the next sync
            self._bump()
            self.db.execute("COMMIT")
            self._fresh = None  # so the next sync scans, and re-reads them
            self._local.vectors = None
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self._scrub_quietly()
        return len(rows)

    def _record_purge(self, text_clauses: list[str], text_args: list, ids: list, paths: list) -> None:
        """The write lock stayed taken: record the purge (ids, paths and the content hashes of
        the chunks holding the text, read from the committed index, which WAL lets us read)
        for the next writer to run before anything is returned."""
        try:
            hashes = sorted(
                {
                    r[0]
                    for r in self.db.execute(
                        f"SELECT hash FROM memories WHERE {' OR '.join(text_clauses) or '0'}", text_args
                    )
                }
            )
        except sqlite3.Error:
            hashes = []  # the paths and ids still cover the forgotten entry
        record_pending(self.db_path, ids, paths, hashes)

    @_serial
    def scrub(self) -> None:
        """Leave no byte of deleted rows in the file: merge the FTS segments, rewrite the
        database with secure_delete on, and fold the WAL back in."""

        def run():
            self.db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
            self.db.execute("VACUUM")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        _retrying(run, "compacting it", self.timeout)

    @_serial
    def status(self) -> dict:
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        size = sum(
            os.path.getsize(str(self.db_path) + s)
            for s in ("", "-wal")
            if os.path.exists(str(self.db_path) + s)
        )
        return {
            "path": str(self.db_path),
            "model": self.model,
            "configured_model": self.embedder.identity,
            "files": one("SELECT count(*) FROM files"),
            "chunks": one("SELECT count(*) FROM memories"),
            "cached_vectors": one("SELECT count(*) FROM embedding_cache"),
            "bytes": size,
            "schema": SCHEMA_VERSION,
            "notes": list(self.notes),
        }

    # -- retrieval ---------------------------------------------------------------------------
    def generation(self) -> int:
        return int(self._meta_raw("generation") or 0)

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) of every chunk, cached in memory until the index changes. A chunk whose
        vector is not built yet (`defer_vectors`) has a zero row: no vector evidence, but keyword
        search finds it. A thread gets the same arrays until its next `sync` (see the class)."""
        vectors = self._pinned()
        return vectors.ids, vectors.mat

    def _pinned(self) -> _Vectors:
        pinned = getattr(self._local, "vectors", None)
        if pinned is None:
            pinned = self._local.vectors = self._current()
        return pinned

    @_serial
    def _current(self) -> _Vectors:
        gen = self.generation()
        if self._vectors is None or self._vectors.gen != gen:
            self._vectors = None  # the old copy goes before the new one is read (1M chunks: 1.5 GB)
            self._vectors = _Vectors(gen, *self._read_matrix())
        return self._vectors

    def _read_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk's vector, float16 on disk, read in slices into one float32 matrix (never a
        second full copy in memory)."""
        dim = self.embedder.dim
        n = int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0])
        ids = np.zeros(n, dtype=np.int64)
        mat = np.zeros((n, dim), dtype=np.float32)
        zero = bytes(2 * dim)
        cur = self.db.execute(
            "SELECT m.id, c.vector FROM memories m LEFT JOIN embedding_cache c ON c.hash = m.hash"
            " AND c.model = ? ORDER BY m.id",
            (self.embedder.identity,),
        )
        at = 0
        while part := cur.fetchmany(20000):
            part = part[: n - at]  # a row added since the count (another process) waits for the next read
            end = at + len(part)
            ids[at:end] = [r[0] for r in part]
            raw = b"".join(r[1] if r[1] and len(r[1]) == 2 * dim else zero for r in part)
            mat[at:end] = np.frombuffer(raw, dtype=np.float16).reshape(len(part), dim)
            at = end
        return ids[:at], mat[:at]

    def baseline(self) -> dict[tuple[str, str], np.ndarray]:
        """Centroids of the background set (`giok.providers.baseline`) for the configured model:
        {(kind, lang): unit-free mean vector}, embedded once per model and kept in the home."""
        if self._baseline is None:
            from giok.providers import baseline as background

            self._baseline = background.centroids(self.embedder, self.home)
        return self._baseline

    def visible(self, reader: Reader) -> np.ndarray | None:
        """A bool per `matrix()` row: may `reader` see it (the SQL scope rule); None: all rows.
        Kept with the vectors it was computed over, per reader."""
        if reader.all_scopes:
            return None
        vectors = self._pinned()
        mask = vectors.masks.get(reader)
        if mask is None:
            where, args = reader.where()
            with self.lock:
                seen = np.fromiter(
                    (r[0] for r in self.db.execute(f"SELECT id FROM memories WHERE {where}", args)),
                    dtype=np.int64,
                )
            mask = vectors.masks[reader] = np.isin(vectors.ids, seen)
        return mask

    def cosines(self, qvec: np.ndarray, reader: Reader | None = None) -> np.ndarray:
        """The query's cosine with every `matrix()` row; -2 (below any cosine) for rows `reader`
        may not see, so they never become candidates."""
        _, mat = self.matrix()
        with _blas_for_one_query(mat.size):
            cos = mat @ np.asarray(qvec, dtype=np.float32)
        mask = self.visible(reader) if reader is not None else None
        if mask is not None:
            cos[~mask] = -2.0
        return cos

    @_serial
    def keyword_search(
        self, fts_query: str, limit: int, reader: Reader | None = None
    ) -> list[tuple[int, float]]:
        if not fts_query:
            return []
        where, args = reader.where("m.reader") if reader is not None else ("1 = 1", [])
        sql = (
            "SELECT f.rowid, bm25(memories_fts, 1.0, 0.3) AS r FROM memories_fts f"
            f" JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ? AND {where} ORDER BY r LIMIT ?"
        )
        return [(int(r[0]), -float(r[1])) for r in self.db.execute(sql, (fts_query, *args, limit))]

    @_serial
    def date_ids(self, prefix: str, limit: int, reader: Reader | None = None) -> list[int]:
        """Ids of the rows dated `prefix`… (diaries carry their file's date) `reader` may see."""
        where, args = reader.where() if reader is not None else ("1 = 1", [])
        sql = f"SELECT id FROM memories WHERE date LIKE ? AND {where} ORDER BY id LIMIT ?"
        return [int(r[0]) for r in self.db.execute(sql, (prefix + "%", *args, limit))]

    @_serial
    def doc_freq(self, terms: list[str]) -> tuple[dict[str, int], int]:
        if not terms:
            return {}, 0
        marks = ",".join("?" * len(terms))
        df = dict(
            self.db.execute(f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", terms).fetchall()
        )
        total = self.db.execute("SELECT count(*) FROM memories").fetchone()[0]
        return df, total

    @_serial
    def rows(self, ids: list[int], reader: Reader | None = None) -> dict[int, dict]:
        """The rows of `ids` that `reader` may see (all of them without a reader).

        Rows read before in the index's current generation come from memory (`_RowCache`): the
        SQL reads only the others, with the reader's scope rule; a remembered row is returned
        only when its `reader` key is one the rule allows. Callers must not change a row's fields;
        they may add what they derive from it (`search._memo`)."""
        gen = self.generation()
        cache = self._rows
        if cache is None or cache.gen != gen:
            cache = self._rows = _RowCache(gen)
        known = cache.rows
        allowed = None if reader is None or reader.all_scopes else frozenset(reader.allowed())
        absent = cache.absent.setdefault(allowed, set())
        get = known.get
        if allowed is None:
            out = {i: row for i in ids if (row := get(i)) is not None}
        else:
            out = {i: row for i in ids if (row := get(i)) is not None and row["reader"] in allowed}
        missing = [i for i in ids if i not in known and i not in absent] if len(out) < len(ids) else []
        if not missing:
            return out
        if len(known) + len(missing) > ROW_CACHE or len(absent) > ROW_CACHE:
            known.clear()  # a store too big to remember: start again (at most ROW_CACHE rows kept)
            absent.clear()
        where, args = reader.where("m.reader") if reader is not None else ("1 = 1", [])
        for start in range(0, len(missing), 500):
            part = missing[start : start + 500]
            marks = ",".join("?" * len(part))
            cur = self.db.execute(
                "SELECT m.id, m.key, m.path, m.start_line, m.end_line, m.text, m.layer, m.scope, m.lang,"
                " m.date, m.expires, m.superseded, m.source, m.priority, m.category, m.reader, f.terms"
                f" FROM memories m JOIN memories_fts f ON f.rowid = m.id"
                f" WHERE m.id IN ({marks}) AND {where}",
                [*part, *args],
            )
            names = [d[0] for d in cur.description]
            for values in cur:
                out[values[0]] = known[values[0]] = dict(zip(names, values, strict=True))
        absent.update(i for i in missing if i not in out)  # no such row, or not this reader's
        return {i: out[i] for i in ids if i in out}  # in the order of `ids`


def purge(ws, texts: list[str], ids=(), paths=()) -> int:
    """Remove from ws's index every chunk whose text contains one of `texts` (case-insensitive),
    whose source id is in `ids` or that comes from one of `paths`, with the vectors and
    embedding-cache rows of the matching chunks, leaving no byte of them in the SQLite file.
    Returns the number of chunks removed. (`forget` calls this.)"""
    db = ws.data_dir / FILENAME
    if not db.exists():
        return 0
    from giok.retrieval import pg

    if pg.settings(ws)["backend"] == "postgres":  # the shared copy goes at once too
        return Index.for_workspace(ws).purge(list(texts), list(ids), list(paths))
    cached = Index._open.get(str(db))
    if cached and cached._same_file():
        return cached.purge(list(texts), list(ids), list(paths))
    try:
        try:
            index = Index.for_workspace(ws)
        except embeddings.ProviderError:
            index = Index(ws.root, db, embeddings.Fake())  # purging needs no model
    except IndexBusy:
        record_pending(db, ids, paths)
        raise
    return index.purge(list(texts), list(ids), list(paths))


def record_pending(db: Path, ids=(), paths=(), hashes=()) -> Path:
    """Write down a purge for the next writer of index file `db` to run under its write lock,
    before anything is returned (`Index.sync`). Holds ids, paths and content hashes only,
    never the forgotten text."""
    from giok.store.fsutil import atomic_write

    folder = layout.index_pending(Path(db))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{time.time_ns()}-{os.getpid()}-{os.urandom(4).hex()}.json"
    atomic_write(path, json.dumps({"ids": list(ids), "paths": list(paths), "hashes": list(hashes)}).encode())
    return path


def sync(ws, embedder=None) -> dict:
    return Index.for_workspace(ws, embedder).sync()


def rebuild(ws, embedder=None) -> dict:
    index = Index.for_workspace(ws, embedder)
    return index.rebuild()


def status(ws, embedder=None) -> dict:
    """What the index holds; `error` says when it was built by another model."""
    index = Index.for_workspace(ws, embedder)
    try:
        index.check_model()
    except IndexError_ as exc:
        return {**index.status(), "error": str(exc)}
    return index.status()
