"""Merging two machines' versions of a workspace's structured files, as git's merge driver
(`giok merge-driver %O %A %B %P`, registered by giok.store.remote).

Each file is a set of items with ids, merged three ways against the common ancestor; the
rule for every item, whatever the file:

- changed on one side only → that side's version; unchanged on both → as it is;
- deleted on one side (forget, expiry into the archive, a task or heartbeat item done) →
  deleted, even when the other side edited it (a forget is never undone by a merge);
- changed on both sides differently → the later write wins (the time of the last commit on
  each side that touched the item; ours when unknown), the other version stays in git history
  (the merge's other parent) and the merge is reported.

Per file:

- MEMORY.md and memory/archive/*.md: entries by id, field by field (text, layer, dates,
  fields), so a promotion on one machine and an edit on the other both land; `refs` counts
  add up (each machine counts its own references).
- state/decisions.md and state/tasks.md: `## D-NNN` blocks and `T-NNN` lines by id; a new id
  both sides chose for different items is renumbered on their side (reported).
- state/memo.md: `## ` sections by title.
- Diaries (memory/YYYY-MM-DD.md), HEARTBEAT.md and compound/lessons.md are append-only:
  the union of both sides' items (bullets with their continuation lines; lessons by `## `
  block) minus those deleted on either side, timed diary lines in time order.
- state/trace.jsonl: events by id, in time order.
- memory/distilled.txt (distill's ledger): per day the count of judged items a side changed,
  the smaller when both did (an item may be judged again, never skipped); the later watermark.
- state/tombstones.txt (what forget left, giok.store.tombstones): the union; and MEMORY.md and
  memory/archive/*.md lose every entry either side's tombstones name (id and text), whatever
  the three versions hold: a clone whose history predates a forget cannot bring it back.

Every report is a dict {path, kind, id, detail}; the driver appends them as JSON lines to
$GIOK_MERGE_REPORT (giok sync sets it) or .giok/merge-reports.jsonl.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from giok.store import tombstones as tomb
from giok.store.layout import MEMORY
from giok.store.memoryfile import Heading, MemoryEntry, MemoryFile, RawLine
from giok.store.sections import Doc, Section, append_item
from giok.text.lazy import LazyPattern, lazy

MEMORY_RE = lazy(r"^(MEMORY\.md|memory/archive/[^/]+\.md)$")
DIARY_RE = lazy(r"^memory/\d{4}-\d{2}-\d{2}\.md$")
PATTERNS = (  # .gitattributes lines giok registers
    MEMORY,
    "HEARTBEAT.md",
    "memory/*.md",
    "memory/archive/*.md",
    "state/decisions.md",
    "state/tasks.md",
    "state/memo.md",
    "state/trace.jsonl",
    "compound/lessons.md",
    "memory/distilled.txt",
    tomb.TOMBSTONES,
)


def merge_driven(path: str) -> bool:
    """True for a path the .gitattributes lines give to giok's driver."""
    return any(fnmatch.fnmatchcase(path, p) and path.count("/") == p.count("/") for p in PATTERNS)


_DECISION_RE = lazy(r"^##\s+(D-(\d{3,}))\b")
_TASK_RE = lazy(r"^-\s+(?:\[[ x~!]\]\s+)?(T-(\d{3,}))\b")
_TIME_RE = lazy(r"^-\s+(\d{1,2}:\d{2})\b")
_WHOSE = {"ours": "this machine's", "theirs": "the other machine's"}
_GIOK_MARK = "<!-- giok:"  # machine-local marks (distill's refs watermark): ours kept


@dataclass
class Context:
    """What the driver knows beyond the three texts: the path and who wrote an item last."""

    path: str
    later: Callable[[str], str] = lambda key: "ours"  # item key → "ours" | "theirs"
    reports: list[dict] = field(default_factory=list)
    tombstones: tomb.Tombstones | None = None  # forgotten entries, dropped from the merged memory files

    def report(self, kind: str, key: str, detail: str) -> None:
        self.reports.append(
            {"path": self.path, "kind": kind, "id": printable(key), "detail": printable(detail)}
        )


def printable(text: str) -> str:
    """Text for a report: bytes that were not UTF-8 (kept as lone surrogates while merging, and
    written back unchanged) shown as U+FFFD, so a report is always valid UTF-8 to write, print
    and put in a commit message."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def merge_file(path: str, base: bytes, ours: bytes, theirs: bytes, ctx: Context | None = None) -> bytes:
    """The merged bytes of path (a file PATTERNS names); ctx collects the reports."""
    ctx = ctx or Context(path)
    if MEMORY_RE.match(path):
        return bury(merge_memory(base, ours, theirs, ctx), ctx)
    if path == tomb.TOMBSTONES:
        return tomb.merge(base, ours, theirs)
    o, a, b = (x.decode("utf-8", "surrogateescape") for x in (base, ours, theirs))
    if path == "state/decisions.md":
        out = merge_numbered(o, a, b, ctx, _DECISION_RE, "D")
    elif path == "state/tasks.md":
        out = merge_tasks(o, a, b, ctx)
    elif path == "state/memo.md":
        out = merge_sections(o, a, b, ctx)
    elif path == "state/trace.jsonl":
        out = merge_jsonl(o, a, b, ctx)
    elif path == "memory/distilled.txt":
        out = merge_ledger(o, a, b)
    elif path == "compound/lessons.md":
        out = merge_blocks(o, a, b, ctx, _section_blocks)
    else:  # diaries, HEARTBEAT.md, any other memory/*.md
        out = merge_blocks(o, a, b, ctx, _bullet_blocks)
    return out.encode("utf-8", "surrogateescape")


# -- the three-way rule ---------------------------------------------------------------------------
def three_way(key: str, base, ours, theirs, ctx: Context, what: str = "item"):
    """One item's merged value (None: deleted) by the rule in the module docstring."""
    if ours == theirs:
        return ours
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    if ours is None or theirs is None:
        ctx.report(
            "deleted-while-edited",
            key,
            f"{what} {key} was edited on one side and removed on the other: removed",
        )
        return None
    side = ctx.later(key)
    ctx.report(
        "both-edited", key, f"{what} {key} was edited on both machines: {_WHOSE[side]} later write kept"
    )
    return theirs if side == "theirs" else ours


def _order(ours: list, theirs: list) -> list:
    """Keys: ours in order, then theirs' new ones in their order."""
    seen = set(ours)
    return list(ours) + [k for k in theirs if k not in seen]


# -- MEMORY.md ------------------------------------------------------------------------------------
def _attrs(e: MemoryEntry | None) -> dict | None:
    if e is None:
        return None
    return {"text": e.text, "layer": e.layer, "date": e.date, "expires": e.expires, **e.fields}


def merge_memory(base: bytes, ours: bytes, theirs: bytes, ctx: Context) -> bytes:
    o, a, b = (MemoryFile.parse(x) for x in (base, ours, theirs))
    out = MemoryFile.parse(ours)
    old = {e.id: e for e in o.entries()}
    mine = {e.id: e for e in a.entries()}
    other = {e.id: e for e in b.entries()}
    for eid in _order(list(mine), list(other)) + [i for i in old if i not in mine and i not in other]:
        merged = _merge_entry(eid, _attrs(old.get(eid)), _attrs(mine.get(eid)), _attrs(other.get(eid)), ctx)
        if merged == _attrs(mine.get(eid)):
            continue
        if merged is None:
            out.remove(eid)
        elif eid not in mine:
            out.add(_entry(other[eid], merged))
        else:
            _apply(out, eid, merged)
    known = {str(line).strip() for line in (*o.lines, *a.lines)}
    for line in b.lines:  # a hand-written line or heading (not a layer's) only the other side added
        text = str(line).strip()
        hand = isinstance(line, RawLine) or (isinstance(line, Heading) and line.layer is None)
        if hand and text and text not in known and not text.startswith(_GIOK_MARK):
            if out.eols and not out.eols[-1]:  # ours ended without a newline
                out.eols[-1] = out.newline
            out.lines.append(line)
            out.eols.append(out.newline)
            ctx.report("kept-line", text[:40], "a line only the other side added was kept at the end")
    return out.render()


def bury(merged: bytes, ctx: Context) -> bytes:
    """The merged memory file without the entries ctx's tombstones name (id and text); an
    entry carrying a tombstoned id with other text is kept and reported."""
    if not ctx.tombstones:
        return merged
    out, gone, other = tomb.drop(merged, ctx.tombstones)
    for e in gone:
        ctx.report(
            "tombstoned", e.id, f"memory {e.id} was forgotten (state/tombstones.txt): not brought back"
        )
    for e in other:
        ctx.report(
            "tombstoned-id",
            e.id,
            f"memory {e.id} has the id of a forgotten entry but other text: kept "
            "(forget it again if it is that one)",
        )
    return out


def _merge_entry(eid: str, base: dict | None, ours: dict | None, theirs: dict | None, ctx: Context):
    if ours is None or theirs is None or base is None:
        return three_way(eid, base, ours, theirs, ctx, "memory")
    merged: dict = {}
    clash = []
    for key in _order(_order(list(ours), list(theirs)), list(base)):
        o, a, b = base.get(key), ours.get(key), theirs.get(key)
        if key == "refs" and a != b:  # each machine counted its own references
            total = _int(a) + _int(b) - _int(o)
            merged[key] = str(total) if total else None
            continue
        if a != b and a != o and b != o:
            clash.append(key)
        merged[key] = b if a == o else a
    if clash:
        side = ctx.later(eid)
        for key in clash:
            merged[key] = theirs.get(key) if side == "theirs" else ours.get(key)
        ctx.report(
            "both-edited",
            eid,
            f"memory {eid}: {', '.join(clash)} changed on both machines; {_WHOSE[side]} later write kept",
        )
    return {k: v for k, v in merged.items() if v is not None}


def _int(value) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _entry(like: MemoryEntry, attrs: dict) -> MemoryEntry:
    fields = {k: str(v) for k, v in attrs.items() if k not in ("text", "layer", "date", "expires")}
    return MemoryEntry(
        text=attrs["text"],
        layer=attrs.get("layer"),
        date=attrs.get("date"),
        expires=attrs.get("expires"),
        fields=fields,
        indent=like.indent,
        bullet=like.bullet,
    )


def _apply(out: MemoryFile, eid: str, attrs: dict) -> None:
    entry = out.find(eid)
    if entry is None:
        return
    entry.text, entry.date, entry.expires = attrs["text"], attrs.get("date"), attrs.get("expires")
    entry.fields = {k: str(v) for k, v in attrs.items() if k not in ("text", "layer", "date", "expires")}
    entry.touch()
    if attrs.get("layer") and attrs["layer"] != entry.layer:
        out.move(eid, attrs["layer"])


# -- decisions and tasks: numbered ids ------------------------------------------------------------
def _numbered(doc: Doc, pattern: re.Pattern | LazyPattern) -> dict[str, Section]:
    return {m.group(1): s for s in doc.sections if (m := pattern.match(s.heading))}


def merge_numbered(
    base: str, ours: str, theirs: str, ctx: Context, pattern: re.Pattern | LazyPattern, prefix: str
) -> str:
    """`## D-NNN` blocks by id; a new id both sides used for different blocks is renumbered
    on their side, with the references to it in their new blocks."""
    o, a, b = (Doc.parse(x) for x in (base, ours, theirs))
    old, mine, other = (_numbered(d, pattern) for d in (o, a, b))
    other = _renumber(old, mine, other, ctx, prefix)
    out = Doc.parse(ours)
    current = _numbered(out, pattern)
    for key in _order(list(mine), list(other)) + [k for k in old if k not in mine and k not in other]:
        merged = three_way(
            key, _block(old.get(key)), _block(mine.get(key)), _block(other.get(key)), ctx, "decision"
        )
        if merged == _block(mine.get(key)):
            continue
        if merged is None:
            out.sections.remove(current[key])
            continue
        section = Section(merged[0], list(merged[1:]))
        if key in current:
            out.sections[out.sections.index(current[key])] = section
        else:
            if out.sections and out.sections[-1].lines and out.sections[-1].lines[-1].strip():
                out.sections[-1].lines.append("")
            out.sections.append(section)
    return out.render()


def _block(section: Section | None) -> tuple[str, ...] | None:
    if section is None:
        return None
    lines = list(section.lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return (section.heading, *lines, "")


def _renumber(old: dict, mine: dict, other: dict, ctx: Context, prefix: str) -> dict:
    """Their new ids that ours also used for something else get the next free numbers."""
    clashes = [k for k in other if k not in old and k in mine and _block(mine[k]) != _block(other[k])]
    if not clashes:
        return other
    top = max(int(k.split("-")[1]) for k in (*old, *mine, *other))
    width = max(3, len(str(top + len(clashes))))
    renames = {}
    for k in clashes:
        top += 1
        renames[k] = f"{prefix}-{top:0{width}d}"
        ctx.report("renumbered", k, f"{k} was used on both sides: theirs is now {renames[k]}")
    swap = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    out = {}
    for k, section in other.items():
        if k in old:
            out[k] = section
            continue
        new = Section(
            swap.sub(lambda m: renames[m.group(1)], section.heading),
            [swap.sub(lambda m: renames[m.group(1)], x) for x in section.lines],
        )
        out[renames.get(k, k)] = new
    return out


def _tasks(doc: Doc) -> dict[str, tuple[str, str]]:
    """T-id → (section title, line)."""
    return {
        m.group(1): (s.title, line)
        for s in doc.sections
        for line in s.lines
        if (m := _TASK_RE.match(line.strip()))
    }


def merge_tasks(base: str, ours: str, theirs: str, ctx: Context) -> str:
    o, a, b = (Doc.parse(x) for x in (base, ours, theirs))
    old, mine, other = _tasks(o), _tasks(a), _tasks(b)
    clashes = [k for k in other if k not in old and k in mine and mine[k] != other[k]]
    top = max((int(k.split("-")[1]) for k in (*old, *mine, *other)), default=0)
    for k in clashes:
        top += 1
        new = f"T-{top:03d}"
        title, line = other.pop(k)
        other[new] = (title, line.replace(k, new, 1))
        ctx.report("renumbered", k, f"{k} was used on both sides: theirs is now {new}")
    out = Doc.parse(ours)
    for key in _order(list(mine), list(other)) + [k for k in old if k not in mine and k not in other]:
        merged = three_way(key, old.get(key), mine.get(key), other.get(key), ctx, "task")
        if merged == mine.get(key):
            continue
        if key in mine:
            title, line = mine[key]
            section = out.find(title)
            if section is not None and line in section.lines:
                section.lines.remove(line)
        if merged is not None:
            append_item(out.ensure(merged[0]), merged[1])
    return out.render()


def renumbered(path: str, before: bytes, after: bytes) -> list[dict]:
    """Decisions or tasks (path: state/decisions.md or state/tasks.md) this machine had in
    `before` that carry another id in `after`: a merge renumbered them, on this machine or on
    the other (there `theirs` were renumbered, and theirs were this machine's). Matched by
    their text; one report {path, kind "renumbered", id, to, detail} each."""
    items = _task_texts if path == "state/tasks.md" else _decision_texts
    old = items(before.decode("utf-8", "surrogateescape"))
    new = items(after.decode("utf-8", "surrogateescape"))
    where: dict[str, str] = {}
    for key, text in new.items():
        where.setdefault(text, key)
    out = []
    for key, text in old.items():
        moved = where.get(text)
        if new.get(key) == text or moved is None or old.get(moved) == text:
            continue
        what = "task" if path == "state/tasks.md" else "decision"
        out.append(
            {
                "path": path,
                "kind": "renumbered",
                "id": key,
                "to": moved,
                "detail": printable(
                    f"this machine's {what} {key} ({text[:60]}) is now {moved}: the other machine "
                    f"had used {key} too"
                ),
            }
        )
    return out


def _decision_texts(text: str) -> dict[str, str]:
    out = {}
    for section in Doc.parse(text).sections:
        if m := _DECISION_RE.match(section.heading):
            out[m.group(1)] = re.sub(r"^\[[^\]]*\]\s*", "", section.heading[m.end() :].strip())  # no date
    return out


def _task_texts(text: str) -> dict[str, str]:
    out = {}
    for key, (_, line) in _tasks(Doc.parse(text)).items():
        rest = line.strip()
        out[key] = rest[rest.index(key) + len(key) :].strip()
    return out


def merge_sections(base: str, ours: str, theirs: str, ctx: Context) -> str:
    """`## ` sections by title (the state memo)."""
    o, a, b = (Doc.parse(x) for x in (base, ours, theirs))
    old, mine, other = ({s.title: s for s in d.sections} for d in (o, a, b))
    out = Doc.parse(ours)
    for key in _order(list(mine), list(other)) + [k for k in old if k not in mine and k not in other]:
        merged = three_way(
            key, _block(old.get(key)), _block(mine.get(key)), _block(other.get(key)), ctx, "section"
        )
        if merged == _block(mine.get(key)):
            continue
        section = out.find(key)
        if merged is None:
            if section is not None:
                out.sections.remove(section)
        elif section is not None:
            section.lines = list(merged[1:])
        else:
            out.sections.append(Section(merged[0], list(merged[1:])))
    return out.render()


# -- append-only files ----------------------------------------------------------------------------
def _bullet_blocks(text: str) -> list[str]:
    """Top-level bullets with their indented continuation lines; every other line alone."""
    blocks: list[str] = []
    for line in text.splitlines(keepends=True):
        if (
            blocks
            and line[:1] in (" ", "\t")
            and line.strip()
            and blocks[-1].lstrip()[:2] in ("- ", "* ", "+ ")
        ):
            blocks[-1] += line
        else:
            blocks.append(line)
    return blocks


def _section_blocks(text: str) -> list[str]:
    """The preamble, then each `## ` heading with the lines up to the next one."""
    blocks: list[str] = [""]
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            blocks.append(line)
        else:
            blocks[-1] += line
    return [b for b in blocks if b]


def _counted(blocks: list[str]) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    out = []
    for b in blocks:
        key = b.rstrip("\r\n")
        seen[key] = seen.get(key, 0) + 1
        out.append((key, seen[key]))
    return out


def merge_blocks(base: str, ours: str, theirs: str, ctx: Context, split) -> str:
    """The union of both sides' blocks minus the ones either side deleted; their new timed
    bullets go before ours that are later, the rest at the end."""
    o, a, b = (_counted(split(x)) for x in (base, ours, theirs))
    gone = (set(o) - set(a)) | (set(o) - set(b))
    out = [k for k in a if k not in gone]
    mine = set(a)
    for key in b:
        if key in mine or key in gone:
            continue
        when = _TIME_RE.match(key[0])
        pos = len(out)
        if when:
            later = [
                i
                for i, k in enumerate(out)
                if (t := _TIME_RE.match(k[0])) and _minutes(t[1]) > _minutes(when[1])
            ]
            pos = later[0] if later else _after_last_timed(out)
        out.insert(pos, key)
    return "".join(k + "\n" for k, _ in out)


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _after_last_timed(out: list[tuple[str, int]]) -> int:
    timed = [i for i, k in enumerate(out) if _TIME_RE.match(k[0])]
    if not timed:
        return len(out)
    pos = timed[-1] + 1
    while pos < len(out) and out[pos][0][:1] in (" ", "\t"):
        pos += 1
    return pos


def merge_jsonl(base: str, ours: str, theirs: str, ctx: Context) -> str:
    """Events by id (a line without one by its text), both sides' in time order."""

    def rows(text: str) -> dict[Hashable, tuple[str, str]]:
        out = {}
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                event = json.loads(line)
                key = event.get("id") or line
                at = str(event.get("at") or "")
            except (ValueError, AttributeError):
                key, at = line, ""
            out[key] = (at, line)
        return out

    o, a, b = rows(base), rows(ours), rows(theirs)
    kept = []
    for key in _order(list(a), list(b)):
        merged = three_way(str(key), o.get(key), a.get(key), b.get(key), ctx, "event")
        if merged is not None:
            kept.append(merged)
    kept.sort(key=lambda row: row[0])  # stable: equal times keep ours-then-theirs order
    return "".join(line + "\n" for _, line in kept)


_LEDGER_DAY_RE = lazy(r"^(\d{4}-\d{2}-\d{2}) (\d+)$")


def merge_ledger(base: str, ours: str, theirs: str) -> str:
    """Distill's ledger: comments from ours; per day the count a side changed, the smaller
    when both did (the merged diary interleaves both sides' items: an item may be judged
    again, as a duplicate, but never skipped); the later watermark."""

    def read(text: str) -> tuple[dict[str, int], list[str]]:
        days, marks = {}, []
        for line in text.splitlines():
            if m := _LEDGER_DAY_RE.match(line.strip()):
                days[m.group(1)] = int(m.group(2))
            elif line.startswith("refs-read-until: "):
                marks.append(line.strip())
        return days, marks

    (o, _), (a, marks_a), (b, marks_b) = read(base), read(ours), read(theirs)
    days = {}
    for day in {*a, *b}:
        x, y, was = a.get(day), b.get(day), o.get(day)
        days[day] = y if x == was else x if y == was else min(v for v in (x, y) if v is not None)
    head = [line for line in ours.splitlines() if line.startswith("#")]
    marks = marks_a + marks_b
    lines = (
        head
        + ([max(marks)] if marks else [])
        + [f"{d} {n}" for d, n in sorted(days.items()) if n is not None]
    )
    return "\n".join(lines) + "\n"
