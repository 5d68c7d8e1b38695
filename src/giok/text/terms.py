"""Korean and English keyword terms for the full-text index.

SQLite's unicode61 tokenizer treats a whole Hangul run (`제온이`) as one token, so `제온`
never finds it. We tokenize in Python instead and hand FTS5 plain space-separated terms:

- Korean words: the word itself and its stem with a trailing particle or a common verb
  ending stripped (`제온이` → `제온이 제온`, `기억을` → `기억을 기억`), plus Hangul
  character bigrams of the stem in a second, lower-weighted column (`메모리검색` → `메모`,
  `모리`, `리검`, `검색`) so that parts of compounds match.
- English words: lower-cased, possessives dropped, a light suffix stemmer (`meetings` →
  `meeting`, `running` → `run`, `decided` → `decid` on both sides, so they meet).
- Stopwords are dropped on both sides.

`quote_fts` is the one place a query becomes FTS5 syntax: every term is a double-quoted
string, joined by OR, so no user input can reach the FTS grammar.
"""

from __future__ import annotations

import re
import unicodedata

_WORD_RE = re.compile(r"[가-힣]+|[a-z0-9]+(?:'[a-z]+)?|[\u3040-\u30ff\u4e00-\u9fff]")
_HANGUL_RE = re.compile(r"^[가-힣]+$")

# Particles and endings, longest first. Stripped once, only when a stem of at least one
# syllable remains (two for one-syllable suffixes on two-syllable words would lose meaning).
_KO_SUFFIXES = sorted(
    [
        "이",
        "가",
        "은",
        "는",
        "을",
        "를",
        "의",
        "에",
        "도",
        "만",
        "와",
        "과",
        "랑",
        "로",
        "나",
        "께",
        "들",
        "에서",
        "에게",
        "한테",
        "께서",
        "으로",
        "까지",
        "부터",
        "처럼",
        "보다",
        "이나",
        "이랑",
        "하고",
        "에는",
        "에도",
        "에선",
        "으론",
        "로는",
        "와는",
        "과는",
        "이라",
        "에서는",
        "에서도",
        "으로는",
        "으로도",
        "에게는",
        "한테는",
        "까지는",
        "부터는",
        "이라고",
        "라고",
        "이라는",
        "라는",
        "이란",
        "란",
        "이며",
        "이고",
        "이다",
        "입니다",
        "이에요",
        "예요",
        "였다",
        "이었다",
        "이었고",
        "였고",
        "하다",
        "했다",
        "했어",
        "했어요",
        "합니다",
        "했습니다",
        "하는",
        "한다",
        "할",
        "해서",
        "해요",
        "하기",
        "하면",
        "하며",
        "하고서",
        "했던",
        "하던",
        "하게",
        "해야",
        "되다",
        "됐다",
        "된",
        "되는",
        "된다",
        "돼서",
        "되어",
        "되었다",
        "됩니다",
        "되면",
        "했었다",
        "했었어",
        "했었지",
        "했었나",
        "했지",
        "했나",
        "했을까",
        "해줘",
        "하자",
        "할까",
        "했으면",
        "하려고",
        "하려면",
        "었다",
        "았다",
        "었어",
        "았어",
        "었지",
        "았지",
        "었던",
        "았던",
    ],
    key=len,
    reverse=True,
)

_EN_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "too",
        "very",
        "can",
        "will",
        "just",
        "should",
        "would",
        "could",
        "shall",
        "may",
        "might",
        "must",
        "also",
        "up",
        "down",
        "out",
        "over",
        "under",
        "again",
        "further",
        "once",
        "ever",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
        "let",
        "lets",
        "get",
        "got",
        "go",
        "going",
        "went",
        "say",
        "said",
        "tell",
        "told",
        "know",
        "like",
        "yeah",
        "oh",
        "hey",
        "hi",
    ]
)

_KO_STOP = frozenset(
    [
        "그",
        "이",
        "저",
        "것",
        "수",
        "등",
        "및",
        "또",
        "또는",
        "그리고",
        "하지만",
        "그런데",
        "좀",
        "잘",
        "더",
        "뭐",
        "어떤",
        "무엇",
        "언제",
        "어디",
        "왜",
        "어떻게",
        "누가",
        "누구",
    ]
)

_EN_KEEP_S = ("ss", "us", "is", "ous", "ics")


def normalize(text: str) -> str:
    """NFKC (full-width → ASCII, compatibility jamo → syllables) and lower case."""
    return unicodedata.normalize("NFKC", text).lower().replace("’", "'")


def words(text: str) -> list[str]:
    return _WORD_RE.findall(normalize(text))


def stem_ko(word: str) -> str:
    for suffix in _KO_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= max(1, len(suffix) if len(word) <= 2 else 1):
            return word[: -len(suffix)]
    return word


def stem_en(word: str) -> str:
    word = re.sub(r"'[a-z]*$", "", word)
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if re.search(r"(ch|sh|x|z)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith(_EN_KEEP_S):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "ed" and base.endswith("i"):
                return base[:-1] + "y"
            if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    if word.endswith("ly") and len(word) > 5:
        return word[:-2]
    return word


def _terms(word: str, query: bool) -> list[str]:
    if _HANGUL_RE.match(word):
        if word in _KO_STOP:
            return []
        stem = stem_ko(word)
        return [stem] if stem == word else [word, stem]
    if word in _EN_STOP or re.sub(r"'[a-z]*$", "", word) in _EN_STOP:
        return []
    stem = stem_en(word)
    return [stem] if stem else []


def terms(text: str, query: bool = False) -> list[str]:
    """The keyword terms of a text, in order (duplicates kept for documents)."""
    out: list[str] = []
    for word in words(text):
        out.extend(_terms(word, query))
    return out


def grams(text: str) -> list[str]:
    """Hangul character bigrams of the stems (for compounds); empty for other scripts."""
    out: list[str] = []
    for word in words(text):
        if not _HANGUL_RE.match(word) or word in _KO_STOP:
            continue
        stem = stem_ko(word)
        if len(stem) >= 2:
            out.extend(stem[i : i + 2] for i in range(len(stem) - 1))
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


def language(text: str) -> str:
    """'ko' when the text has a few Hangul syllables or is mostly Hangul, else 'en' (enough
    for per-language calibration: e5 treats mixed text like Korean)."""
    hangul = len(re.findall(r"[가-힣]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return "ko" if hangul >= 4 or (hangul and hangul * 2 >= latin) else "en"
