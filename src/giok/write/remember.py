"""Writing MEMORY.md through the write policy: `remember` adds an entry (or refuses it, finds
it a duplicate, or has it supersede an older one), `edit_entry` rewrites one entry's text.
Each decision goes into the commit message (giok.store.trace), every field is redacted first."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import weakref
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from giok.errors import GiokError, InvalidInput, NotFound
from giok.store import memoryfile, refs, trace
from giok.store.clock import parse_date, today
from giok.store.fsutil import atomic_write, clean_text, read_regular
from giok.store.layout import MEMORY
from giok.store.memoryfile import ID_RE, LAYERS, MemoryEntry, MemoryFile, empty, new_id
from giok.store.workspace import (
    TYPES,
    Workspace,
    WriteResult,
    check_confidence,
    check_id,
    check_layer,
    check_scope,
    one_line,
    short,
)
from giok.text import likeness
from giok.text.lazy import lazy
from giok.write import judgement, policy
from giok.write.notes import safe_text

if TYPE_CHECKING:
    from giok.write import judges


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
    voice: str = "note",
    nearest: Callable[[str], list[str]] | None = None,
    apart: Collection[str] = (),
) -> WriteResult:
    """Decide (giok.write.policy), then add an entry to MEMORY.md and commit, with the decision in
    the commit message. Greetings, questions and guesses are refused (force=True overrides);
    an exact duplicate is not written again; an update or contradiction supersedes the old
    entry; secrets are redacted first. Layer: M30 unless given; an entry that supersedes
    another keeps at least that one's layer unless `layer` or `expires` is given (a note
    says so). `date`: the day of the event (not in the future), shown as the entry's date;
    the expiry still counts from today. Default expiry: today + the layer's days.
    `supersedes`: the id of an entry the new one replaces (marked in the same commit), when
    the policy did not find it an update by itself. `voice`: how the text was said, for the
    judgement ("chat" for what the flush keeps of a conversation). `nearest`: the ids of the
    entries nearest to a text in meaning (the search's; giok.Workspace gives it), shown with
    those sharing its words to a configured LLM panel, which says what the text replaces.
    `apart`: ids of entries the text does not replace whatever the policy reads (the points one
    flush keeps of a talk, all said at once): a change of one is written beside it, and a text
    kept only as such a change is refused as the trivia it is alone."""
    text = clean_text(text, "memory text")
    if source:  # every field is redacted, not only the text: source lands in MEMORY.md, the trace and git
        source = policy.redact(source)[0]
    asked = check_layer(layer) if layer is not None else None
    ws._expiry(asked or "M30", expires)  # a bad expiry is refused before anything is read
    when = _event_date(date)
    if type is not None and type not in TYPES:
        raise InvalidInput(f"invalid type {type!r}: choose one of {', '.join(TYPES)}")
    scope = check_scope(policy.scope_for(scope, user, thread, task))
    conf = check_confidence(confidence)
    # a configured panel's word on what the text replaces, asked before the lock (a model may be
    # slow); not for an import's bulk of items, nor where the caller named the entry itself
    said = None
    if supersedes is None and via != "import":
        said = _judged(
            ws,
            nearest,
            functools.partial(
                policy.decide,
                text=text,
                type=type,
                scope=scope,
                confidence=None if conf is None else float(conf),
                force=force,
                today=today(),
                explicit=asked is not None or type is not None,
                voice=voice,
            ),
        )

    def change(before: bytes):
        mf, index = _parsed(ws, before)
        decide = functools.partial(
            policy.decide,
            mf,
            text,
            type,
            scope,
            None if conf is None else float(conf),
            force,
            today(),
            explicit=asked is not None or type is not None,
            voice=voice,
        )
        try:
            decision = decide(index=index)
        except likeness.Stale:  # a bucket of the index from .giok/ was not giok's: a new index
            index = _new_index(mf)
            decision = decide(index=index)
        find = mf.find if index is None else (lambda i: next(iter(index.with_id(i)), None))
        if said is not None and decision.action in ("write", "supersede"):
            decision = _as_said(decision, said, find(said.replaces) if said.replaces else None)
        if apart and decision.action == "supersede" and decision.target is not None:
            decision = _kept_apart(decision, apart)
        if supersedes:  # the caller's own link: an id that names nothing is an error, not a no-op
            named = find(supersedes)
            if named is None:
                raise NotFound(f"no memory with id {supersedes} in {ws.name}")
            if named.superseded:
                later = named.fields.get("superseded_by") or "a later entry"
                raise InvalidInput(
                    f"{supersedes} is already superseded by {later}: name the entry that holds now"
                )
        if decision.action in ("refuse", "duplicate"):
            if before:
                memoryfile.keep(_key(ws), before, mf)  # unchanged
                if mf in _TO_STORE:  # the index a new process built, for the next one
                    _keep_for_next(ws, before, mf)
            return before, (decision, None, None)
        layer = asked or decision.layer or "M30"  # the judgement's layer unless the caller chose
        entry = MemoryEntry(text=decision.text, layer=layer, date=when, expires=ws._expiry(layer, expires))
        fields = {
            "id": new_id(mf.ids() if index is None else index.ids()),
            "type": decision.type,
            "scope": scope,
            "source": source,
            "confidence": conf,
        }
        touched: dict[int, tuple[MemoryEntry, str | None]] = {}  # changed in place: (entry, its line)

        def mark(old: MemoryEntry | None, entry_id: str) -> None:
            if old is None:
                raise NotFound(f"no memory with id {entry_id} in {ws.name}")
            touched.setdefault(id(old), (old, old.raw))
            old.set("superseded_by", fields["id"])

        if decision.action == "supersede" and decision.target is not None:
            fields["supersedes"] = decision.target.id
            mark(find(decision.target.id), decision.target.id)
            for other in decision.also:  # a change that replaces several older entries
                mark(find(other.id), other.id)
            kept = _kept_layer(decision.target, layer) if asked is None and not expires else None
            if kept:
                entry.layer, entry.expires = kept, ws._expiry(kept, None)
        asked_old = find(supersedes) if supersedes and supersedes != fields.get("supersedes") else None
        if asked_old is not None and not asked_old.superseded:  # the caller says what it replaces
            fields["supersedes"] = asked_old.id
            mark(asked_old, asked_old.id)
        entry.fields = {k: str(v) for k, v in fields.items() if v is not None}
        lines = len(mf.lines)
        mf.add(entry)
        if index is not None:
            try:
                index.add(entry)
            except likeness.Stale:
                _new_index(mf)
        after = _rendered(before, mf, lines, entry, list(touched.values()))
        return after, (decision, entry, (mf, after) if _settled(mf, entry, touched.values()) else None)

    def message(result) -> str:
        decision, e, _ = result
        return f"memory: remember {e.id} ({e.layer}) {short(e.text)}\n\n" + trace.trailers(
            decision, source, via
        )

    (decision, entry, written), sha = ws.edit_bytes(MEMORY, change, message)
    if written is not None:  # committed: the parse of the new bytes is kept for the next write
        memoryfile.keep(_key(ws), written[1], written[0])
        if written[0] in _TO_STORE:  # and its index, for the next process
            _keep_for_next(ws, written[1], written[0])
    decision.target = decision.target.copy() if decision.target else None  # not the kept ones
    decision.also = [e.copy() for e in decision.also]
    entry = entry.copy() if entry is not None else None
    notes = _redaction_notes(decision)
    if entry is not None:
        cited = [i for i in dict.fromkeys(_CITED_ID.findall(entry.text)) if i != entry.id]
        if cited:  # a memory that names another is a use of it (docs/distill.md)
            live = ws.memory().ids()
            refs.record(ws, [i for i in cited if i in live], "cite")
        if decision.action == "supersede":
            notes.append(f"{decision.target.id} is now superseded by {entry.id}")
            if entry.layer != (asked or decision.layer or "M30"):
                notes.append(
                    f"kept layer {entry.layer} of {decision.target.id} (give --layer to choose another)"
                )
        policy_linked = decision.action == "supersede" and decision.target.id == supersedes
        if supersedes and not policy_linked and entry.fields.get("supersedes") == supersedes:
            notes.append(f"{supersedes} is now superseded by {entry.id}, as asked")
            return WriteResult("superseded", entry, f"replaces {supersedes}, as asked", sha, tuple(notes))
        return WriteResult(trace.ACTIONS[decision.action], entry, decision.reason, sha, tuple(notes))
    if decision.action == "duplicate":
        refs.record(ws, [decision.target.id], "duplicate")
    rid, sha = trace.record(ws, decision, source, via)
    notes.append(f"decision recorded as {rid} (`giok trace {rid}`)")
    return WriteResult(trace.ACTIONS[decision.action], decision.target, decision.reason, sha, tuple(notes))


def _kept_apart(decision: policy.Decision, apart: Collection[str]) -> policy.Decision:
    """`decision` without the replacements of entries in `apart` (`remember`'s)."""
    also = [e for e in decision.also if e.id not in apart]
    target = decision.target
    if target is None or target.id not in apart:
        return dataclasses.replace(decision, also=also)
    if decision.trivial:
        why = f"{judgement.TRIVIA} (said beside {target.id}, which it does not replace)"
        return dataclasses.replace(decision, action="refuse", reason=why, target=None, also=[])
    if also:
        return dataclasses.replace(decision, target=also[0], also=also[1:])
    why = f"kept beside {target.id}: both were said in one talk"
    return dataclasses.replace(decision, action="write", reason=why, target=None, also=[])


# -- a judge that reads pairs ---------------------------------------------------------------------
def _judged(ws: Workspace, nearest: Callable[[str], list[str]] | None, decide) -> judges.Verdict | None:
    """With an LLM panel configured (home config `judges`, as the nightly distill's), its word on
    what the text replaces among the live entries it may give a new value (`policy.rivals`, with
    `nearest`'s ids by meaning), as the night asks it of a diary line: a verdict whose `replaces`
    is an id or "" (none). None where no panel is configured, the policy (`decide`, on MEMORY.md
    as it is now) refuses the text or finds it a duplicate, it is not for the workspace's scope,
    MEMORY.md holds no live entry, the panel would keep it only for a day (a fact of the day
    replaces nothing), or no model answered: the write policy decides alone. What goes to the
    model is redacted."""
    from giok.providers import llm

    try:
        if not llm.configured(ws, "judges"):
            return None
        from giok.write import judges

        panel = judges.from_config(ws)
        if not panel.judges:
            return None
        memory = ws.memory()
        first = decide(memory)
        if first.action in ("refuse", "duplicate") or first.scope != "workspace":
            return None
        near = nearest(first.text) if nearest is not None else []
        found = policy.rivals(memory, first.text, "workspace", today(), None, near)
        if not found:
            return None
        item = judges.Item(
            "remember", "diary", first.text, day=today().isoformat(), rivals=judges.shown(found)
        )
        verdict = panel.decide([item], {"workspace": ws.name, "today": today().isoformat()}).verdicts.get(
            "remember"
        )
    except GiokError:  # a broken judges config: the night reports it; a remember goes on without
        return None
    if verdict is None or verdict.replaces is None or verdict.decision not in judges.LASTING:
        return None
    return verdict


def _as_said(decision: policy.Decision, said: judges.Verdict, named: MemoryEntry | None) -> policy.Decision:
    """The policy's decision with the panel's word on what the text replaces. None: a slot's
    new value the policy read ("replaces …") is no change, and a text kept only because it
    changed that entry (trivia on its own) is refused; a near-duplicate stays an update. An id:
    that entry (live, of the decision's scope) is replaced; one gone since leaves the decision as
    it was."""
    if not said.replaces:
        if decision.action != "supersede" or not decision.reason.startswith("replaces "):
            return decision
        if decision.trivial:
            why = f"trivia kept only as a change; the {said.judge} said it replaces nothing ({said.reason})"
            return dataclasses.replace(
                decision, action="refuse", target=None, also=[], reason=why, layer=None
            )
        why = f"{decision.reason}; the {said.judge} said it replaces nothing ({said.reason})"
        return dataclasses.replace(decision, action="write", target=None, also=[], reason=why)
    if named is None or not policy.live(named, decision.scope, today()):
        return decision
    return dataclasses.replace(
        decision, action="supersede", target=named, also=[], reason=said.why_replaced(), trivial=False
    )


# -- the write path at scale (docs/architecture.md) -----------------------------------------------
# The parse of MEMORY.md a remember wrote is kept with its bytes (memoryfile.keep) and with a
# policy index; the next remember takes both when the file still has those bytes, and splices its
# new line (and the superseded ones) into the bytes instead of rendering 5,000 lines.
_INDEXES: weakref.WeakKeyDictionary[MemoryFile, policy.Index] = weakref.WeakKeyDictionary()
# A new process (a CLI call, a hook, a cron routine) has neither: it reads the index the last
# process kept in .giok/ for the exact bytes of MEMORY.md (by their SHA-1), or builds one, and
# keeps it there with its write for the next process. JSON only: .giok/ may be written by others,
# so a file that is not such an index, or of other bytes, is ignored (and replaced), never an error.
INDEX_FILE = "policy-index.json"
_INDEX_VERSION = 2  # 2: Korean stems read a particle only where it agrees with the syllable before it
_INDEX_MAX = 64 << 20  # bytes: a larger file is not one giok wrote
_TO_STORE: weakref.WeakSet[MemoryFile] = weakref.WeakSet()  # parses whose index goes to .giok/


def _key(ws: Workspace) -> str:
    return str(ws.root / MEMORY)


def _parsed(ws: Workspace, before: bytes) -> tuple[MemoryFile, policy.Index | None]:
    """The parse of `before`, owned by this write, and its index: the one kept with the parse,
    else (a new process) the one .giok/ holds for these bytes, else a new one, which the write
    keeps there for the next process (`_keep_for_next`)."""
    if not before:
        return MemoryFile.parse(empty("en")), None
    mf, kept = memoryfile.take_kept(_key(ws), before)
    index = _INDEXES.get(mf)
    if index is None and kept:
        index = _INDEXES[mf] = policy.Index(mf)
    elif index is None:  # a new process: the index of these bytes from .giok/, else a new one
        index = _stored_index(ws, before, mf)
        if index is None and len({e.id for e in mf.entries()}) < len(mf.entries()):
            return mf, None  # an id twice (copied by hand): no index can name it, the full pass
        if index is None:
            index = policy.Index(mf)
        _INDEXES[mf] = index
        _TO_STORE.add(mf)
    return mf, index


def _new_index(mf: MemoryFile) -> policy.Index:
    """A new index of `mf` in place of the one read from .giok/ (found not to be giok's)."""
    index = _INDEXES[mf] = policy.Index(mf)
    return index


def _digest(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()  # a cache key, not a signature


def _stored_index(ws: Workspace, data: bytes, mf: MemoryFile) -> policy.Index | None:
    """The index kept in .giok/ for exactly these bytes of MEMORY.md, or None."""
    raw = read_regular(ws.layout.derived(INDEX_FILE), _INDEX_MAX)
    try:
        stored = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):  # not JSON (UnicodeDecodeError is one), or nested deep
        return None
    if not isinstance(stored, dict) or stored.get("version") != _INDEX_VERSION:
        return None
    if stored.get("digest") != _digest(data):
        return None
    return policy.Index.load(mf, stored.get("index"))


# A process stores the index after its first write to a workspace at once (a CLI call writes
# once); after later writes only at its exit (`_flush`): dumping 5,000 entries' index costs ~13 ms,
# which a long-lived process (the MCP server) would otherwise pay on every remember.
_STORED: set[str] = set()
_PENDING: dict[str, tuple[Workspace, bytes, MemoryFile, int]] = {}


def _keep_for_next(ws: Workspace, data: bytes, mf: MemoryFile) -> None:
    key, index = _key(ws), _INDEXES[mf]
    if key not in _STORED:
        _STORED.add(key)
        _store_index(ws, data, index)
        return
    if not _PENDING:
        atexit.register(_flush)
    _PENDING[key] = (ws, data, mf, len(index.entries))


def _flush() -> None:
    """Store the index of each workspace's last write (at the process's exit), when it still
    indexes just those bytes' entries (a later write that failed after indexing its entry made
    it another's: skipped)."""
    while _PENDING:
        _, (ws, data, mf, count) = _PENDING.popitem()
        index = _INDEXES.get(mf)
        if index is not None and len(index.entries) == count:
            _store_index(ws, data, index)


def _store_index(ws: Workspace, data: bytes, index: policy.Index) -> None:
    """Keep `index` in .giok/ as the index of these bytes of MEMORY.md (when .giok/ exists and
    can be written: a cache, so a failure is no error)."""
    path = ws.layout.derived(INDEX_FILE)
    if not path.parent.is_dir():
        return
    stored = {"version": _INDEX_VERSION, "digest": _digest(data), "index": index.dump()}
    # ASCII JSON: its \\u escapes keep the lone surrogates of a text that is not UTF-8
    with contextlib.suppress(OSError, GiokError):
        atomic_write(path, json.dumps(stored, separators=(",", ":")).encode("ascii"))


def _rendered(
    before: bytes,
    mf: MemoryFile,
    lines: int,
    entry: MemoryEntry,
    touched: list[tuple[MemoryEntry, str | None]],
) -> bytes:
    """The new bytes of MEMORY.md: `before` with the new entry's line put in and the touched
    entries' lines replaced, when that is all that changed (else the whole file rendered)."""
    pos = entry.line_no - 1
    quick = (
        before.endswith(b"\n")
        and len(mf.lines) == lines + 1  # no heading was added
        and pos >= 1
        and all(raw is not None and e.line_no > 1 for e, raw in touched)
    )
    if not quick:
        return mf.render()
    edits = [(pos, 0, _encode(str(entry) + mf.eols[pos]))]
    for e, raw in touched:
        line = e.line_no - 1 if e.line_no - 1 < pos else e.line_no - 2  # its number in `before`
        edits.append((line, len(_encode(raw or "")), _encode(str(e))))
    return memoryfile.splice(before, lines, edits)


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _settled(mf: MemoryFile, entry: MemoryEntry, touched) -> bool:
    """Give the written lines their text, as a parse of the new bytes would; False when a line
    would not read back the same (then the parse is not kept)."""
    written = [entry, *(e for e, _ in touched)]
    for e in written:
        again = MemoryFile._parse_line(str(e), e.layer)
        if not isinstance(again, MemoryEntry) or (
            again.text,
            again.date,
            again.expires,
            again.fields,
            again.indent,
            again.bullet,
        ) != (e.text, e.date, e.expires, e.fields, e.indent, e.bullet):
            return False
    for e in written:
        e.raw = str(e)
    return True


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
        body = f"Edit: {e.id}\n" + (f"Why: {one_line(reason)}\n" if reason else "")
        return f"memory: edit {e.id} ({e.layer}) {short(e.text)}\n\n{body}" + trace.trailers(
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
            f"memory: {verb} {e.id} {was} → {e.layer} {short(e.text)}\n\n"
            f"Move: {was} → {e.layer}\nExpires: {e.expires or 'never'}\n"
            + (f"Reason: {one_line(reason)}\n" if reason else "")
        )

    (entry, was, how), sha = ws.edit(MEMORY, change, message)
    reason_text = (
        f"already in {layer}"
        if how == "unchanged"
        else f"{was} → {layer}" + (f": {reason}" if reason else "")
    )
    return WriteResult(how, entry, reason_text, sha)


_CITED_ID = lazy(ID_RE.pattern.strip("^$").join((r"\b", r"\b")))  # an entry id inside a text


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
