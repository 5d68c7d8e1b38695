"""The reference log: what the agent was shown or used, one line per entry in
.giok/refs.jsonl. Distillation reads it to promote entries (the seed's rule: an M30 entry
referenced 3+ times in 14 days moves to M90) and writes the totals back into the entries'
`refs` field, so the files stay the whole truth.

What counts as a reference (docs/distill.md, "What counts as a reference"): the agent *using*
a memory, not being shown everything. Each logged event carries a weight `w`:

- search / recall: the top TOP_HITS MEMORY.md entries a search returned count 1 each when the
  search judged them used (`used`: a confident hit sharing a content word with the query,
  `retrieval.search.used`); lower or unused hits are logged with weight 0;
- get: an entry read on purpose (memory_get of a few lines, at most CITE_MAX entries) counts 1;
  reading the whole file is logged with weight 0;
- duplicate: the user stated a memory again (`remember` found it already there) counts 1;
- cite: a new memory names an entry by its id ("see m-1a2b3c") counts 1 for that entry;
- boot: every entry injected at session start is logged with weight 0 — injection is not use,
  and one boot a day would otherwise promote everything.

Old logs without `w` are weighted by kind (boot 0, the rest 1). Appends use O_APPEND with one
write per batch, so concurrent processes do not interleave lines. A lost log only loses
recent, not-yet-distilled counts."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from giok.store.clock import now

WEIGHT = {"boot": 0, "inject": 0, "search": 1, "recall": 1, "duplicate": 1, "get": 1, "cite": 1}
# "inject": what a hook puts in front of the model unasked (Claude Code's per-prompt recall), like boot.
KINDS = tuple(WEIGHT)
TOP_HITS = 3  # of one search's results, how many count as used
CITE_MAX = 3  # a read of more entries than this at once is browsing, not citing


def _path(ws) -> Path:
    return ws.layout.refs


def weights(ids: list[str], kind: str, used: Sequence[bool] | None = None) -> list[int]:
    """The weight of each id of one batch, in the caller's (rank) order; `used` (per id) marks
    the search hits an answer rests on, the others weigh 0."""
    base = WEIGHT.get(kind, 1)
    if kind in ("search", "recall"):
        return [base if n < TOP_HITS and (used is None or used[n]) else 0 for n in range(len(ids))]
    if kind == "get" and len(ids) > CITE_MAX:
        return [0] * len(ids)
    return [base] * len(ids)


def record(ws, ids, kind: str, used: Sequence[bool] | None = None) -> None:
    """Note that entries `ids` (best first) were referenced (kind: boot, search, recall,
    duplicate, get, cite); each event gets its weight (see the module's docstring). `used`:
    for a search, whether each hit was one the answer rests on (default: all)."""
    ids = list(ids)
    first: dict[str, bool] = {}
    for i, u in zip(ids, [True] * len(ids) if used is None else used, strict=True):
        if i and i not in first:
            first[i] = bool(u)
    ids = list(first)
    if not ids:
        return
    used = None if used is None else list(first.values())
    stamp = now().isoformat(timespec="seconds")
    payload = "".join(
        json.dumps({"id": i, "kind": kind, "at": stamp, "w": w}) + "\n"
        for i, w in zip(ids, weights(ids, kind, used), strict=True)
    ).encode()
    fd = os.open(_path(ws), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, payload)
    finally:
        os.close(fd)


def weight(event: dict) -> int:
    w = event.get("w")
    return w if isinstance(w, int) and w >= 0 else WEIGHT.get(str(event.get("kind")), 1)


def events(ws, since: dt.datetime | None = None, until: dt.datetime | None = None) -> list[dict]:
    """Logged references (of any weight), oldest first, optionally within [since, until)."""
    try:
        lines = _path(ws).read_text("utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            event = json.loads(line)
            at = dt.datetime.fromisoformat(event["at"])
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line after a crash
        if (since and at < since) or (until and at >= until):
            continue
        out.append({**event, "at": at})
    return out


def used(ws, since: dt.datetime | None = None, until: dt.datetime | None = None) -> list[dict]:
    """The events that count (weight > 0), oldest first, within [since, until)."""
    return [e for e in events(ws, since, until) if weight(e) > 0]


def counts(ws, since: dt.datetime | None = None, until: dt.datetime | None = None) -> Counter:
    """Weighted references per entry id within the window (boot injections add nothing)."""
    out: Counter[str] = Counter()
    for e in used(ws, since, until):
        out[e["id"]] += weight(e)
    return out
