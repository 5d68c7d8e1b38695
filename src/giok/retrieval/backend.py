"""What an index backend offers: `SearchIndex`, the calls search, the MCP warm-up and the index
commands make of the index `Index.for_workspace` opens, and `LocalIndex`, what the shared
PostgreSQL index (`giok.retrieval.pg.PgIndex`) asks of the local SQLite one it is built on.

Both classes subclass these protocols, so mypy checks each method's signature against them, and
a class that lacks one cannot be instantiated (the methods are abstract); nothing is forwarded
by name at run time.
"""

from __future__ import annotations

import sqlite3
from abc import abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from giok.providers import embeddings
from giok.retrieval.rows import Reader


class SearchIndex(Protocol):
    """One workspace's index, SQLite (`giok.retrieval.index.Index`) or PostgreSQL (`PgIndex`)."""

    embedder: embeddings.Embedder
    notes: list[str]  # what the last sync has to say (a rebuild, a model change); search passes them on
    # True: a sync stores rows and keyword terms only and leaves the vectors to `embed_pending`.
    defer_vectors: bool
    # callable(files_done, files_total, texts_done, texts_total), told how far a sync is.
    progress: Callable[[int, int, int, int], None] | None
    home: Path | None  # the giok home: where model-wide data is cached
    db: sqlite3.Connection  # the local SQLite file (the chunk count search reads for dated queries)

    # -- keeping it up to date
    @abstractmethod
    def sync(self) -> dict: ...
    @abstractmethod
    def rebuild(self) -> dict: ...
    @abstractmethod
    def status(self) -> dict: ...
    @abstractmethod
    def check_model(self) -> None: ...
    @abstractmethod
    def purge(self, texts, ids=(), paths=()) -> int: ...
    @abstractmethod
    def pending_vectors(self) -> int: ...
    @abstractmethod
    def embed_pending(self, lock: AbstractContextManager | None = None) -> int: ...

    # -- what search reads
    @abstractmethod
    def matrix(self) -> tuple[np.ndarray, Any]: ...
    @abstractmethod
    def cosines(self, qvec: np.ndarray, reader: Reader | None = None) -> np.ndarray: ...
    @abstractmethod
    def keyword_search(
        self, fts_query: str, limit: int, reader: Reader | None = None
    ) -> list[tuple[int, float]]: ...
    @abstractmethod
    def date_ids(self, prefix: str, limit: int, reader: Reader | None = None) -> list[int]: ...
    @abstractmethod
    def doc_freq(self, terms: list[str]) -> tuple[dict[str, int], int]: ...
    @abstractmethod
    def rows(self, ids: list[int], reader: Reader | None = None) -> dict[int, dict]: ...
    @abstractmethod
    def baseline(self) -> dict[tuple[str, str], np.ndarray]: ...


class LocalIndex(SearchIndex, Protocol):
    """The local SQLite index as the shared one uses it: its file and its change counter too."""

    db_path: Path

    @abstractmethod
    def generation(self) -> int: ...
