"""Accuracy of two judgements on fixed, hand-labelled sets (KO + EN), before and after a change.

    .venv/bin/python bench/judgement.py [--baseline REV]

1. needs-memory (tests/data/needs_memory.json): does `recall` search memory for this question?
   Scored by `giok.retrieval.search.needs_memory`.
   Also: how many of the questions that need memory were not searched (the costly error).
2. change pairs (tests/data/change_pairs.json): what giok makes of an old and a new statement:
   `duplicate` (remember does not add it again, or folds a rewording into the old entry),
   `supersede` (remember replaces the old entry), `contradiction` (remember writes both, the
   nightly distill review flags the pair), `unrelated` (neither).

Each set has a fixed dev/test split; rules are tuned on dev, the figure that counts is test.
The baseline column runs the same scoring against the sources of REV (default: the commit
before these rules changed), extracted with `git archive` and run in a subprocess, so both
columns come from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BASELINE = "3061595"  # main before the Korean change/contradiction and needs-memory rules


def needs_memory_items() -> list[dict]:
    return json.loads((DATA / "needs_memory.json").read_text("utf-8"))["items"]


def pair_items() -> list[dict]:
    return json.loads((DATA / "change_pairs.json").read_text("utf-8"))["items"]


def pair_verdict(old: str, new: str) -> str:
    """duplicate / supersede / contradiction / unrelated, as remember and distill would judge."""
    from giok.lifecycle import distill
    from giok.store.memoryfile import MemoryEntry, MemoryFile, empty
    from giok.write import policy

    mf = MemoryFile.parse(empty("en"))
    mf.add(MemoryEntry(policy.normalize(old), layer="M90", fields={"id": "m-000001"}))
    verdict, _, why = policy.compare(mf, policy.normalize(new), "workspace")
    if verdict == "duplicate" or why.startswith("near-duplicate"):
        return "duplicate"
    if verdict == "supersede":
        return "supersede"
    if hasattr(distill, "disagree"):
        flagged = distill.disagree(old, new)
    else:  # the review pass before it had a pair function (same logic, inlined)
        flagged = _old_review_flag(distill, policy, old, new)
    return "contradiction" if flagged else "unrelated"


def _old_review_flag(distill, policy, a: str, b: str) -> bool:
    ta, tb = distill.tokens(a), distill.tokens(b)
    if distill.similar(ta, tb) < 0.3 or len(ta) < 3:
        return False
    sa, sb = policy.subject(a), policy.subject(b)
    same_subject = sa and sb and sa[0] == sb[0]
    words = distill.similar(distill._content_words(ta), distill._content_words(tb))
    return bool(
        (distill.negated(a) != distill.negated(b) and words >= 0.5)
        or (same_subject and (policy.contradicts(a, b) or policy.contradicts(b, a)))
    )


def score() -> dict:
    """{set: {split: {"all"|lang: [right, total]}}} and the misses, for the code on sys.path."""
    from giok.retrieval.search import needs_memory

    out: dict = {"needs_memory": {}, "change_pairs": {}, "skipped": {}, "misses": []}
    for item in needs_memory_items():
        got = needs_memory(item["q"])[0]
        _tally(out["needs_memory"], item, got == item["needs_memory"])
        if item["needs_memory"]:  # the costly error: a question that needs memory, not searched
            cell = out["skipped"].setdefault(item["split"], [0, 0])
            cell[0] += int(not got)
            cell[1] += 1
        if got != item["needs_memory"]:
            out["misses"].append(f"needs_memory {item['split']}: {item['q']!r} want {item['needs_memory']}")
    for item in pair_items():
        got = pair_verdict(item["old"], item["new"])
        _tally(out["change_pairs"], item, got == item["label"])
        if got != item["label"]:
            out["misses"].append(
                f"change_pairs {item['split']}: {item['old']!r} / {item['new']!r} "
                f"want {item['label']}, got {got}"
            )
    return out


def _tally(table: dict, item: dict, right: bool) -> None:
    split = table.setdefault(item["split"], {})
    for key in ("all", item["lang"]):
        cell = split.setdefault(key, [0, 0])
        cell[0] += int(right)
        cell[1] += 1


def accuracy(table: dict, split: str, key: str = "all") -> float:
    right, total = table[split][key]
    return right / total


def _baseline(rev: str) -> dict | None:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "src.tar"
        done = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "src"],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            print(f"baseline {rev}: {done.stderr.strip()}", file=sys.stderr)
            return None
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        env = dict(os.environ, PYTHONPATH=str(Path(tmp) / "src"))
        run = subprocess.run([sys.executable, __file__, "--json"], capture_output=True, text=True, env=env)
        if run.returncode:
            print(run.stderr, file=sys.stderr)
            return None
        return json.loads(run.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with ('' for none)")
    parser.add_argument("--misses", action="store_true", help="list the items the current code gets wrong")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    now = score()
    if args.json:
        print(json.dumps(now))
        return
    before = _baseline(args.baseline) if args.baseline else None
    print(f"{'set':<14}{'split':<7}{'lang':<6}{'n':>4}  {'before':>7}  {'after':>7}")
    for name in ("needs_memory", "change_pairs"):
        for split in ("dev", "test", "fresh"):
            for key in ("all", "en", "ko"):
                n = now[name][split][key][1]
                old = f"{accuracy(before[name], split, key):7.1%}" if before else "      -"
                print(f"{name:<14}{split:<7}{key:<6}{n:>4}  {old}  {accuracy(now[name], split, key):7.1%}")
    for split in ("dev", "test", "fresh"):
        old = "{}/{}".format(*before["skipped"][split]) if before and "skipped" in before else "-"
        print(
            f"needs-memory questions not searched, {split}: before {old}, after {{}}/{{}}".format(
                *now["skipped"][split]
            )
        )
    if args.misses:
        print("\n".join(now["misses"]))


if __name__ == "__main__":
    main()
