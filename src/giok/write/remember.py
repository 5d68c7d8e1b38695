"""Writing MEMORY.md through the write policy: `remember` adds an entry (or refuses it, finds
it a duplicate, or has it supersede an older one), `edit_entry` rewrites one entry's text.
Each decision goes into the commit message (giok.store.trace), every field is redacted first."""

from __future__ import annotations

import datetime as dt
import re

from giok.errors import InvalidInput
from giok.store import refs, trace
from giok.store.clock import parse_date, today
from giok.store.fsutil import clean_text
from giok.store.layout import MEMORY
from giok.store.memoryfile import ID_RE, LAYERS, MemoryEntry, MemoryFile, empty, new_id
from giok.store.workspace import (
    TYPES,
    Workspace,
    WriteResult,
    _confidence,
    _one_line,
    _short,
    check_id,
    check_layer,
    check_scope,
)
from giok.write import policy
from giok.write.notes import safe_text


def remember(
    ws: Workspace,
    text: str,
    *,
    layer: str | None = None,
    expires: str | dt.date | None = None,
    type: str | None = None,
    scope: str | None = None,
    source: str | None = None,
    confidence: float | None = None,
    force: bool = False,
    user: str | None = None,
    thread: str | None = None,
    task: str | None = None,
    via: str | None = "api",
    date: str | dt.date | None = None,
    supersedes: str | None = None,
) -> WriteResult:
    """Decide (giok.write.policy), then add an entry to MEMORY.md and commit, with the decision in
    the commit message. Greetings, questions and guesses are refused (force=True overrides);
    an exact duplicate is not written again; an update or contradiction supersedes the old
    entry; secrets are redacted first. Layer: M30 unless given; an entry that supersedes
    another keeps at least that one's layer unless `layer` or `expires` is given (a note
    says so). `date`: the day of the event (not in the future), shown as the entry's date;
    the expiry still counts from today. Default expiry: today + the layer's days.
    `supersedes`: the id of an entry the new one replaces (marked in the same commit), when
    the policy did not find it an update by itself."""
    text = clean_text(text, "memory text")
    if source:  # every field is redacted, not only the text: source lands in MEMORY.md, the trace and git
        source = policy.redact(source)[0]
    asked = check_layer(layer) if layer is not None else None
    layer = asked or "M30"
    expiry = ws._expiry(layer, expires)
    when = _event_date(date)
    if type is not None and type not in TYPES:
        raise InvalidInput(f"invalid type {type!r}: choose one of {', '.join(TYPES)}")
    scope = check_scope(policy.scope_for(scope, user, thread, task))
    conf = _confidence(confidence)

    def change(old: str):
        mf = MemoryFile.parse(old) if old else MemoryFile.parse(empty("en"))
        decision = policy.decide(mf, text, type, scope, None if conf is None else float(conf), force, today())
        if decision.action in ("refuse", "duplicate"):
            return old, (decision, None)
        entry = MemoryEntry(text=decision.text, layer=layer, date=when, expires=expiry)
        fields = {
            "id": new_id(mf.ids()),
            "type": decision.type,
            "scope": scope,
            "source": source,
            "confidence": conf,
        }
        if decision.action == "supersede" and decision.target is not None:
            fields["supersedes"] = decision.target.id
            ws._entry_in(mf, decision.target.id).set("superseded_by", fields["id"])
            for other in decision.also:  # a change that replaces several older entries
                ws._entry_in(mf, other.id).set("superseded_by", fields["id"])
            kept = _kept_layer(decision.target, layer) if asked is None and not expires else None
            if kept:
                entry.layer, entry.expires = kept, ws._expiry(kept, None)
        asked_old = mf.find(supersedes) if supersedes and supersedes != fields.get("supersedes") else None
        if asked_old is not None and not asked_old.superseded:  # the caller says what it replaces
            fields["supersedes"] = asked_old.id
            asked_old.set("superseded_by", fields["id"])
        entry.fields = {k: str(v) for k, v in fields.items() if v is not None}
        mf.add(entry)
        return mf.render().decode("utf-8", errors="surrogateescape"), (decision, entry)

    def message(result) -> str:
        decision, e = result
        return f"memory: remember {e.id} ({e.layer}) {_short(e.text)}\n\n" + trace.trailers(
            decision, source, via
        )

    (decision, entry), sha = ws.edit(MEMORY, change, message)
    notes = _redaction_notes(decision)
    if entry is not None:
        cited = [i for i in dict.fromkeys(_CITED_ID.findall(entry.text)) if i != entry.id]
        if cited:  # a memory that names another is a use of it (docs/distill.md)
            live = ws.memory().ids()
            refs.record(ws, [i for i in cited if i in live], "cite")
        if decision.action == "supersede":
            notes.append(f"{decision.target.id} is now superseded by {entry.id}")
            if entry.layer != layer:
                notes.append(
                    f"kept layer {entry.layer} of {decision.target.id} (give --layer to choose another)"
                )
        return WriteResult(trace.ACTIONS[decision.action], entry, decision.reason, sha, tuple(notes))
    if decision.action == "duplicate":
        refs.record(ws, [decision.target.id], "duplicate")
    rid, sha = trace.record(ws, decision, source, via)
    notes.append(f"decision recorded as {rid} (`giok trace {rid}`)")
    return WriteResult(trace.ACTIONS[decision.action], decision.target, decision.reason, sha, tuple(notes))


def edit_entry(
    ws: Workspace, entry_id: str, text: str, *, reason: str | None = None, force: bool = False
) -> WriteResult:
    """Replace the text of entry `entry_id`, keeping its id, layer, dates and fields; the old
    text stays in git history. The new text goes through the write policy first (checked
    against the other entries): a greeting, question or guess is refused (force=True
    overrides), a duplicate of another entry is refused, secrets are redacted. Returns
    action edited, refused, duplicate or unchanged."""
    entry_id = check_id(entry_id)
    text = clean_text(text, "memory text")
    reason = safe_text(reason, "reason") if reason else None

    def change(old: str):
        mf = MemoryFile.parse(old)
        entry = ws._entry_in(mf, entry_id)
        others = MemoryFile.parse(old)
        others.remove(entry_id)
        conf = entry.fields.get("confidence")
        decision = policy.decide(
            others, text, entry.type, entry.scope, None if conf is None else float(conf), force, today()
        )
        if decision.action in ("refuse", "duplicate") or decision.text == entry.text:
            return old, (decision, entry, False)
        entry.fields.setdefault("id", entry_id)  # an adopted line's id is derived from its text: pin it
        entry.text = decision.text
        entry.touch()
        return mf.render().decode("utf-8", errors="surrogateescape"), (decision, entry, True)

    def message(result) -> str:
        decision, e, _ = result
        body = f"Edit: {e.id}\n" + (f"Why: {_one_line(reason)}\n" if reason else "")
        return f"memory: edit {e.id} ({e.layer}) {_short(e.text)}\n\n{body}" + trace.trailers(
            decision, None, "edit"
        )

    (decision, entry, changed), sha = ws.edit(MEMORY, change, message)
    notes = _redaction_notes(decision)
    if decision.action == "refuse":
        return WriteResult("refused", entry, decision.reason, None, tuple(notes))
    if decision.action == "duplicate":
        return WriteResult(
            "duplicate",
            entry,
            f"the new text duplicates {decision.target.id}: forget one of them instead",
            None,
            tuple(notes),
        )
    if not changed:
        return WriteResult("unchanged", entry, "the entry already has this text", None, tuple(notes))
    if decision.action == "supersede":
        notes.append(
            f"it now reads as an update of {decision.target.id}; "
            f"`giok remember` would have superseded that one"
        )
    return WriteResult("edited", entry, reason or "edited", sha, tuple(notes))


def move_entry(ws: Workspace, entry_id: str, layer: str, *, reason: str | None = None) -> WriteResult:
    """Move entry `entry_id` to `layer` (promote to a deeper layer, demote to a shallower
    one), keeping its id and text. The expiry is recomputed for the new layer, counted from
    today (M0 has none). The reason goes into the commit message. Returns action promoted,
    demoted or unchanged."""
    entry_id = check_id(entry_id)
    layer = check_layer(layer)
    reason = safe_text(reason, "reason") if reason else None

    def change(old: str):
        mf = MemoryFile.parse(old)
        entry = ws._entry_in(mf, entry_id)
        was = entry.layer or "M30"
        if was == layer and entry.headed:
            return old, (entry, was, "unchanged")
        entry.fields.setdefault("id", entry_id)
        mf.move(entry_id, layer)
        entry.expires = ws._expiry(layer, None)
        entry.touch()
        how = "promoted" if LAYERS.index(layer) < LAYERS.index(was) else "demoted"
        return mf.render().decode("utf-8", errors="surrogateescape"), (entry, was, how)

    def message(result) -> str:
        e, was, how = result
        verb = {"promoted": "promote", "demoted": "demote"}[how]
        return (
            f"memory: {verb} {e.id} {was} → {e.layer} {_short(e.text)}\n\n"
            f"Move: {was} → {e.layer}\nExpires: {e.expires or 'never'}\n"
            + (f"Reason: {_one_line(reason)}\n" if reason else "")
        )

    (entry, was, how), sha = ws.edit(MEMORY, change, message)
    reason_text = (
        f"already in {layer}"
        if how == "unchanged"
        else f"{was} → {layer}" + (f": {reason}" if reason else "")
    )
    return WriteResult(how, entry, reason_text, sha)


_CITED_ID = re.compile(ID_RE.pattern.strip("^$").join((r"\b", r"\b")))  # an entry id inside a text


def _redaction_notes(decision: policy.Decision) -> list[str]:
    kinds = decision.redactions
    return (
        [f"redacted {len(kinds)} secret(s) before writing: {', '.join(sorted(set(kinds)))}"] if kinds else []
    )


def _kept_layer(target: MemoryEntry, layer: str) -> str | None:
    """The layer a superseding entry takes from the one it replaces, when that one is deeper."""
    old = target.layer or "M30"
    return old if old in LAYERS and LAYERS.index(old) < LAYERS.index(layer) else None


def _event_date(value: str | dt.date | None) -> dt.date:
    """The date of the event a memory is about: a real day, not in the future; default today."""
    if value is None or value == "":
        return today()
    day = value if isinstance(value, dt.date) else parse_date(str(value))
    if day > today():
        raise InvalidInput(f"event date {day} is in the future (today is {today()})")
    return day
