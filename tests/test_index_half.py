"""The SQLite index stores vectors as float16 and computes in float32 (docs/search.md, "Index");
an index written by an older schema (float32 vectors) is converted and re-indexed, never misread."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import reopen_index
from giok.retrieval import index as index_mod
from giok.retrieval.index import Index
from giok.retrieval.search import search


@pytest.fixture
def corpus(ws, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    ws.remember("Seojun drinks dark roast coffee every morning", layer="M90")
    ws.remember("The billing service uses PostgreSQL for JSONB", layer="M365")
    ws.remember("서준은 등산을 좋아하고 매달 북한산에 간다", layer="M90")
    ws.diary("오늘 기억 검색 시스템을 설계했다")
    return ws


def _top(ws, q: str) -> list[tuple[str, int]]:
    return [(r.path, r.start_line) for r in search(ws, q, k=3, record=None)]


def test_vectors_take_two_bytes_a_dimension(corpus):
    index = Index.for_workspace(corpus)
    index.sync()
    dim = index.embedder.dim
    lengths = {r[0] for r in index.db.execute("SELECT length(vector) FROM embedding_cache")}
    assert lengths == {2 * dim}
    ids, mat = index.matrix()
    assert mat.dtype == np.float32 and mat.shape == (len(ids), dim)
    norms = np.linalg.norm(mat, axis=1)
    assert np.all(np.abs(norms - 1.0) < 1e-2)  # unit vectors survive the half precision
    assert _top(corpus, "coffee every morning")[0][0] == "MEMORY.md"


def _as_old_schema(index: Index, version: str) -> None:
    """Rewrite the index as an older giok left it: float32 vectors, that schema number."""
    rows = index.db.execute("SELECT hash, model, vector FROM embedding_cache").fetchall()
    index.db.executemany(
        "UPDATE embedding_cache SET vector=? WHERE hash=? AND model=?",
        [(np.frombuffer(v, dtype=np.float16).astype(np.float32).tobytes(), h, m) for h, m, v in rows],
    )
    index.db.execute("UPDATE meta SET value=? WHERE key='schema'", (version,))


def test_an_older_index_is_converted_and_reindexed(corpus):
    index = Index.for_workspace(corpus)
    index.sync()
    before = {q: _top(corpus, q) for q in ("coffee", "PostgreSQL JSONB", "등산")}
    _, mat_before = index.matrix()
    _as_old_schema(index, "4")
    index = reopen_index(corpus)
    assert any("schema 4 replaced by" in n for n in index.notes)
    stats = index.sync()
    assert stats["embedded"] == 0  # the cached vectors were converted, not embedded again
    lengths = {r[0] for r in index.db.execute("SELECT length(vector) FROM embedding_cache")}
    assert lengths == {2 * index.embedder.dim}
    _, mat_after = index.matrix()
    assert np.array_equal(mat_after, mat_before)
    assert {q: _top(corpus, q) for q in before} == before


def test_an_index_of_an_unknown_version_loses_its_vectors_not_its_answers(corpus):
    index = Index.for_workspace(corpus)
    index.sync()
    before = _top(corpus, "coffee")
    index.db.execute("UPDATE meta SET value='99' WHERE key='schema'")
    index.db.execute("UPDATE embedding_cache SET vector=zeroblob(7)")  # a layout this code cannot read
    index = reopen_index(corpus)
    assert index.sync()["embedded"] > 0
    assert _top(corpus, "coffee") == before
    assert index.status()["schema"] == index_mod.SCHEMA_VERSION


def test_an_older_vector_that_is_no_float32_is_embedded_again(corpus):
    index = Index.for_workspace(corpus)
    index.sync()
    before = _top(corpus, "coffee")
    _as_old_schema(index, "3")
    index.db.execute(
        "UPDATE embedding_cache SET vector=zeroblob(7) WHERE rowid = (SELECT min(rowid) FROM embedding_cache)"
    )
    index = reopen_index(corpus)
    assert index.sync()["embedded"] == 1  # the broken one; the others were converted
    assert {r[0] for r in index.db.execute("SELECT length(vector) FROM embedding_cache")} == {
        2 * index.embedder.dim
    }
    assert _top(corpus, "coffee") == before
