"""Retrieval evaluation sets (bench/data/retrieval/*.json): giok search next to a same-run BM25.

    PYTHONPATH=src .venv/bin/python bench/retrieval_sets.py [--split dev|test|all] [--set NAME] [--json]
    PYTHONPATH=src .venv/bin/python bench/retrieval_sets.py --split dev --curve

For each set, a fresh giok home and workspace in a temp dir; every fact of the set becomes one
MEMORY.md entry (written directly, so the write policy cannot merge or refuse any); each query
goes through giok's library search (`search_full`, what `giok search` calls: hybrid, top 5,
default cut-offs, default embeddings), and through a BM25 baseline written here: SQLite FTS5
`bm25()` over the same entry texts with the plain `unicode61` tokenizer, the query's words
OR-ed. Prints per set and kind: r@1, r@5, the empty-result rate on answerable queries and the
abstention (no result at all) on queries whose right answer is nothing.

--curve sweeps `min_score` (the documented floor of `giok search --min-score`, 0.20–0.60) and
prints recall@5 on answerable queries next to abstention on the nothing-to-find ones; --gaps
also sweeps the gap rule (`gap`: off by default, the seed's 0.15 when asked for). The sweep
searches each query once with no cut-offs and applies the cut-offs as documented; a few real
searches per point check that this matches giok (printed as "agree n/m"). The store-relative
floor is not swept here: `bench/conversations.py --sweep` sweeps every cut-off on these sets
and the conversation sets together.
Tune on --split dev only; the test split is for the report.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "retrieval"
SETS = ("bilingual", "associative", "korean_keywords", "cjk", "colloquial", "verb_forms_ko")
SPLIT_SALT = "giok-retrieval-117:"
SALTS = {"colloquial": "giok-colloquial-15:"}  # a set written later chose its own salt (its README)
BY_NUMBER = frozenset({"verb_forms_ko"})  # split by its author: odd group numbers dev (its README)
K = 5
LAYER_HEADING = "## 🌳 M365"
FLOORS = tuple(round(0.2 + 0.025 * i, 3) for i in range(17))  # 0.20 … 0.60
CHECKED = 12  # queries per set on which the simulated cut-offs are compared with real searches
GAPS = (None, 0.1, 0.15, 0.2, 0.3)


def split_of(group: str, name: str = "") -> str:
    """The split rule: a hash of the query's group (the fact or pair it was written for), salted
    per set (`SALTS`, else SPLIT_SALT); for a set in `BY_NUMBER`, its author's rule: an odd
    group number is dev, an even one test."""
    if name in BY_NUMBER:
        return "dev" if int(re.sub(r"\D", "", group) or 0) % 2 else "test"
    salt = SALTS.get(name, SPLIT_SALT)
    return "dev" if hashlib.sha256((salt + group).encode()).digest()[0] % 2 == 0 else "test"


def load(name: str) -> dict[str, Any]:
    with open(DATA / f"{name}.json", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def entry_id(fact_id: str) -> str:
    return f"ev-{fact_id}"


# --- giok ---------------------------------------------------------------------------------


def build(data: dict[str, Any], base: Path) -> Any:
    """A fresh home + workspace under base holding every fact of the set as a MEMORY.md entry."""
    from giok import Home, Workspace

    os.environ["GIOK_HOME"] = str(base / "home")
    os.environ.pop("GIOK_WORKSPACE", None)
    home = Home(base / "home")
    ws, _ = Workspace.init(base / "ws", name="eval", user=data["user"], home=home)
    day = (dt.date.today() - dt.timedelta(days=20)).isoformat()
    expires = (dt.date.today() + dt.timedelta(days=300)).isoformat()
    lines = [
        f"- [{day}] {fact['text']} <!-- expires: {expires}; id: {entry_id(fact['id'])}; "
        f"type: fact; scope: workspace -->"
        for fact in data["facts"]
    ]
    path = base / "ws" / "MEMORY.md"
    text = path.read_text(encoding="utf-8")
    if LAYER_HEADING not in text:
        raise SystemExit(f"MEMORY.md template has no {LAYER_HEADING!r} section")
    head, tail = text.split(LAYER_HEADING, 1)
    heading_line, rest = tail.split("\n", 1)
    path.write_text(
        head + LAYER_HEADING + heading_line + "\n" + "\n".join(lines) + "\n" + rest, encoding="utf-8"
    )
    subprocess.run(["git", "-C", str(base / "ws"), "add", "MEMORY.md"], check=True, capture_output=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(base / "ws"),
            "-c",
            "user.name=eval",
            "-c",
            "user.email=eval@localhost",
            "commit",
            "-q",
            "-m",
            "evaluation entries",
        ],
        check=True,
        capture_output=True,
    )
    stored = {e.fields.get("id") for e in ws.memory().entries()}
    missing = [f["id"] for f in data["facts"] if entry_id(f["id"]) not in stored]
    if missing:
        raise SystemExit(f"{data['name']}: giok did not read {len(missing)} entries back: {missing[:5]}")
    return ws


def giok_scored(ws: Any, query: str, **opts: Any) -> list[tuple[str, float]]:
    """giok's answer as (fact id, score), best first (other files' chunks as 'path:line')."""
    from giok.retrieval.search import search_full

    response = search_full(ws, query, k=K, record=None, **opts)
    out = []
    for r in response.results:
        rid = r.id or ""
        out.append((rid[3:] if rid.startswith("ev-") else f"{r.path}:{r.start_line}", r.score))
    return out


def giok_ranked(ws: Any, query: str, **opts: Any) -> list[str]:
    return [rid for rid, _ in giok_scored(ws, query, **opts)]


# --- BM25 baseline -------------------------------------------------------------------------

WORD = re.compile(r"\w+", re.UNICODE)


class BM25:
    """SQLite FTS5 bm25() over the facts, unicode61 tokenizer, the query's words OR-ed."""

    def __init__(self, facts: list[dict[str, Any]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE f USING fts5(fid UNINDEXED, body, tokenize='unicode61')")
        self.db.executemany("INSERT INTO f VALUES (?, ?)", [(x["id"], x["text"]) for x in facts])

    def ranked(self, query: str) -> list[str]:
        words = sorted({w.lower() for w in WORD.findall(query)})
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT fid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT ?", (match, K)
        ).fetchall()
        return [r[0] for r in rows]


# --- measuring -----------------------------------------------------------------------------


def score(queries: list[dict[str, Any]], ranked: list[list[str]]) -> dict[str, dict[str, Any]]:
    """Per kind (and 'all answerable' / 'all nothing'): n, r@1, r@5, empty, abstain."""
    acc: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for q, got in zip(queries, ranked, strict=True):
        expected = set(q["expected"])
        keys = [q["kind"], "ALL" if expected else "ALL-nothing"]
        for key in keys:
            a = acc[key]
            a["n"] += 1
            if expected:
                a["r1"] += bool(got) and got[0] in expected
                a["r5"] += bool(expected & set(got[:K]))
                a["empty"] += not got
            else:
                a["abstain"] += not got
    out: dict[str, dict[str, Any]] = {}
    for key, a in acc.items():
        n = int(a["n"])
        if "abstain" in a:
            out[key] = {"n": n, "abstain": a["abstain"] / n}
        else:
            out[key] = {"n": n, "r@1": a["r1"] / n, "r@5": a["r5"] / n, "empty": a["empty"] / n}
    return out


def cut(scored: list[tuple[str, float]], floor: float, gap: float | None) -> list[str]:
    """The cut-offs as `giok search --help` documents them: results under the floor are dropped,
    and a gap wider than `gap` between two results drops everything below it."""
    out: list[tuple[str, float]] = []
    for rid, value in scored:
        if value < floor or (gap is not None and out and out[-1][1] - value > gap):
            break
        out.append((rid, value))
    return [rid for rid, _ in out]


def sweep(
    ws: Any, queries: list[dict[str, Any]], mode: str, gaps: tuple[float | None, ...]
) -> tuple[list[dict[str, Any]], str]:
    """recall@5 / empty / abstention per (min_score, gap): one search per query with no cut-offs,
    the documented cut-offs applied here; on a few queries each point is also searched for real
    and the two compared (the count is returned, so a change in the rules shows)."""
    scored = [giok_scored(ws, q["query"], mode=mode, min_score=0.0, gap=None) for q in queries]
    points, agree, total = [], 0, 0
    for gap in gaps:
        for floor in FLOORS:
            s = score(queries, [cut(x, floor, gap) for x in scored])
            points.append(
                {
                    "min_score": floor,
                    "gap": gap,
                    "r@5": s.get("ALL", {}).get("r@5"),
                    "empty": s.get("ALL", {}).get("empty"),
                    "abstain": s.get("ALL-nothing", {}).get("abstain"),
                }
            )
    for gap in gaps:
        for floor in (FLOORS[0], 0.35, FLOORS[-1]):
            for q, x in zip(queries[:CHECKED], scored, strict=False):
                real = giok_ranked(ws, q["query"], mode=mode, min_score=floor, gap=gap)
                agree += real == cut(x, floor, gap)
                total += 1
    return points, f"{agree}/{total}"


def default_gap() -> float | None:
    from giok.retrieval.search import Options

    return Options().gap


def run_set(name: str, split: str, curve: bool, gaps: bool, mode: str = "hybrid") -> dict[str, Any]:
    data = load(name)
    queries = [q for q in data["queries"] if split == "all" or q["split"] == split]
    with tempfile.TemporaryDirectory(prefix=f"giok-eval-{name}-") as tmp:
        ws = build(data, Path(tmp))
        started, cpu = time.perf_counter(), time.process_time()
        giok_ranked(ws, queries[0]["query"], mode=mode)  # builds the index (embeds every entry once)
        index_s, index_cpu = time.perf_counter() - started, time.process_time() - cpu
        started, cpu = time.perf_counter(), time.process_time()
        ours = [giok_ranked(ws, q["query"], mode=mode) for q in queries]
        search_ms = (time.perf_counter() - started) * 1000 / max(1, len(queries))
        search_cpu_ms = (time.process_time() - cpu) * 1000 / max(1, len(queries))
        bm25 = BM25(data["facts"])
        theirs = [bm25.ranked(q["query"]) for q in queries]
        result: dict[str, Any] = {
            "set": name,
            "split": split,
            "mode": mode,
            "queries": len(queries),
            "facts": len(data["facts"]),
            "index_s": round(index_s, 2),
            "index_cpu_s": round(index_cpu, 2),
            "search_ms": round(search_ms, 1),
            "search_cpu_ms": round(search_cpu_ms, 1),
            "giok": score(queries, ours),
            "bm25": score(queries, theirs),
            "misses": [
                {"id": q["id"], "query": q["query"], "expected": q["expected"], "giok": got}
                for q, got in zip(queries, ours, strict=True)
                if (q["expected"] and not set(q["expected"]) & set(got)) or (not q["expected"] and got)
            ],
        }
        if curve:
            result["curve"], result["curve_checked"] = sweep(
                ws, queries, mode, GAPS if gaps else (default_gap(),)
            )
    return result


def fmt(v: Any) -> str:
    return "  –  " if v is None else f"{v:5.2f}"


def print_set(res: dict[str, Any]) -> None:
    print(
        f"\n== {res['set']} ({res['split']}, giok {res.get('mode', 'hybrid')}): "
        f"{res['queries']} queries, {res['facts']} facts; "
        f"index {res['index_s']} s ({res['index_cpu_s']} s CPU), "
        f"search {res['search_ms']} ms/query ({res['search_cpu_ms']} ms CPU)"
    )
    print(f"{'kind':<13}{'n':>4} | giok r@1  r@5 empty abst | bm25 r@1  r@5 empty abst")
    g, b = res["giok"], res["bm25"]
    order = sorted(k for k in g if not k.startswith("ALL")) + [k for k in ("ALL", "ALL-nothing") if k in g]
    for kind in order:
        gs, bs = g[kind], b[kind]
        cells = []
        for s in (gs, bs):
            cells.append(" ".join(fmt(s.get(m)) for m in ("r@1", "r@5", "empty", "abstain")))
        print(f"{kind:<13}{gs['n']:>4} | {cells[0]} | {cells[1]}")
    if "curve" in res:
        print(
            "  curve (giok): min_score gap -> r@5 on answerable, abstention on nothing-to-find "
            f"(simulated cut-offs agree with real searches on {res.get('curve_checked')})"
        )
        for p in res["curve"]:
            gap = "none" if p["gap"] is None else f"{p['gap']:.2f}"
            print(
                f"    min_score {p['min_score']:.2f} gap {gap:>4}: r@5 {fmt(p['r@5'])} "
                f"empty {fmt(p['empty'])} abstain {fmt(p['abstain'])}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    ap.add_argument("--set", choices=SETS, action="append", help="one set (repeat for several)")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ap.add_argument("--curve", action="store_true", help="sweep min_score: recall@5 vs abstention")
    ap.add_argument("--gaps", action="store_true", help="with --curve: also sweep the gap rule")
    ap.add_argument("--misses", action="store_true", help="print giok's misses")
    ap.add_argument("--mode", choices=("hybrid", "keyword", "vector"), default="hybrid", help="giok's mode")
    ap.add_argument("--show", metavar="FILE", help="print the tables of a saved --json run and stop")
    args = ap.parse_args()
    if args.show:
        with open(args.show, encoding="utf-8") as f:
            for res in json.load(f)["sets"]:
                print_set(res)
        return
    results = []
    started = time.perf_counter()
    for name in args.set or SETS:
        res = run_set(name, args.split, args.curve, args.gaps, args.mode)
        results.append(res)
        if not args.json:
            print_set(res)
            if args.misses:
                for m in res["misses"]:
                    print(f"    miss {m['id']}: {m['query']} -> {m['giok'][:3]} (want {m['expected']})")
            sys.stdout.flush()
    if args.json:
        json.dump(
            {"split": args.split, "k": K, "mode": args.mode, "sets": results},
            sys.stdout,
            ensure_ascii=False,
            indent=1,
        )
        print()
    else:
        print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
