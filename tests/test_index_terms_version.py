"""Keyword terms carry the version of the analysis that made them (`giok.text.terms.VERSION`):
an index whose terms another analysis made re-derives them from the files, keeping its vectors,
so a stemming change never leaves old terms that queries analysed the new way cannot meet."""

from __future__ import annotations

import pytest

from conftest import reopen_index
from giok.retrieval.index import Index
from giok.retrieval.search import search
from giok.text import terms


def _as_other_analysis(index: Index, version: str | None) -> None:
    """The index as a giok with another analysis left it: other terms, that version (or none)."""
    index.db.execute("UPDATE memories_fts SET terms = 'zzz', grams = 'zzz'")
    if version is None:
        index.db.execute("DELETE FROM meta WHERE key = 'terms'")
    else:
        index.db.execute("UPDATE meta SET value = ? WHERE key = 'terms'", (version,))


@pytest.mark.parametrize("version", ["1", None])
def test_terms_of_another_analysis_are_made_again_and_the_vectors_kept(fake_corpus, version):
    index = Index.for_workspace(fake_corpus)
    index.sync()
    assert index._meta_raw("terms") == terms.VERSION
    _as_other_analysis(index, version)
    index = reopen_index(fake_corpus)
    assert any("keyword terms of another analysis" in n for n in index.notes)
    assert index.sync()["embedded"] == 0  # the vectors come from the cache
    found = search(fake_corpus, "북한산", k=3, record=None, mode="keyword")
    assert [r.text for r in found] == ["서준은 등산을 좋아하고 매달 북한산에 간다"]
    assert index._meta_raw("terms") == terms.VERSION


def test_an_index_of_this_analysis_is_left_as_it_is(fake_corpus):
    index = Index.for_workspace(fake_corpus)
    index.sync()
    index = reopen_index(fake_corpus)
    assert not index.notes
    assert index.sync()["changed"] == 0


def test_the_shared_postgres_copy_takes_the_new_terms(fake_corpus, giok_home, pg_dsn, monkeypatch):
    from giok.retrieval import pg

    giok_home.update(lambda c: c.update(index={"backend": "postgres", "dsn": pg_dsn}))
    index = Index.for_workspace(fake_corpus)
    index.sync()
    index.conn.execute(f"UPDATE {index.table} SET terms = 'zzz', tsv = to_tsvector('simple', 'zzz')")
    assert not search(fake_corpus, "북한산", k=3, record=None, mode="keyword")
    monkeypatch.setattr(pg, "TERMS_VERSION", "next")  # what a giok of a newer analysis signs rows with
    index._published = None
    index.publish()
    found = search(fake_corpus, "북한산", k=3, record=None, mode="keyword")
    assert [r.text for r in found] == ["서준은 등산을 좋아하고 매달 북한산에 간다"]
