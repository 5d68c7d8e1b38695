"""Language arbitration in a mixed store (issue 16, `search._by_lead`): a Korean question's
Korean near-misses crowd together while the English entry that answers it stands alone among
the English ones; the best of each language is judged by its lead over its own runner-up too."""

from __future__ import annotations

import pytest

from conftest import stocked_workspace
from giok.retrieval.search import LEAD_MIN, Result, _by_lead

EN = [
    "Seojun prefers meetings after 2 pm because he does deep work in the morning.",
    "Seojun's cat is a grey Russian Blue named Mochi.",
    "Seojun takes the 7:40 express bus to the office.",
    "Seojun's favourite restaurant is a small ramen place near the station.",
    "Seojun is reading a novel about a lighthouse keeper this month.",
    "Seojun's laptop is a 14-inch MacBook Pro.",
    "Seojun plays the acoustic guitar, mostly folk songs.",
    "Seojun's sister lives in Vancouver and works as an architect.",
    "Seojun keeps a fiddle-leaf fig by his desk.",
    "Seojun's emergency contact is his wife Hana.",
]
KO = [
    "서준은 팀 회의에서 발표할 때 긴장을 많이 한다.",
    "서준은 회의 자료를 회의 하루 전에 받고 싶어 한다.",
    "서준은 회의 중에는 휴대폰을 뒤집어 둔다.",
    "서준은 매주 월요일 아침에 주간 계획을 팀장에게 보고한다.",
    "서준은 점심을 보통 회사 구내식당에서 먹는다.",
    "서준은 고양이 털 때문에 공기청정기를 두 대 쓴다.",
    "서준은 비 오는 날에는 재택근무를 한다.",
    "서준은 라디오 대신 팟캐스트를 들으며 출근한다.",
    "서준은 주말마다 한강에서 자전거를 탄다.",
    "서준은 매일 밤 열한 시 전에 잔다.",
]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    yield from stocked_workspace(tmp_path_factory, EN + KO, prefix="ld", name="lead", user="Seojun")


def test_the_answer_in_the_other_language_beats_a_crowd_of_near_misses(mixed, monkeypatch):
    # three Korean entries about meetings, none about when to hold one: the English one answers
    monkeypatch.setenv("GIOK_HOME", str(mixed.home.path))
    found = [r.text for r in mixed.search("회의는 몇 시쯤 잡는 게 좋아?", k=3)]
    assert found[:1] == [EN[0]], found


def test_a_question_the_other_language_does_not_answer_keeps_its_order(mixed, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(mixed.home.path))
    found = [r.text for r in mixed.search("What does he listen to on the way to work?", k=3)]
    assert found[:1] == [KO[7]], found


def results(scores: list[float]) -> list[Result]:
    return [
        Result(f"r{i}", "ws", "MEMORY.md", i, i, "M365", None, s, f"t{i}", None) for i, s in enumerate(scores)
    ]


def test_the_lower_best_with_the_larger_lead_takes_the_first_score_and_none_rises_above_it():
    # Korean: 0.60 among near-misses 0.58, 0.57 …; English: 0.50, then nothing close (0.10)
    ko = results([0.60, 0.58, 0.57] + [0.3] * (LEAD_MIN - 3))
    en = results([0.50, 0.10] + [0.05] * (LEAD_MIN - 2))
    _by_lead(ko + en, ["ko"] * len(ko) + ["en"] * len(en))
    assert en[0].score == pytest.approx(0.60) and en[0].score > ko[0].score
    assert max(r.score for r in ko + en) == pytest.approx(0.60)


@pytest.mark.parametrize("english", [LEAD_MIN - 1, 0])
def test_without_enough_candidates_in_each_language_nothing_moves(english):
    ko = results([0.60, 0.58, 0.57] + [0.3] * (LEAD_MIN - 3))
    en = results(([0.50] + [0.05] * (english - 1)) if english else [])
    _by_lead(ko + en, ["ko"] * len(ko) + ["en"] * len(en))
    assert [r.score for r in ko[:1] + en[:1]] == [0.60] + ([0.50] if english else [])
