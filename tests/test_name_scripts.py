"""The user's name in the other script: a user registered in Latin letters (Seojun) is named 서준
in a Korean question, and the name alone must not carry a result there either (Revised
Romanization, `analysis.romanize`); a 르 verb meets itself however it is conjugated, so a
question that loses the name still finds its entry by its verb (부르면 ↔ 불러야)."""

from __future__ import annotations

import pytest

from conftest import stocked_workspace
from giok.retrieval.search import _name_terms
from giok.text.analysis import romanize, stem_ko
from giok.text.terms import query_terms

FACTS = [
    "Seojun wants answers as short bullet lists, without headings.",
    "서준에게는 항상 존댓말을 쓰고 '서준 님'이라고 불러야 한다.",
    "Seojun drinks a flat white every morning before standup.",
    "서준은 오후 세 시 이후에는 커피를 마시지 않는다.",
    "Seojun's son is allergic to strawberries.",
    "서준은 주말마다 북한산에 간다.",
    "The billing service moved to the new cluster in March.",
    "서준의 강아지 이름은 보리다.",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    yield from stocked_workspace(tmp_path_factory, FACTS, prefix="r", name="names", user="Seojun")


@pytest.mark.parametrize(
    ("word", "latin"),
    [("서준", "seojun"), ("민지", "minji"), ("지우", "jiu"), ("하늘", "haneul"), ("정", "jeong")],
)
def test_hangul_is_romanized_as_names_are_spelled(word, latin):
    assert romanize(word) == latin


@pytest.mark.parametrize(
    ("user", "query", "names"),
    [
        ("Seojun", "서준의 자동차 색깔", {"서준의"}),
        ("Seojun", "서준이는 뭐 마셔?", {"서준이는"}),
        ("서준", "what does seojun drink", {"seojun"}),
        ("Jun", "준비 됐어?", set()),  # one syllable is no name: 준비 is "ready"
        ("Seojun", "서울에 가", set()),
    ],
)
def test_the_users_name_is_recognised_in_either_script(user, query, names):
    found = _name_terms(user, query_terms(query))
    assert names <= found
    assert bool(found) == bool(names)


@pytest.mark.parametrize("word", ["부르면", "불러야", "불렀다", "부른다", "부를까", "불러"])
def test_a_reu_verb_has_one_stem_however_conjugated(word):
    assert stem_ko(word) == "부르"


@pytest.mark.parametrize(("word", "stem"), [("노래를", "노래"), ("컬러가", "컬러"), ("다르다", "다르")])
def test_particles_still_come_off_first(word, stem):
    assert stem_ko(word) == stem


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        # a particle read only where it agrees with the syllable before it: 이, 은, 과 after a final
        # consonant, 가, 는, 를 after a vowel
        ("나이", "나이"),  # age, not 나 (I) + 이
        ("오이", "오이"),
        ("하은", "하은"),  # a name, not 하 + 은
        ("하은은", "하은"),
        ("사과는", "사과"),  # not 사 + 과는
        ("서준이가", "서준"),  # the name's 이 still comes off
        ("책과", "책"),
        ("민지가", "민지"),
    ],
)
def test_a_particle_comes_off_only_where_it_agrees_with_the_syllable_before_it(word, stem):
    assert stem_ko(word) == stem


def test_age_is_no_line_that_says_i(tmp_path, giok_home):
    from giok import Workspace

    ws, _ = Workspace.init(tmp_path / "w", name="w", user="서준", home=giok_home)
    ws.remember("나는 아침마다 커피를 마신다", layer="M365", force=True)
    assert ws.search("나이", k=3, mode="keyword", record=None) == []  # 나이 once read as 나 + 이


def test_a_korean_question_naming_a_latin_registered_user_is_not_carried_by_the_name(store, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(store.home.path))
    assert [r.text for r in store.search("서준의 자동차 색깔", k=3)] == []  # no car among the facts
    dog = [r.text for r in store.search("서준의 강아지 이름이 뭐야?", k=3)]
    assert dog[:1] == ["서준의 강아지 이름은 보리다."]


def test_how_to_address_the_user_is_found_by_its_verb(store, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(store.home.path))
    found = [r.text for r in store.search("서준을 뭐라고 부르면 돼?", k=3)]
    assert found[:1] == [FACTS[1]]
