"""Korean names and places, and Chinese/Japanese text, in keyword search (giok.text)."""

from __future__ import annotations

import pytest

from giok.text.terms import query_terms, terms


def _hits(ws, query: str) -> list[str]:
    return [r.text for r in ws.search(query, mode="keyword")]


@pytest.mark.parametrize("query", ["서준이는", "서준은", "서준이가", "서준이랑"])
def test_a_korean_name_matches_whatever_particle_follows_it(query):
    doc = set(terms("서준이가 제일 좋아하는 음식은 김치찌개다"))
    assert set(query_terms(query)) & doc


def test_keyword_search_finds_a_name_written_with_its_hypocoristic_i(ws):
    ws.remember("서준이가 제일 좋아하는 음식은 김치찌개다")
    ws.remember("민수는 부산에 산다")
    assert _hits(ws, "서준은") == ["서준이가 제일 좋아하는 음식은 김치찌개다"]


def test_a_place_with_a_locative_matches(ws):
    ws.remember("지난 여름 해운대에서 서핑을 배웠다")
    ws.remember("광안리 근처 횟집이 맛있었다")
    assert _hits(ws, "해운대에서") == ["지난 여름 해운대에서 서핑을 배웠다"]
    assert "해운대" in set(query_terms("해운대에서")) & set(terms("해운대 근처 횟집이 맛있었다"))


def test_han_text_is_indexed_as_bigrams():
    assert terms("北京大学") == ["北京", "京大", "大学"]
    assert terms("東京に行きます") == ["東京", "京に", "に行", "行き", "きま", "ます"]
    assert terms("大") == ["大"]


def test_a_short_chinese_query_does_not_match_every_text_sharing_a_character(ws):
    ws.remember("我在北京大学读书")
    ws.remember("大家好,今天天气很好")
    assert _hits(ws, "多大") == []
    ws.remember("他问我多大年纪")
    assert _hits(ws, "多大") == ["他问我多大年纪"]


def test_japanese_words_match_inside_a_sentence(ws):
    ws.remember("京都の寺が好きです")
    ws.remember("東の空が明るい")
    assert _hits(ws, "東京") == []
    ws.remember("来月は東京に出張します")
    assert _hits(ws, "東京") == ["来月は東京に出張します"]
