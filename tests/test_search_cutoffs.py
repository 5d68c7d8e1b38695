"""The cut-offs with the default model: the floor decides whether anything is found (a question
nothing stored is about gets "no memory"); below the best result, a score gap no longer drops a
second memory on the same topic (the seed's gap rule is there when asked for)."""

from __future__ import annotations

import pytest

from conftest import stocked_workspace
from giok.retrieval.search import DYNAMIC_GAP

EXPIRES = "Seojun's passport expires in March 2027, renew it before the Japan trip."
DRAWER = "Seojun keeps his passport in the blue drawer of the desk."
ENTRIES = [
    DRAWER,
    EXPIRES,
    "Seojun drinks an americano every morning.",
    "The team ships releases every Friday afternoon.",
    "Seojun's sister Minji works as a nurse in Busan.",
    "Decided to use SQLite with FTS5 for the memory index.",
]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    yield from stocked_workspace(tmp_path_factory, ENTRIES, prefix="cut", name="zeon", user="Seojun")


def test_a_second_memory_on_the_topic_is_not_cut_by_a_score_gap(small, monkeypatch):
    # the expiry entry scores ~0.87, the drawer entry ~0.63: a gap over 0.15, which used to drop
    # the drawer entry although it is about the same passport and well above the noise floor
    monkeypatch.setenv("GIOK_HOME", str(small.home.path))
    found = [r.text for r in small.search("When does the passport expire?")]
    assert found == [EXPIRES, DRAWER]


def test_the_seeds_gap_rule_when_asked_for(small, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(small.home.path))
    found = [r.text for r in small.search("When does the passport expire?", gap=DYNAMIC_GAP)]
    assert found == [EXPIRES]


@pytest.mark.parametrize(
    "question",
    ["What is my cat's name?", "When is my dentist appointment?", "서준이 좋아하는 영화가 뭐였지?"],
)
def test_a_question_nothing_stored_is_about_still_gets_no_memory(small, monkeypatch, question):
    monkeypatch.setenv("GIOK_HOME", str(small.home.path))
    answer = small.recall(question)
    assert answer.decision == "search"
    assert answer.answer == "no memory", [r.text for r in answer.results]


def test_what_the_prompt_hook_injects_unasked_keeps_the_gap_rule(small, monkeypatch):
    from giok.edges.hooks import prompt_recall

    monkeypatch.setenv("GIOK_HOME", str(small.home.path))
    shown = prompt_recall(small, {"prompt": "When does the passport expire?", "session_id": "cut"})
    assert shown is not None
    context = shown["hookSpecificOutput"]["additionalContext"]
    assert EXPIRES in context and DRAWER not in context
