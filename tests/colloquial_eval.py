"""Colloquial Korean questions against facts stored in the written form (tests/data/colloquial_ko.json).

    PYTHONPATH=src .venv/bin/python tests/colloquial_eval.py [--split dev|test|all] [--misses]

The set is built and scored as `bench/retrieval_sets.py` builds and scores its sets (one
MEMORY.md entry per fact, library search, top 5, default cut-offs and embeddings): r@1 and r@5
on the answerable questions, abstention on the ones whose right answer is nothing. Tune on dev;
test is for the report.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "colloquial_ko.json"


def _sets() -> Any:
    spec = importlib.util.spec_from_file_location(
        "retrieval_sets", HERE.parent / "bench" / "retrieval_sets.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["retrieval_sets"] = module
    spec.loader.exec_module(module)
    return module


def load() -> dict[str, Any]:
    return json.loads(DATA.read_text("utf-8"))


def evaluate(split: str = "dev", misses: bool = False) -> dict[str, Any]:
    sets = _sets()
    data = load()
    queries = [q for q in data["queries"] if split == "all" or q["split"] == split]
    with tempfile.TemporaryDirectory() as tmp:
        ws = sets.build(data, Path(tmp))
        scored = [sets.giok_scored(ws, q["query"]) for q in queries]
    ranked = [[rid for rid, _ in s] for s in scored]
    if misses:
        for q, got in zip(queries, scored, strict=True):
            if (q["expected"] and (not got or got[0][0] not in q["expected"])) or (not q["expected"] and got):
                print(q["query"], q["expected"], [(r, round(s, 2)) for r, s in got[:3]])
    return sets.score(queries, ranked)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    print(json.dumps(evaluate(args.split, args.misses), indent=1))


if __name__ == "__main__":
    main()
