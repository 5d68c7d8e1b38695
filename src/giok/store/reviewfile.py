"""The review queue's file, `state/review.md`: its grammar, read and written back.

The nightly review raises a contradiction (or a change giok is unsure of) between two memories
once, as one block, and the block stays until a person or an agent resolves it
(giok.lifecycle.review). The file is the truth: readable and editable by hand, committed with
every change.

```
# Review queue

Memories that may disagree, raised once by the nightly distill and kept here until resolved:
`giok review resolve R-001 --newer | --both | --forget ID`.

## R-001 contradiction (open)
- raised: 2026-03-05
- entry: m-aaaaa1 [2026-03-01] We deploy on Fridays
- entry: m-aaaaa2 [2026-03-04] We do not deploy on Fridays
- why: the same claim with the opposite polarity, and no word of a change

## R-002 unsure-change (resolved)
- raised: 2026-03-05
- entry: m-bbbbb1 [2026-03-02] …
- entry: m-bbbbb2 [2026-03-05] …
- why: …
- resolved: 2026-03-06 newer: m-bbbbb2 supersedes m-bbbbb1
```

An item's id (R-001…) never changes and is never reused. Its entries are listed oldest first.
Status: `open`, `resolved` (with the choice) or `closed` (an entry is gone: forgotten,
superseded or expired). Lines giok does not know are kept as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from giok.text.lazy import lazy

TITLE = "# Review queue"
INTRO = (
    "Memories that may disagree, raised once by the nightly distill and kept here until resolved:\n"
    "`giok review resolve R-001 --newer | --both | --forget ID`.\n"
)
STATUSES = ("open", "resolved", "closed")
ITEM_RE = lazy(r"^##\s+(R-(\d{3,}))\s+(\S+)\s+\((open|resolved|closed)\)\s*$")
FIELD_RE = lazy(r"^-\s+([a-z]+):\s?(.*)$")
ENTRY_RE = lazy(r"^(m-[0-9a-z]{6,12})(?:\s+\[(\d{4}-\d{2}-\d{2})\])?\s*(.*)$")


def entry_line(entry_id: str) -> re.Pattern[str]:
    """The pattern of an item's line naming entry `entry_id` (forget removes it with the entry)."""
    return re.compile(rf"^-\s+entry:\s+{re.escape(entry_id)}\b")


@dataclass
class Entry:
    """One memory an item is about: its id, date and text as they were when raised."""

    id: str
    date: str | None
    text: str

    def __str__(self) -> str:
        return f"- entry: {self.id}" + (f" [{self.date}]" if self.date else "") + f" {self.text}"

    def to_dict(self) -> dict:
        return {"id": self.id, "date": self.date, "text": self.text}


@dataclass
class Item:
    """One block: a pair of memories to review, and what became of it."""

    id: str
    kind: str  # contradiction, unsure-change
    status: str = "open"
    raised: str = ""
    entries: list[Entry] = field(default_factory=list)
    why: str = ""
    outcome: str = ""  # the `resolved:` or `closed:` line's value
    other: list[str] = field(default_factory=list)  # lines giok does not know, kept

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.entries]

    @property
    def number(self) -> int:
        return int(self.id[2:])

    def render(self) -> str:
        lines = [f"## {self.id} {self.kind} ({self.status})"]
        if self.raised:
            lines.append(f"- raised: {self.raised}")
        lines += [str(e) for e in self.entries]
        if self.why:
            lines.append(f"- why: {self.why}")
        if self.outcome and self.status in ("resolved", "closed"):
            lines.append(f"- {self.status}: {self.outcome}")
        return "\n".join(lines + self.other) + "\n"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "raised": self.raised,
            "entries": [e.to_dict() for e in self.entries],
            "why": self.why,
            "outcome": self.outcome or None,
        }


@dataclass
class ReviewFile:
    """The whole queue: the text before the first item (kept), then the items in file order."""

    head: str = f"{TITLE}\n\n{INTRO}"
    items: list[Item] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> ReviewFile:
        if not text.strip():
            return cls()
        head: list[str] = []
        items: list[Item] = []
        for line in text.splitlines():
            m = ITEM_RE.match(line.strip())
            if m:
                items.append(Item(id=m.group(1), kind=m.group(3), status=m.group(4)))
            elif items:
                _read_line(items[-1], line)
            else:
                head.append(line)
        return cls("\n".join(head).rstrip("\n") + "\n", items)

    def render(self) -> bytes:
        blocks = [self.head.rstrip("\n") + "\n"] + [item.render() for item in self.items]
        return "\n".join(blocks).encode("utf-8", errors="surrogateescape")

    def get(self, item_id: str) -> Item | None:
        wanted = item_id.strip().upper()
        return next((i for i in self.items if i.id == wanted), None)

    def open(self) -> list[Item]:
        return [i for i in self.items if i.status == "open"]

    def has_pair(self, a: str, b: str) -> bool:
        """Whether an item (of any status) is about these two entries."""
        return any({a, b} <= set(i.ids) for i in self.items)

    def next_id(self) -> str:
        return f"R-{max((i.number for i in self.items), default=0) + 1:03d}"

    def add(self, kind: str, entries: list[Entry], why: str, day: str) -> Item:
        item = Item(self.next_id(), kind, "open", day, entries, why)
        self.items.append(item)
        return item


def _read_line(item: Item, line: str) -> None:
    m = FIELD_RE.match(line.strip())
    key, value = (m.group(1), m.group(2).strip()) if m else ("", "")
    if key == "raised":
        item.raised = value
    elif key == "entry" and (e := ENTRY_RE.match(value)):
        item.entries.append(Entry(e.group(1), e.group(2), e.group(3)))
    elif key == "why":
        item.why = value
    elif key in ("resolved", "closed"):
        item.outcome = value
    elif line.strip():
        item.other.append(line.rstrip())
