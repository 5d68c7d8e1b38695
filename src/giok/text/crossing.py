"""Keyword terms that cross between Korean and English: a name or place in either script
(`부산` ↔ "Busan", `서준` ↔ "Seo-jun"), and everyday nouns through a small bilingual lexicon
(`녹차` ↔ "green tea", `커피` ↔ "coffee").

Names. A Hangul stem of two to five syllables is romanized (Revised Romanization,
`analysis.romanize`) and reduced to a **name key** that folds the usual ways of spelling Korean
in Latin letters into one: voiced and voiceless consonants alike (Busan / Pusan, Gimpo / Kimpo),
eo and u (Seong / Sung, Hyeon / Hyun), oo and u (Joon / Jun), ee and i, ch and j, r and l,
sh and s, an h that closes a syllable (Suh, Ahn), doubled letters; hyphens and case ignored. A
capitalised Latin word (or hyphenated one: "Seo-jun") gets the same key, and so does a full name
whose surname is spelled in one of the common ways (`SURNAMES`: Park → 박, Lee / Yi / Rhee → 이).
The keys of each script live in their own namespace (`FROM_HANGUL`, `FROM_LATIN` prefixes), so a
key only ever joins a Hangul word with a Latin one: two English words that share a key ("Kate",
"Gate") never meet through it, and a one-syllable Korean word (손, 강) has no key at all.

Everyday nouns. `lexicon.txt` (its header says how it was written) pairs Korean nouns with
their English counterparts. An English form of two or three words ("green tea") is one index
term (`PHRASE` + its stems), so that it can be matched as a whole.

The index stores `index_terms(text)` beside `terms.terms(text)`; a query asks for
`query_alternatives(text)`: for each of its keyword terms, the terms of the other script that
count as it (search weighs such a match below an exact one). `terms.terms` itself is unchanged,
so the write policy's duplicate detection (which shares it) is unaffected.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from giok.text.analysis import (
    KO_STOP,
    SEARCH_STOP,
    fold,
    is_hangul,
    romanize,
    stem_en,
    stem_ko,
    words,
)
from giok.text.lazy import lazy

FROM_HANGUL = "0k"  # the name key of a Hangul stem, as an index term
FROM_LATIN = "0e"  # the name key of a capitalised Latin word or full name
PHRASE = "0p"  # an English lexicon form of several words, as one index term
MIN_SYLLABLES, MAX_SYLLABLES = 2, 5
MIN_LATIN = 3  # letters: shorter Latin words get no key

# Common Korean surnames in their usual Latin spellings → Revised Romanization, for a full name
# written in Latin letters ("Park Seojun" ↔ 박서준). A surname alone gets no key (one syllable).
SURNAMES = {
    "park": "bak",
    "pak": "bak",
    "bahk": "bak",
    "kim": "gim",
    "gim": "gim",
    "lee": "i",
    "yi": "i",
    "rhee": "i",
    "rhie": "i",
    "choi": "choe",
    "choe": "choe",
    "jung": "jeong",
    "chung": "jeong",
    "jeong": "jeong",
    "kang": "gang",
    "cho": "jo",
    "jo": "jo",
    "yoon": "yun",
    "yun": "yun",
    "jang": "jang",
    "chang": "jang",
    "lim": "im",
    "im": "im",
    "shin": "sin",
    "kwon": "gwon",
    "ahn": "an",
    "yoo": "yu",
    "ryu": "ryu",
    "oh": "o",
    "suh": "seo",
    "seo": "seo",
    "moon": "mun",
    "han": "han",
    "song": "song",
    "hong": "hong",
    "hwang": "hwang",
    "jeon": "jeon",
    "chun": "cheon",
    "ko": "go",
    "go": "go",
    "nam": "nam",
    "bae": "bae",
    "baek": "baek",
    "paik": "baek",
    "heo": "heo",
    "hur": "heo",
    "noh": "no",
    "roh": "no",
    "son": "son",
    "yang": "yang",
    "woo": "u",
    "koo": "gu",
    "joo": "ju",
    "min": "min",
}
# The first syllables of the surnames above, in Hangul: a three-syllable stem led by one is
# also keyed by its last two syllables (김민지 → minji), as the given name is written alone.
_SURNAME_SYLLABLES = frozenset("김이박최정강조윤장임한오서신권황안송류유홍전고문양손배백허남노우구주민")

_CAPITALISED = lazy(r"\b[A-Z][a-z]+(?:-[A-Za-z][a-z]+)*(?:\s+[A-Z][a-z]+(?:-[A-Za-z][a-z]+)*)?")
_KEY_FOLDS = (
    ("ch", "j"),
    ("sh", "s"),
    ("ph", "b"),
    ("th", "d"),
    ("c", "g"),
    ("q", "g"),
    ("k", "g"),
    ("p", "b"),
    ("t", "d"),
    ("f", "b"),
    ("v", "b"),
    ("z", "j"),
    ("x", "gs"),
    ("r", "l"),
    ("oo", "u"),
    ("ee", "i"),
    ("eo", "u"),
    ("ou", "u"),
    ("wu", "u"),
    ("oi", "oe"),
    ("ui", "i"),
)
_H_CLOSING = lazy(r"h(?![aeiouwy])")
_HAS_CAPITAL = lazy(r"[A-Z]")


@functools.lru_cache(maxsize=1 << 16)
def name_key(latin: str) -> str:
    """The spelling-folded key of a romanized word (`Pusan`, `busan` → `busan`; `Seo-jun`,
    `Suh Joon`, `seojun` → `sujun`)."""
    key = re.sub(r"[^a-z]", "", fold(latin))
    for old, new in _KEY_FOLDS:
        key = key.replace(old, new)
    key = _H_CLOSING.sub("", key)
    return re.sub(r"(.)\1+", r"\1", key)


@functools.lru_cache(maxsize=1 << 16)
def hangul_keys(stem: str, given: bool = True) -> tuple[str, ...]:
    """The name keys of a Hangul stem of two to five syllables (`부산` → `busan`), and with
    `given` that of the last two syllables of a three-syllable stem led by a common surname
    (`박서준` → `bagsujun`, `sujun`); none for a shorter or longer one."""
    if not MIN_SYLLABLES <= len(stem) <= MAX_SYLLABLES or not is_hangul(stem):
        return ()
    keys = [name_key(romanize(stem))]
    if given and len(stem) == 3 and stem[0] in _SURNAME_SYLLABLES:
        keys.append(name_key(romanize(stem[1:])))
    return tuple(dict.fromkeys(keys))


def latin_name_keys(text: str) -> list[str]:
    """The name keys of a text's capitalised Latin words and two-word names ("Busan",
    "Seo-jun", "Park Seojun" → `busan`, `sujun`, `bagsujun`)."""
    out: list[str] = []
    for m in _CAPITALISED.finditer(text):
        parts = m.group(0).split()
        for part in parts:
            if _keyed(part):
                out.append(name_key(part))
        if len(parts) == 2 and (surname := SURNAMES.get(parts[0].lower())) and _keyed(parts[1]):
            out.append(name_key(surname + parts[1]))
    return out


def _keyed(word: str) -> bool:
    bare = fold(word).replace("-", "")
    return len(bare) >= MIN_LATIN and bare not in SEARCH_STOP


# -- the lexicon ----------------------------------------------------------------------------------
@dataclass
class Lexicon:
    """Korean forms ↔ English forms; an English form is the tuple of its stemmed words."""

    korean: dict[str, list[int]] = field(default_factory=dict)  # Korean form → entry numbers
    english: dict[tuple[str, ...], list[int]] = field(default_factory=dict)  # English stems → entries
    entries: list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]] = field(default_factory=list)
    longest: int = 1
    starts: set[str] = field(default_factory=set)  # the first stems of the phrases

    def add(self, korean: list[str], english: list[str]) -> None:
        ko = tuple(k for k in korean if k)
        en = tuple(t for t in (tuple(_stems(e)) for e in english) if t)
        if not ko or not en:
            return
        n = len(self.entries)
        self.entries.append((ko, en))
        for k in ko:
            self.korean.setdefault(k, []).append(n)
        for e in en:
            self.english.setdefault(e, []).append(n)
            self.longest = max(self.longest, len(e))
            if len(e) > 1:
                self.starts.add(e[0])


def _stems(text: str) -> list[str]:
    out = []
    for word in words(text):
        if word in SEARCH_STOP:
            continue
        out.append(stem_en(word) if not is_hangul(word) else word)
    return out


def as_term(form: tuple[str, ...]) -> str:
    """The index term of an English form: the word's stem, or PHRASE + the stems of a phrase."""
    return form[0] if len(form) == 1 else PHRASE + "".join(form)


@functools.lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    lex = Lexicon()
    text = (Path(__file__).with_name("lexicon.txt")).read_text(encoding="utf-8")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or ";" not in line:
            continue
        ko, en = line.split(";", 1)
        lex.add([fold(k).strip() for k in ko.split(",")], [e.strip() for e in en.split(",")])
    return lex


def _phrases(stems: list[str]) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, form) of the lexicon's English phrases (two or more words) in a stem
    sequence, longest first, without overlaps."""
    lex = lexicon()
    out: list[tuple[int, int, tuple[str, ...]]] = []
    i = 0
    while i < len(stems):
        if stems[i] not in lex.starts:
            i += 1
            continue
        for n in range(min(lex.longest, len(stems) - i), 1, -1):
            form = tuple(stems[i : i + n])
            if form in lex.english:
                out.append((i, i + n, form))
                i += n - 1
                break
        i += 1
    return out


def _latin_stems(text: str) -> list[str]:
    return [stem_en(w) for w in words(text) if not is_hangul(w) and w not in SEARCH_STOP]


# -- index side -----------------------------------------------------------------------------------
def index_terms(text: str, found: list[str] | None = None) -> list[str]:
    """The extra index terms of a text (`found`: its `words`, when at hand): the name keys of
    its Hangul stems and capitalised Latin names, and its English lexicon phrases (`녹차를
    마신다` → `0knogja`; "Minji drinks green tea in Busan" → `0eminji`, `0ebusan`, `0pgreentea`)."""
    found = words(text) if found is None else found
    out: list[str] = []
    latin: list[str] = []
    for word in found:
        keys, stem = _word_keys(word)
        out.extend(keys)
        if stem:
            latin.append(stem)
    if _HAS_CAPITAL.search(text):
        out.extend(FROM_LATIN + k for k in latin_name_keys(text))
    if lexicon().starts.intersection(latin):
        out.extend(PHRASE + "".join(form) for _, _, form in _phrases(latin))
    return out


@functools.lru_cache(maxsize=1 << 16)
def _word_keys(word: str) -> tuple[tuple[str, ...], str]:
    """(the name keys of a Hangul word, the stem of a Latin one that is no stop word)."""
    if is_hangul(word):
        return (() if word in KO_STOP else tuple(FROM_HANGUL + k for k in hangul_keys(stem_ko(word)))), ""
    return (), ("" if word in SEARCH_STOP else stem_en(word))


# -- query side -----------------------------------------------------------------------------------
@dataclass
class Crossing:
    """What a query's keyword terms become across the two scripts: `phrases` (a lexicon phrase's
    term → the word terms it replaces) and `alternatives` (a term → the other script's terms that
    count as it, at the cross-script weight)."""

    phrases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    alternatives: dict[str, tuple[str, ...]] = field(default_factory=dict)


def query_alternatives(text: str) -> Crossing:
    """The cross-script alternatives of a query's terms: a Hangul word's stem → the Latin name
    key of the stem and the English forms the lexicon gives it; a Latin word's stem → the
    Hangul name key and the Korean forms; an English lexicon phrase → one term standing for its
    words, with the Korean forms."""
    lex = lexicon()
    found: dict[str, list[str]] = {}
    crossing = Crossing()
    for word in words(text):
        if is_hangul(word):
            if word in KO_STOP:
                continue
            stem = stem_ko(word)
            alts = [FROM_LATIN + k for k in hangul_keys(stem, given=False)]
            for n in lex.korean.get(stem, lex.korean.get(word, [])):
                alts.extend(as_term(e) for e in lex.entries[n][1])
            if alts:
                found.setdefault(stem, []).extend(alts)
            continue
        bare = re.sub(r"'[a-z]*$", "", word)
        if bare in SEARCH_STOP or word in SEARCH_STOP:
            continue
        stem = stem_en(word)
        alts = [FROM_HANGUL + name_key(bare)] if len(bare) >= MIN_LATIN and bare.isalpha() else []
        for n in lex.english.get((stem,), []):
            alts.extend(lex.entries[n][0])
        if alts:
            found.setdefault(stem, []).extend(alts)
    latin = words(text)
    for a, b in itertools.pairwise(latin):
        surname = SURNAMES.get(a)
        if surname and not is_hangul(b) and len(b) >= MIN_LATIN:
            found.setdefault(stem_en(b), []).append(FROM_HANGUL + name_key(surname + b))
    for _, _, form in _phrases(_latin_stems(text)):
        term = as_term(form)
        crossing.phrases[term] = form
        for n in lex.english[form]:
            found.setdefault(term, []).extend(lex.entries[n][0])
    crossing.alternatives = {t: tuple(dict.fromkeys(a for a in alts if a != t)) for t, alts in found.items()}
    return crossing
