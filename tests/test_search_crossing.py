"""Search across the two scripts and a name with any particle: `부산` finds "… lives in Busan",
`Busan` finds "부산에 산다" (Revised Romanization folded into a name key, `giok.text.crossing`),
`green tea` finds "녹차" through the bilingual lexicon, and `--mode keyword 서준이는` finds 서준은 and
서준이가 (a Korean word counts as its stem). A key never joins two words of one script, and a
one-syllable Korean word has none, so an unrelated word does not match through it."""

from __future__ import annotations

import json

import pytest

from conftest import stocked_workspace

FACTS = [
    "Jiho lives in Busan with his wife and two cats.",  # 0
    "민지는 매일 오후에 녹차를 마신다.",  # 1
    "서준은 다음 달에 제주도로 이사한다.",  # 2
    "서준이가 팀 회의에서 새 배포 일정을 발표했다.",  # 3
    "서준이랑 민수는 같은 대학을 나왔다.",  # 4
    "할머니는 부산 해운대에 사신다.",  # 5
    "The deploy pipeline runs every Friday at noon.",  # 6
    "할아버지는 손이 늘 차갑다.",  # 7
    "Gate 12 closes forty minutes before departure.",  # 8
    "The staging cluster moved to a new region in March.",  # 9
    "서준이는 주말마다 테니스를 친다.",  # 10
    "하윤은 판교 게임회사에서 UI 디자이너로 일한다.",  # 11
    "민호는 평범한 회사원이다.",  # 12
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    yield from stocked_workspace(tmp_path_factory, FACTS, prefix="x", name="crossing", user="Minji")


@pytest.fixture
def home(store, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(store.home.path))
    return store


def _texts(ws, query, **opts) -> list[str]:
    return [r.text for r in ws.search(query, k=5, record=None, **opts)]


def test_a_place_in_hangul_finds_it_in_latin_letters(home):
    assert FACTS[0] in _texts(home, "부산")


def test_a_place_in_latin_letters_finds_it_in_hangul(home):
    assert FACTS[5] in _texts(home, "Busan")


def test_green_tea_finds_the_korean_entry_and_back(home):
    assert FACTS[1] in _texts(home, "green tea")
    assert FACTS[1] in _texts(home, "who drinks green tea?")


def test_a_name_with_any_particle_finds_the_other_particles_in_keyword_mode(home, cli):
    out = cli("search", "서준이는", "--mode", "keyword", "--k", "10", "--json", "-w", str(home.root))
    assert out.exit_code == 0, out.output
    found = [r["text"] for r in json.loads(out.output)["results"]]
    assert FACTS[2] in found  # 서준은
    assert FACTS[3] in found  # 서준이가
    assert FACTS[4] in found  # 서준이랑
    assert FACTS[10] in found  # the literal form too


@pytest.mark.parametrize("query", ["회사", "회사가"])
def test_a_korean_noun_finds_the_compound_it_heads(home, query):
    found = _texts(home, query, mode="keyword")
    assert FACTS[11] in found  # a 게임회사 is a 회사: compounds put their head last
    assert FACTS[12] not in found  # a 회사원 (office worker) is not


@pytest.mark.parametrize(
    ("query", "unrelated"),
    [
        ("son", FACTS[7]),  # 손 (hand) has one syllable: no key
        ("Kate", FACTS[8]),  # Kate and Gate share a key, but both are Latin: keys only cross scripts
        ("car", FACTS[1]),  # 차 (tea / car) is left out of the lexicon: 녹차 is not a car
    ],
)
def test_an_unrelated_word_does_not_match_through_a_key_or_the_lexicon(home, query, unrelated):
    assert unrelated not in _texts(home, query, mode="keyword")


@pytest.mark.parametrize(
    ("spellings", "key"),
    [
        (["Busan", "Pusan", "busan"], "busan"),
        (["Seojun", "Seo-jun", "Suh Joon", "seo jun"], "sujun"),
        (["Jeju", "Cheju"], "jeju"),
        (["Hyun", "Hyeon"], "hyun"),
    ],
)
def test_the_usual_latin_spellings_of_a_korean_name_share_one_key(spellings, key):
    from giok.text.crossing import name_key

    assert {name_key(s) for s in spellings} == {key}


def test_the_index_terms_hold_the_keys_of_both_scripts_and_the_lexicon_phrases():
    from giok.text.crossing import index_terms

    found = index_terms("Minji drinks green tea with Park Seojun in Busan")
    assert {"0eminji", "0ebusan", "0esujun", "0ebagsujun", "0pgreentea"} <= set(found)
    assert {"0kbusan", "0ksujun"} <= set(index_terms("서준은 부산에 산다"))
    assert "0kson" not in index_terms("할아버지는 손이 차갑다")  # one syllable: no key


def test_a_query_word_counts_its_other_script_terms():
    from giok.text.crossing import query_alternatives

    alts = query_alternatives("녹차 부산").alternatives
    assert "0pgreentea" in alts["녹차"] and "0ebusan" in alts["부산"]
    crossing = query_alternatives("green tea in Busan")
    assert crossing.phrases == {"0pgreentea": ("green", "tea")}
    assert "녹차" in crossing.alternatives["0pgreentea"] and "부산" in crossing.alternatives["busan"]


def test_a_korean_word_with_a_particle_stands_for_its_stem_of_two_syllables_or_more():
    from giok.text.terms import inflected

    assert inflected("서준이는 부산에 나이") == {"서준이는": "서준", "부산에": "부산"}  # 나이 → 나: too short
