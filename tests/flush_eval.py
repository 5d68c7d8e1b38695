"""Measure the offline flush extractor on tests/data/flush_set.json.

    PYTHONPATH=src python tests/flush_eval.py [dev|test]

Recall: of the labelled constraints and preferences, how many the gist carries in the right
category (and in either of the two); false positives: constraint/preference items that
match no label of the case; decisions likewise."""

import json
import re
import sys
from pathlib import Path

from giok.lifecycle.watchdog import extract

SET = Path(__file__).parent / "data" / "flush_set.json"
_ISO = re.compile(r" ?\((week of )?\d{4}-\d{2}(-\d{2})?\)")  # a resolved date the flush adds


def _said(items: list[str]) -> list[str]:
    """The items as said: the labels quote the sentence, not the flush's resolved dates."""
    return [_ISO.sub("", x) for x in items]


def evaluate(split: str) -> dict:
    cases = [c for c in json.loads(SET.read_text("utf-8")) if c["split"] == split]
    out = {
        "split": split,
        "cases": len(cases),
        "labels": 0,
        "recalled": 0,
        "recalled_either": 0,
        "false_positives": 0,
        "decisions": 0,
        "decisions_recalled": 0,
        "decision_false_positives": 0,
        "missed": [],
        "wrong": [],
    }
    for case in cases:
        gist = extract("\n".join(json.dumps(m, ensure_ascii=False) for m in case["messages"]))
        gist = {c: _said(items) for c, items in gist.items()}
        kept = {"constraint": gist["constraints"], "preference": gist["preferences"]}
        either = kept["constraint"] + kept["preference"]
        for kind in ("constraint", "preference"):
            for label in case[kind]:
                out["labels"] += 1
                out["recalled"] += any(label in x for x in kept[kind])
                out["recalled_either"] += any(label in x for x in either)
                if not any(label in x for x in kept[kind]):
                    out["missed"].append(f"{case['id']} {kind}: {label}")
        labels = case["constraint"] + case["preference"]
        for x in either:
            if not any(label in x for label in labels):
                out["false_positives"] += 1
                out["wrong"].append(f"{case['id']}: {x}")
        out["decisions"] += len(case["decision"])
        out["decisions_recalled"] += sum(
            any(label in x for x in gist["decisions"]) for label in case["decision"]
        )
        for x in gist["decisions"]:
            if not any(label in x for label in case["decision"]):
                out["decision_false_positives"] += 1
                out["wrong"].append(f"{case['id']} decision: {x}")
    out["recall"] = round(out["recalled"] / out["labels"], 3) if out["labels"] else None
    return out


if __name__ == "__main__":
    print(json.dumps(evaluate(sys.argv[1] if len(sys.argv) > 1 else "dev"), ensure_ascii=False, indent=1))
