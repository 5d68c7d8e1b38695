"""The one judgement (giok.write.judgement) on sets written apart from it, through the real paths.

    .venv/bin/python bench/judgement_sets.py [--split test] [--json] [--rules]

Sets: bench/data/judgement/ (written by an author with no access to the rules; see its README),
and `fresh/` beside it when present (written after the rules were done, never tuned on);
`--split fresh2` reads the change pairs of `fresh2/` (written on 2026-12-07, after the rules of
the 6th; changes only, so the keep / refuse and cost lines are left out). `--split dev5` and
`--split fresh3` read the change pairs of `dev5/` and `fresh3/` (100 each, written apart on
2026-12-07 by two authors, after the pair reader's first version; dev5 for tuning, fresh3 never).
`--split fresh4` and `--split fresh5` read the change pairs of `fresh4/` and `fresh5/` (100
each, written apart on 2026-12-08: fresh4 after the sure reader's path, which it showed taking
traps of a day and of the past, so the veto of that path was added after reading it; fresh5
after the veto, never tuned on). Tune on dev, report test and fresh. `--rules` answers with the
keyword rules alone ($GIOK_JUDGEMENT=rules), the baseline of the same run.

1. keep / refuse (sentences.json): `remember`'s decision (policy.decide on an empty
   MEMORY.md) and the nightly distill's (the offline judge on the same line as a diary item),
   their agreement, and the layer (exact, and within one step).
2. changes (changes.json): does `remember` of `new` supersede `old` (policy.decide against a
   MEMORY.md holding `old`)? Accuracy, changes found, and false supersedes on the traps.
3. changes in a store (changes.json again): every `old` of the split and language in one
   MEMORY.md (dated in file order, as a life writes them), and each `new` decided against that
   whole store, as `remember` meets it (parsed, through `policy.Index`, which names the entries
   compared): many entries about the same people ("I", Seojun, 지민이)
   compete. A change is found when its own `old` is among what it replaces; a wrong link is an
   entry replaced that is not its own old (any entry, for a trap); items with a wrong link are
   counted.
4. shown: is a change's own `old` among the entries a judge that reads pairs (the host agent
   through `giok distill --plan`, an LLM panel) is shown beside its `new`, in a real workspace
   holding every `old` of the split and language (`shown_to_a_judge`): the most such a judge
   can find.
5. diary log (diarylog/lines.json, dev and test; diarylog_fresh/lines.json for `--split fresh`,
   written after the note heads learnt this register): keep / refuse as in 1, on the terse lines
   an agent writes in its diary through a day (readings, weather, parcels, housekeeping among
   work events, appointments and life events told as briefly), each by its own author (README there).
6. short lines (short/lines.json, dev and test): keep / refuse as in 1 on lines of 2–7 words
   ("Got laid off.", "나 카카오 다녀", "so tired today"), by its own author (README there).
7. old value (oldvalue/pairs.json, dev and test): changes as in 2, on pairs whose new text names
   the value it leaves ("no longer works at X", "X 대신 Y", "X에서 Y로 옮겼다"), changes and
   traps alike (a one-day exception, another person, another attribute, a homonym, the past or
   a supposition), by its own author (README there).
8. lasting facts (dev only): of the facts of a lasting attribute written for the slot head
   (tools/data/raw/slots_*.json: a person's home, job, car, phone, pet, habits …, three authors,
   not the keep head's training material), the share the offline judge keeps. Read while choosing
   the keep head's training material, so a dev figure.
9. cost: CPU to judge one day's diary (the sentences as diary items) by the offline judge.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "judgement"


def load(name: str, split: str) -> list[dict]:
    if "/" in name:  # diarylog/lines.json: its own folder, dev and test inside; fresh beside it
        folder, file = name.split("/")
        path = DATA / (f"{folder}_{split}" if split.startswith("fresh") else folder) / file
        items = json.loads(path.read_text("utf-8"))["items"] if path.exists() else []
        return [i for i in items if i["split"] == split]
    if split.startswith("fresh") or split == "dev5":  # fresh/, fresh2/, …: each its own folder
        path = DATA / split / name
        return json.loads(path.read_text("utf-8"))["items"] if path.exists() else []
    return [i for i in json.loads((DATA / name).read_text("utf-8"))["items"] if i["split"] == split]


def keep_refuse(items: list[dict]) -> dict:
    from giok.store.memoryfile import MemoryFile, empty
    from giok.write import judges, policy

    offline = judges.OfflineJudge()
    right = defaultdict(int)
    total = defaultdict(int)
    misses = []
    for n, item in enumerate(items):
        decision = policy.decide(MemoryFile.parse(empty("en")), item["text"])
        kept = decision.action != "refuse"
        verdict = offline.one(judges.Item(key=str(n), kind="diary", text=policy.redact(item["text"])[0]))
        nightly = verdict.decision != "drop"
        layer = decision.layer or "drop"
        for group in ("all", item["lang"]):
            total[group] += 1
            right[f"remember {group}"] += kept == item["keep"]
            right[f"distill {group}"] += nightly == item["keep"]
        right["agree"] += kept == nightly
        right["layer"] += layer == item["layer"]
        order = ["drop", "M30", "M90", "M365", "M0"]
        right["layer±1"] += abs(order.index(layer) - order.index(item["layer"])) <= 1
        if kept != item["keep"]:
            misses.append(f"{'kept' if kept else 'refused'} [{item['layer']}] {item['text']}")
    n = max(1, total["all"])
    out = {
        "n": total["all"],
        "remember": right["remember all"] / n,
        "distill": right["distill all"] / n,
        "agree": right["agree"] / n,
        "layer": right["layer"] / n,
        "layer_within_one": right["layer±1"] / n,
        "misses": misses,
    }
    for lang in ("ko", "en"):
        out[f"remember_{lang}"] = right[f"remember {lang}"] / max(1, total[lang])
    return out


def lasting_facts() -> dict:
    from giok.write import judgement

    items = [
        i
        for path in sorted((ROOT / "tools" / "data" / "raw").glob("slots_*.json"))
        for i in json.loads(path.read_text("utf-8"))
        if i["form"] == "fact" and i["slot"] not in judgement.PASSING  # a lasting attribute
    ]
    verdicts = judgement.judge_many([i["text"] for i in items])
    kept = defaultdict(int)
    total = defaultdict(int)
    dropped: dict[str, int] = defaultdict(int)
    for item, verdict in zip(items, verdicts, strict=True):
        for group in ("all", item["lang"]):
            total[group] += 1
            kept[group] += verdict.keep
        if not verdict.keep:
            dropped[item["slot"]] += 1
    return {
        "n": total["all"],
        "kept": kept["all"] / max(1, total["all"]),
        "kept_ko": kept["ko"] / max(1, total["ko"]),
        "kept_en": kept["en"] / max(1, total["en"]),
        "dropped_by_attribute": dict(sorted(dropped.items(), key=lambda kv: -kv[1])),
    }


def changes(items: list[dict]) -> dict:
    from giok.store.memoryfile import MemoryEntry, MemoryFile, empty
    from giok.write import policy

    found = traps = wrong_traps = right = true = hit = 0
    misses = []
    for item in items:
        mf = MemoryFile.parse(empty("en"))
        mf.add(MemoryEntry(policy.normalize(item["old"]), layer="M90", fields={"id": "m-000001"}))
        decision = policy.decide(mf, item["new"], force=True)
        superseded = decision.action == "supersede"
        right += superseded == item["change"]
        if item["change"]:
            true += 1
            hit += superseded
        else:
            traps += 1
            wrong_traps += superseded
        if superseded != item["change"]:
            misses.append(
                f"{'superseded' if superseded else 'missed'} [{item['kind']}] {item['old']} → {item['new']}"
            )
        found += superseded
    return {
        "n": len(items),
        "accuracy": right / max(1, len(items)),
        "changes_found": hit / max(1, true),
        "false_supersedes": wrong_traps / max(1, traps),
        "misses": misses,
    }


def changes_in_store(items: list[dict]) -> dict:
    import datetime as dt

    from giok.store.memoryfile import MemoryEntry, MemoryFile, empty
    from giok.write import policy

    hit = true = wrong_items = wrong_links = traps_linked = 0
    misses = []
    for lang in ("en", "ko"):
        mine = [i for i in items if i["lang"].split("-")[0] == lang]  # "ko-en": a Korean old text
        mf = MemoryFile.parse(empty(lang))
        start = dt.date(2026, 1, 1)
        for n, item in enumerate(mine):
            fields = {"id": f"m-{n:06d}"}
            mf.add(
                MemoryEntry(
                    policy.normalize(item["old"]), layer="M90", date=start + dt.timedelta(n), fields=fields
                )
            )
        mf = MemoryFile.parse(mf.render())  # as `remember` reads the file: parsed, with its index
        index = policy.Index(mf)
        for n, item in enumerate(mine):
            decision = policy.decide(mf, item["new"], force=True, index=index)
            replaced = set()
            if decision.action == "supersede" and decision.target is not None:
                replaced = {decision.target.id, *(e.id for e in decision.also)}
            own = f"m-{n:06d}"
            wrong = replaced - {own} if item["change"] else replaced
            if item["change"]:
                true += 1
                hit += own in replaced
            else:
                traps_linked += bool(replaced)
            wrong_items += bool(wrong)
            wrong_links += len(wrong)
            if wrong or (item["change"] and own not in replaced):
                olds = {e.id: e.text for e in mf.entries()}
                got = ", ".join(olds.get(i, i) for i in sorted(replaced)) or "nothing"
                misses.append(f"[{item['kind']}] {item['new']} → replaced {got} (own old: {item['old']})")
    n = max(1, len(items))
    return {
        "n": len(items),
        "changes_found": hit / max(1, true),
        "items_with_wrong_links": wrong_items / n,
        "wrong_links": wrong_links,
        "traps_linked": traps_linked,
        "misses": misses,
    }


def shown_to_a_judge(items: list[dict]) -> dict:
    """Is a change's own `old` among the entries a judge that reads pairs is shown beside its
    `new` (`giok distill --plan`'s may_replace, the LLM panel's "may replace":
    `distill.rivals`, words then the workspace's search)? The most such a judge can find. Every
    `old` of the split and language is one entry of a real workspace's MEMORY.md, indexed."""
    import tempfile

    sys.path.insert(0, str(ROOT / "bench"))
    import retrieval_sets

    from giok.lifecycle import distill
    from giok.write import policy

    true = shown = offered_n = 0
    misses = []
    for lang in ("en", "ko"):
        mine = [i for i in items if i["lang"].split("-")[0] == lang]
        facts = [{"id": f"{n:06d}", "text": policy.normalize(i["old"])} for n, i in enumerate(mine)]
        with tempfile.TemporaryDirectory(prefix="giok-rivals-") as tmp:
            ws = retrieval_sets.build({"user": "Jin", "facts": facts}, Path(tmp))
            mf = ws.memory()
            index = policy.Index(mf)
            for n, item in enumerate(mine):
                if not item["change"]:
                    continue
                offered = [e.id for e in distill.rivals(ws, mf, policy.normalize(item["new"]), None, index)]
                true += 1
                offered_n += len(offered)
                if retrieval_sets.entry_id(f"{n:06d}") in offered:
                    shown += 1
                else:
                    misses.append(f"[{item['kind']}] {item['new']} → not shown {item['old']}")
    return {
        "changes": true,
        "shown": shown / max(1, true),
        "offered": offered_n / max(1, true),
        "misses": misses,
    }


def cost(items: list[dict]) -> dict:
    from giok.write import judgement, judges, policy

    lines = [policy.redact(i["text"])[0] for i in items][:40]
    offline = judges.OfflineJudge()
    batch = [judges.Item(key=str(n), kind="diary", text=t) for n, t in enumerate(lines)]
    offline.decide(batch[:1], {})  # the model loads once per process, as in a long-lived server
    judgement._CACHE.clear()  # the sentences are new to it, as a night's diary is
    start = time.process_time()
    offline.decide(batch, {})
    return {"lines": len(lines), "cpu_ms": 1000 * (time.process_time() - start)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split",
        choices=("dev", "test", "fresh", "fresh2", "dev5", "fresh3", "fresh4", "fresh5"),
        default="test",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rules", action="store_true", help="the keyword rules alone (baseline)")
    parser.add_argument("--misses", type=int, default=0, help="print this many misses of each set")
    args = parser.parse_args()
    if args.rules:
        os.environ["GIOK_JUDGEMENT"] = "rules"
    sys.path.insert(0, str(ROOT / "src"))
    sentences = load("sentences.json", args.split)  # fresh2/ holds changes only
    result = {
        "split": args.split,
        "judge": "rules" if args.rules else "model",
        "keep": keep_refuse(sentences) if sentences else None,
        "diarylog": keep_refuse(log) if (log := load("diarylog/lines.json", args.split)) else None,
        "short": keep_refuse(few) if (few := load("short/lines.json", args.split)) else None,
        "lasting": lasting_facts() if args.split == "dev" else None,
        "changes": changes(load("changes.json", args.split)),
        "oldvalue": changes(named) if (named := load("oldvalue/pairs.json", args.split)) else None,
        "store": changes_in_store(load("changes.json", args.split)),
        "shown": shown_to_a_judge(load("changes.json", args.split)),
        "cost": cost(sentences) if sentences else None,
    }
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    c = result["changes"]
    print(f"split {args.split}, judge {result['judge']}")
    for label, name in (("keep/refuse", "keep"), ("diary log", "diarylog"), ("short lines", "short")):
        if (k := result[name]) is not None:
            print(
                f"{label:<12} n={k['n']}  remember {k['remember']:.3f} (ko {k['remember_ko']:.3f}, en "
                f"{k['remember_en']:.3f})  distill {k['distill']:.3f}  agree {k['agree']:.3f}  "
                f"layer {k['layer']:.3f} (±1 {k['layer_within_one']:.3f})"
            )
    lasting = result["lasting"]
    if lasting is not None:
        print(
            f"lasting      n={lasting['n']}  facts of a lasting attribute kept {lasting['kept']:.3f} "
            f"(ko {lasting['kept_ko']:.3f}, en {lasting['kept_en']:.3f})"
        )
    print(
        f"changes      n={c['n']}  accuracy {c['accuracy']:.3f}  found {c['changes_found']:.3f}  "
        f"false supersedes on traps {c['false_supersedes']:.3f}"
    )
    if (o := result["oldvalue"]) is not None:
        print(
            f"old value    n={o['n']}  accuracy {o['accuracy']:.3f}  found {o['changes_found']:.3f}  "
            f"false supersedes on traps {o['false_supersedes']:.3f}  (the new text names the value it leaves)"
        )
    st = result["store"]
    print(
        f"in a store   n={st['n']}  found {st['changes_found']:.3f}  items with a wrong link "
        f"{st['items_with_wrong_links']:.3f} ({st['wrong_links']} links; traps linked {st['traps_linked']})"
    )
    sh = result["shown"]
    print(
        f"shown        a change's own old among what a judge reading pairs is shown {sh['shown']:.3f} "
        f"({sh['offered']:.1f} entries a line)"
    )
    spent = result["cost"]
    if spent is not None:
        print(f"cost         {spent['lines']} diary lines judged in {spent['cpu_ms']:.0f} ms CPU")
    for name in ("keep", "diarylog", "short", "changes", "oldvalue", "store", "shown"):
        for line in (result[name] or {"misses": []})["misses"][: args.misses]:
            print(f"  {name} miss: {line}")


if __name__ == "__main__":
    main()
