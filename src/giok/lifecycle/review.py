"""The review queue: memories that may disagree, raised once and kept until resolved.

The nightly distill's review pass looks at pairs of live entries of one scope that share
words (`settle`), and reads each pair, older then newer (`classify`):

- a **reading**: the same statement with another number and no word of a change ("Phone
  battery is at 30 %" after "… 37 %"; judgement.volatile). A number that changes by nature:
  the newer supersedes the older, silently.
- a **change**: the write policy's rules say the newer replaces the older (a move, a switch, a
  new value with a change word; statements.contradicts), the learned pair head agrees
  (judgement.change_score), and the two fill one slot (`same_slot`: slot likeness at least
  policy.SLOT_FLOOR, as the write policy asks). The newer supersedes the older, as `remember`
  would have done. Of two slots (another fact of the same person), nothing happens.
- a **contradiction**: the same claim with the opposite polarity and no word of a change
  ("We deploy on Fridays" / "We do not deploy on Fridays"; statements.opposed), or the same
  words around another value ("The launch is on Friday" / "The launch is on Monday";
  judgement.swap) in one slot. Raised. With a word of a change ("사무실 3층이에요" / "사무실
  7층으로 옮겼어요") the swap is a change.
- an **unsure change**: the rules see a change the pair head is unsure of or cannot judge (no
  model), or the rules read the pair backwards (the older would replace the newer). Raised.
- two lines that differ only in a label ("#12", "Log 4:") and everything else: both hold.

A raised pair becomes one block of `state/review.md` (giok.store.reviewfile) with a stable id
R-001…, once: raising a pair the queue already holds, whatever its status, does nothing. An
open item whose entries are gone (forgotten, superseded, expired) closes itself.

`resolve(ws, item_id, choice)` settles an item: `newer` (the newer entry supersedes the older),
`both` (keep both; the pair is never raised again) or `forget` with an entry id (through the
forget path). Every write is one transaction of the workspace (lock → write → commit). The
CLI (`giok review`), the MCP tools (`memory_review`, `memory_review_resolve`), the JSON API and
the web page all call `listing` and `resolve`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from giok.errors import InvalidInput, NotFound
from giok.store.clock import today
from giok.store.fsutil import read_bytes
from giok.store.layout import MEMORY, REVIEW
from giok.store.memoryfile import LAYER_DAYS, LAYERS, MemoryEntry, MemoryFile
from giok.store.reviewfile import Entry, Item, ReviewFile
from giok.store.workspace import check_id, one_line
from giok.write import judgement, policy, statements

CHOICES = ("newer", "both", "forget")
RAISED = ("contradiction", "unsure-change")  # the kinds that go to the queue
_WHY = {
    "reading": "the same statement with another number and no word of a change: a new reading",
    "change": "the write policy's rules read the newer as replacing the older",
    "contradiction": "the same claim with the opposite polarity, and no word of a change",
    "swap": "the same words around another value",
    "backwards": "the older would replace the newer by the write policy's rules",
}


# -- reading a pair ----------------------------------------------------------------------------
def classify(old: str, new: str) -> tuple[str, str] | None:
    """What the pair (older text, newer text) is: ("reading" | "change" | "contradiction" |
    "unsure-change", why), or None when they may both be true. The write policy's rules find
    the candidates; the learned judgement, where it answers, refines them: a change needs both
    to agree, the rules alone (no model) only raise it, and the judgement alone raises nothing."""
    if statements.about_another(new, old) or statements.about_another(old, new):
        return None  # "하윤 언니는 서울에 산다" / "하윤은 대전에 산다": two people, both may hold
    if judgement.volatile(new, old):
        return "reading", _WHY["reading"]
    if judgement.labels_only(new, old):
        return None  # two labelled things ("sync (#12)" / "sync (#14)"): both hold
    if statements.opposed(new, old) and not statements.changes(new):
        return "contradiction", _WHY["contradiction"]
    swapped = judgement.swap(new, old)
    if swapped is not None and same_slot(new, old):
        values = f"{swapped.old!r} / {swapped.new!r}"
        if statements.changes(new):
            return "change", f"{_WHY['swap']}: {values}, and the newer says it changed"
        if judgement.measured(new, old, swapped):
            return "reading", _WHY["reading"]  # "battery at 43%" / "battery was at 11%"
        if lasting(old) and lasting(new):
            return "contradiction", f"{_WHY['swap']}: {values}, and no word of a change"
        return None  # two facts of a day ("the parcel with printer ink" / "… with two novels")
    if statements.contradicts(new, old):
        change = judgement.change_score(new, old)
        if change is None:
            return "unsure-change", f"{_WHY['change']}; no learned judgement confirmed it"
        if not same_slot(new, old):
            return None  # the same person, another attribute: the pair head alone cannot tell
        if change.verdict == "change":
            return "change", f"{_WHY['change']}, and the judgement agrees (p = {change.p:.2f})"
        if change.verdict == "unsure":
            return "unsure-change", f"{_WHY['change']}, but the judgement is unsure (p = {change.p:.2f})"
        return None
    if statements.contradicts(old, new):  # e.g. a reversion ("다시 화요일로 돌아갔다") after the change
        return "unsure-change", _WHY["backwards"]
    return None  # the learned judgement alone raises nothing: it weighs the rules' evidence


def lasting(text: str) -> bool:
    """Would the judgement keep the text beyond a day's facts (a layer above M30)? Only such
    facts contradict one another; two of a day's facts in one frame are two events."""
    return judgement.judge(text).layer in ("M90", "M365", "M0")


def same_slot(new: str, old: str) -> bool:
    """Do the two texts fill one slot, as the write policy asks of a change: their likeness in
    the language-neutral view (judgement.slot_likeness) is at least policy.SLOT_FLOOR. The pair
    head gives ~0.85 to any pair of one person with a change word ("하윤이 차를 테슬라로 바꿨다"
    against the tea she drinks), so without this the night would retire an unrelated fact of the
    same person. A change that names the value it leaves fills only the slot of an entry holding
    it (`statements.old_value`, as `policy._slot` reads it). True where the model cannot answer
    (the rules alone raise, never supersede)."""
    named = statements.old_value(new)
    if named and not statements.holds_old_value(old, named):
        return False  # the change names the value it leaves, and `old` does not hold it (as remember asks)
    likeness = judgement.slot_likeness(new, [old])
    return not likeness or likeness[0] >= policy.SLOT_FLOOR


def _order(entry: MemoryEntry) -> tuple[dt.date, int]:
    return entry.date or dt.date.min, entry.line_no


def _entry(e: MemoryEntry) -> Entry:
    return Entry(e.id, e.date.isoformat() if e.date else None, one_line(e.text))


def supersede(mf: MemoryFile, old: MemoryEntry, new: MemoryEntry, day: dt.date) -> None:
    """Mark `old` superseded by `new` in `mf` (the fields `remember` writes). Like `remember`'s
    update, the newer entry takes the older one's layer when that is deeper (its expiry counted
    from `day`), so a new value does not expire before the old one would have."""
    for e in (old, new):
        e.fields.setdefault("id", e.id)  # an adopted line's id is derived from its text: pin it
    old.set("superseded_by", new.id)
    if not new.fields.get("supersedes"):
        new.set("supersedes", old.id)
    deeper, layer = old.layer or "M30", new.layer or "M30"
    if deeper in LAYERS and layer in LAYERS and LAYERS.index(deeper) < LAYERS.index(layer):
        mf.move(new.id, deeper)
        days = LAYER_DAYS[deeper]
        new.expires = day + dt.timedelta(days=days) if days else None
        new.touch()


# -- the nightly pass ----------------------------------------------------------------------------
@dataclass
class Night:
    """What one review pass did: items raised and closed, entries superseded, items open."""

    raised: list[Item] = field(default_factory=list)
    closed: list[Item] = field(default_factory=list)
    superseded: list[dict] = field(default_factory=list)  # {id, by, kind, why}
    open: int = 0

    @property
    def queue_changed(self) -> bool:
        return bool(self.raised or self.closed)

    def to_dict(self) -> dict:
        return {
            "raised": [i.to_dict() for i in self.raised],
            "closed": [i.to_dict() for i in self.closed],
            "superseded": self.superseded,
            "open": self.open,
        }


def settle(
    mf: MemoryFile, queue: ReviewFile, pairs: Iterable[tuple[MemoryEntry, MemoryEntry]], day: dt.date
) -> Night:
    """Read each pair of live entries of `mf` (superseding, in `mf`, the older entry of a reading
    or a change), raise what needs a person into `queue`, close the open items whose entries
    are gone."""
    night = Night()
    ordered = [(a, b) if _order(a) <= _order(b) else (b, a) for a, b in pairs]
    for old, new in sorted(ordered, key=lambda p: (_order(p[0]), _order(p[1]))):
        if old.scope != new.scope or old.superseded or new.superseded:
            continue
        found = classify(old.text, new.text)
        if found is None:
            continue
        kind, why = found
        if kind in RAISED:
            if not queue.has_pair(old.id, new.id):
                night.raised.append(queue.add(kind, [_entry(old), _entry(new)], why, day.isoformat()))
            continue
        supersede(mf, old, new, day)
        night.superseded.append({"id": old.id, "by": new.id, "kind": kind, "why": why})
    night.closed = close_gone(queue, {e.id for e in mf.entries() if not e.superseded}, day)
    night.open = len(queue.open())
    return night


def close_gone(queue: ReviewFile, live: set[str], day: dt.date) -> list[Item]:
    """Close the open items one of whose entries is no longer live; returns them."""
    closed = []
    for item in queue.open():
        gone = [i for i in item.ids if i not in live] or ([] if len(item.ids) >= 2 else ["an entry"])
        if gone:
            item.status = "closed"
            item.outcome = f"{day.isoformat()} {', '.join(gone)} gone (forgotten, superseded or expired)"
            closed.append(item)
    return closed


# -- reading and resolving the queue --------------------------------------------------------------
def _queue(ws) -> ReviewFile:
    return ReviewFile.parse(read_bytes(ws.root / REVIEW).decode("utf-8", errors="surrogateescape"))


def _live(ws) -> set[str]:
    return {e.id for e in ws.memory().entries() if not e.superseded}


def listing(ws, everything: bool = False) -> dict:
    """The open items (every item with `everything`), each with its entries; an open item whose
    entries are gone is shown closed (the next distill or resolve records it)."""
    queue = _queue(ws)
    close_gone(queue, _live(ws), today())
    items = queue.items if everything else queue.open()
    return {
        "workspace": ws.name,
        "path": REVIEW,
        "open": len(queue.open()),
        "total": len(queue.items),
        "items": [i.to_dict() for i in items],
    }


@dataclass
class Resolved:
    """What `resolve` did to an item."""

    item: Item
    choice: str
    commit: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "item": self.item.to_dict(),
            "choice": self.choice,
            "commit": self.commit,
            "notes": self.notes,
        }


def resolve(
    ws, item_id: str, choice: str, *, entry: str | None = None, reason: str | None = None
) -> Resolved:
    """Resolve open item `item_id`: `newer` (the newer entry supersedes the older), `both` (keep
    both; the pair is never raised again) or `forget` (forget `entry`, one of the item's, through
    the forget path, with `reason`). The item is then `resolved` for good."""
    if choice not in CHOICES:
        raise InvalidInput(f"invalid choice {choice!r}: choose one of {', '.join(CHOICES)}")
    if choice == "forget" and not entry:
        raise InvalidInput("--forget needs the id of the entry to forget (one of the item's)")
    with ws.lock():
        item = _open_item(ws, item_id)
        if choice == "forget":
            entry = check_id(entry or "")
            if entry not in item.ids:
                raise InvalidInput(f"{entry} is not an entry of {item.id} ({', '.join(item.ids)})")
        live = _live(ws)
        if len(item.ids) < 2 or any(i not in live for i in item.ids):
            done = _write(ws, item.id, None, "")
            raise NotFound(f"{item.id} is closed: {done.item.outcome}; nothing else was changed")
        notes: list[str] = []
        if choice == "forget":
            notes = _forget(ws, entry or "", reason or f"review {item.id}: the other entry holds")
        done = _write(ws, item.id, choice, entry or "", reason)
        done.notes = notes + done.notes
        return done


def _open_item(ws, item_id: str) -> Item:
    item = _queue(ws).get(item_id or "")
    if item is None:
        raise NotFound(f"no review item {item_id} in {ws.name} (see `giok review --all`)")
    if item.status != "open":
        raise InvalidInput(f"{item.id} is already {item.status}: {item.outcome}")
    return item


def _forget(ws, entry_id: str, reason: str) -> list[str]:
    """Forget through the workspace's forget (the facade also cleans the index and the bus)."""
    forget = getattr(ws, "forget", None)
    if forget is not None:
        return [f"forgot {entry_id}", *forget(entry_id, reason).notes]
    from giok.write import forget as forgetting

    forgetting.forget(ws, entry_id, reason)
    return [f"forgot {entry_id}"]


def _apply(mf: MemoryFile, item: Item, choice: str, entry: str) -> str:
    """Carry out `choice` on the parsed MEMORY.md (newer) and say what was done."""
    if choice == "newer":
        old, new = (mf.find(i) for i in item.ids[:2])
        assert old is not None and new is not None  # live: checked under the same lock
        supersede(mf, old, new, today())
        return f"newer: {new.id} supersedes {old.id}"
    if choice == "both":
        return "both: both kept; this pair is not raised again"
    return f"forget: {entry} forgotten"


def _write(ws, item_id: str, choice: str | None, entry: str, reason: str | None = None) -> Resolved:
    """One transaction: the choice into MEMORY.md (newer) and the item's new status into the
    queue, with every other open item whose entries are gone closed too. choice None: only close."""
    planned: dict = {}

    def message() -> str:
        item = planned["item"]
        head = f"review: {item.status} {item.id}" + (f" {choice}" if choice else "")
        body = f"Review: {item.id}\nOutcome: {item.outcome}\n" + (
            f"Reason: {one_line(reason)}\n" if reason else ""
        )
        return f"{head}\n\n{body}"

    with ws.transaction(message) as tx:
        queue = ReviewFile.parse(tx.read(REVIEW).decode("utf-8", errors="surrogateescape"))
        before = tx.read(MEMORY)
        mf = MemoryFile.parse(before)
        item = queue.get(item_id)
        assert item is not None  # read under the same lock by the caller
        if choice:
            item.status, item.outcome = "resolved", f"{today().isoformat()} {_apply(mf, item, choice, entry)}"
        if choice == "newer":
            tx.write(MEMORY, mf.render(), expected=before)
        live = {e.id for e in mf.entries() if not e.superseded}
        close_gone(queue, live, today())
        planned["item"] = item
        tx.write(REVIEW, queue.render())
    return Resolved(item, choice or "closed", tx.commit_id)
