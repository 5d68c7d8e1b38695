"""Conversation sets: giok search next to a same-run BM25, per set and split (not a test; prints figures).

    PYTHONPATH=src .venv/bin/python bench/conversations.py [--set NAME …] [--split dev|test|all]
        [--dir /tmp/giok-conversations] [--json] [--dump FILE]

Sets: `locomo` (the LoCoMo dev conversations in ../shared/bench/locomo_dev.json, written and
scored with bench/locomo.py's own functions) and every bench/data/conversations/NAME.json
(normalised shape, see that folder's README.md: conversations → sessions → turns {id, speaker,
text}; questions {question, evidence: [turn ids], answerable}).

Each conversation becomes one workspace the way a user would write it: one diary file per
session date (memory/YYYY-MM-DD.md), one line per turn (`- HH:MM Speaker: text`; a turn with
no speaker, such as a scene note, is `- HH:MM text`). A set without dates gets a synthetic
date per session (one day apart, in session order). Every answerable question goes through
giok's library search (`search_full`, what `giok search` calls: hybrid, default cut-offs and
model, k = 10, nothing logged) and through bench/locomo.py's BM25 (Okapi BM25 over the same
turns, `Speaker: text`, the question as the query, no cut-off). Results map back to turns by
path and line.

Per set and split (dev/test by a salted hash of the conversation id; for LoCoMo, locomo.py's
tuning half is dev and its held-out half test): turn fractional
recall@5 (the share of a question's evidence turns in the top 5), any-hit recall@5, each
with 1 standard error over questions, giok/BM25 ratios (s.e. by the delta method on the
paired per-question values), n; and how often giok returns nothing, on answerable questions
and on those the set marks unanswerable. --dump writes one JSON line per question (both
rankings) for looking at losses.

Workspaces (and the home with its embedding cache) are kept in --dir: a rerun reads
the diaries back unchanged and reuses the index.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (bench/locomo.py: LoCoMo's writer, evidence parser and BM25)

DATA = HERE / "data" / "conversations"
SPLIT_SALT = "giok-conversations-split-1:"
K = 10  # searched; figures are at 5
AT = 5
BASE_DAY = dt.datetime(2024, 1, 1, 10, 0)


def split_of(set_name: str, conv_id: str) -> str:
    """dev or test. LoCoMo keeps bench/locomo.py's halves (dev = the tuning half, where the
    conversation rules of retrieval/search.py were decided); other sets: a salted hash."""
    if set_name == "locomo":
        return "dev" if conv_id in locomo.TUNING else "test"
    return (
        "dev" if hashlib.sha256(f"{SPLIT_SALT}{set_name}:{conv_id}".encode()).digest()[0] % 2 == 0 else "test"
    )


def set_names() -> list[str]:
    return ["locomo", *sorted(p.stem for p in DATA.glob("*.json"))]


# --- loading ------------------------------------------------------------------------------


def load_set(name: str, path: Path | None = None) -> dict[str, Any]:
    """A set in the normalised shape. `locomo` is converted from LoCoMo's own shape (session
    dates kept, evidence parsed by locomo.evidence, category 5 = unanswerable)."""
    if name == "locomo":
        with open(path or default_locomo(), encoding="utf-8") as f:
            return {"name": "locomo", "conversations": [from_locomo(c) for c in json.load(f)]}
    with open(path or DATA / f"{name}.json", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def default_locomo() -> Path:
    shared = [
        p / "shared" / "bench" / "locomo_dev.json" for p in (locomo.ROOT.parent, locomo.ROOT.parent.parent)
    ]
    return next((p for p in shared if p.exists()), shared[0])


def from_locomo(conv: dict) -> dict:
    questions = [
        {
            "id": f"{conv['sample_id']}-{i}",
            "question": " ".join(q["question"].split()),
            "evidence": locomo.evidence(q) if q["category"] != 5 else [],
            "answerable": q["category"] != 5,
        }
        for i, q in enumerate(conv["qa"])
        if q["category"] == 5 or locomo.evidence(q)
    ]
    return {"id": conv["sample_id"].replace("_", "-"), "locomo": conv, "questions": questions}


# --- writing a workspace --------------------------------------------------------------------


def write_diaries(conv: dict, root: Path) -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], str]]:
    """Write the conversation's diaries under root; return (path, line) → turn id and
    (path, line) → the turn as BM25 sees it (`Speaker: text`)."""
    if "locomo" in conv:
        return locomo.write_workspace(conv["locomo"], root)
    files: dict[str, list[str]] = {}
    where: dict[tuple[str, int], str] = {}
    said: dict[tuple[str, int], str] = {}
    for n, session in enumerate(conv["sessions"]):
        when = (
            dt.datetime.fromisoformat(session["date"])
            if session.get("date")
            else BASE_DAY + dt.timedelta(days=n)
        )
        rel = f"memory/{when.date().isoformat()}.md"
        lines = files.setdefault(rel, [f"# {when.date().isoformat()}", ""])
        if len(lines) > 2:
            lines.append("")
        for i, turn in enumerate(session["turns"]):
            stamp = (when + dt.timedelta(minutes=i // 2)).strftime("%H:%M")
            text = " ".join(turn["text"].split())
            line = f"{turn['speaker']}: {text}" if turn["speaker"] else text
            lines.append(f"- {stamp} {line}")
            where[(rel, len(lines))] = turn["id"]
            said[(rel, len(lines))] = line
    locomo.write_files(root, files)
    return where, said


def open_workspace(set_name: str, conv: dict, base: Path) -> tuple[Any, dict, dict]:
    from giok import Home, Workspace

    home = Home(base / "home")
    name = re.sub(r"[^A-Za-z0-9._-]", "-", f"{set_name}-{conv['id']}")
    root = base / set_name / conv["id"]
    if not (root / "MEMORY.md").exists():
        Workspace.init(root, name=name, home=home)
    where, said = write_diaries(conv, root)
    return Workspace.open(str(root), home=home), where, said


# --- scoring -------------------------------------------------------------------------------


def giok_turns(ws: Any, query: str, where: dict) -> list[str]:
    from giok.retrieval.search import search_full

    response = search_full(ws, query, k=K, record=None)
    return [where.get((r.path, r.start_line), "?") for r in response.results]


def bm25_turns(bm25: locomo.BM25, query: str, where: dict) -> list[str]:
    return [where[key] for key in bm25.search(query, K)]


def recall(got: list[str], gold: list[str], k: int = AT) -> tuple[float, float]:
    """(fractional, any-hit) recall@k of one question."""
    hit = set(gold) & set(got[:k])
    return len(hit) / len(gold), float(bool(hit))


def mean_se(values: list[float]) -> tuple[float, float]:
    n = len(values)
    if not n:
        return float("nan"), float("nan")
    m = sum(values) / n
    if n < 2:
        return m, float("nan")
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return m, math.sqrt(var / n)


def ratio_se(a: list[float], b: list[float]) -> tuple[float, float]:
    """mean(a)/mean(b) and its s.e. by the delta method, a and b paired per question."""
    n = len(a)
    ma, mb = sum(a) / max(n, 1), sum(b) / max(n, 1)
    if n < 2 or mb == 0:
        return float("nan"), float("nan")
    va = sum((x - ma) ** 2 for x in a) / (n - 1) / n
    vb = sum((y - mb) ** 2 for y in b) / (n - 1) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True)) / (n - 1) / n
    r = ma / mb
    var = (va - 2 * r * cov + r * r * vb) / (mb * mb)
    return r, math.sqrt(max(var, 0.0))


def summarise(rows: list[dict]) -> dict[str, Any]:
    ans = [r for r in rows if r["answerable"]]
    out: dict[str, Any] = {"n": len(ans), "conversations": len({r["conversation"] for r in rows})}
    for system in ("giok", "bm25"):
        cell = {}
        for m in ("frac", "any"):
            cell[f"{m}@{AT}"], cell[f"{m}_se"] = mean_se([r[system][m] for r in ans])
        out[system] = cell
    for m in ("frac", "any"):
        out[f"ratio_{m}"], out[f"ratio_{m}_se"] = ratio_se(
            [r["giok"][m] for r in ans], [r["bm25"][m] for r in ans]
        )
    out["giok_empty"] = sum(not r["giok_top"] for r in ans) / max(len(ans), 1)
    unans = [r for r in rows if not r["answerable"]]
    out["unanswerable"] = len(unans)
    out["giok_abstain"] = sum(not r["giok_top"] for r in unans) / len(unans) if unans else None
    return out


def run_set(name: str, base: Path, log, split: str = "all") -> list[dict]:
    """Every question of the set's conversations in `split`, searched both ways: one row each."""
    data = load_set(name)
    rows = []
    for conv in data["conversations"]:
        part = split_of(name, conv["id"])
        if split not in ("all", part):
            continue
        started = time.perf_counter()
        ws, where, said = open_workspace(name, conv, base)
        bm25 = locomo.BM25(said)
        for q in conv["questions"]:
            got = giok_turns(ws, q["question"], where)
            ref = bm25_turns(bm25, q["question"], where)
            row = {
                "set": name,
                "split": part,
                "conversation": conv["id"],
                "id": q["id"],
                "question": q["question"],
                "evidence": q["evidence"],
                "answerable": q["answerable"],
                "giok_top": got[:AT],
                "bm25_top": ref[:AT],
            }
            if q["answerable"]:
                g, b = recall(got, q["evidence"]), recall(ref, q["evidence"])
                row["giok"] = {"frac": g[0], "any": g[1]}
                row["bm25"] = {"frac": b[0], "any": b[1]}
            rows.append(row)
        log(
            f"{name} {conv['id']} ({part}): {len(where)} turns, {len(conv['questions'])} questions, "
            f"{time.perf_counter() - started:.0f} s"
        )
    return rows


def table(rows: list[dict], splits: list[str]) -> list[dict]:
    out = []
    for name in dict.fromkeys(r["set"] for r in rows):
        for split in splits:
            part = [r for r in rows if r["set"] == name and (split == "all" or r["split"] == split)]
            if part:
                out.append({"set": name, "split": split, **summarise(part)})
    return out


def show(res: list[dict]) -> None:
    print(f"\nturn recall@{AT} (answerable questions), giok hybrid vs same-run BM25, ±1 s.e.")
    print(
        f"{'set':<10}{'split':<6}{'n':>5}{'conv':>5} | {'giok frac':>13} {'bm25 frac':>13} {'ratio':>12} | "
        f"{'giok any':>13} {'bm25 any':>13} {'ratio':>12} | {'empty':>6} {'abstain':>8}"
    )
    for r in res:
        g, b = r["giok"], r["bm25"]
        abst = "-" if r["giok_abstain"] is None else f"{r['giok_abstain']:.2f}/{r['unanswerable']}"
        print(
            f"{r['set']:<10}{r['split']:<6}{r['n']:>5}{r['conversations']:>5} | "
            f"{g['frac@5']:.3f}±{g['frac_se']:.3f} {b['frac@5']:.3f}±{b['frac_se']:.3f} "
            f"{r['ratio_frac']:>5.2f}±{r['ratio_frac_se']:.2f}  | "
            f"{g['any@5']:.3f}±{g['any_se']:.3f} {b['any@5']:.3f}±{b['any_se']:.3f} "
            f"{r['ratio_any']:>5.2f}±{r['ratio_any_se']:.2f}  | {r['giok_empty']:>6.2f} {abst:>8}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", choices=set_names(), help="one set (repeat for several)")
    ap.add_argument("--split", choices=("dev", "test", "all"), help="one split (default: dev, test and all)")
    ap.add_argument("--dir", default="/tmp/giok-conversations", help="workspaces and home, kept between runs")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ap.add_argument("--dump", metavar="FILE", help="write one JSON line per question (both rankings)")
    args = ap.parse_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    os.environ["GIOK_HOME"] = str(base / "home")
    os.environ.pop("GIOK_WORKSPACE", None)
    splits = [args.split] if args.split else ["dev", "test", "all"]
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    rows = []
    for name in args.set or set_names():
        rows += run_set(name, base, log, args.split or "all")
    res = table(rows, splits)
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    if args.json:
        json.dump({"k": AT, "split_salt": SPLIT_SALT, "results": res}, sys.stdout, indent=1)
        print()
    else:
        show(res)
        print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
