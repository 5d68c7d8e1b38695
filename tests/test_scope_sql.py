"""Scopes and allow-lists are enforced in the SQL of the search path, on both backends: a chunk the
searcher may not see is never fetched (so it can neither be returned nor take a candidate's
place), and `search._visible` checks every row again (docs/teams.md, "Scopes in SQL")."""

from __future__ import annotations

import pytest

from giok.errors import PermissionDenied
from giok.retrieval.index import Index, Reader, reader_key
from giok.retrieval.search import search
from giok.write import policy

CROWD = 150  # more private entries than search.POOL keyword candidates


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    if request.param == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        giok_home.update(lambda c: c.update(index={"backend": "postgres", "dsn": dsn}))
    return request.param


@pytest.fixture
def crowded(ws, backend):
    """One coffee fact everyone may read among CROWD shorter ones private to Minji."""
    lines = [
        f"- [2026-11-01] Minji coffee coffee note {i} <!-- id: m-{i:06x}; type: fact; scope: user:Minji -->"
        for i in range(CROWD)
    ]
    lines.append(
        "- [2026-11-02] Seojun keeps a spare coffee grinder in the office kitchen <!-- id: m-aaaaaa -->"
    )
    lines.append(
        "- [2026-11-03] Seojun coffee appointment <!-- id: m-bbbbbb; type: fact; scope: user:seojun -->"
    )
    lines.append("- [2026-11-03] coffee in thread one <!-- id: m-cccccc; type: fact; scope: thread:t1 -->")
    text = (ws.root / "MEMORY.md").read_text("utf-8")
    text = text.replace(
        "## 📚 M90 : 90-day memory\n", "## 📚 M90 : 90-day memory\n" + "\n".join(lines) + "\n"
    )
    (ws.root / "MEMORY.md").write_text(text, "utf-8")
    return ws


def _texts(ws, q: str, **opts) -> list[str]:
    return [r.text for r in search(ws, q, k=20, record=None, **opts)]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_private_rows_never_crowd_out_what_the_reader_may_see(crowded, mode):
    got = _texts(crowded, "coffee", mode=mode)  # USER.md's user is Seojun
    assert any("spare coffee grinder" in t for t in got)
    assert any("coffee appointment" in t for t in got)  # user:seojun is Seojun's (names casefolded)
    assert not any("Minji" in t or "thread one" in t for t in got)
    assert any("thread one" in t for t in _texts(crowded, "coffee", mode=mode, thread="t1"))


def test_the_fetching_calls_never_return_an_unseen_row(crowded):
    index = Index.for_workspace(crowded)
    index.sync()
    seojun = Reader("Seojun")
    kw = [i for i, _ in index.keyword_search('"coffe" OR "coffee"', 500, seojun)]
    ids, _ = index.matrix()
    cos = index.cosines(index.embedder.embed(["Minji coffee note"], "query")[0], seojun)
    near = [int(ids[p]) for p in range(len(ids)) if cos[p] > -2]
    every = [int(i) for i in ids]
    for got in (index.rows(kw, seojun), index.rows(near, seojun), index.rows(every, seojun)):
        assert got and all(policy.visible(r["scope"], "Seojun") for r in got.values())
    assert len(index.rows(every, seojun)) == len(every) - CROWD - 1  # Minji's and the thread's
    assert len(index.rows(every, Reader(all_scopes=True))) == len(every)
    dated = index.date_ids("2026-11-01", 500, seojun)
    assert dated == [] and len(index.date_ids("2026-11-01", 500, Reader("minji"))) == CROWD


@pytest.mark.parametrize(
    "scope",
    [
        "workspace",
        None,
        "",
        "workspace:x",
        "task:deploy",
        "user:Seojun",
        "user:seojun",
        "user:Minji",
        "user:김-민수",
        "thread:t1",
        "thread:T1",
        "task",
        "*",
        "User:Seojun",
        "other:x",
    ],
)
@pytest.mark.parametrize("user,thread", [("Seojun", None), ("김 민수", "t1"), (None, None), ("", "T1")])
def test_the_sql_rule_is_the_python_rule(scope, user, thread):
    """`Reader` (SQL) and `search._visible` (Python) agree on every scope shape."""
    in_sql = reader_key(scope) in Reader(user, thread).allowed()
    in_python = (scope or "workspace").startswith("task:") or policy.visible(scope, user, thread)
    assert in_sql == in_python


def test_another_agents_private_workspace(crowded, backend, giok_home, tmp_path):
    """The allow-list holds before any query (PermissionDenied), and on the shared PostgreSQL
    table a workspace's search reads its own rows only."""
    from giok import Workspace

    other, _ = Workspace.init(tmp_path / "haru", name="haru", user="Seojun", home=giok_home)
    other.remember("Haru keeps the coffee budget spreadsheet", layer="M90")
    giok_home.update(lambda c: c["workspaces"]["haru"].update(private=True))
    assert any("budget" in t for t in _texts(other, "coffee budget"))
    with pytest.raises(PermissionDenied):
        search(crowded, "coffee budget", workspaces=["haru"])
    assert not any("budget" in t for t in _texts(crowded, "coffee budget"))
