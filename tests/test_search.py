"""Search and recall: scoring rules, filters, permissions, reference log, bad input, CLI.
Logic tests use the deterministic fake embedder (registered like any provider)."""

import json

import pytest

from conftest import run_giok
from giok import Workspace
from giok.errors import InvalidInput, PermissionDenied, WorkspaceError
from giok.retrieval.search import (
    DYNAMIC_GAP,
    MIN_SCORE,
    Options,
    Response,
    Result,
    _cut,
    needs_memory,
    reformulate,
)
from giok.store import refs


@pytest.fixture
def fake(giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))


@pytest.fixture
def filled(ws, fake):
    ws.remember("제온은 서준의 첫 번째 에이전트이다", layer="M0")
    ws.remember("Seojun drinks dark roast coffee every morning", layer="M90")
    ws.remember("The billing service uses PostgreSQL for JSONB", layer="M365")
    ws.diary("오늘 기억 검색 시스템을 설계했다")
    ws.lesson("Lock before writing", "two writers lost a line without the lock")
    return ws


def test_korean_particles_find_the_entry(filled):
    for q in ("제온", "제온이", "제온의", "제온에게"):
        res = filled.search(q)
        assert res, q
        assert res[0].text.startswith("제온은"), q
    assert filled.search("기억")[0].path.startswith("memory/")


def test_result_fields(filled):
    r = filled.search("coffee")[0]
    d = r.to_dict()
    assert set(d) == {
        "id",
        "workspace",
        "path",
        "start_line",
        "end_line",
        "layer",
        "date",
        "score",
        "text",
        "source",
    }
    assert r.workspace == "zeon"
    assert r.path == "MEMORY.md"
    assert r.layer == "M90"
    assert r.source == r.id
    assert 0.35 <= r.score <= 1.0
    assert filled.get(r.source).text == r.text


def test_keyword_only_hit_survives_fusion(filled):
    res = filled.search("PostgreSQL", mode="hybrid")
    assert res
    assert "PostgreSQL" in res[0].text
    assert res[0].score >= MIN_SCORE
    kw = filled.search("PostgreSQL", mode="keyword")
    assert kw[0].text == res[0].text


def test_nothing_relevant_returns_nothing(filled):
    assert filled.search("quantum chromodynamics lattice") == []


def test_cutoffs_noise_and_gap():
    def mk(scores):
        return [Result(str(i), "w", "p", i, i, None, None, s, "", None) for i, s in enumerate(scores)]

    resp = Response("q", [])
    kept = _cut(mk([0.9, 0.85, 0.6, 0.55, 0.3]), Options(k=10, gap=DYNAMIC_GAP), resp)
    assert [r.score for r in kept] == [0.9, 0.85]
    assert resp.cut_noise == 1
    assert resp.cut_gap == 2
    kept = _cut(mk([0.5, 0.45, 0.40, 0.36, 0.2]), Options(k=10, gap=DYNAMIC_GAP), Response("q", []))
    assert [r.score for r in kept] == [0.5, 0.45, 0.40, 0.36]
    assert DYNAMIC_GAP == 0.15
    # by default only the floor cuts: the gap rule is the seed's, asked for with gap=
    resp = Response("q", [])
    kept = _cut(mk([0.9, 0.85, 0.6, 0.55, 0.3]), Options(k=10), resp)
    assert [r.score for r in kept] == [0.9, 0.85, 0.6, 0.55]
    assert (resp.cut_noise, resp.cut_gap) == (1, 0)


def test_monotonic_in_k(filled):
    for i in range(12):
        filled.diary(f"coffee note number {i} about beans and roast")
    top10 = filled.search("coffee roast", k=10, min_score=0.0, gap=None)
    for k in (1, 3, 5):
        assert [r.id for r in filled.search("coffee roast", k=k, min_score=0.0, gap=None)] == [
            r.id for r in top10[:k]
        ]


def test_superseded_hidden_unless_asked(filled):
    old = filled.remember("Seojun likes green tea", layer="M90").entry
    filled.edit(
        "MEMORY.md",
        lambda t: (t.replace(f"id: {old.id}", f"id: {old.id}; superseded_by: m-ffffff"), None),
        "mark",
    )
    assert not [r for r in filled.search("green tea") if r.source == old.id]
    assert [r for r in filled.search("green tea", include_superseded=True) if r.source == old.id]


def test_user_and_thread_scopes(filled):
    minji = filled.remember("Minji's locker code preference is blue", layer="M90", scope="user:minji").entry
    t = filled.remember("Thread seven discusses the blue locker", layer="M90", scope="thread:t7").entry
    ids = lambda **o: {r.source for r in filled.search("blue locker", k=10, **o)}  # noqa: E731
    assert not {minji.id, t.id} & ids()  # scopes by default: USER.md's user, no thread
    assert {minji.id, t.id} <= ids(all_scopes=True)
    assert minji.id not in ids(user="seojun")
    assert minji.id in ids(user="minji")
    assert t.id not in ids(thread="t8")
    assert t.id in ids(thread="t7")


def test_searches_are_logged_as_references(filled):
    res = filled.search("coffee")
    assert refs.counts(filled)[res[0].source] == 1
    filled.recall("what coffee do I drink?")
    assert refs.counts(filled)[res[0].source] == 2
    assert {e["kind"] for e in refs.events(filled)} == {"search", "recall"}


def test_cross_workspace_search_and_permissions(filled, tmp_path, giok_home):
    other, _ = Workspace.init(tmp_path / "mira", name="mira", user="Seojun")
    other.remember("Mira keeps the deployment runbook", layer="M90")
    res = filled.search("deployment runbook", workspaces=["zeon", "mira"])
    assert any(r.workspace == "mira" for r in res)
    giok_home.update(lambda c: c["workspaces"]["mira"].update(private=True))
    with pytest.raises(PermissionDenied, match="may not read workspace 'mira'"):
        filled.search("runbook", workspaces=["mira"])
    giok_home.update(lambda c: c["workspaces"]["mira"].update(readers=["zeon"]))
    assert filled.search("runbook", workspaces=["mira"])
    assert other.search("runbook")  # a workspace always reads itself
    with pytest.raises(PermissionDenied):
        filled.search("runbook", workspaces=["mira"], as_="someone")
    with pytest.raises(WorkspaceError, match="unknown workspace 'ghost'"):
        filled.search("x", workspaces=["ghost"])


@pytest.mark.parametrize("query", ['"', "*", "NEAR", "AND", '" OR * NEAR(', "!!!", '제온" AND'])
def test_operator_queries_do_not_break(filled, query):
    filled.search(query)  # no exception; results (if any) are real matches


@pytest.mark.parametrize(
    "query,msg", [("", "empty query"), ("   ", "empty query"), ("x" * 100_000, "too long")]
)
def test_bad_queries(filled, query, msg):
    with pytest.raises(InvalidInput, match=msg):
        filled.search(query)
    with pytest.raises(InvalidInput):
        filled.search("ok", k=0)
    with pytest.raises(InvalidInput, match="unknown search option"):
        filled.search("ok", colour="red")


def test_deletion_reaches_search(filled):
    hit = filled.search("coffee")[0]
    filled.forget(hit.source, "no longer true")
    assert not [r for r in filled.search("coffee") if r.source == hit.source]


@pytest.mark.parametrize(
    "query,needed",
    [
        ("안녕!", False),
        ("hi", False),
        ("thanks!", False),
        ("fix the failing test in parser.py", False),
        ("What is the capital of France?", False),
        ("what did we decide about the billing database?", True),
        ("제온이 지난번에 뭐라고 했지?", True),
        ("Seojun coffee", True),
    ],
)
def test_recall_decides_whether_memory_is_needed(query, needed):
    assert needs_memory(query)[0] is needed


def test_recall_attempts(filled):
    skip = filled.recall("안녕하세요")
    assert skip.decision == "skip"
    assert skip.attempts == []
    assert skip.to_dict()["answer"] == "not needed"
    found = filled.recall("what coffee does Seojun drink?")
    assert found.answer == "found"
    assert len(found.attempts) == 1
    none = filled.recall("did we ever talk about volcano tourism logistics?")
    assert none.answer == "no memory"
    assert len(none.attempts) == 2
    assert none.attempts[1]["kind"] == "reformulated"
    assert "volcano" in none.attempts[1]["query"]
    assert reformulate("제온이 기억을 잃었을까?").split()[:2] == ["제온이", "제온"]


def test_recall_second_attempt_uses_keywords(filled):
    filled.diary("배포 체크리스트를 정리했다")
    r = filled.recall("배포를 언제 정리했었지?", k=10)
    assert r.answer == "found"
    assert any("배포" in x.text for x in r.results)
    assert all(a["query"] for a in r.attempts)
    assert len(r.attempts) <= 2


# -- CLI ------------------------------------------------------------------------------------
def test_cli_search_json_and_text(filled, cli):
    out = cli("search", "coffee", "-w", "zeon", "--json")
    data = json.loads(out.output)
    assert out.exit_code == 0
    assert data["query"] == "coffee"
    assert data["results"][0]["path"] == "MEMORY.md"
    out = cli("-w", "zeon", "search", "coffee")
    assert "MEMORY.md" in out.output
    assert "coffee" in out.output


def test_cli_batch_one_process(filled, tmp_path):
    queries = tmp_path / "q.txt"
    queries.write_text('coffee\n\n"\nPostgreSQL\n' + "y" * 5000 + "\n")
    out = run_giok("search", "--batch", str(queries), "-w", "zeon")
    lines = [json.loads(l) for l in out.stdout.splitlines()]
    assert out.returncode == 0
    assert len(lines) == 4
    assert lines[0]["results"]
    assert lines[1]["results"] == []
    assert "too long" in lines[3]["error"]
    piped = run_giok("search", "--batch", "-", "-w", "zeon", input="coffee\n")
    assert json.loads(piped.stdout)["results"][0]["path"] == "MEMORY.md"


def test_cli_errors(filled, cli):
    out = run_giok("search", "", "-w", "zeon")
    assert out.returncode == 2
    assert "Error: empty query" in out.stderr
    out = run_giok("search", "x", "-w", "ghost")
    assert out.returncode != 0
    assert "unknown workspace 'ghost'" in out.stderr
    out = run_giok("search", "-w", "zeon")
    assert out.returncode != 0
    assert "missing QUERY" in out.stderr


def test_cli_recall_and_index(filled, cli, giok_home):
    data = json.loads(cli("recall", "what coffee does Seojun drink?", "-w", "zeon", "--json").output)
    assert data["decision"] == "search"
    assert data["answer"] == "found"
    assert data["attempts"]
    status = json.loads(cli("index", "status", "-w", "zeon", "--json").output)
    assert status["chunks"] > 0
    assert status["model"] == "fake:64"
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 32}))
    out = run_giok("search", "coffee", "-w", "zeon")
    assert out.returncode == 7
    assert "giok index --rebuild" in out.stderr
    out = cli("index", "--rebuild", "-w", "zeon", "--json")
    assert json.loads(out.output)["model"] == "fake:32"
    assert json.loads(cli("search", "coffee", "-w", "zeon", "--json").output)["results"]


def test_cli_help_texts(cli):
    for cmd in ("search", "recall", "index"):
        out = cli(cmd, "--help")
        assert out.exit_code == 0
        assert "--json" in out.output
