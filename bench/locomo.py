"""LoCoMo retrieval benchmark for giok search (not a test; prints figures).

    .venv/bin/python bench/locomo.py [--data ../shared/bench/locomo_dev.json] [--dir /tmp/giok-locomo]
        [--fresh] [--modes hybrid,keyword,vector,bm25]

Each conversation becomes a workspace: one diary file per session date
(memory/YYYY-MM-DD.md), one line per turn as a user would write it
(`- HH:MM Speaker: text`, an image caption appended as `[shares a photo: …]`). Every
question of categories 1–4 is searched through `giok search --batch` (one process per
conversation and mode), and results are mapped back to turns by path and line. Prints
hybrid next to keyword-only and vector-only: turn-level fractional and any-hit recall@1/5/10
per category, session-level recall@5, the share of top-10 slots cut by the 0.35 floor and by
the 0.15 gap rule (off unless a search asks for it), abstention on adversarial questions,
indexing time per 1,000 turns and latency p50/p95.

--split prints turn recall@5 for a tuning half (conv-26, conv-30, conv-41: where the conversation
rules of retrieval/search.py were decided) and a held-out half (conv-42, conv-43) next to the
whole, each with the same-run BM25 figure.

Workspaces are kept in --dir, so a rerun reuses their index (embeddings are cached by
content hash); --fresh deletes them first to time indexing from scratch.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MODES = ("hybrid", "keyword", "vector", "bm25")
TUNING = ("conv-26", "conv-30", "conv-41")  # the half decisions were made on; the rest is held out
K = 10
_STOP_WORDS = """a an the and or but of to in on at for with from by is are was were be been am do does did
i you he she it we they me him her us them my your his its our their what when where who whom which why
how that this these those have has had will would can could should there here not no so as if about into
than too very"""
STOP = frozenset(_STOP_WORDS.split())


def session_time(raw: str) -> dt.datetime:
    return dt.datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y")


def write_workspace(conv: dict, root: Path) -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], str]]:
    """Write the diaries; return (path, line) → dia_id and (path, line) → the line's text."""
    c = conv["conversation"]
    files: dict[str, list[str]] = {}
    where: dict[tuple[str, int], str] = {}
    said: dict[tuple[str, int], str] = {}
    sessions = sorted((int(k.split("_")[1]), k) for k in c if re.fullmatch(r"session_\d+", k))
    for _number, key in sessions:
        when = session_time(c[f"{key}_date_time"])
        rel = f"memory/{when.date().isoformat()}.md"
        lines = files.setdefault(rel, [f"# {when.date().isoformat()}", ""])
        if len(lines) > 2:
            lines.append("")
        for i, turn in enumerate(c[key]):
            stamp = (when + dt.timedelta(minutes=i // 2)).strftime("%H:%M")
            text = " ".join(turn["text"].split())
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            lines.append(f"- {stamp} {turn['speaker']}: {text}")
            where[(rel, len(lines))] = turn["dia_id"]
            said[(rel, len(lines))] = f"{turn['speaker']}: {text}"
    write_files(root, files)
    return where, said


def write_files(root: Path, files: dict[str, list[str]]) -> None:
    """Each diary file's lines under root, rewritten only when they differ (a rerun keeps the
    files, so their index rows stay current)."""
    for rel, lines in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join(lines) + "\n"
        if not path.exists() or path.read_text("utf-8") != body:
            path.write_text(body, "utf-8")


def bm25_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


class BM25:
    """Plain Okapi BM25 (k1 1.5, b 0.75) over the turns, the question as the query, no
    cut-off: the reference point the LoCoMo README quotes."""

    def __init__(self, docs: dict[tuple[str, int], str], k1: float = 1.5, b: float = 0.75):
        self.keys = list(docs)
        self.tfs = [defaultdict(int) for _ in self.keys]
        df: dict[str, int] = defaultdict(int)
        for tf, key in zip(self.tfs, self.keys, strict=True):
            for w in bm25_words(docs[key]):
                tf[w] += 1
            for w in tf:
                df[w] += 1
        n = len(self.keys)
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(n, 1)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.k1, self.b = k1, b

    def search(self, query: str, k: int) -> list[tuple[str, int]]:
        words = set(bm25_words(query))
        scored = []
        for i, tf in enumerate(self.tfs):
            norm = self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg)
            s = sum(self.idf[w] * tf[w] * (self.k1 + 1) / (tf[w] + norm) for w in words if w in tf)
            if s > 0:
                scored.append((-s, i))
        return [self.keys[i] for _, i in sorted(scored)[:k]]


def evidence(qa: dict) -> list[str]:
    out = []
    for item in qa.get("evidence", []):
        out += [e for e in re.split(r"[;,\s]+", item) if re.fullmatch(r"D\d+:\d+", e)]
    return list(dict.fromkeys(out))


def giok(*args, input=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "giok", *args],
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


def prepare(conv: dict, base: Path, env: dict) -> tuple[Path, dict, dict]:
    name = conv["sample_id"].replace("_", "-")
    root = base / name
    if not (root / "MEMORY.md").exists():
        out = giok("init", str(root), "--name", name, env=env)
        if out.returncode:
            raise SystemExit(out.stderr)
    where, said = write_workspace(conv, root)
    started = time.perf_counter()
    out = giok("index", "-w", str(root), "--json", env=env)
    if out.returncode:
        raise SystemExit(out.stderr)
    stats = json.loads(out.stdout)["sync"]
    stats["wall_s"] = time.perf_counter() - started
    return root, where, said, stats


def run_queries(root: Path, questions: list[str], mode: str, env: dict) -> list[dict]:
    out = giok(
        "search",
        "--batch",
        "-",
        "-w",
        str(root),
        "--k",
        str(K),
        "--mode",
        mode,
        "--json",
        input="\n".join(questions) + "\n",
        env=env,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def bm25_response(bm25: BM25, query: str) -> dict:
    started = time.perf_counter()
    keys = bm25.search(query, K)
    ms = (time.perf_counter() - started) * 1000
    return {
        "results": [{"path": p, "start_line": n} for p, n in keys],
        "ms": ms,
        "cut": {"noise_top": 0, "gap_top": 0},
    }


def turns_of(response: dict, where: dict) -> list[str]:
    return [where.get((r["path"], r["start_line"]), "?") for r in response["results"]]


def measure(questions, responses, where, table, cuts, lat, abstain):
    for qa, resp in zip(questions, responses, strict=True):
        lat.append(resp["ms"])
        got = turns_of(resp, where)
        if qa["category"] == 5:
            abstain["adv"].append(not resp["results"])
            continue
        abstain["ans"].append(not resp["results"])
        gold = set(evidence(qa))
        cuts["noise"] += resp["cut"]["noise_top"]
        cuts["gap"] += resp["cut"]["gap_top"]
        cuts["slots"] += K
        gold_s = {g.split(":")[0] for g in gold}
        for cat in (qa["category"], "all"):
            row = table[cat]
            row["n"] += 1
            for k in (1, 5, 10):
                top = got[:k]
                hit = gold & set(top)
                row[f"frac@{k}"] += len(hit) / len(gold)
                row[f"any@{k}"] += bool(hit)
            top_s = {t.split(":")[0] for t in got[:5]}
            row["sess_frac@5"] += len(gold_s & top_s) / len(gold_s)
            row["sess_any@5"] += bool(gold_s & top_s)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))] if values else float("nan")


def report(mode, table, cuts, lat, abstain):
    print(f"\n== {mode} ==")
    cols = ["frac@1", "frac@5", "frac@10", "any@1", "any@5", "any@10", "sess_frac@5", "sess_any@5"]
    print(f"{'category':<12}{'n':>5} " + " ".join(f"{c:>11}" for c in cols))
    for cat in [1, 2, 3, 4, "all"]:
        row = table[cat]
        if not row["n"]:
            continue
        label = CATS.get(cat, "all")
        print(f"{label:<12}{row['n']:>5} " + " ".join(f"{row[c] / row['n']:>11.3f}" for c in cols))
    print(
        f"cut among top-{K} slots: noise (<0.35) {cuts['noise'] / max(cuts['slots'], 1):.1%}, "
        f"gap (>=0.15, off by default) {cuts['gap'] / max(cuts['slots'], 1):.1%}"
    )
    adv = sum(abstain["adv"]) / max(len(abstain["adv"]), 1)
    empty = sum(abstain["ans"]) / max(len(abstain["ans"]), 1)
    print(f"adversarial questions abstained (no result): {adv:.1%}; answerable with no result: {empty:.1%}")
    print(
        "latency per query (batch, incl. query embedding and sync check): "
        f"p50 {pct(lat, 50):.1f} ms, p95 {pct(lat, 95):.1f} ms"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = [p / "shared" / "bench" / "locomo_dev.json" for p in (ROOT.parent, ROOT.parent.parent)]
    ap.add_argument("--data", default=str(next((p for p in shared if p.exists()), shared[0])))
    ap.add_argument("--dir", default="/tmp/giok-locomo")
    ap.add_argument(
        "--fresh", action="store_true", help="delete the workspaces first (time indexing from scratch)"
    )
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--split", action="store_true", help="also report the tuning and the held-out half apart")
    args = ap.parse_args()
    base = Path(args.dir)
    if args.fresh and base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True, exist_ok=True)
    env = {"GIOK_HOME": str(base / "home")}
    with open(args.data, encoding="utf-8") as f:
        data = json.load(f)
    modes = args.modes.split(",")
    results = {
        m: (defaultdict(lambda: defaultdict(float)), defaultdict(int), [], {"adv": [], "ans": []})
        for m in modes
    }
    halves = {
        h: {
            m: (defaultdict(lambda: defaultdict(float)), defaultdict(int), [], {"adv": [], "ans": []})
            for m in modes
        }
        for h in ("tuning", "held-out")
    }
    turns = index_s = embedded = 0
    for conv in data:
        root, where, said, stats = prepare(conv, base, env)
        turns += len(where)
        index_s += stats["wall_s"]
        embedded += stats["embedded"]
        questions = [q for q in conv["qa"] if q["category"] == 5 or evidence(q)]
        bm25 = BM25(said) if "bm25" in modes else None
        for mode in modes:
            asked = [" ".join(q["question"].split()) for q in questions]
            if mode == "bm25" and bm25:
                responses = [bm25_response(bm25, q) for q in asked]
            else:
                responses = run_queries(root, asked, mode, env)
            measure(questions, responses, where, *results[mode])
            half = "tuning" if root.name in TUNING else "held-out"
            measure(questions, responses, where, *halves[half][mode])
    print(
        f"LoCoMo dev: {len(data)} conversations, {turns} turns; indexing {index_s:.1f} s "
        f"({index_s / turns * 1000:.1f} s per 1,000 turns; {embedded} texts embedded this run"
        f"{'' if embedded else ', all from the cache — use --fresh to time from scratch'})"
    )
    for mode in modes:
        report(mode, *results[mode])
    if args.split:
        print(f"\nturn recall@5 (frac@5, categories 1-4); tuning half = {', '.join(TUNING)}")
        for label, table in (
            ("tuning", halves["tuning"]),
            ("held-out", halves["held-out"]),
            ("all", results),
        ):
            n = int(table[modes[0]][0]["all"]["n"])
            cells = "  ".join(f"{m} {table[m][0]['all']['frac@5'] / max(n, 1):.3f}" for m in modes)
            print(f"{label:<9} n {n:>4}  {cells}")


if __name__ == "__main__":
    main()
