"""Scoring regressions (issue 16): the user's name alone carries no result, a date in the
query finds the diary of that date, the answer after a repeated question, abstention."""

from __future__ import annotations

import pytest

from conftest import stocked_workspace
from giok.retrieval.search import query_dates

SEOJUN = [
    "서준은 지난 여름 해운대에서 서핑을 처음 배웠다.",
    "서준은 아침마다 아메리카노를 마신다.",
    "서준의 여동생 민지는 부산에서 간호사로 일한다.",
    "서준은 화요일과 목요일에 헬스장에 간다.",
    "서준은 회의를 오전 10시 이후로 잡는 걸 좋아한다.",
    "서준의 강아지 보리는 진돗개다.",
    "서준은 다음 달에 제주도로 가족 여행을 간다.",
    "서준은 매운 음식을 잘 못 먹는다.",
]


@pytest.fixture(scope="module")
def korean(tmp_path_factory):
    for ws in stocked_workspace(tmp_path_factory, SEOJUN, prefix="k", name="seo", user="서준", lang="ko"):
        ws.search("warm up")
        yield ws


@pytest.mark.parametrize(
    "query",
    ["서준이 좋아하는 영화가 뭐였지?", "서준이 키우는 고양이 이름", "서준의 자동차 색깔"],
)
def test_the_users_name_alone_returns_nothing(korean, monkeypatch, query):
    # nothing about films, cats or cars is stored: every entry names 서준, none may come back
    monkeypatch.setenv("GIOK_HOME", str(korean.home.path))
    found = [r.text for r in korean.search(query, k=5, identity=0.0)]
    assert not found, found


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("서준이는 해운대에서 뭐 했어?", "해운대"),
        ("서준 여동생 직업", "간호사"),
        ("서준이 매운 거 먹을 수 있어?", "매운"),
    ],
)
def test_the_users_name_with_a_topic_returns_that_entry_first_and_not_all(korean, monkeypatch, query, answer):
    monkeypatch.setenv("GIOK_HOME", str(korean.home.path))
    found = [r.text for r in korean.search(query, k=5, identity=0.0)]
    assert found and answer in found[0], found
    assert len(found) < len(SEOJUN) // 2, found


def test_query_dates_are_read_in_the_usual_spellings():
    assert query_dates("What did Tim say on 16 November, 2023?")[0] == ["2023-11-16"]
    assert query_dates("what happened on 16.01.2024")[0] == ["2024-01-16"]
    assert query_dates("the picture from December 1,2023")[0] == ["2023-12-01"]
    assert query_dates("2024년 1월 16일에 뭐 했지")[0] == ["2024-01-16"]
    assert query_dates("what did he learn in August 2023?")[0] == ["2023-08"]
    assert query_dates("no date here, 2023 people")[0] == []


def test_a_date_in_the_query_finds_the_diary_of_that_date(ws):
    # the date is only in the diary's file name; another day's line shares more of the words
    lines = {
        "2024-01-09": ["- 10:00 Jo: the bike brakes again, I will look at the bike brakes next week"],
        "2024-01-16": ["- 10:00 Jo: finally fixed them, no more squealing on the way down"],
        "2024-01-23": ["- 10:00 Jo: we talked about a trip to the coast next spring"],
    }
    for day, body in lines.items():
        (ws.root / "memory" / f"{day}.md").write_text(f"# {day}\n\n" + "\n".join(body) + "\n", "utf-8")
    found = ws.search("What did Jo say about the bike brakes on 16.01.2024?", k=3)
    assert found and found[0].date == "2024-01-16", [(r.date, r.text) for r in found]
