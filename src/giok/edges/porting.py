"""Moving memory in and out: `export` writes a whole workspace in a form that needs no git
(jsonl: one JSON object per line with a `kind`; tar: the workspace's files), `import_path`
reads an export or another tool's memory (giok.edges.importers) and writes each item through the
workspace's own write paths, so the write policy (dedup, supersede, redaction, refusal)
decides for every one. See docs/porting.md."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from giok.edges import importers
from giok.edges.importers import Item, export_items
from giok.errors import GiokError, InvalidInput
from giok.store import tombstones
from giok.store.clock import parse_date, today
from giok.store.fsutil import clean_text
from giok.store.memoryfile import MemoryEntry, new_id
from giok.store.workspace import LESSONS, check_confidence, check_layer, check_scope, short, state_key
from giok.workspace import Workspace
from giok.write.notes import safe_text as _safe_text

_SKIP = {".git", ".giok"}
ACTIONS = ("kept", "merged", "refused")


# -- export (the items themselves: importers.export_items) --------------------------------------
def export_jsonl(ws: Workspace) -> str:
    """One JSON object per line. Bytes that are not UTF-8 in the files (read as lone
    surrogates) are written as `\\udcXX` escapes, so the export stays valid UTF-8 and an
    import gives the same bytes back."""
    return "".join(_json_line(item) + "\n" for item in export_items(ws))


def _json_line(item: dict) -> str:
    line = json.dumps(item, ensure_ascii=False)
    try:
        line.encode("utf-8")
        return line
    except UnicodeEncodeError:
        return json.dumps(item, ensure_ascii=True)


def export_tar(ws: Workspace) -> bytes:
    """The workspace's files (no .git, no .giok) as an uncompressed tar, paths under NAME/."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(ws.root.rglob("*")):
            rel = path.relative_to(ws.root)
            if rel.parts[0] in _SKIP or path.is_symlink() or not path.is_file():
                continue
            info = tar.gettarinfo(str(path), arcname=f"{ws.name}/{rel.as_posix()}")
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with path.open("rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()


# -- import -------------------------------------------------------------------------------------
@dataclass
class Outcome:
    item: Item
    action: str  # kept, merged, refused
    reason: str
    id: str | None = None

    def to_dict(self) -> dict:
        return {
            "kind": self.item.kind,
            "origin": self.item.origin,
            "text": short(self.item.text, 100),
            "action": self.action,
            "reason": self.reason,
            "id": self.id,
        }


@dataclass
class Report:
    source: str
    format: str
    dry_run: bool
    outcomes: list[Outcome] = field(default_factory=list)

    def counts(self) -> dict:
        return {a: sum(o.action == a for o in self.outcomes) for a in ACTIONS}

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "format": self.format,
            "dry_run": self.dry_run,
            "items": len(self.outcomes),
            **self.counts(),
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


def import_path(ws: Workspace, path: Path | str, fmt: str | None = None, dry_run: bool = False) -> Report:
    """Read `path` (format `fmt`, else detected) and write each item through the workspace's
    write paths. dry_run decides the same way against a copy of MEMORY.md held in memory and
    writes nothing."""
    fmt, items = importers.read(path, fmt)
    report = Report(str(path), fmt, dry_run)
    run = _Run(ws, dry_run)
    for item in _ordered(items):
        try:
            report.outcomes.append(run.one(item))
        except GiokError as exc:  # bad input in one item refuses that item, not the import
            if not isinstance(exc, InvalidInput):
                raise
            report.outcomes.append(Outcome(item, "refused", str(exc)))
    return report


def _ordered(items: list[Item]) -> list[Item]:
    """Entries first, each after the entry of the same source it supersedes (the policy then
    sees a chain in its order); the other kinds after them, in their order."""
    entries = [i for i in items if i.kind == "entry"]
    by_id = {i.fields.get("id"): i for i in entries if i.fields.get("id")}
    done, out = set(), []

    def visit(item, depth=0):
        if id(item) in done or depth > len(entries):
            return
        done.add(id(item))
        before = by_id.get(item.fields.get("supersedes"))
        if before is not None:
            visit(before, depth + 1)
        out.append(item)

    for item in entries:
        visit(item)
    return out + [i for i in items if i.kind != "entry"]


def _forgotten(ws: Workspace, entry_id, text: str) -> bool:
    """An entry a giok export carries (its id and text) that this workspace forgot."""
    if not isinstance(entry_id, str) or not entry_id.startswith("m-"):
        return False
    return tombstones.read(ws.root).holds(MemoryEntry(text=text, fields={"id": entry_id}))


class _Run:
    """One import into one workspace: what each kind of item does."""

    def __init__(self, ws: Workspace, dry_run: bool):
        self.ws, self.dry_run = ws, dry_run
        self.memory = ws.memory() if dry_run else None  # the dry run's MEMORY.md, in memory only
        self.seen: dict[str, set] = {}  # dry run: texts already "kept" per kind

    def one(self, item: Item) -> Outcome:
        if not (item.text or "").strip():
            return Outcome(item, "refused", "no text")
        handler = getattr(self, f"_{item.kind}", None)
        if handler is None:
            return Outcome(item, "refused", f"unknown kind {item.kind!r}")
        return handler(item)

    # entries go through the write policy ----------------------------------------------------
    def _entry(self, item: Item) -> Outcome:
        f = item.fields
        if f.get("superseded_by"):
            return Outcome(
                item, "merged", f"superseded in the source by {f['superseded_by']}: history, not imported"
            )
        if _forgotten(self.ws, f.get("id"), item.text):
            return Outcome(
                item, "refused", f"{f['id']} was forgotten here (state/tombstones.txt): not imported"
            )
        layer = check_layer(f.get("layer") or "M30")
        expires = f.get("expires") if layer != "M0" else None
        if expires and parse_date(expires) < today():
            return Outcome(item, "refused", f"expired on {expires} in the source")
        date = f.get("date")
        if date and parse_date(date) > today():
            date = None
        opts: dict[str, Any] = {
            "layer": layer,
            "expires": expires,
            "type": f.get("type"),
            "scope": check_scope(f.get("scope")),
            "source": f.get("source"),
            "confidence": f.get("confidence"),
            "date": date,
        }
        verdict = self._decide(item, opts)
        duplicate = verdict.action == "merged" and verdict.id is not None
        if self.dry_run or duplicate or verdict.action == "refused":
            return verdict  # a refusal or a duplicate is not sent on: no trace commit, no use counted
        result = self.ws.remember(item.text, via="import", **opts)
        action = {"written": "kept", "refused": "refused"}.get(result.action, "merged")
        entry_id = result.entry.id if result.entry else None
        return Outcome(item, action, result.reason if action != "kept" else "written", entry_id)

    def _decide(self, item: Item, opts: dict) -> Outcome:
        """The policy's verdict against MEMORY.md (the dry run's copy in memory, which takes
        each planned write). A duplicate is `merged` with the id it duplicates."""
        from giok.write import policy

        memory = self.memory if self.memory is not None else self.ws.memory()  # set in a dry run only
        text = clean_text(item.text, "memory text")
        conf = check_confidence(opts["confidence"])
        d = policy.decide(
            memory, text, opts["type"], opts["scope"], None if conf is None else float(conf), False, today()
        )
        if d.action == "refuse":
            return Outcome(item, "refused", d.reason)
        if d.action == "duplicate":
            return Outcome(item, "merged", d.reason, d.target.id if d.target else None)
        if self.dry_run:
            entry = MemoryEntry(text=d.text, layer=opts["layer"], fields={"scope": opts["scope"]})
            entry.fields["id"] = new_id(memory.ids())
            target = memory.find(d.target.id) if d.action == "supersede" and d.target is not None else None
            if target is not None:
                target.set("superseded_by", entry.id)
            memory.add(entry)
        return Outcome(
            item,
            "merged" if d.action == "supersede" else "kept",
            d.reason if d.action == "supersede" else "would be written",
        )

    # the other files: written through the workspace's own writers, skipped when already there --
    def _diary(self, item: Item) -> Outcome:
        day = parse_date(str(item.fields.get("day") or ""))
        if day > today():
            return Outcome(item, "refused", f"diary day {day} is in the future")
        at = item.fields.get("time")
        if at and not re.match(r"^([01]\d|2[0-3]):[0-5]\d$", at):
            raise InvalidInput(f"invalid diary time {at!r}: expected HH:MM")

        line = _diary_line(at, _safe_text(item.text, "diary text"))
        held = {" ".join(line.split()) for line in self.ws.read_text(self.ws.diary_path(day)).splitlines()}
        return self._once(
            item,
            "diary",
            lambda: _append_diary(self.ws, day, at, item.text),
            known=held,
            probe=f"{day} {line}",
            held=line,
        )

    def _decision(self, item: Item) -> Outcome:
        known = {" ".join(d["text"].split()) for d in self.ws.decisions()}
        why = item.fields.get("why") or "imported"
        when = item.fields.get("date")
        if when and when != today().isoformat() and "decided " not in why:
            why = f"{why} (decided {when})"
        return self._once(item, "decision", lambda: self.ws.decide(item.text, why), known=known)

    def _task(self, item: Item) -> Outcome:
        known = {" ".join(t["text"].split()) for t in self.ws.tasks()}
        status = item.fields.get("status") or "todo"

        def write():
            tid = self.ws.task_add(item.text)
            if status != "todo":
                self.ws.task_move(tid, status)
            return tid

        return self._once(item, "task", write, known=known)

    def _lesson(self, item: Item) -> Outcome:
        title = item.fields.get("title") or short(item.text, 80)
        if self.dry_run:
            held = self.ws.read_text(LESSONS)
            new = [line for line in item.text.splitlines() if line.strip() and line.strip()[2:] not in held]
            return Outcome(
                item, "kept" if new else "merged", "would be written" if new else "already in lessons"
            )
        before = self.ws.read_text(LESSONS)
        heading = self.ws.lesson(title, item.text).heading
        changed = self.ws.read_text(LESSONS) != before
        return Outcome(
            item, "kept" if changed else "merged", "written" if changed else "already in lessons", heading
        )

    def _state(self, item: Item) -> Outcome:
        section = item.fields.get("section") or ""
        current = self.ws.state()
        key = state_key(section)
        if " ".join(current[key].split()) == " ".join(item.text.split()):
            return Outcome(item, "merged", f"the {key} section already says this")
        if current[key].strip() and not _placeholder(current[key]):
            return Outcome(item, "refused", f"the workspace's own {key} section is kept (it is not empty)")
        if not self.dry_run:
            self.ws.state_set(key, item.text)
        return Outcome(item, "kept", "written" if not self.dry_run else "would be written", key)

    def _heartbeat(self, item: Item) -> Outcome:
        known = {" ".join(t.split()) for t in self.ws.heartbeat()}
        return self._once(item, "heartbeat", lambda: self.ws.heartbeat_add(item.text), known=known)

    def _once(
        self, item: Item, kind: str, write, known: set, probe: str | None = None, held: str | None = None
    ) -> Outcome:
        """Write unless the same text is there already (`held`, else the text, is in `known`)
        or was planned earlier in this run (`probe`, else the text)."""

        text = " ".join(_safe_text(item.text, f"{kind} text", limit=8 * 1024).split())
        planned = self.seen.setdefault(kind, set())
        if (held or text) in known or (probe or text) in planned:
            return Outcome(item, "merged", f"the same {kind} is already there")
        planned.add(probe or text)
        if self.dry_run:
            return Outcome(item, "kept", "would be written")
        result = write()
        if result is None:
            return Outcome(item, "merged", f"the same {kind} is already there")
        return Outcome(
            item, "kept", "written", result if isinstance(result, str) and len(result) < 40 else None
        )


def _placeholder(text: str) -> bool:
    """A state section still holding the template's hint (an italic line or a dash)."""
    body = " ".join(text.split())
    return body in ("-", "—", "(none)", "(없음)") or bool(re.fullmatch(r"[_*(].*[_*)]", body))


def _diary_line(at: str | None, text: str) -> str:
    return " ".join((f"- {at} {text}" if at else f"- {text}").split())


def _append_diary(ws: Workspace, day: dt.date, at: str | None, text: str) -> str | None:
    """Add `- HH:MM text` (or `- text` without a time) to the diary of `day`, unless that day
    already holds the line; returns the line, None when it was there."""

    text = _safe_text(text, "diary text")
    line = _diary_line(at, text)

    def change(old: str):
        if any(" ".join(held.split()) == line for held in old.splitlines()):
            return old, None
        head = old or f"# {day.isoformat()}\n\n"
        sep = "" if head.endswith("\n") else "\n"
        return head + sep + line + "\n", line

    result, _ = ws.edit(ws.diary_path(day), change, f"import: diary {day.isoformat()} {short(text)}")
    return cast("str | None", result)
