"""The SQLite index stores vectors as float16 and computes in float32 (docs/search.md, "Index");
an index written by an older schema (float32 vectors) is converted and re-indexed, never misread."""

from __future__ import annotations

import numpy as np

from conftest import reopen_index
from giok.retrieval import index as index_mod
from giok.retrieval.index import Index
from giok.retrieval.search import search


def _top(ws, q: str) -> list[tuple[str, int]]:
    return [(r.path, r.start_line) for r in search(ws, q, k=3, record=None)]


def test_vectors_take_two_bytes_a_dimension(fake_corpus):
    index = Index.for_workspace(fake_corpus)
    index.sync()
    dim = index.embedder.dim
    lengths = {r[0] for r in index.db.execute("SELECT length(vector) FROM embedding_cache")}
    assert lengths == {2 * dim}
    ids, mat = index.matrix()
    assert mat.dtype == np.float32 and mat.shape == (len(ids), dim)
    norms = np.linalg.norm(mat, axis=1)
    assert np.all(np.abs(norms - 1.0) < 1e-2)  # unit vectors survive the half precision
    assert _top(fake_corpus, "coffee every morning")[0][0] == "MEMORY.md"


def _as_old_schema(index: Index, version: str) -> None:
    """Rewrite the index as an older giok left it: float32 vectors, that schema number."""
    rows = index.db.execute("SELECT hash, model, vector FROM embedding_cache").fetchall()
    index.db.executemany(
        "UPDATE embedding_cache SET vector=? WHERE hash=? AND model=?",
        [(np.frombuffer(v, dtype=np.float16).astype(np.float32).tobytes(), h, m) for h, m, v in rows],
    )
    index.db.execute("UPDATE meta SET value=? WHERE key='schema'", (version,))


def test_an_older_index_is_converted_and_reindexed(fake_corpus):
    index = Index.for_workspace(fake_corpus)
    index.sync()
    before = {q: _top(fake_corpus, q) for q in ("coffee", "PostgreSQL JSONB", "등산")}
    _, mat_before = index.matrix()
    _as_old_schema(index, "4")
    index = reopen_index(fake_corpus)
    assert any("schema 4 replaced by" in n for n in index.notes)
    stats = index.sync()
    assert stats["embedded"] == 0  # the cached vectors were converted, not embedded again
    lengths = {r[0] for r in index.db.execute("SELECT length(vector) FROM embedding_cache")}
    assert lengths == {2 * index.embedder.dim}
    _, mat_after = index.matrix()
    assert np.array_equal(mat_after, mat_before)
    assert {q: _top(fake_corpus, q) for q in before} == before


def test_an_index_of_an_unknown_version_loses_its_vectors_not_its_answers(fake_corpus):
    index = Index.for_workspace(fake_corpus)
    index.sync()
    before = _top(fake_corpus, "coffee")
    index.db.execute("UPDATE meta SET value='99' WHERE key='schema'")
    index.db.execute("UPDATE embedding_cache SET vector=zeroblob(7)")  # a layout this code cannot read
    index = reopen_index(fake_corpus)
    assert index.sync()["embedded"] > 0
    assert _top(fake_corpus, "coffee") == before
    assert index.status()["schema"] == index_mod.SCHEMA_VERSION


def test_an_older_vector_that_is_no_float32_is_embedded_again(fake_corpus):
    index = Index.for_workspace(fake_corpus)
    index.sync()
    before = _top(fake_corpus, "coffee")
    _as_old_schema(index, "3")
    index.db.execute(
        "UPDATE embedding_cache SET vector=zeroblob(7) WHERE rowid = (SELECT min(rowid) FROM embedding_cache)"
    )
    index = reopen_index(fake_corpus)
    assert index.sync()["embedded"] == 1  # the broken one; the others were converted
    assert {r[0] for r in index.db.execute("SELECT length(vector) FROM embedding_cache")} == {
        2 * index.embedder.dim
    }
    assert _top(fake_corpus, "coffee") == before


def test_two_processes_upgrading_at_once_convert_the_vectors_once(fake_corpus):
    """Both read the old version before either took the lock: the second must not convert the
    now-float16 vectors again (they would read as garbage, and stay cached as embedded)."""
    index = Index.for_workspace(fake_corpus)
    index.sync()
    _, mat_before = index.matrix()
    _as_old_schema(index, "4")
    index._drop_derived("4")  # the first process
    index._drop_derived("4")  # the second, which had read "4" too
    index = reopen_index(fake_corpus)
    assert index.sync()["embedded"] == 0
    _, mat_after = index.matrix()
    assert np.array_equal(mat_after, mat_before)
