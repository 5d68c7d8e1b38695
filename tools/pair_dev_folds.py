"""End to end on the dev change pairs, for a pair head trained on them (`--with-judgement-dev`):
each dev item decided by the head of the fold that left it out (docs/judgement.md, "Designs
tried: the pair read as one text").

    PYTHONPATH=src .venv/bin/python tools/pair_dev_folds.py --weights W.npz [train_judgement options]

`bench/judgement_sets.py --split dev` reads a head trained on dev in sample. Here the pair head
is retrained as `tools/train_judgement.py --pair-only --with-judgement-dev` trains it (the same
options), and every dev item of bench/data/judgement/changes.json is decided through `remember`
(`policy.decide`), alone and in a store (as bench/judgement_sets.py does), by the head trained
without its fold, at the thresholds of `--weights` (the file that run wrote: its change_at comes
from the same out-of-fold scores). Prints the figures of bench/judgement_sets.py's change and
store sections; `--json` as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import judgement_sets  # noqa: E402
import train_judgement  # noqa: E402

from giok.write import judgement, policy  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, required=True, help="the judgement.npz the trainer wrote")
    parser.add_argument("--pair-joint", action="store_true")
    parser.add_argument("--slot-traps", action="store_true")
    parser.add_argument("--pair-l2", type=float, default=None)
    parser.add_argument("--cross-negatives", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with np.load(args.weights) as data:
        final = {k: data[k] for k in data.files}
    folds: list[dict[str, np.ndarray]] = []
    vectors = train_judgement.Vectors()
    train_judgement.train_pair(
        vectors,
        None,
        0.0,
        cross=args.cross_negatives,
        traps=args.slot_traps,
        joint=args.pair_joint,
        with_dev=True,
        l2=args.pair_l2,
        fold_heads=folds,
    )
    vectors.save()
    rest = {k: v for k, v in final.items() if not k.startswith("pair_")}
    heads = [judgement.Heads({**rest, **head}) for head in folds]
    items = judgement_sets.load("changes.json", "dev")
    fold_of = {item["new"]: n % train_judgement.PAIR_FOLDS for n, item in enumerate(items)}
    current: list[judgement.Heads] = [judgement.Heads(final)]
    decide = policy.decide

    def decide_in_fold(memory, text, *a, **kw):
        current[0] = heads[fold_of[text]]
        return decide(memory, text, *a, **kw)

    policy.decide = decide_in_fold
    judgement._load_heads = lambda: current[0]  # type: ignore[assignment]
    out = {"changes": judgement_sets.changes(items), "store": judgement_sets.changes_in_store(items)}
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return
    c, s = out["changes"], out["store"]
    print(f"dev out of fold: changes found {c['changes_found']:.3f}, false {c['false_supersedes']:.3f}")
    print(f"in a store: found {s['changes_found']:.3f}, wrong links {s['items_with_wrong_links']:.3f}")
    print(f"({s['wrong_links']} links, {s['traps_linked']} traps linked)")


if __name__ == "__main__":
    main()
