"""The write-decision trace: why an entry exists, where it came from, what happened to it.

Truth lives in the files and in git, never only in .giok/ (derived, rebuildable, may be lost):

- A write that changes MEMORY.md (written, superseded, redacted) carries its decision in the
  commit message as trailers under the usual first line:

      memory: remember m-7f3a2c (M30) Seojun now prefers coffee

      Decision: superseded
      Reason: replaces m-1b2c3d (same subject: seojun, prefer; changed)
      Supersedes: m-1b2c3d
      Type: preference
      Scope: user:Seojun
      Source: telegram:4411
      Via: cli

- A decision that changes no memory file (refused, duplicate) is appended, redacted, to the
  tracked log `state/trace.jsonl` (one JSON object a line, id `r-xxxxxx`) and committed.
  A refused text is never stored: its event keeps the reason, its category (`speculation`,
  `greeting or small talk`, ...), its length and a keyed hash (HMAC-SHA256 with the
  workspace's untracked key `.giok/trace.key`, so a guess cannot be checked against the log
  from a clone), and the commit subject names only the length.

`lookup(ws, id)` reads both back; `history(ws, id)` walks the supersedes chain.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping

from giok.errors import InvalidInput, NotFound
from giok.store import git
from giok.store.clock import now
from giok.store.fsutil import atomic_write
from giok.store.layout import MEMORY
from giok.store.memoryfile import MemoryEntry
from giok.text.lazy import lazy

TRACE = "state/trace.jsonl"
_TRAILER_RE = lazy(r"^([A-Z][A-Za-z-]+): (.*)$")
_TRACE_ID_RE = lazy(r"^r-[0-9a-f]{6,12}$")
_MEMORY_ID_RE = lazy(r"^m-[0-9a-f]{6,12}$")
ACTIONS = {"write": "written", "supersede": "superseded", "duplicate": "duplicate", "refuse": "refused"}


def trailers(decision, source: str | None = None, via: str | None = None) -> str:
    """The commit-message body recording a decision that changed MEMORY.md."""
    rows = [("Decision", ACTIONS.get(decision.action, decision.action)), ("Reason", decision.reason)]
    if decision.target is not None and decision.action == "supersede":
        rows.append(("Supersedes", decision.target.id))
    rows += [
        ("Type", decision.type),
        ("Scope", decision.scope),
        ("Confidence", decision.confidence),
        ("Source", source),
        ("Via", via),
    ]
    if decision.redactions:
        rows.append(("Redacted", ", ".join(sorted(set(decision.redactions)))))
    if decision.forced:
        rows.append(("Forced", "yes"))
    return "\n".join(f"{k}: {_one_line(v)}" for k, v in rows if v not in (None, ""))


def record(ws, decision, source: str | None = None, via: str | None = None) -> tuple[str, str | None]:
    """Append a decision that wrote no memory (refused, duplicate) to state/trace.jsonl and
    commit it. Returns (trace id, commit)."""
    taken = {e["id"] for e in events(ws)}
    rid = _new_id(taken)
    refused = decision.action == "refuse"
    event = {
        "id": rid,
        "at": now().isoformat(timespec="seconds"),
        "action": ACTIONS[decision.action],
        "reason": decision.reason,
        "type": decision.type,
        "scope": decision.scope,
        "confidence": decision.confidence,
        "source": source,
        "via": via,
        "target": decision.target.id if decision.target is not None else None,
        "redactions": sorted(set(decision.redactions)),
        "forced": decision.forced,
    }
    if refused:
        event.update(
            category=_category(decision.reason), length=len(decision.text), hash=text_hash(ws, decision.text)
        )
        subject = f"memory: {event['action']} {rid} ({len(decision.text)} characters)"
    else:
        event["text"] = decision.text[:500]
        subject = f"memory: {event['action']} {rid} {' '.join(decision.text.split())[:60]}"
    line = json.dumps({k: v for k, v in event.items() if v not in (None, [], False)}, ensure_ascii=False)

    def change(old: str):
        base = old if not old or old.endswith("\n") else old + "\n"
        return base + line + "\n", rid

    _, sha = ws.edit(TRACE, change, f"{subject}\n\nReason: {_one_line(decision.reason)}")
    return rid, sha


def text_hash(ws, text: str) -> str:
    """A keyed hash of a refused text: equal texts match within this workspace, but the log
    alone (a clone, a push) cannot confirm a guess. The key lives in .giok/, never in git."""
    key_path = ws.layout.trace_key
    try:
        key = bytes.fromhex(key_path.read_text("ascii").strip())
    except (FileNotFoundError, ValueError):
        key = secrets.token_bytes(32)
        key_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(key_path, key.hex().encode("ascii"))
    return hmac.new(key, text.encode("utf-8", errors="surrogateescape"), hashlib.sha256).hexdigest()[:32]


def _category(reason: str) -> str:
    """The refusal's category: the reason up to its first ',' or ':'."""
    return re.split(r"[,:]", reason, maxsplit=1)[0].strip()


def events(ws) -> list[dict]:
    """Every decision in state/trace.jsonl, oldest first (unreadable lines skipped)."""
    path = ws.root / TRACE
    try:
        lines = path.read_text("utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "id" in item:
            out.append(item)
    return out


def lookup(ws, item_id: str) -> dict:
    """Why ID exists: its entry (if still in MEMORY.md) and every recorded event about it."""
    item_id = (item_id or "").strip()
    if _TRACE_ID_RE.match(item_id):
        found = [e for e in events(ws) if e["id"] == item_id]
        if not found:
            raise NotFound(f"no write decision {item_id} in {TRACE}")
        return {"id": item_id, "entry": None, "events": [{"kind": "decision", **found[0]}]}
    if not _MEMORY_ID_RE.match(item_id):
        raise InvalidInput(
            f"malformed id {item_id!r}: memory ids look like m-7f3a2c, refused writes r-7f3a2c"
        )
    entry = ws.memory().find(item_id)
    out = _commits(ws, item_id)
    out += [{"kind": "decision", **e} for e in events(ws) if e.get("target") == item_id]
    if not any(e["kind"] == "commit" and e.get("created") for e in out) and entry is not None:
        out += _introduced_by(ws, entry.text)
    if entry is None and not out:
        raise NotFound(f"no memory with id {item_id} in {ws.name}, and no recorded decision about it")
    out.sort(key=lambda e: e.get("at") or "")
    return {"id": item_id, "entry": entry.to_dict() if entry else None, "events": out}


def _commits(ws, item_id: str) -> list[dict]:
    """Commits whose message names the id, with their trailers parsed."""
    if git.run(ws.root, "rev-parse", "HEAD", check=False).returncode != 0:
        return []
    proc = git.run(
        ws.root,
        "log",
        "--all",
        "-F",
        f"--grep={item_id}",
        "--date=iso-strict",
        "--format=%x1e%h%x1f%ad%x1f%an%x1f%B",
    )
    out = []
    for record in proc.stdout.split("\x1e")[1:]:
        sha, at, author, body = ([*record.split("\x1f", 3), "", "", ""])[:4]
        subject, _, rest = body.strip().partition("\n")
        fields = {
            m.group(1).lower(): m.group(2)
            for line in rest.splitlines()
            if (m := _TRAILER_RE.match(line.strip()))
        }
        out.append(
            {
                "kind": "commit",
                "commit": sha,
                "at": at,
                "author": author,
                "message": subject,
                "created": subject.startswith(f"memory: remember {item_id} "),
                **fields,
            }
        )
    return out


def _introduced_by(ws, text: str) -> list[dict]:
    """For an entry written without giok (by hand, by another tool): the commit that added it."""
    proc = git.run(
        ws.root,
        "log",
        "--reverse",
        "-F",
        f"-S{text}",
        "--date=iso-strict",
        "--format=%x1e%h%x1f%ad%x1f%an%x1f%s",
        "--",
        MEMORY,
        check=False,
    )
    records = proc.stdout.split("\x1e")[1:] if proc.returncode == 0 else []
    if not records:
        return [
            {
                "kind": "note",
                "message": "no commit added this text: it was edited in by hand and not committed yet",
            }
        ]
    sha, at, author, subject = ([*records[0].strip().split("\x1f", 3), "", "", ""])[:4]
    return [
        {
            "kind": "commit",
            "commit": sha,
            "at": at,
            "author": author,
            "message": subject,
            "created": True,
            "decision": "unrecorded",
            "reason": "written outside `giok remember` (no write decision recorded)",
        }
    ]


def supersede_chain(by_id: Mapping[str, MemoryEntry], start: str) -> list[str]:
    """The ids of the supersedes chain through `start`, oldest first: back through
    `supersedes`, forward through `superseded_by`. An id not in by_id ends the chain on
    its side (it is listed, as the last one known)."""
    chain, seen = [start], {start}
    while (old := by_id[chain[0]].fields.get("supersedes")) and old not in seen:
        seen.add(old)
        chain.insert(0, old)
        if old not in by_id:
            break
    while (new := by_id[chain[-1]].fields.get("superseded_by")) and new not in seen:
        seen.add(new)
        chain.append(new)
        if new not in by_id:
            break
    return chain


def history(ws, entry_id: str) -> list[dict]:
    """The supersedes chain through entry_id, oldest first. An id no longer in MEMORY.md
    (forgotten, archived) appears with `missing: true`."""
    if not _MEMORY_ID_RE.match((entry_id or "").strip()):
        raise InvalidInput(f"malformed memory id {entry_id!r}: ids look like m-7f3a2c")
    mf = ws.memory()
    start = mf.find(entry_id.strip())
    if start is None:
        raise NotFound(f"no memory with id {entry_id} in {ws.name}")
    by_id = {e.id: e for e in mf.entries()}
    chain = [by_id.get(i) or _missing(i) for i in supersede_chain(by_id, start.id)]
    return [_row(e) for e in chain]


class _Missing:
    def __init__(self, entry_id: str):
        self.id: str = entry_id
        self.fields: dict[str, str] = {}


def _missing(entry_id: str) -> _Missing:
    return _Missing(entry_id)


def _row(entry) -> dict:
    if isinstance(entry, _Missing):
        return {"id": entry.id, "missing": True}
    data = entry.to_dict()
    data["status"] = "superseded" if entry.superseded else "current"
    return data


def _one_line(value) -> str:
    return " ".join(str(value).split())


def _new_id(taken: set[str]) -> str:
    while True:
        candidate = "r-" + secrets.token_hex(3)
        if candidate not in taken:
            return candidate
