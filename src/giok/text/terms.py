"""Korean and English keyword terms for the full-text index.

SQLite's unicode61 tokenizer treats a whole Hangul run (`제온이`) as one token, so `제온`
never finds it. We tokenize in Python instead and hand FTS5 plain space-separated terms:

- Korean words: the word itself and its stem with a trailing particle or a common verb
  ending stripped (`제온이` → `제온이 제온`, `기억을` → `기억을 기억`), plus Hangul
  character bigrams of the stem in a second, lower-weighted column (`메모리검색` → `메모`,
  `모리`, `리검`, `검색`) so that parts of compounds match.
- English words: lower-cased, possessives dropped, a light suffix stemmer (`meetings` →
  `meeting`, `running` → `run`, `decided` → `decid` on both sides, so they meet).
- Han and Kana runs (Chinese, Japanese: no spaces between words): character bigrams
  (`北京大学` → `北京`, `京大`, `大学`; a lone character stays itself), so a short query does not
  match every text that shares one character with it.
- Stopwords are dropped on both sides.

The words, stop words, stems and language test come from `giok.text.analysis`.

`quote_fts` is the one place a query becomes FTS5 syntax: every term is a double-quoted
string, joined by OR, so no user input can reach the FTS grammar.
"""

from __future__ import annotations

from giok.text.analysis import (
    KO_STOP,
    SEARCH_STOP,
    fold,
    is_cjk,
    is_hangul,
    language,
    stem_en,
    stem_ko,
    words,
)
from giok.text.lazy import lazy

# What the index's keyword terms are made of: raise it whenever `terms()` or `grams()` gives
# another output for some word (a new stop word, suffix or stemming rule), or the index's extra
# terms change (`crossing.index_terms`: name keys, lexicon phrases; 3; a Korean particle read only
# where it agrees with the syllable before it, `analysis._agrees`: 4). An index whose terms
# were made under another version re-derives them from its files (retrieval/index.py), and a
# PostgreSQL copy re-publishes its rows: keyword search never mixes two analyses.
VERSION = "4"

__all__ = [
    "VERSION",
    "grams",
    "inflected",
    "language",
    "normalize",
    "query_terms",
    "quote_fts",
    "stem_en",
    "stem_ko",
    "terms",
    "words",
]

_APOSTROPHE = lazy(r"'[a-z]*$")
normalize = fold  # the search side's normaliser (NFKC, lower case)


def bigrams(run: str) -> list[str]:
    """Character bigrams of a run (`메모리` → `메모`, `모리`); a one-character run stays itself."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _terms(word: str, query: bool) -> list[str]:
    if is_hangul(word):
        if word in KO_STOP:
            return []
        stem = stem_ko(word)
        return [stem] if stem == word else [word, stem]
    if is_cjk(word):
        return bigrams(word)
    if word in SEARCH_STOP or _APOSTROPHE.sub("", word) in SEARCH_STOP:
        return []
    stem = stem_en(word)
    return [stem] if stem else []


def terms(text: str, query: bool = False) -> list[str]:
    """The keyword terms of a text, in order (duplicates kept for documents); a Korean word
    with its stem (`서준이가` → `서준이가 서준`, `해운대에서` → `해운대에서 해운대`)."""
    out: list[str] = []
    for word in words(text):
        out.extend(_terms(word, query))
    return out


def grams(text: str) -> list[str]:
    """Hangul character bigrams of the stems (for compounds); empty for other scripts."""
    out: list[str] = []
    for word in words(text):
        if not is_hangul(word) or word in KO_STOP:
            continue
        stem = stem_ko(word)
        if len(stem) >= 2:
            out.extend(bigrams(stem))
    return out


# The particles after which a noun is the same noun whatever the particle (a verb ending is not
# here: 좋아하는 and 좋아한다 say different things of different subjects).
_PARTICLE_LIST = (
    "이 가 은 는 을 를 의 에 도 만 와 과 랑 로 께 에서 에게 한테 께서 으로 까지 부터 처럼 보다 "
    "이랑 에는 에도 에선 으론 로는 와는 과는 에서는 에서도 으로는 으로도 에게는 한테는 까지는 부터는"
)
_PARTICLES = frozenset(_PARTICLE_LIST.split())


def inflected(text: str) -> dict[str, str]:
    """The Korean words of a text that are a noun of two or more syllables with a particle
    (`서준이는` → `서준`: the name's 이, then 는; `부산에` → `부산`), word term → stem term. Search
    counts such a word present where its stem is: `서준이는` meets `서준은` and `서준이가`. A
    one-syllable stem (`나이` → `나`, `집에` → `집`) is too often a misreading to stand for its word,
    and a verb ending (`좋아하는`) is not a particle."""
    out: dict[str, str] = {}
    for word in words(text):
        if is_hangul(word) and word not in KO_STOP:
            stem = stem_ko(word)
            rest = word[len(stem) :] if word.startswith(stem) else ""
            if rest[:1] == "이" and len(rest) > 1 and rest[1:] in _PARTICLES:
                rest = rest[1:]
            if len(stem) >= 2 and rest in _PARTICLES:
                out[word] = stem
    return out


def query_terms(text: str) -> list[str]:
    """Distinct terms of a query, in order."""
    return list(dict.fromkeys(terms(text, query=True)))


def quote_fts(items: list[str], prefix: bool = False) -> str:
    """The only way a query reaches FTS5: each term double-quoted (optionally as a prefix
    query, `"term"*`), joined by OR."""
    star = "*" if prefix else ""
    quoted = ['"' + t.replace('"', '""') + '"' + star for t in items if t and t.strip()]
    return " OR ".join(quoted)
