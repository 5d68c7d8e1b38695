"""Keyword terms for Korean and English, and the one FTS quoting function."""

import sqlite3

import pytest

from giok.text.terms import grams, language, query_terms, quote_fts, stem_en, stem_ko, terms


@pytest.mark.parametrize("word", ["제온이", "제온은", "제온의", "제온을", "제온에게", "제온"])
def test_korean_particles_meet_the_bare_noun(word):
    assert "제온" in terms(word)


def test_korean_object_particle_and_verb_endings():
    assert "기억" in terms("기억을")
    assert stem_ko("결정했다") == "결정"
    assert stem_ko("배포한다") == "배포"


def test_short_korean_words_keep_their_form():
    assert "아이" in terms("아이")  # the word itself stays a term
    assert stem_ko("이") == "이"


def test_english_inflection_meets():
    assert stem_en("meetings") == stem_en("meeting")
    assert stem_en("running") == stem_en("run")
    assert stem_en("decided") == stem_en("decide"[:-1] + "ed")
    assert terms("Caroline's Stories") == ["caroline", "story"]
    assert terms("the and of") == []


def test_hangul_bigrams_cover_compounds():
    assert "검색" in grams("메모리검색을")
    assert grams("English only") == []


def test_language():
    assert language("배포는 금요일") == "ko"
    assert language("deploy on Friday") == "en"
    assert language("VibeDojo v2 리팩터링을 하기로 결정했다 because") == "ko"


NASTY = [
    '"',
    "*",
    "NEAR",
    "AND",
    "OR NOT",
    '"unterminated',
    "a:b",
    "(x",
    "col:*",
    "^start",
    '제온" OR "x',
    "NEAR(a b, 3)",
    "{a b}",
    "'; DROP TABLE memories; --",
]


@pytest.mark.parametrize("query", NASTY)
def test_no_query_breaks_fts_syntax(query):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(terms)")
    db.execute("INSERT INTO t VALUES ('near and drop table memories 제온')")
    for prefix in (False, True):
        expr = quote_fts(query_terms(query), prefix=prefix)
        if expr:
            db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()


def test_quote_fts_quotes_every_term():
    assert quote_fts(["a", 'b"c']) == '"a" OR "b""c"'
    assert quote_fts(["x"], prefix=True) == '"x"*'
    assert quote_fts([]) == ""
