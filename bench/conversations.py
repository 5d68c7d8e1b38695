"""Conversation sets: giok search next to a same-run BM25, per set and split (not a test; prints figures).

    PYTHONPATH=src .venv/bin/python bench/conversations.py [--set NAME …] [--split dev|test|all]
        [--dir /tmp/giok-conversations] [--json] [--dump FILE]
    PYTHONPATH=src .venv/bin/python bench/conversations.py --sweep [--compare] [--split dev|test]

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

--sweep draws the cut-off curve (choose on --split dev, the default; report on test): every
conversation set and, unless --set is given, bench/retrieval_sets.py's four sets (built its
way). Each question is searched once; giok's ranked candidates before the cut-offs are taken
from the real search (its `_cut` wrapped for the call) and giok's own `_cut` / `floor_of` are
applied at every point of a grid: the floor (`min_score` × `relative`), which decides whether
anything is found; `rest`, a lower `min_score` for the list once something is found (not a giok
option: simulated here); and the gap rule (0.15 or off). Printed per point: recall@5 per set
(turn fractional; the retrieval sets' r@5), abstention (no result) on each set's no-answer
questions (associative and CJK off-topic, Korean name-only, Molweni unanswerable, LoCoMo
adversarial), results returned per answerable question, the worst paired change against the
first row (the cut-offs before the curve) in s.e. units, and whether the point holds (helps a
set, hurts none by more than 1 s.e.). The point at giok's defaults is checked against the
real search on every question. --compare prints only that first row and today's defaults.

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


# --- the cut-off curve (--sweep) -----------------------------------------------------------

# The cut-offs giok shipped before this curve was drawn: the 0.35 floor (with the store-relative
# 0.1) on every result, and the gap rule (0.15) anywhere in the list.
BEFORE = {"min_score": 0.35, "relative": 0.1, "rest": None, "gap": 0.15}
SWEEP_MIN = (0.30, 0.35, 0.40, 0.45, 0.50, 0.53, 0.55)
SWEEP_RELATIVE = (None, 0.1, 0.15)
SWEEP_REST = (None, 0.3, 0.2, 0.1, 0.0)
SWEEP_GAP = (0.15, None)
RETRIEVAL_SETS = ("bilingual", "associative", "korean_keywords", "cjk")
# abstention columns: set → what its no-answer questions are
ABSTAIN = {
    "associative": "off-topic",
    "cjk": "off-topic",
    "korean_keywords": "name only",
    "molweni": "unanswerable",
    "locomo": "adversarial",
}


def sweep_points(compare: bool) -> list[dict[str, Any]]:
    """The grid of cut-off settings, BEFORE first; with compare, BEFORE and today's defaults only.
    A point is giok's floor (`min_score`, `relative`), which decides whether anything is found,
    `rest` (None, or a lower `min_score` for the results after that: the list floor), and `gap`."""
    from giok.retrieval.search import Options

    now = {
        "min_score": Options().min_score,
        "relative": Options().relative,
        "rest": None,
        "gap": Options().gap,
    }
    if compare:
        return [BEFORE] if now == BEFORE else [BEFORE, now]
    grid = [
        {"min_score": m, "relative": r, "rest": rest, "gap": g}
        for m in SWEEP_MIN
        for r in SWEEP_RELATIVE
        for rest in SWEEP_REST
        for g in SWEEP_GAP
        if rest is None or rest < m
    ]
    return [BEFORE, *(p for p in grid if p != BEFORE)]


def cut_at(ranked: list[Any], named: bool, point: dict[str, Any]) -> list[Any]:
    """The results at one point: giok's own `_cut` at (min_score, relative, gap); with `rest`,
    `_cut` at min_score = rest, and nothing at all unless a candidate clears giok's floor at the
    point's min_score (the floor decides whether there is an answer, rest how long the list is)."""
    from giok.retrieval import search as S

    o = S.Options(k=K, min_score=point["min_score"], relative=point["relative"], gap=point["gap"])
    if point["rest"] is None:
        return S._cut(ranked, o, S.Response("", []), named)[:K]
    floor = S.floor_of(ranked, o, named)
    if not any(r.relevant >= floor for r in ranked):
        return []
    o.min_score = point["rest"]
    return S._cut(ranked, o, S.Response("", []), named)[:K]


def candidates(ws: Any, query: str) -> tuple[list[Any], bool, list[Any]]:
    """giok's ranked candidates for query before the cut-offs, whether the query names the user
    (what `search._cut` is given), and the results the real search returned."""
    from giok.retrieval import search as S

    seen: dict[str, Any] = {"ranked": [], "named": False}
    original = S._cut

    def keep(ranked, o, response, named=False):  # type: ignore[no-untyped-def]
        seen["ranked"], seen["named"] = list(ranked), named
        return original(ranked, o, response, named)

    S._cut = keep
    try:
        response = S.search_full(ws, query, k=K, record=None)
    finally:
        S._cut = original
    return seen["ranked"], seen["named"], response.results


class Curve:
    """Per set: for each question, the recall (or the abstention) at every point of the grid."""

    def __init__(self, points: list[dict[str, Any]]) -> None:
        self.points = points
        self.recall: dict[str, list[list[float]]] = {}  # set → question → value per point
        self.abstain: dict[str, list[list[float]]] = {}
        self.slots: dict[str, list[list[float]]] = {}  # results returned (≤ 5) per answerable question
        self.checked = [0, 0]  # (agree, total): the default point against the real search

    def add(self, name: str, ws: Any, query: str, hit, answerable: bool) -> None:  # type: ignore[no-untyped-def]
        """hit(results at one point) → recall of that top list; answerable False: abstention."""
        from giok.retrieval import search as S

        ranked, named, real = candidates(ws, query)
        values, slots = [], []
        now = {"min_score": S.Options().min_score, "relative": S.Options().relative, "gap": S.Options().gap}
        for p in self.points:
            kept = cut_at(ranked, named, p)
            if p == {**now, "rest": None}:  # giok's defaults: must be what the real search returned
                self.checked[0] += [id(r) for r in kept] == [id(r) for r in real]
                self.checked[1] += 1
            values.append(hit(kept) if answerable else float(not kept))
            slots.append(float(min(len(kept), AT)))
        if answerable:
            self.recall.setdefault(name, []).append(values)
            self.slots.setdefault(name, []).append(slots)
        else:
            self.abstain.setdefault(name, []).append(values)

    def column(self, table: dict[str, list[list[float]]], name: str, i: int) -> list[float]:
        return [row[i] for row in table.get(name, [])]


def sweep_conversations(curve: Curve, name: str, base: Path, split: str, log) -> None:  # type: ignore[no-untyped-def]
    data = load_set(name)
    for conv in data["conversations"]:
        if split not in ("all", split_of(name, conv["id"])):
            continue
        started = time.perf_counter()
        ws, where, _ = open_workspace(name, conv, base)
        for q in conv["questions"]:

            def hit(kept, gold=q["evidence"], where=where):  # type: ignore[no-untyped-def]
                return recall([where.get((r.path, r.start_line), "?") for r in kept], gold)[0]

            curve.add(name, ws, q["question"], hit, q["answerable"])
        took = time.perf_counter() - started
        log(f"sweep {name} {conv['id']}: {len(conv['questions'])} questions, {took:.0f} s")


def sweep_retrieval(curve: Curve, split: str, log) -> None:  # type: ignore[no-untyped-def]
    """bench/retrieval_sets.py's sets, built its way (fresh home and workspace each); recall is
    its r@5 (an expected entry among the top 5), abstention no result at all."""
    import tempfile

    import retrieval_sets

    home = os.environ.get("GIOK_HOME")
    for name in RETRIEVAL_SETS:
        data = retrieval_sets.load(name)
        queries = [q for q in data["queries"] if split == "all" or q["split"] == split]
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"giok-sweep-{name}-") as tmp:
            ws = retrieval_sets.build(data, Path(tmp))
            for q in queries:
                expected = {retrieval_sets.entry_id(e) for e in q["expected"]}

                def hit(kept, expected=expected):  # type: ignore[no-untyped-def]
                    return float(bool(expected & {r.id for r in kept[:AT]}))

                curve.add(name, ws, q["query"], hit, bool(expected))
        log(f"sweep {name}: {len(queries)} queries, {time.perf_counter() - started:.0f} s")
    if home is not None:
        os.environ["GIOK_HOME"] = home


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """mean(a − b) and its s.e., a and b paired per question."""
    d = [x - y for x, y in zip(a, b, strict=True)]
    return mean_se(d)


def sweep_table(curve: Curve) -> list[dict[str, Any]]:
    rows = []
    for i, p in enumerate(curve.points):
        row: dict[str, Any] = {**p, "recall": {}, "delta": {}, "abstain": {}, "slots": {}, "n": {}}
        for name in curve.recall:
            now, before = curve.column(curve.recall, name, i), curve.column(curve.recall, name, 0)
            row["recall"][name] = mean_se(now)
            row["delta"][name] = paired(now, before)
            row["slots"][name] = mean_se(curve.column(curve.slots, name, i))[0]
            row["n"][name] = len(now)
        for name in curve.abstain:
            now, before = curve.column(curve.abstain, name, i), curve.column(curve.abstain, name, 0)
            row["abstain"][name] = (mean_se(now)[0], len(now))
            row["delta"][f"{name} abstain"] = paired(now, before)
        deltas = [(d, se) for d, se in row["delta"].values() if not math.isnan(se)]
        row["worst"] = min((d / se if se else 0.0 for d, se in deltas), default=0.0)
        row["holds"] = any(d > 0 for d, _ in deltas) and all(d >= -se for d, se in deltas)
        rows.append(row)
    return rows


def short(name: str) -> str:
    return {"korean_keywords": "korean", "associative": "assoc", "friendsqa": "friends"}.get(name, name)


def show_sweep(rows: list[dict[str, Any]], checked: list[int]) -> None:
    first = rows[0]
    sets = list(first["recall"])
    abst = list(first["abstain"])
    print(
        f"\nrecall@{AT} per set (conversations: turn fractional; retrieval sets: r@{AT}) and abstention\n"
        f"(no result) on the questions with no answer, per cut-off setting. worst Δ: the worst paired\n"
        f"change against the first row, recall or abstention, in s.e. units; holds: helps a set, hurts\n"
        f"none (recall or abstention) by more than 1 s.e.; slots: results returned per answerable\n"
        f"question (mean over sets). giok's defaults agree with its real search on "
        f"{checked[0]}/{checked[1]} questions."
    )
    head = f"{'min':>5}{'rel':>5}{'rest':>5}{'gap':>5} |"
    head += "".join(f"{short(s)[:7]:>8}" for s in sets) + " |"
    head += "".join(f"{short(s)[:5] + ' ' + ABSTAIN.get(s, '')[:3]:>10}" for s in abst)
    head += f" | {'slots':>5} {'worst Δ':>8} holds"
    print(head)

    def num(v: float | None) -> str:
        return "none" if v is None else f"{v:.2f}".lstrip("0") if v < 1 else f"{v:.1f}"

    for r in rows:
        line = f"{num(r['min_score']):>5}{num(r['relative']):>5}{num(r['rest']):>5}{num(r['gap']):>5} |"
        line += "".join(f"{r['recall'][s][0]:>8.3f}" for s in sets) + " |"
        line += "".join(f"{r['abstain'][s][0]:>10.2f}" for s in abst)
        worst = r["worst"]
        slots = sum(r["slots"].values()) / max(len(r["slots"]), 1)
        line += f" | {slots:>5.2f} {worst:>8.1f} {'yes' if r['holds'] else ''}"
        print(line)
    if len(rows) <= 3:  # --compare: each row's paired change against the first, ± 1 s.e.
        for r in rows[1:]:
            changes = ", ".join(f"{short(name)} {d:+.3f} ± {se:.3f}" for name, (d, se) in r["delta"].items())
            print(f"paired change of row {rows.index(r) + 1}: {changes}")
    print(
        "n (answerable / no answer): "
        + ", ".join(f"{s} {len_or(first, s)}" for s in dict.fromkeys([*sets, *abst]))
    )
    print(
        "s.e. of recall at the first row: "
        + ", ".join(f"{short(s)} {first['recall'][s][1]:.3f}" for s in sets)
    )


def len_or(row: dict[str, Any], name: str) -> str:
    return f"{row['n'].get(name, 0)} / {row['abstain'].get(name, (0, 0))[1]}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", choices=set_names(), help="one set (repeat for several)")
    ap.add_argument("--split", choices=("dev", "test", "all"), help="one split (default: dev, test and all)")
    ap.add_argument("--dir", default="/tmp/giok-conversations", help="workspaces and home, kept between runs")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ap.add_argument("--dump", metavar="FILE", help="write one JSON line per question (both rankings)")
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="the cut-off curve: recall and abstention per setting, on these sets and the retrieval sets",
    )
    ap.add_argument(
        "--compare", action="store_true", help="with --sweep: only the old cut-offs and today's defaults"
    )
    args = ap.parse_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    os.environ["GIOK_HOME"] = str(base / "home")
    os.environ.pop("GIOK_WORKSPACE", None)
    splits = [args.split] if args.split else ["dev", "test", "all"]
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.sweep:
        curve = Curve(sweep_points(args.compare))
        for name in args.set or set_names():
            sweep_conversations(curve, name, base, args.split or "dev", log)
        if not args.set:
            sweep_retrieval(curve, args.split or "dev", log)
        table_rows = sweep_table(curve)
        if args.json:
            json.dump({"split": args.split or "dev", "k": AT, "points": table_rows}, sys.stdout, indent=1)
            print()
        else:
            show_sweep(table_rows, curve.checked)
            print(f"\ntotal {time.perf_counter() - started:.0f} s")
        return
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
