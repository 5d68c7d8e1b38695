"""The reference log: every time an entry is injected at boot or returned by a search or
recall, one line is appended to .giok/refs.jsonl. Distillation reads it to promote entries
(the seed's rule: an M30 entry referenced 3+ times in 14 days moves to M90) and writes the
totals back into the entries' `refs` field, so the files stay the whole truth.

Appends use O_APPEND with one write per batch, so concurrent processes do not interleave
lines. A lost log only loses recent, not-yet-distilled counts."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections import Counter
from pathlib import Path

from .clock import now

KINDS = ("boot", "search", "recall", "duplicate", "get")


def _path(ws) -> Path:
    return ws.data_dir / "refs.jsonl"


def record(ws, ids, kind: str) -> None:
    """Note that entries `ids` were referenced (kind: boot, search, recall, duplicate, get)."""
    ids = [i for i in dict.fromkeys(ids) if i]
    if not ids:
        return
    stamp = now().isoformat(timespec="seconds")
    payload = "".join(json.dumps({"id": i, "kind": kind, "at": stamp}) + "\n" for i in ids).encode()
    fd = os.open(_path(ws), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, payload)
    finally:
        os.close(fd)


def events(ws, since: dt.datetime | None = None, until: dt.datetime | None = None) -> list[dict]:
    """Logged references, oldest first, optionally within [since, until)."""
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


def counts(ws, since: dt.datetime | None = None, until: dt.datetime | None = None) -> Counter:
    """References per entry id within the window."""
    return Counter(e["id"] for e in events(ws, since, until))
