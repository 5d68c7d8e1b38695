"""Contradictions: the review's reading of two live entries, on pairs written apart from it.

    .venv/bin/python bench/contradictions.py [--split dev|test|both] [--json] [--verbose]
                                             [--candidate tools/.cache/contradiction.npz]

Set: bench/data/judgement/contradictions.json (written by an author with no access to the rules;
see its README): pairs a (older) / b (newer), `contradiction` true only when both cannot hold at
once and neither is marked as the update; false for numbers that change by nature, another
subject, another time, a signalled update, compatible facts and paraphrases. Thresholds are
chosen on dev; report test.

Each pair is read by `giok.lifecycle.review.classify(a, b)`, as the nightly review reads it (the
shipped row: a flag is the kind "contradiction"; raised for the same claim with the opposite
polarity, `statements.opposed`, and for the same words around another value in one lasting
attribute, `judgement.swap`, where both lines are kept beyond a day). With `--candidate PATH`,
a contradiction head written by `tools/train_judgement.py --contradiction`
(tools/contradiction_head.py, a design not shipped) is read in the same run on top of it: a
pair `classify` leaves alone is flagged when the head says so. Printed: flags, real flags,
precision (real / flags), recall (real / labelled contradictions), the false flags by kind, and
the CPU per pair (each row read once before, untimed: the model loaded and the vectors memoised,
as in a night that has embedded its entries).
The nightly pass only reads pairs that share words (docs/review.md); this set reads every pair.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "judgement" / "contradictions.json"
try:
    import giok  # noqa: F401
except ImportError:  # run from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(ROOT / "src"))


def read(items: list[dict], head=None) -> dict:
    from giok.lifecycle import review
    from giok.write import policy

    flags, misses, false = [], [], []
    started = time.process_time()
    for item in items:
        a, b = policy.redact(policy.normalize(item["a"]))[0], policy.redact(policy.normalize(item["b"]))[0]
        found = review.classify(a, b)
        flagged = found is not None and found[0] == "contradiction"
        if found is None and head is not None:
            flagged = head.score(b, a).verdict
        if flagged:
            flags.append(item)
            if not item["contradiction"]:
                false.append(f"[{item['kind']}] {item['a']} / {item['b']}")
        elif item["contradiction"]:
            misses.append(f"[{item['kind']}] {item['a']} / {item['b']}")
    cpu = time.process_time() - started
    real = sum(1 for i in flags if i["contradiction"])
    labelled = sum(1 for i in items if i["contradiction"])
    return {
        "n": len(items),
        "labelled": labelled,
        "flags": len(flags),
        "real": real,
        "precision": round(real / len(flags), 3) if flags else None,
        "recall": round(real / labelled, 3) if labelled else None,
        "false_by_kind": dict(Counter(i["kind"] for i in flags if not i["contradiction"])),
        "found_by_kind": dict(Counter(i["kind"] for i in flags if i["contradiction"])),
        "cpu_ms_per_pair": round(1000 * cpu / max(1, len(items)), 1),
        "false": false,
        "misses": misses,
    }


def run(split: str, candidate: Path | None) -> dict:
    from giok.write import judgement

    items = [i for i in json.loads(DATA.read_text("utf-8"))["items"] if i["split"] == split]
    out = {"model": judgement.available()}
    read(items)  # once untimed: the model and the heads loaded, the vectors memoised
    out["shipped"] = read(items)
    if candidate is not None:
        sys.path.insert(0, str(ROOT / "tools"))
        from contradiction_head import ContradictionHead

        head = ContradictionHead.load(candidate)
        read(items, head)
        out["candidate"] = read(items, head)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="every false flag and every miss")
    parser.add_argument(
        "--candidate",
        type=Path,
        help="a contradiction head's weights (tools/train_judgement.py --contradiction)",
    )
    args = parser.parse_args()
    if args.candidate is not None and not args.candidate.exists():
        parser.error(f"no such weights file: {args.candidate}")
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    out = {split: run(split, args.candidate) for split in splits}
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    for split, found in out.items():
        print(f"{split} ({found['shipped']['n']} pairs, {found['shipped']['labelled']} contradictions)")
        if not found["model"]:
            print("  (the model cannot load: the rules alone answer)")
        for name in ("shipped", "candidate"):
            if name not in found:
                continue
            r = found[name]
            print(
                f"  {name:9} flags {r['flags']:3}  real {r['real']:3}  precision {r['precision']}  "
                f"recall {r['recall']}  false by kind {r['false_by_kind'] or '-'}  "
                f"{r['cpu_ms_per_pair']} ms CPU a pair"
            )
            if args.verbose:
                for line in r["false"]:
                    print(f"    false: {line}")
                for line in r["misses"]:
                    print(f"    miss:  {line}")


if __name__ == "__main__":
    main()
