"""Another person named by a relation: does `remember` keep "Priya's sister moved to Bristol"
from replacing "Priya lives in Leeds", and still let "Priya's flat is in Bristol now" replace it?

    PYTHONPATH=src .venv/bin/python bench/relations.py [--split dev|test|all] [--rules] [--json] [--misses N]

Set: bench/data/judgement/relations/pairs.json (120 pairs, 60 English and 60 Korean, written apart
on 2026-12-07 by an author who read neither the code nor its word lists; see the README there).
Each pair is decided as bench/judgement_sets.py decides its change pairs: `old` alone in a
MEMORY.md, `remember` of `new` (policy.decide, force), superseded or not. Printed per language:
false supersedes on the `other-person` pairs (the new text is about a relative of old's subject:
"Mina's brother moved to Seoul") and changes found on the `same-person` pairs (the same subject,
a new value, named through a thing of theirs or plainly: "Mina's new flat is in Seoul"), which
pair with them one to one. `--rules` answers with the keyword rules alone ($GIOK_JUDGEMENT=rules).
Tune on dev, report test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "bench" / "data" / "judgement" / "relations" / "pairs.json"
sys.path.insert(0, str(ROOT / "bench"))


def measure(items: list[dict]) -> dict:
    import judgement_sets

    out = {}
    for lang in ("en", "ko", "all"):
        mine = [
            {**it, "change": it["label"] == "same-person", "kind": it["label"]}
            for it in items
            if lang in ("all", it["lang"])
        ]
        got = judgement_sets.changes(mine)
        out[lang] = {
            "n": got["n"],
            "false_supersedes_other_person": round(got["false_supersedes"], 3),
            "changes_found_same_person": round(got["changes_found"], 3),
            "misses": got["misses"],
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    ap.add_argument("--rules", action="store_true", help="the keyword rules alone")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", type=int, default=0, help="print this many misses")
    a = ap.parse_args()
    if a.rules:
        os.environ["GIOK_JUDGEMENT"] = "rules"
    items = [it for it in json.loads(SET.read_text("utf-8"))["items"] if a.split in ("all", it["split"])]
    got = measure(items)
    if a.json:
        print(
            json.dumps(
                {"split": a.split, "judge": "rules" if a.rules else "model", **got}, ensure_ascii=False
            )
        )
        return
    print(f"relations ({a.split}, {'rules' if a.rules else 'model'} judge)")
    for lang, r in got.items():
        print(
            f"  {lang:3}  n={r['n']:3}"
            f"  false supersedes (another person) {r['false_supersedes_other_person']:.3f}"
            f"  changes found (the same person) {r['changes_found_same_person']:.3f}"
        )
    for line in got["all"]["misses"][: a.misses]:
        print("   ", line)


if __name__ == "__main__":
    main()
