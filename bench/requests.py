"""The request head (judgement.request) on lines written after it shipped, never trained on.

    PYTHONPATH=src .venv/bin/python bench/requests.py [--json] [-v]

Set: bench/data/judgement/requests_fresh/lines.txt (`LABEL<TAB>LANG<TAB>TEXT`; written on
2026-12-07, after the head and its threshold were chosen, by an author who read no code and no
other data; README beside it). Prints, per language: accuracy of the head's answer, and what the
flush does with it (`watchdog._for_now`, the head at ONE_OFF_AT and the cues that overrule it):
of the one-off tasks, how many it drops; of the standing requests and the statements, how many it
drops wrongly (a lost memory).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "bench" / "data" / "judgement" / "requests_fresh" / "lines.txt"


def lines() -> list[tuple[str, str, str]]:
    rows = []
    for n, line in enumerate(SET.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        label, lang, text = line.split("\t", 2)
        if lang not in ("en", "ko"):
            raise SystemExit(f"{SET.name}:{n}: language {lang!r} is not en or ko")
        rows.append((label, lang, text.strip()))
    return rows


def evaluate(verbose: bool = False) -> dict:
    from giok.lifecycle import watchdog
    from giok.write import judgement

    if not judgement.available():
        raise SystemExit(
            "the learned judgement is off (GIOK_JUDGEMENT=rules or no model): nothing to measure"
        )
    out: dict = {}
    rows = lines()
    for lang in ("en", "ko", "all"):
        mine = [r for r in rows if lang == "all" or r[1] == lang]
        said = [judgement.request(text) for _, _, text in mine]
        dropped = [watchdog._for_now(text, None) for _, _, text in mine]
        right = sum(1 for (label, _, _), read in zip(mine, said, strict=True) if read and read[0] == label)

        def share(label: str, flags: list[bool], rows=mine) -> str:
            n = sum(1 for r in rows if r[0] == label)
            hit = sum(1 for r, f in zip(rows, flags, strict=True) if r[0] == label and f)
            return f"{hit}/{n}"

        out[lang] = {
            "n": len(mine),
            "accuracy": round(right / len(mine), 3) if mine else None,
            "tasks dropped": share("oneoff", dropped),
            "standing dropped": share("standing", dropped),
            "statements dropped": share("statement", dropped),
        }
        if verbose and lang != "all":
            for (label, _, text), read, drop in zip(mine, said, dropped, strict=True):
                if (label == "oneoff") != drop:
                    print(
                        f"  {label:9} read {read[0] if read else '-':9} "
                        f"{'dropped' if drop else 'kept':7}  {text}"
                    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true", help="list what the flush gets wrong")
    args = parser.parse_args()
    result = evaluate(args.verbose)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    for lang, r in result.items():
        print(
            f"{lang:4} n={r['n']:3}  head accuracy {r['accuracy']:.3f}  "
            f"flush drops: tasks {r['tasks dropped']}, "
            f"standing requests {r['standing dropped']}, statements {r['statements dropped']}"
        )


if __name__ == "__main__":
    sys.exit(main())
