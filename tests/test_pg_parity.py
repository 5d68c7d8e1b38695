"""The PostgreSQL + pgvector index backend against a real server started by the suite
(tests/pg_support.py); skipped, saying why, when it cannot start. Parity: the same corpus and
queries through SQLite and PostgreSQL give the same top results (docs/teams.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import run_giok
from giok.errors import InvalidInput
from giok.retrieval import pg
from giok.retrieval.index import Index
from giok.retrieval.search import search

QUERIES = [
    "coffee",
    "what does Seojun drink in the morning",
    "billing database",
    "PostgreSQL JSONB",
    "서준",
    "제온 에이전트",
    "검색 시스템 설계",
    "해운대",
    "deploy friday",
    "기억 검색",
    "who is the first agent",
    "등산",
]


@pytest.fixture
def corpus(ws, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    ws.remember("제온은 서준의 첫 번째 에이전트이다", layer="M0")
    ws.remember("Seojun drinks dark roast coffee every morning", layer="M90")
    ws.remember("The billing service uses PostgreSQL for JSONB", layer="M365")
    ws.remember("서준이는 주말마다 해운대에서 서핑을 한다", layer="M90")
    ws.remember("Never deploy on a Friday afternoon", layer="M365")
    ws.remember("서준은 등산을 좋아하고 매달 북한산에 간다", layer="M90")
    ws.remember("Seojun's private doctor is Dr. Kim", scope="user:Seojun")
    ws.remember("Minji prefers tea over coffee", scope="user:Minji")
    ws.diary("오늘 기억 검색 시스템을 설계했다")
    ws.diary("Q: which store for vectors? A: SQLite first, PostgreSQL with pgvector for teams")
    return ws


def _use_pg(home, dsn: str) -> None:
    home.update(lambda c: c.update(index={"backend": "postgres", "dsn": dsn}))


def _top(ws, q: str, k: int = 5, **opts) -> list[tuple[str, int, str]]:
    return [(r.path, r.start_line, r.text) for r in search(ws, q, k=k, **opts)]


def test_same_top_results_on_both_backends(corpus, giok_home, pg_dsn):
    on_sqlite = {q: _top(corpus, q) for q in QUERIES}
    _use_pg(giok_home, pg_dsn)
    assert type(Index.for_workspace(corpus)).__name__ == "PgIndex"
    on_pg = {q: _top(corpus, q) for q in QUERIES}
    for q in QUERIES:
        assert on_pg[q][:1] == on_sqlite[q][:1], q
        assert set(on_pg[q][:3]) == set(on_sqlite[q][:3]), q
    assert sum(bool(v) for v in on_pg.values()) >= len(QUERIES) - 2  # the corpus answers most queries


def test_scopes_hold_on_postgres(corpus, giok_home, pg_dsn):
    _use_pg(giok_home, pg_dsn)
    mine = " ".join(t for *_, t in _top(corpus, "doctor coffee tea", k=10))
    assert "Dr. Kim" in mine and "Minji" not in mine  # USER.md's user is Seojun
    theirs = " ".join(t for *_, t in _top(corpus, "doctor coffee tea", k=10, user="Minji"))
    assert "Minji" in theirs and "Dr. Kim" not in theirs


def test_scope_rule_in_sql(corpus, giok_home, pg_dsn):
    from giok.retrieval import pg

    _use_pg(giok_home, pg_dsn)
    index = Index.for_workspace(corpus)
    index.sync()
    where, args = pg.visible_sql("Minji", None)
    got = index.keyword_candidates(["coffe", "coffee", "doctor"], 10, where=where, args=args)
    texts = " ".join(r["text"] for r in index.rows([i for i, _ in got]).values())
    assert "Minji" in texts and "Dr. Kim" not in texts
    qvec = index.embedder.embed(["Seojun's private doctor"], "query")[0]
    near = index.vector_candidates(qvec, 20, where=where, args=args)
    assert "Dr. Kim" not in " ".join(r["text"] for r in index.rows([i for i, _ in near]).values())


def test_forget_leaves_the_shared_index_at_once(corpus, giok_home, pg_dsn):
    _use_pg(giok_home, pg_dsn)
    assert _top(corpus, "해운대 서핑")
    index = Index.for_workspace(corpus)
    entry = next(e for e in corpus.memory().entries() if "해운대" in e.text)
    out = run_giok("forget", entry.id, "--reason", "asked to", cwd=corpus.root)
    assert out.returncode == 0, out.stderr
    n = index.conn.execute(
        f"SELECT count(*) FROM {index.table} WHERE ws = %s AND text LIKE %s", (index.ws_id, "%해운대%")
    ).fetchone()[0]
    assert n == 0
    assert not any("해운대" in t for *_, t in _top(corpus, "해운대 서핑"))


def test_cli_index_into_postgres(corpus, giok_home, pg_dsn):
    out = run_giok("index", "--backend", "postgres", "--dsn", pg_dsn, "--json", cwd=corpus.root)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["backend"] == "postgres" and data["pg_chunks"] == data["chunks"] > 0
    assert "password" not in data["dsn"]
    bad = run_giok("index", "--dsn", pg_dsn, cwd=corpus.root)
    assert bad.returncode != 0 and "--backend postgres" in bad.stderr


def test_bad_backend_config_is_one_clear_error(corpus, giok_home):
    giok_home.update(lambda c: c.update(index={"backend": "oracle"}))
    with pytest.raises(InvalidInput, match="not one of"):
        search(corpus, "coffee")


def test_a_second_machine_with_other_ids_replaces_the_rows(corpus, giok_home, pg_dsn, tmp_path):
    """Two machines' SQLite indexes number chunks independently: rows are keyed by content, so
    a publish from files that differ replaces what the first machine published."""
    from giok import Workspace

    _use_pg(giok_home, pg_dsn)
    assert _top(corpus, "coffee")
    first = Index.for_workspace(corpus)
    other, _ = Workspace.init(tmp_path / "other" / "zeon", name="zeon2", user="Seojun", home=giok_home)
    other.remember("Seojun switched to green tea", layer="M90")
    index = Index.for_workspace(other)
    index.ws_id, index._secret = first.ws_id, first._secret  # the same workspace, other files
    index.sync()
    texts = [
        r[0] for r in index.conn.execute(f"SELECT text FROM {index.table} WHERE ws = %s", (first.ws_id,))
    ]
    assert any("green tea" in t for t in texts)
    assert not any("dark roast" in t for t in texts)


def _column_type(index) -> str:
    """The shared table's vector column as PostgreSQL names it ("halfvec(64)")."""
    return index.conn.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s::regclass"
        " AND attname = 'embedding'",
        (index.table,),
    ).fetchone()[0]


def test_the_shared_table_holds_float16_vectors_where_pgvector_has_them(corpus, giok_home, pg_dsn):
    """halfvec, as SQLite stores them: half the bytes, and rows small enough to stay out of TOAST;
    `vector` where pgvector is older than 0.7 and has no halfvec (the tests' fallback server on a
    CPU without AVX-512, tests/pg_support.py), where a search ranks the workspace's rows exactly."""
    _use_pg(giok_home, pg_dsn)
    index = Index.for_workspace(corpus)
    index.sync()
    version = index.conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
    old = pg._version(version) < pg.HALFVEC_SINCE
    assert _column_type(index) == f"{'vector' if old else 'halfvec'}({index.embedder.dim})"
    assert any("해운대" in text for *_, text in _top(corpus, "해운대 서핑"))  # found either way


def test_a_search_counts_the_table_once_per_publish(corpus, giok_home, pg_dsn):
    """The chunk count and the terms' document counts are kept until the next publish: a
    search after the first one runs no count over the table."""
    _use_pg(giok_home, pg_dsn)
    assert _top(corpus, "coffee morning")
    index = Index.for_workspace(corpus)
    seen: list[str] = []
    plain = index.conn.execute

    def execute(sql, *args, **kw):
        seen.append(str(sql))
        return plain(sql, *args, **kw)

    index.conn.execute = execute
    try:
        assert _top(corpus, "coffee morning")
    finally:
        del index.conn.execute
    assert seen and not [s for s in seen if "count(*)" in s]
    corpus.remember("Seojun bought a new coffee grinder", layer="M90")
    assert any("grinder" in t for *_, t in _top(corpus, "coffee grinder"))  # counts refreshed by the publish


def test_nearer_rows_of_another_workspace_do_not_hide_a_workspaces_own(corpus, giok_home, pg_dsn):
    """One table holds every workspace of a model. 400 rows of another workspace, each the
    question's own vector, sit nearer than anything of this one: an HNSW scan that stops at
    ef_search (200) rows before the WHERE would give this workspace nothing (pgvector < 0.8 has
    no iterative scan; giok ranks the workspace's rows exactly there)."""
    _use_pg(giok_home, pg_dsn)
    index = Index.for_workspace(corpus)
    index.sync()
    qvec = index.embedder.embed(["해운대 서핑"], "query")[0]
    column = _column_type(index)
    literal = "[" + ",".join(f"{x:.6f}" for x in qvec) + "]"
    try:
        index.conn.execute(
            f"INSERT INTO {index.table} (ws, cid, content, embedding)"
            f" SELECT 'another-team', n, 'c' || n, %s::{column} FROM generate_series(1, 400) n",
            (literal,),
        )
        index.conn.execute("SET enable_sort = off")  # the plan a large table gets: the HNSW index
        found = index.vector_candidates(qvec, limit=10)
        own = index.conn.execute(
            f"SELECT cid, embedding FROM {index.table} WHERE ws = %s AND embedding IS NOT NULL",
            (index.ws_id,),
        ).fetchall()
        exact = sorted((float(np.asarray(v.to_numpy()) @ qvec) for _, v in own), reverse=True)[:10]
        assert len(found) == 10  # an HNSW scan stopping before the WHERE gave none
        if not index._iterative:  # ranked exactly (pgvector 0.8's relaxed order is approximate)
            assert [round(x, 3) for _, x in found] == [
                round(x, 3) for x in exact
            ]  # the nearest ten, in order
    finally:
        index.conn.execute("RESET enable_sort")
        index.conn.execute(f"DELETE FROM {index.table} WHERE ws = 'another-team'")


def test_a_present_question_is_answered_through_the_chain_on_both_backends(corpus, giok_home, pg_dsn):
    # "lives" is in the replaced entry only: the live one is found through it on either backend
    old = corpus.remember("Jonas lives in Hamburg, near the Alster", layer="M365").entry
    assert old is not None
    moved = corpus.remember("Jonas moved to Munich last month", layer="M365", supersedes=old.id).entry
    assert moved is not None
    on_sqlite = search(corpus, "Where does Jonas live?", k=3, record=None)
    _use_pg(giok_home, pg_dsn)
    on_pg = search(corpus, "Where does Jonas live?", k=3, record=None)
    for found in (on_sqlite, on_pg):
        assert found and found[0].id == moved.id and found[0].evidence.get("via") == old.id, found
        assert old.id not in [r.id for r in found]
