"""Boot and one slot's two live entries: is the newer shown as current, and is nothing else hidden?

    PYTHONPATH=src .venv/bin/python bench/boot_slots.py --split dev [--near 0.55,0.6,0.65] [--json]
    PYTHONPATH=src .venv/bin/python bench/boot_slots.py --split test
    PYTHONPATH=src .venv/bin/python bench/boot_slots.py --split fresh

`giok boot` folds the older of two live MEMORY.md entries of one slot into the newer's line as
history ("(earlier, 2026-01-10: …)", `giok.lifecycle.slots`). A false pairing shows a real fact
as history, so this measures both sides, each entry remembered on its own date (GIOK_NOW) in
M365, with the default model, the index synced, then `boot.build`:

- pairs of bench/data/judgement/changes.json (split dev or test) or fresh/changes.json, each in
  a workspace of its own (old on 2026-01-10, new on 2026-05-02): for a change, is the new value
  current and the old one shown only as history; for a pair that is no change (a restatement,
  an addition, another person's same attribute, the same person's other attribute, a homonym,
  a temporary exception, shared words), are both still shown as current? A pair the write
  policy linked itself (superseded) is counted apart: boot's rule did not decide it.
- dev only: bench/data/retrieval/current_values.json, 20 everyday changes among 20 distractors
  in one workspace: changes folded right, and entries hidden wrongly (shown only as history
  under an entry of another slot).

Tune on dev only (`--near` sweeps `slots.NEAR`); test and fresh are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import judgement_sets  # the judgement sets and their splits, as bench/judgement_sets.py reads them

ROOT = Path(__file__).resolve().parent.parent
CURRENT = ROOT / "bench" / "data" / "retrieval" / "current_values.json"
OLD_DAY, NEW_DAY, AFTER = "2026-01-10", "2026-05-02", "2026-06-25T12:00:00"


def _env(base: Path) -> None:
    os.environ["GIOK_HOME"] = str(base / "home")
    os.environ.pop("GIOK_EMBEDDINGS", None)  # the default model, as a user has it
    (base / "gitconfig").write_text("[user]\n\tname = bench\n\temail = bench@example.invalid\n")
    os.environ["GIT_CONFIG_GLOBAL"] = str(base / "gitconfig")


def _workspace(base: Path, name: str, entries: list[tuple[str, str]]):
    from giok import Home, Workspace
    from giok.retrieval import index

    ws, _ = Workspace.init(base / name, name=name, user="Seojun", home=Home())
    for day, text in sorted(entries):
        os.environ["GIOK_NOW"] = f"{day}T12:00:00"
        ws.remember(text, layer="M365")
    os.environ["GIOK_NOW"] = AFTER
    index.sync(ws)
    return ws


def _shown(ws) -> tuple[str, str]:
    """The boot text, and the same without the history folded into lines."""
    from giok.lifecycle import boot

    ws.layout.derived(boot.CACHE).unlink(missing_ok=True)  # a sweep changes NEAR, not the file
    text = boot.build(ws, record=False).text
    return text, boot.without_history(text)


def _entry_texts(ws) -> dict[str, tuple[str, bool]]:
    return {e.id: (e.text, e.superseded) for e in ws.memory().entries()}


def measure_pairs(built: list[tuple[dict, object]]) -> dict:
    out: Counter = Counter()
    kinds: Counter = Counter()
    wrong = []
    for item, ws in built:
        entries = _entry_texts(ws)
        if any(sup for _, sup in entries.values()):
            out["linked_by_the_write_policy"] += 1
            continue
        if len(entries) < 2:
            out["refused_by_the_write_policy"] += 1
            continue
        text, current = _shown(ws)
        old_id, new_id = _id_of(ws, item["old"]), _id_of(ws, item["new"])
        old_current, new_current = f"({old_id})" in current, f"({new_id})" in current
        folded = new_current and not old_current and f"{old_id})" in text
        if item["change"]:
            out["changes"] += 1
            out["changes_folded"] += folded
        else:
            out["traps"] += 1
            kept = old_current and new_current
            out["traps_both_current"] += kept
            if not kept:
                kinds[item["kind"]] += 1
                wrong.append(f"{item['kind']}: {item['old']} | {item['new']}")
    return {**out, "traps_hidden_by_kind": dict(kinds), "traps_hidden": wrong}


def _id_of(ws, said: str) -> str | None:
    """The id of the entry the write policy made of `said` (its text may differ a little)."""
    for entry_id, (entry_text, _) in _entry_texts(ws).items():
        if _same(entry_text, said):
            return entry_id
    return None


def _same(a: str, b: str) -> bool:
    def norm(x):
        return " ".join(x.casefold().replace(".", " ").split())

    return norm(a) == norm(b) or norm(a) in norm(b) or norm(b) in norm(a)


def measure_current(ws, data: dict) -> dict:
    text, current = _shown(ws)
    entries = _entry_texts(ws)
    pair_of = {}
    for p in data["pairs"]:
        pair_of[p["old"][1]] = p["new"][1]
    right = 0
    for p in data["pairs"]:
        new_ok = p["new"][1] in current
        old_history = p["old"][1] in text and p["old"][1] not in current
        right += new_ok and old_history
    hidden = []
    for t, sup in entries.values():
        if sup or t not in text or t in current:
            continue
        line = next(ln for ln in text.splitlines() if t in ln)
        head = line.split(" (earlier,")[0].split(" (이전,")[0]
        if pair_of.get(t) is None or pair_of[t] not in head:
            hidden.append(f"{t} -> under: {head[:80]}")
    return {"pairs": len(data["pairs"]), "folded_right": right, "hidden_wrongly": hidden}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=("dev", "test", "fresh"), default="dev")
    parser.add_argument("--near", default="", help="slots.NEAR values to sweep (comma-separated)")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    base = Path(tempfile.mkdtemp(prefix="giok-boot-slots-"))
    try:
        _env(base)
        from giok.lifecycle import slots

        built = [
            (item, _workspace(base, f"p{n}", [(OLD_DAY, item["old"]), (NEW_DAY, item["new"])]))
            for n, item in enumerate(judgement_sets.load("changes.json", opts.split))
        ]
        cv = None
        if opts.split == "dev":
            data = json.loads(CURRENT.read_text("utf-8"))
            entries = [tuple(d) for d in data["distractors"]]
            entries += [tuple(p["old"]) for p in data["pairs"]] + [tuple(p["new"]) for p in data["pairs"]]
            cv = (_workspace(base, "cv", entries), data)
        report = []
        for near in [float(x) for x in (opts.near or str(slots.NEAR)).split(",")]:
            slots.NEAR = near
            row: dict = {"near": near, "pairs": measure_pairs(built)}
            if cv is not None:
                row["current_values"] = measure_current(*cv)
            report.append(row)
        if opts.json:
            print(json.dumps({"split": opts.split, "runs": report}, ensure_ascii=False, indent=1))
            return
        for row in report:
            p = row["pairs"]
            print(
                f"{opts.split} near {row['near']:.2f}: changes folded {p.get('changes_folded', 0)}/"
                f"{p.get('changes', 0)}; no-change pairs both current {p.get('traps_both_current', 0)}/"
                f"{p.get('traps', 0)} (hidden by kind {p['traps_hidden_by_kind']}); "
                f"linked by the write policy {p.get('linked_by_the_write_policy', 0)}, "
                f"refused {p.get('refused_by_the_write_policy', 0)}"
            )
            if "current_values" in row:
                c = row["current_values"]
                print(
                    f"  current_values: folded right {c['folded_right']}/{c['pairs']}, "
                    f"hidden wrongly {len(c['hidden_wrongly'])}"
                )
                for h in c["hidden_wrongly"]:
                    print(f"    hidden: {h}")
            for h in p["traps_hidden"]:
                print(f"    trap hidden: {h}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
