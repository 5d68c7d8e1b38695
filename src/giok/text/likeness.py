"""Near-duplicates: do two texts say the same thing? One rule for the write policy (`remember`
folds a rewording into the old entry) and the nightly review (distill skips or merges a copy).

Two texts are near-duplicates when their comparison keys are equal, or when all of these hold:

- the same polarity ("likes X" / "does not like X" are opposites, never duplicates);
- the same numbers, in order ("3 servers" / "4 servers" are two facts);
- no two different subjects ("Minsu told Seojun …" / "Seojun told Minsu …"; "서준은 …" /
  "민수는 …"): the subject is the first name-like word (English) or the first topic- or
  subject-marked word (Korean), when both texts have one;
- Dice similarity of the keys' character trigrams at least `NEAR_DUPLICATE` (works for Korean);
- every content word of one has a counterpart of the same stem in the other ("Monday" /
  "Mondays"; "alpha" / "gamma" is a different fact).

`features(text)` is memoised by text and computes each part on first use, cheapest checks first,
so comparing one new text against thousands of entries costs a few operations per entry.
`NearIndex` finds, without comparing, the few texts that may be near-duplicates of a new one
(the same numbers and a counterpart of one of its words: both are needed, so nothing is missed);
`WordIndex` does the same for `counterparts` alone.
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from giok.text import analysis
from giok.text.lazy import lazy

NEAR_DUPLICATE = 0.82  # trigram Dice similarity at or above which two texts may be the same
MIN_KEY = 12  # shorter keys are compared only for equality
_NEUTRAL = analysis.STOP_WORDS | {
    "now",
    "currently",
    "actually",
    "still",
    "really",
    "just",
    "이제",
    "요즘",
    "지금은",
    "현재는",
    "정말",
    "진짜",
}
_NAME = lazy(r"^[A-Z][a-z]+$")
_KO_SUBJECT = lazy(r"^[가-힣]+(은|는|이|가|께서)$")
_KO_SELF = {"나", "저", "내", "제", "우리", "저희"}


class Features:
    """What comparisons need of one text, each part computed on first use and kept: most
    entries are told apart by their key, length, numbers or words before any trigram is made."""

    def __init__(self, text: str):
        self.text = text
        self.key = analysis.key(text)  # case-folded words
        self.size = len(self.key) + 1  # number of character trigrams of the padded key

    @functools.cached_property
    def grams(self) -> Mapping[str, int]:
        """Character trigrams of the key, with counts."""
        return trigrams(self.key)

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """Content words of the key (stop words and change words off)."""
        return frozenset(w for w in self.key.split() if w not in _NEUTRAL and (len(w) > 1 or w.isdigit()))

    @functools.cached_property
    def numbers(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\d+", self.text))

    @functools.cached_property
    def negated(self) -> bool:
        return analysis.positive(self.text)[1]

    @functools.cached_property
    def subject(self) -> str:
        """The first name-like or topic-marked word; "" when none is found."""
        return subject_word(self.text)


@functools.lru_cache(maxsize=1 << 15)
def features(text: str) -> Features:
    """The features of a text, memoised by text."""
    return Features(text)


def trigrams(text: str) -> dict[str, int]:
    padded = f"  {text} "
    out: dict[str, int] = {}
    for i in range(len(padded) - 2):
        gram = padded[i : i + 3]
        out[gram] = out.get(gram, 0) + 1
    return out


def subject_word(text: str) -> str:
    """The first name-like word (capitalised, followed by a lower-case content word: "Seojun
    likes …", "Yesterday Minsu told …") or, in Korean, the stem of the first topic- or
    subject-marked word among the first three ("서준이는" → "서준"); "" for none or the speaker."""
    tokens = re.findall(r"[\w가-힣]+", text)[:4]
    for here, after in itertools.pairwise(tokens):
        named = _NAME.match(here) and here.lower() not in _NEUTRAL
        if named and after[:1].islower() and after not in analysis.FUNCTION_WORDS:
            return str(here).lower()
    for token in tokens[:3]:
        if _KO_SUBJECT.match(token) and len(token) >= 2:
            stem = analysis.stem_ko(token)
            return "" if stem in _KO_SELF else stem
    return ""


def similarity(a: Features, b: Features) -> float:
    """Dice similarity of the two keys' character trigrams."""
    small, large = (a.grams, b.grams) if len(a.grams) <= len(b.grams) else (b.grams, a.grams)
    common = sum(min(n, large[g]) for g, n in small.items() if g in large)
    return 2.0 * common / (a.size + b.size)


def counterparts(wa: set[str] | frozenset[str], wb: set[str] | frozenset[str]) -> bool:
    """Every word of each side has a counterpart of the same stem on the other side."""
    only_a, only_b = wa - wb, wb - wa
    return all(_stem_match(w, only_b) for w in only_a) and all(_stem_match(w, only_a) for w in only_b)


def _stem_match(word: str, others: set[str] | frozenset[str]) -> bool:
    size = 2 if re.match(r"[가-힣]", word) else 4
    return len(word) >= size and any(
        (
            len(o) >= size
            and o[:size] == word[:size]
            and (o.startswith(word[:-1] or word) or word.startswith(o[:-1] or o) or size == 2)
        )
        or (size == 2 and len(o) >= 2 and (word in o or o in word))
        for o in others
    )


def near_duplicate(a: Features, b: Features, threshold: float = NEAR_DUPLICATE) -> bool:
    """Do the two texts say the same thing (see the module docstring)?"""
    if a.key == b.key:
        return True
    if min(len(a.key), len(b.key)) < MIN_KEY:
        return False
    if 2.0 * min(a.size, b.size) / (a.size + b.size) < threshold:
        return False  # too different in length to reach the threshold
    if a.numbers != b.numbers or not counterparts(a.words, b.words):
        return False
    if a.subject and b.subject and a.subject != b.subject:
        return False
    return a.negated == b.negated and similarity(a, b) >= threshold


def same(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> bool:
    """`near_duplicate` of two texts."""
    return near_duplicate(features(a), features(b), threshold)


class WordIndex:
    """Which word sets may be `counterparts` of a given one, by serial number: each word is
    filed under itself and the prefixes and pairs of letters `_stem_match` compares, so the
    sets a query can match share one of its keys. Exact: a superset of the matches, never less."""

    def __init__(self) -> None:
        self._by_key: dict[str, set[int]] = {}

    def add(self, serial: int, words: set[str] | frozenset[str]) -> None:
        by_key = self._by_key
        for word in words or ("",):
            for key in _filed_under(word):
                found = by_key.get(key)
                if found is None:
                    by_key[key] = {serial}
                else:
                    found.add(serial)

    def candidates(self, words: set[str] | frozenset[str]) -> set[int]:
        """The serials whose words may be counterparts of `words`: every word needs a
        counterpart, so the word with the fewest is enough to ask for."""
        if not words:
            return set(self._by_key.get("", ()))  # only a text of no words has none
        best: set[int] | None = None
        for word in sorted(words):
            found = set().union(*(self._by_key.get(k, ()) for k in _probes(word)))
            if best is None or len(found) < len(best):
                best = found
            if not best:
                break
        return best or set()

    def dump(self) -> dict[str, object]:
        """The index as JSON-ready data (`load` reads it back)."""
        return dump_buckets(self._by_key)

    @classmethod
    def load(cls, data: object, serials: int) -> WordIndex:
        """The index `dump` gave, of serials below `serials` (see `Buckets`)."""
        index = cls()
        index._by_key = Buckets(data, serials)  # type: ignore[assignment]
        return index


class Stale(ValueError):
    """A bucket read from disk is not one `dump_buckets` wrote for these serials."""


class Buckets:
    """Serials by key as `dump_buckets` wrote them (a JSON object of space-separated serials,
    by a CRC-32 of the key: no text is kept, and keys of the same CRC share a bucket, so a lookup
    gives a superset, which the indexes allow), with the part of a dict the indexes use. A bucket
    is read when first asked for: a lookup in an index of 5,000 texts decodes a few, not all.
    `Stale` when a bucket is not a string of serials below `serials` (not giok's file)."""

    def __init__(self, data: object, serials: int, name: Callable[[Any], str] = str) -> None:
        if not isinstance(data, dict):
            raise Stale("not an object")
        self._raw: dict[str, object] = data
        self._sets: dict[str, set[int]] = {}
        self._serials = serials
        self._named = name

    def _name(self, key: Any) -> str:
        """The key's name in the JSON object."""
        return _hashed(self._named(key))

    def get(self, key: Any, default: Any = None) -> Any:
        name = self._name(key)
        found = self._sets.get(name)
        if found is None:
            raw = self._raw.get(name)
            if raw is None:
                return default
            found = self._sets[name] = _decode(raw, self._serials)
        return found

    def setdefault(self, key: Any, default: set[int]) -> set[int]:
        found: set[int] | None = self.get(key)
        if found is None:
            found = self._sets[self._name(key)] = default
        return found

    def __setitem__(self, key: Any, value: set[int]) -> None:
        self._sets[self._name(key)] = value

    def dump(self) -> dict[str, object]:
        return {**self._raw, **{name: _encode(found) for name, found in self._sets.items()}}


def _decode(raw: object, serials: int) -> set[int]:
    if not isinstance(raw, str):
        raise Stale("a bucket is not a string")
    try:
        found = {int(s) for s in raw.split(" ")} if raw else set()
    except ValueError:
        raise Stale("a bucket holds no serials") from None
    if found and (min(found) < 0 or max(found) >= serials):
        raise Stale("a serial out of range")
    return found


def _encode(found: set[int]) -> str:
    return " ".join(map(str, found))


def dump_buckets(
    buckets: Buckets | Mapping[Any, set[int]], name: Callable[[Any], str] = str
) -> dict[str, object]:
    """Serials by key (a dict of sets, or `Buckets`) as JSON-ready data: `Buckets` reads it."""
    if isinstance(buckets, Buckets):
        return buckets.dump()
    out: dict[str, set[int]] = {}
    for key, found in buckets.items():
        hashed = _hashed(name(key))
        out[hashed] = out[hashed] | found if hashed in out else found  # one bucket for both
    return {hashed: _encode(found) for hashed, found in out.items()}


def _hashed(name: str) -> str:
    return format(zlib.crc32(name.encode("utf-8", "surrogatepass")), "x")


def _numbers_name(numbers: tuple[str, ...]) -> str:
    return ",".join(numbers)  # numbers are digits: "," cannot be in one


@functools.lru_cache(maxsize=1 << 16)
def _filed_under(word: str) -> tuple[str, ...]:
    """The keys a word of a stored text is filed under (see `_probes`): "" for no words; its
    first four letters, else itself; its first two; the letter pairs of a Korean word."""
    if not word:
        return ("",)
    keys = {"4" + word[:4] if len(word) >= 4 else "=" + word}
    if len(word) >= 2:
        keys.add("2" + word[:2])
        keys.update("b" + word[i : i + 2] for i in range(len(word) - 1) if _HANGUL.match(word[i]))
    return tuple(keys)


def _probes(word: str) -> set[str]:
    """The keys under which the word itself and every word `_stem_match(word, ...)` accepts
    are filed: the same word by its first four letters (a shorter one by itself); for a Latin
    word no more (the same first four letters); for a Korean word each of its letter pairs
    (the other's first pair: the same start, or the other inside this one) and its first pair
    inside the other."""
    keys = {"4" + word[:4] if len(word) >= 4 else "=" + word}
    if _HANGUL.match(word) and len(word) >= 2:
        keys.update("2" + word[i : i + 2] for i in range(len(word) - 1))
        keys.add("b" + word[:2])
    return keys


_HANGUL = lazy(r"[가-힣]")


class NearIndex:
    """The texts that may be `near_duplicate`s of a given one, by serial number: the same key,
    or the same numbers and word counterparts (both required by `near_duplicate`)."""

    def __init__(self) -> None:
        self._keys: dict[str, set[int]] = {}
        self._numbers: dict[tuple[str, ...], set[int]] = {}
        self._words = WordIndex()

    def add(self, serial: int, f: Features) -> None:
        self._keys.setdefault(f.key, set()).add(serial)
        self._numbers.setdefault(f.numbers, set()).add(serial)
        self._words.add(serial, f.words)

    def candidates(self, f: Features) -> set[int]:
        same_numbers = self._numbers.get(f.numbers, set())
        if len(same_numbers) > _FEW:  # few enough: compare them all rather than ask the words
            same_numbers = self._words.candidates(f.words) & same_numbers
        return same_numbers | self._keys.get(f.key, set())

    def with_key(self, key: str) -> set[int]:
        """The serials of the texts with this comparison key."""
        return self._keys.get(key, set())

    def dump(self) -> dict[str, dict[str, object]]:
        """The index as JSON-ready data (`load` reads it back)."""
        return {
            "keys": dump_buckets(self._keys),
            "numbers": dump_buckets(self._numbers, _numbers_name),
            "words": self._words.dump(),
        }

    @classmethod
    def load(cls, data: object, serials: int) -> NearIndex:
        """The index `dump` gave, of serials below `serials`; `Stale` when it is not one."""
        if not isinstance(data, dict):
            raise Stale("not an object")
        index = cls()
        index._keys = Buckets(data.get("keys"), serials)  # type: ignore[assignment]
        index._numbers = Buckets(data.get("numbers"), serials, _numbers_name)  # type: ignore[assignment]
        index._words = WordIndex.load(data.get("words"), serials)
        return index


_FEW = 16
