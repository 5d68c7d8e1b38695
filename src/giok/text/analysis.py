"""Text analysis: the one place giok reads words out of text, for search terms, duplicate
detection, the write policy and the nightly review.

- `fold` (NFKC, lower case) and `canonical` (NFC, one space, ISO dates) are the normalisers;
  `key` is the comparison key built on `canonical` (case-folded words, no punctuation).
- `words` splits folded text into Hangul runs, Latin/digit words and Han/Kana runs.
- `FUNCTION_WORDS` (English articles, pronouns, prepositions, auxiliaries) and `KO_STOP` are the
  stop words; `SEARCH_STOP` adds conversational chatter and contraction fragments for search.
- `stem_ko` strips one trailing particle or verb ending (and a name's hypocoristic 이:
  `서준이는` → `서준`); `stem_en` is a light suffix stemmer. Both are memoised per word.
- `has_hangul` and `language` are the language tests.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from giok.text.lazy import LazyPattern, lazy


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _seq(text: str) -> list[str]:
    return text.split()


_KO_SUFFIXES = tuple(
    sorted(
        _split(
            "이 가 은 는 을 를 의 에 도 만 와 과 랑 로 나 께 들 에서 에게 "
            "한테 께서 으로 까지 부터 처럼 보다 이나 이랑 하고 에는 에도 에선 "
            "으론 로는 와는 과는 이라 에서는 에서도 으로는 으로도 에게는 한테는 "
            "까지는 부터는 이라고 라고 이라는 라는 이란 란 이며 이고 이다 입니다 "
            "이에요 예요 였다 이었다 이었고 였고 하다 했다 했어 했어요 합니다 "
            "했습니다 하는 한다 할 해서 해요 하기 하면 하며 하고서 했던 하던 "
            "하게 해야 되다 됐다 된 되는 된다 돼서 되어 되었다 됩니다 되면 "
            "했었다 했었어 했었지 했었나 했지 했나 했을까 해줘 하자 할까 했으면 "
            "하려고 하려면 하러 었다 았다 었어 았어 었지 았지 었던 았던"
        ),
        key=len,
        reverse=True,
    )
)
FUNCTION_WORDS = _split(
    "a an the and or but if then than so of to in on at by for with from into onto about as is "
    "are was were be been being am do does did doing have has had having i me my mine we us "
    "our ours you your yours he him his she her hers it its they them their theirs this that "
    "these those there here what which who whom whose when where why how all any both each few "
    "more most other some such no nor not only own same too very can will just should would "
    "could shall may might must also up down out over under again further once ever"
)
_CHATTER = _split("yeah oh hey hi let lets get got go going went say said tell told know like")
_FRAGMENTS = _split("s t d ll m re ve y")
KO_STOP = _split(
    "그 이 저 것 수 등 및 또 또는 그리고 하지만 그런데 좀 잘 더 뭐 어떤 무엇 언제 어디 왜 어떻게 누가 누구"
)
SEARCH_STOP = FUNCTION_WORDS | _CHATTER | _FRAGMENTS
STOP_WORDS = FUNCTION_WORDS | KO_STOP

_WORD_RE = lazy(r"[가-힣]+|[a-z0-9]+(?:'[a-z]+)?|[\u3040-\u30ff\u4e00-\u9fff]+")
_HANGUL_RE = lazy(r"^[가-힣]+$")
_CJK_RE = lazy(r"^[\u3040-\u30ff\u4e00-\u9fff]+$")
_KEY_WORD_RE = lazy(r"[\w가-힣]+")
_EN_KEEP_S = ("ss", "us", "is", "ous", "ics")
_DATE_FORMS = (
    lazy(r"\b(\d{4})\s*[./–—‒−]\s*(\d{1,2})\s*[./–—‒−]\s*(\d{1,2})\b"),
    lazy(r"(\d{4})년\s*(\d{1,2})월\s*(\d{1,2})일"),
)


# -- normalisers ---------------------------------------------------------------------------------
def fold(text: str) -> str:
    """NFKC (full-width → ASCII, compatibility jamo → syllables) and lower case: search terms."""
    return unicodedata.normalize("NFKC", text).lower().replace("’", "'")


def canonical(text: str) -> str:
    """NFC, one space between words, ISO dates (2026.3.5, 2026/03/05, 2026–03–05, 2026년 3월 5일):
    the form a memory is written in."""
    text = " ".join(unicodedata.normalize("NFC", text).split())
    for pattern in _DATE_FORMS:
        text = pattern.sub(_iso, text)
    return text


def _iso(m: re.Match[str]) -> str:
    y, mo, d = (int(g) for g in m.groups())
    if 1 <= mo <= 12 and 1 <= d <= 31:
        return f"{y:04d}-{mo:02d}-{d:02d}"
    return m.group(0)


def key(text: str) -> str:
    """The comparison key: case-folded words of the canonical form, without punctuation."""
    return " ".join(key_words(canonical(text).casefold()))


def key_words(text: str) -> list[str]:
    """Word characters (any script) in runs, as the comparison key splits them."""
    return _KEY_WORD_RE.findall(text)


# -- words and stems -----------------------------------------------------------------------------
def words(text: str) -> list[str]:
    """Hangul runs, Latin/digit words (with an apostrophe suffix) and Han/Kana runs, folded."""
    return _WORD_RE.findall(fold(text))


def is_hangul(word: str) -> bool:
    return bool(_HANGUL_RE.match(word))


def is_cjk(word: str) -> bool:
    """A run of Han characters or Kana (Chinese, Japanese): no spaces between its words."""
    return bool(_CJK_RE.match(word))


@functools.lru_cache(maxsize=1 << 16)
def stem_ko(word: str) -> str:
    """The word without one trailing particle or verb ending (`기억을` → `기억`, `결정했다` →
    `결정`), a name's hypocoristic 이 after a final consonant (`서준이가` → `서준`), and a 르
    verb's stem whichever way it is conjugated (`부르면`, `불러야`, `불렀다` → `부르`)."""
    for suffix in _KO_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= max(1, len(suffix) if len(word) <= 2 else 1):
            stem = word[: -len(suffix)]
            if not _agrees(stem, suffix):
                continue
            return stem[:-1] if _name_i(stem) and suffix != "이" else stem
    return _reu_stem(word) or word


# A particle whose form follows the syllable before it: these after a final consonant (서준이,
# 책을, 집으로), their twins after a vowel (민지가, 차를, 학교로). A word whose last syllables do
# not agree is no noun with that particle: 나이 (age) is not 나 + 이, 오이 (cucumber) not 오 + 이.
_AFTER_CONSONANT = _split("이 은 을 과 과는 으로 으론 으로는 으로도 이랑 이나")
_AFTER_VOWEL = _split("가 는 를 와 랑 와는")


def _agrees(stem: str, suffix: str) -> bool:
    if suffix not in _AFTER_CONSONANT and suffix not in _AFTER_VOWEL:
        return True
    code = ord(stem[-1]) - 0xAC00
    if not 0 <= code < 11172:
        return True  # not a Hangul syllable: no rule to read
    closed = code % 28 != 0
    return closed if suffix in _AFTER_CONSONANT else not closed


# 르 verbs (부르다, 모르다, 고르다, 빠르다) keep 르 before a consonant ending (부르면, 부른다,
# 부를까) and move its ㄹ onto the syllable before it before a vowel one (불러야, 불렀다). Both
# forms give the stem (부르), for a closed list of endings only: a noun that merely contains
# these syllables (바르셀로나, 컬러) is left alone.
_REU_KEEP = _split("다 면 고 니 며 게 지 기 자 세요 려고 려면 도록 던 니까 지만 거나 는 는데 시고 시면")
_REU_KEEP_N = _split("다 데 지")  # after 른 (르 with ㄴ): 부른다; 부른 alone too
_REU_KEEP_L = _split("까 게 래 수")  # after 를 (르 with ㄹ): 부를까 (를 alone is the particle)
_REU_MOVED = {
    "러": _split("야 서 요 도 줘 야지 서요 주다"),
    "라": _split("야 서 요 도 줘 야지 서요 주다"),
    "렀": _split("다 어 어요 고 지 는데 던 을 습니다"),
    "랐": _split("다 어 어요 고 지 는데 던 을 습니다"),
}
_RIEUL = 8  # ㄹ as a syllable's final consonant


def _reu_stem(word: str) -> str | None:
    for i in range(1, len(word)):
        rest = word[i + 1 :]
        here = word[i]
        if here == "르" and rest in _REU_KEEP:
            return word[: i + 1]
        if (here == "른" and (rest in _REU_KEEP_N or not rest)) or (here == "를" and rest in _REU_KEEP_L):
            return word[:i] + "르"
        if here in _REU_MOVED and (rest in _REU_MOVED[here] or (not rest and here in "러라")):
            before = ord(word[i - 1]) - 0xAC00
            if 0 <= before < 11172 and before % 28 == _RIEUL:
                return word[: i - 1] + chr(0xAC00 + before - _RIEUL) + "르"
    return None


def _name_i(stem: str) -> bool:
    """`서준이` (a name of two or more syllables, the last with a final consonant, and 이)."""
    if len(stem) < 3 or stem[-1] != "이":
        return False
    before = ord(stem[-2]) - 0xAC00
    return 0 <= before < 11172 and before % 28 != 0


@functools.lru_cache(maxsize=1 << 16)
def stem_en(word: str) -> str:
    """A light suffix stemmer (`meetings` → `meeting`, `running` → `run`, `decided` → `decid`)."""
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


def stem(word: str) -> str:
    """The stem of one folded word in its own script (Han/Kana runs are left whole)."""
    if is_hangul(word):
        return stem_ko(word)
    if is_cjk(word):
        return word
    return stem_en(word)


def content_words(text: str) -> frozenset[str]:
    """The stems of the words that carry content: stop words and one-letter words off."""
    out = set()
    for word in words(text):
        bare = re.sub(r"'[a-z]*$", "", word)
        if word in STOP_WORDS or bare in STOP_WORDS or (len(bare) < 2 and not bare.isdigit()):
            continue
        out.add(stem(word))
    return frozenset(out)


# -- languages -----------------------------------------------------------------------------------
# Revised Romanization of Korean, syllable by syllable (no sound changes across syllables: a
# name as its owner spells it in Latin letters, 서준 → seojun, 민지 → minji, 박 → bak).
_RR_INITIAL = _seq("g kk n d tt r m b pp s ss - j jj ch k t p h")
_RR_VOWEL = _seq("a ae ya yae eo e yeo ye o wa wae oe yo u wo we wi yu eu ui i")
_RR_FINAL = ["", *_seq("k k k n n n t l k m l l l p l m p p t t ng t t k t p t")]


def romanize(word: str) -> str:
    """`word`'s Hangul syllables in Revised Romanization (others as they are): `서준` → `seojun`."""
    out = []
    for ch in word:
        code = ord(ch) - 0xAC00
        if not 0 <= code < 11172:
            out.append(ch)
            continue
        initial = _RR_INITIAL[code // 588]
        out.append(("" if initial == "-" else initial) + _RR_VOWEL[code % 588 // 28] + _RR_FINAL[code % 28])
    return "".join(out)


def has_hangul(text: str) -> bool:
    """Any Hangul syllable: the test for a Korean workspace, file or template."""
    return bool(re.search(r"[가-힣]", text))


def language(text: str) -> str:
    """'ko' when the text has a few Hangul syllables or is mostly Hangul, else 'en' (enough
    for per-language calibration: e5 treats mixed text like Korean)."""
    hangul = len(re.findall(r"[가-힣]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return "ko" if hangul >= 4 or (hangul and hangul * 2 >= latin) else "en"


# -- polarity ------------------------------------------------------------------------------------
# Negation, rewritten to the positive claim: (pattern, replacement). Each hit flips the polarity.
NEGATIONS: tuple[tuple[LazyPattern, str], ...] = (
    (lazy(r"\bno longer\b|\bnot\b|\bnever\b|\bno\b", re.I), ""),
    (lazy(r"\bcan ?not\b|\bcan'?t\b", re.I), "can"),
    (lazy(r"\bwon'?t\b", re.I), "will"),
    (lazy(r"\b(\w+)n'?t\b", re.I), r"\1"),
    (lazy(r"\bdisabled\b", re.I), "enabled"),
    (lazy(r"\bforbidden\b|\bprohibited\b", re.I), "allowed"),
    (
        lazy(r"지(는|도|가)?\s*(않|마|말|못)[가-힣]*"),
        "",
    ),  # 하지 않는다, 하지 마, 하지 말 것, 하지 못한다
    (lazy(r"(?<![가-힣])(안|못)\s+"), ""),  # 안 한다, 못 간다
    (lazy(r"(?<![가-힣])(안|못)(?=(하|해|했|한|할|돼|된|되))"), ""),  # 안한다, 못해
    (lazy(r"\s*아니[가-힣]*"), ""),  # 채식주의자가 아니다
    (lazy(r"없(?=[가-힣]|\b|$)"), "있"),  # GPU가 없다 → 있다
    (lazy(r"꺼져|꺼짐|꺼진"), "켜져"),
    (lazy(r"비활성"), "활성"),
    (lazy(r"금지"), "허용"),
)


@functools.lru_cache(maxsize=1 << 15)
def positive(text: str) -> tuple[str, bool]:
    """(the text rewritten as its positive claim, negated?): "배포는 금요일에 하지 않는다" →
    ("배포는 금요일에 한다"-like, True); an even number of negations is positive."""
    body, flips = canonical(text).casefold(), 0
    for pattern, replacement in NEGATIONS:
        body, n = pattern.subn(replacement, body)
        flips += n
    return body, flips % 2 == 1
