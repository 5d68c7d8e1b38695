"""What a watchdog flush keeps from ordinary talk, and whether boot injects each kept item once.

    PYTHONPATH=src python bench/flush_ordinary.py [dev|dev2|dev3|dev4|test|fresh|fresh2|fresh3]
                                                  [--heads PATH]
                                                  [--json] [-v]

Set: bench/data/judgement/flush.json (copied from branch wt/evaldata, written by hand apart from
giok's rules; tune on dev, report test); `dev2` from bench/data/judgement/flush_dev2.json (30 more
conversations written apart, for tuning); `dev3` from bench/data/judgement/dev3/flush.json (30 more,
written apart, for tuning); and `fresh` from bench/data/judgement/fresh/flush.json
(written after the rules, never tuned on); `fresh2` from bench/data/judgement/fresh2/flush.json
(24 more, written apart after the chat voice's design was chosen, never tuned on); `dev4` from
bench/data/judgement/dev4/flush.json (24 more, written apart on 2026-12-07, for tuning) and
`fresh3` from bench/data/judgement/fresh3/flush.json (24 more, written apart the same day, never
tuned on). Each
conversation is flushed into a fresh workspace (a real flush: write policy, git, state memo);
what it stored is every live MEMORY.md entry and every state memo line the flush added. Then
`boot.build` on the next morning:

- kept: a `keep` item counts when one stored text contains every `must_contain` string
  (case-insensitive);
- false keeps: a `not` item whose `key` is in a stored text;
- injected once: every stored text appears exactly once in the boot context (MEMORY.md, state
  memo, session context and diary together), and nothing was left out for the budget.

`--heads PATH` measures with judgement heads from a file (tools/train_judgement.py --out PATH)
instead of the shipped ones, to see the flush with the learned model where none is shipped."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "bench" / "data" / "judgement" / "flush.json"
DEV2 = ROOT / "bench" / "data" / "judgement" / "flush_dev2.json"  # 30 more, written apart: tune on it
FRESH = ROOT / "bench" / "data" / "judgement" / "fresh" / "flush.json"  # written after: never tune on it
DEV3 = ROOT / "bench" / "data" / "judgement" / "dev3" / "flush.json"  # 30 more, written apart: tune on it
FRESH2 = (
    ROOT / "bench" / "data" / "judgement" / "fresh2" / "flush.json"
)  # written later still: never tune on it
DEV4 = ROOT / "bench" / "data" / "judgement" / "dev4" / "flush.json"  # written apart: tune on it
FRESH3 = ROOT / "bench" / "data" / "judgement" / "fresh3" / "flush.json"  # never tune on it
# split -> (file, the items' split, when the talk happens; boot runs at 09:00 the next morning)
SETS = {
    "dev": (SET, "dev", "2026-12-03T15:00"),  # the sets are dated Thursday 2026-12-03
    "test": (SET, "test", "2026-12-03T15:00"),
    "dev2": (DEV2, "dev", "2026-12-03T15:00"),
    "dev3": (DEV3, "dev3", "2026-12-09T15:00"),  # dated Wednesday 2026-12-09
    "fresh": (FRESH, "fresh", "2026-12-03T15:00"),
    "fresh2": (FRESH2, "fresh2", "2026-12-07T15:00"),  # dated Monday 2026-12-07
    "dev4": (DEV4, "dev4", "2026-12-08T15:00"),  # dated Tuesday 2026-12-08
    "fresh3": (FRESH3, "fresh3", "2026-12-10T15:00"),  # dated Thursday 2026-12-10
}


def _memo_lines(ws) -> list[str]:
    return [ln for ln in ws.read_text("state/memo.md").splitlines() if ln.startswith("- ")]


def run_item(item: dict, base: Path, now: str) -> dict:
    from giok import Home, Workspace
    from giok.lifecycle import boot, watchdog
    from giok.store.memoryfile import MemoryFile

    home = Home(base / "home")
    ws, _ = Workspace.init(base / item["id"], name=item["id"], user="Seojun", home=home)
    memo_before = set(_memo_lines(ws))
    conversation = "\n".join(
        json.dumps({"role": t["role"], "content": t["text"]}, ensure_ascii=False) for t in item["turns"]
    )
    watchdog.flush(ws, conversation, session=f"s-{item['id']}", level="soft")
    entries = [e for e in MemoryFile.parse(ws.path("MEMORY.md").read_bytes()).entries() if not e.superseded]
    flushed = [e for e in entries if e.fields.get("source", "").startswith("flush:")]
    stored = [e.text for e in flushed]
    memo = [ln for ln in _memo_lines(ws) if ln not in memo_before]
    stored += [ln.split("] ", 1)[-1] for ln in memo]
    morning = dt.date.fromisoformat(now[:10]) + dt.timedelta(days=1)
    os.environ["GIOK_NOW"] = f"{morning}T09:00"
    try:
        booted = boot.build(ws, budget=20_000, record=False)
    finally:
        os.environ["GIOK_NOW"] = now
    low = [s.lower() for s in stored]
    kept = [k for k in item["keep"] if any(all(m.lower() in s for m in k["must_contain"]) for s in low)]
    false = [n for n in item["not"] if any(n["key"].lower() in s for s in low)]
    counts = {s: booted.text.count(s) for s in stored}
    return {
        "id": item["id"],
        "lang": item["lang"],
        "keep": len(item["keep"]),
        "kept": len(kept),
        "missed": [k["what"] for k in item["keep"] if k not in kept],
        "not": len(item["not"]),
        "false_keeps": [n["what"] for n in false],
        "stored": stored,
        "layers": {e.text: e.layer for e in flushed},
        "injected_once": all(c == 1 for c in counts.values()) and not booted.left_out,
        "injections": {s: c for s, c in counts.items() if c != 1},
    }


def evaluate(split: str, heads: str | None = None) -> dict:
    if heads:
        import numpy as np

        from giok.write import judgement

        loaded = judgement.Heads(dict(np.load(heads)))
        judgement._load_heads = lambda: loaded  # type: ignore[assignment]
    path, part, now = SETS[split]
    items = [i for i in json.loads(path.read_text("utf-8"))["items"] if i["split"] == part]
    keys = ("GIOK_HOME", "GIOK_NOW", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
    saved = {k: os.environ.get(k) for k in keys}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "GIOK_HOME": str(Path(tmp) / "home"),
                "GIOK_NOW": now,
                "GIT_CONFIG_GLOBAL": str(Path(tmp) / "gitconfig"),
                "GIT_CONFIG_NOSYSTEM": "1",
            }
        )
        try:
            rows = [run_item(item, Path(tmp), now) for item in items]
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    from giok.write import judgement

    keep = sum(r["keep"] for r in rows)
    kept = sum(r["kept"] for r in rows)
    nots = sum(r["not"] for r in rows)
    false = sum(len(r["false_keeps"]) for r in rows)
    return {
        "split": split,
        "judge": "model" if judgement.available() else "rules",
        "conversations": len(rows),
        "kept": f"{kept}/{keep}",
        "kept_rate": round(kept / keep, 3) if keep else None,
        "false_keeps": f"{false}/{nots}",
        "injected_once": all(r["injected_once"] for r in rows),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", nargs="?", default="dev", choices=tuple(SETS))
    parser.add_argument("--heads", help="judgement heads (.npz) to use instead of the shipped ones")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true", help="list misses and false keeps")
    args = parser.parse_args()
    result = evaluate(args.split, args.heads)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    print(
        f"{result['split']} ({result['judge']} judge, {result['conversations']} conversations): "
        f"keep-worthy items of ordinary talk kept {result['kept']} = {result['kept_rate']}; "
        f"false keeps {result['false_keeps']}; each injected once: "
        f"{'yes' if result['injected_once'] else 'no'}"
    )
    if args.verbose:
        for r in result["rows"]:
            for what in r["missed"]:
                print(f"  missed  {r['id']}: {what}")
            for what in r["false_keeps"]:
                print(f"  false   {r['id']}: {what}")
            for text, n in r["injections"].items():
                print(f"  {n}x      {r['id']}: {text}")
    sys.exit(0)


if __name__ == "__main__":
    main()
