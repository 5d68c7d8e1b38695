"""Current values: two live memories of one slot written months apart, which one comes first.

    PYTHONPATH=src .venv/bin/python bench/current_values.py [--json] [--verbose]
                                                            [--near 0.55,0.6] [--tie 0.1,0.2]

bench/data/retrieval/current_values.json holds 20 pairs (10 English, 10 Korean): a memory and,
months later, its replacement in everyday phrasing that the write policy does not link ("Seojun
cycles to the office along the river these days" after "Seojun takes the 7:40 bus to the
office"), among 20 distractors about the same people. Each entry is remembered on its own date
(GIOK_NOW), in M365 so that none expires, with the default model; then each pair's question
about the current value ("How does Seojun get to work?") should find the newer entry first, and
its question about the value before ("How did Seojun use to get to work?") the older one.

Prints recall@1 of both kinds and how many pairs the write policy linked (superseded). With
--near/--tie, sweeps `search.SLOT_NEAR` and `search.SLOT_TIE` (the `_by_date` rule; a value
above 1 for --near turns the rule off). This set is dev material: the rule's settings were chosen
on it; bench/life90.py (written apart) is where it is checked.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "retrieval" / "current_values.json"
AFTER = "2026-06-25T12:00:00"  # the clock of the questions: after every entry, none expired


def build(base: Path, linked_by_agent: bool = False):
    os.environ["GIOK_HOME"] = str(base / "home")
    os.environ.pop("GIOK_EMBEDDINGS", None)  # the default model, as a user has it
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        os.environ.setdefault(key, "bench")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(key, "bench@example.invalid")
    from giok import Home, Workspace

    data = json.loads(DATA.read_text("utf-8"))
    ws, _ = Workspace.init(base / "cv", name="cv", user="Seojun", home=Home())
    entries = [tuple(d) for d in data["distractors"]]
    entries += [tuple(p["old"]) for p in data["pairs"]] + [tuple(p["new"]) for p in data["pairs"]]
    replaces = {p["new"][1]: p["old"][1] for p in data["pairs"]} if linked_by_agent else {}
    ids: dict[str, str] = {}
    for day, text in sorted(entries):
        os.environ["GIOK_NOW"] = f"{day}T12:00:00"
        old = ids.get(replaces.get(text, ""))
        live = old and not ws.get(old).superseded
        found = ws.remember(text, layer="M365", supersedes=old if live else None)
        if found.entry is not None:
            ids[text] = found.entry.id
    os.environ["GIOK_NOW"] = AFTER
    linked = ws.path("MEMORY.md").read_text("utf-8").count("superseded_by")
    return ws, data, linked


def measure(ws, data) -> tuple[dict, list]:
    right = {"now": 0, "before": 0}
    misses = []
    for pair in data["pairs"]:
        for kind, want in (("now", pair["new"][1]), ("before", pair["old"][1])):
            found = ws.search(pair[kind], k=5)
            top = found[0].text if found else ""
            right[kind] += want in top
            if want not in top:
                misses.append({"kind": kind, "question": pair[kind], "top": top})
    n = len(data["pairs"])
    return {kind: {"n": n, "right": got, "share": round(got / n, 3)} for kind, got in right.items()}, misses


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print the misses")
    parser.add_argument("--near", default="", help="SLOT_NEAR values to sweep (comma-separated)")
    parser.add_argument("--tie", default="", help="SLOT_TIE values to sweep (comma-separated)")
    parser.add_argument(
        "--linked",
        action="store_true",
        help="each new entry is remembered as replacing its old one (supersedes=ID), as an agent or "
        "a judge that reads pairs links it: the old one is then superseded, no longer live",
    )
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    base = Path(tempfile.mkdtemp(prefix="giok-current-"))
    try:
        ws, data, linked = build(base, opts.linked)
        from giok.retrieval import search

        report: dict = {"pairs": len(data["pairs"]), "linked_by_the_write_policy": linked}
        report["default"], misses = measure(ws, data)
        if opts.near or opts.tie:
            sweep = []
            for near in [float(x) for x in (opts.near or str(search.SLOT_NEAR)).split(",")]:
                for tie in [float(x) for x in (opts.tie or str(search.SLOT_TIE)).split(",")]:
                    search.SLOT_NEAR, search.SLOT_TIE = near, tie
                    sweep.append({"near": near, "tie": tie, **measure(ws, data)[0]})
            report["sweep"] = sweep
        if opts.json:
            print(json.dumps(report, ensure_ascii=False, indent=1))
            return
        d = report["default"]
        print(f"current values: {report['pairs']} pairs, {linked} linked by the write policy")
        print(
            f"recall@1 current {d['now']['right']}/{d['now']['n']}, "
            f"before {d['before']['right']}/{d['before']['n']}"
        )
        for row in report.get("sweep", []):
            print(
                f"  near {row['near']:.2f} tie {row['tie']:.2f}: "
                f"current {row['now']['right']}, before {row['before']['right']}"
            )
        if opts.verbose:
            for miss in misses:
                print(f"  miss ({miss['kind']}): {miss['question']} -> {miss['top'][:70]}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
