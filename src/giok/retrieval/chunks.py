"""Cutting workspace files into search chunks, following each file's structure:
one MEMORY.md entry, one diary line or paragraph, one lesson section, one decision,
headed sections of other markdown files — with a size cap that splits over-long text.

A chunk's `text` is what a search returns; its `embed_text` is what gets embedded: the text
with a little context (the section heading, the diary's date and the previous diary line),
so that "what did she say after the trip" can meet the turn that answers it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from giok.store.grammar import TIME_RE, heading
from giok.store.layout import ARCHIVE_DIR, DECISIONS, LESSONS, MEMORY, diary_day
from giok.store.memoryfile import MemoryFile
from giok.store.sections import parse_diary
from giok.store.workspace import DECISION_RE
from giok.text.lazy import lazy

MAX_CHARS = 1200
PRIORITY = {
    "M0": 4,
    "M365": 3,
    "M90": 2,
    "M30": 1,
    "decision": 2,
    "lesson": 2,
    "archive": 0,
    "diary": 0,
    "file": 0,
    "system": 0,
}
# Diary lines giok writes about itself (distill reports, flush markers, cross-view notes,
# routine results) start, after the time, with OWN_MARK; lines written before the mark existed
# are recognised by their fixed shapes. They are chunks of kind (layer) "system": never a
# memory — out of recall, default search and distillation (docs/search.md, docs/distill.md).
OWN_MARK = "[giok]"
_OWN_RE = lazy(
    r"^(?:[-*+]\s+)?(?:\d{1,2}:\d{2}(?::\d{2})?\s+)?"
    r"(?:\[giok\]\s|nightly-distill: \d+ day\(s\)|context-flush: (?:soft|hard), session |"
    r"routine [\w.-]+ \(giok [^)]*\): |\[단톡방 크로스뷰\] )"
)


# The Claude Code Stop hook's turn log ("Claude Code 1a2b3c4d: asked … → …", giok.edges.hooks): a
# record of the conversation, searchable, but never distilled into memory (the PreCompact flush
# and the agent's own remembers keep what mattered).
_TURN_RE = lazy(r"^(?:[-*+]\s+)?(?:\d{1,2}:\d{2}(?::\d{2})?\s+)?Claude Code [\w-]{1,12}: (?:asked |→ )")


def is_turn_log(text: str) -> bool:
    """Whether a diary line is the Stop hook's log of one turn."""
    return bool(_TURN_RE.match(text.lstrip()))


def is_own_line(text: str) -> bool:
    """Whether a diary line (with or without its bullet and HH:MM) is one giok wrote about itself."""
    return bool(_OWN_RE.match(text.lstrip()))


_DATE_IN_HEADING = lazy(r"\[(\d{4}\s*[-–—]\s*\d{1,2}\s*[-–—]\s*\d{1,2})\]")
_SUPERSEDES_RE = lazy(r"^-\s+(?:supersedes|대체)\s*:\s*(D-\d{3,})", re.M)


@dataclass
class Chunk:
    path: str
    start_line: int
    end_line: int
    text: str
    layer: str = "file"
    source: str | None = None
    date: str | None = None
    expires: str | None = None
    scope: str = "workspace"
    superseded: bool = False
    category: str | None = None
    embed_text: str = ""

    @property
    def key(self) -> str:
        return self.source or f"{self.path}:{self.start_line}"

    @property
    def priority(self) -> int:
        return PRIORITY.get(self.layer, 0)


def chunk_file(rel: str, text: str) -> list[Chunk]:
    """The chunks of one workspace file (rel is its path inside the workspace, with '/')."""
    if rel == MEMORY:
        chunks = _memory_chunks(rel, text, None)
    elif rel.startswith("memory/archive/") and rel.endswith(".md"):
        chunks = _memory_chunks(rel, text, "archive")
    elif day := diary_day(rel):
        chunks = _diary_chunks(rel, text, day)
    elif rel == LESSONS:
        chunks = _section_chunks(rel, text, "lesson", level=2)
    elif rel == DECISIONS:
        chunks = _decision_chunks(rel, text)
    else:
        chunks = _section_chunks(rel, text, "file", level=3)
    out = []
    for chunk in chunks:
        out.extend(_cap(chunk))
    for chunk in out:
        chunk.embed_text = chunk.embed_text or chunk.text
    return out


def _memory_chunks(rel: str, text: str, layer: str | None) -> list[Chunk]:
    out = []
    for e in MemoryFile.parse(text).entries():
        out.append(
            Chunk(
                rel,
                e.line_no,
                e.line_no,
                e.text,
                layer=layer or e.layer or "M30",
                source=e.id,
                date=e.date.isoformat() if e.date else None,
                expires=e.expires.isoformat() if e.expires else None,
                scope=e.scope,
                superseded=e.superseded,
                category=e.type,
            )
        )
    return out


def _diary_chunks(rel: str, text: str, day: str) -> list[Chunk]:
    """One chunk per diary item (a bullet line with its indented continuation lines, or a
    paragraph; giok.store.sections.parse_diary, the reading distillation uses too)."""
    out, previous = [], ""
    for item in parse_diary(text):
        chunk = Chunk(rel, item.start, item.end, item.body, layer="diary", date=day)
        body = TIME_RE.sub("", chunk.text)
        if is_own_line(chunk.text):
            chunk.layer = "system"  # giok's own line: not the context of the next one either
            out.append(chunk)
            continue
        topic = f"{item.heading}: " if item.heading else ""
        chunk.embed_text = f"{topic}{body}" + (f" (after: {previous[:200]})" if previous else "")
        previous = body
        out.append(chunk)
    return out


def _sections(text: str, level: int) -> list[tuple[int, int, str, list[str]]]:
    """(start line, end line, heading, body lines) for each heading of depth ≤ level; text
    before the first heading is a section with an empty heading."""
    lines = text.split("\n")
    out: list[tuple[int, int, str, list[str]]] = []
    start, head, body = 1, "", list[str]()
    for no, line in enumerate(lines, 1):
        m = heading(line)
        if m and m.level <= level:
            out.append((start, no - 1, head, body))
            start, head, body = no, line, []
        else:
            body.append(line)
    out.append((start, len(lines), head, body))
    return [s for s in out if s[2] or any(ln.strip() for ln in s[3])]


def _section_chunks(rel: str, text: str, layer: str, level: int) -> list[Chunk]:
    out = []
    for start, end, head, body in _sections(text, level):
        content = "\n".join(body).strip()
        if not content:
            continue  # a heading with nothing under it says nothing

        title = h.title if head and (h := heading(head)) else ""
        dm = _DATE_IN_HEADING.search(title)
        full = "\n".join(x for x in (title, content) if x)
        end = _last_text_line(body, start + (1 if head else 0), end)
        out.append(
            Chunk(
                rel,
                start,
                max(start, end),
                full,
                layer=layer,
                date=re.sub(r"[–—\s]", lambda m: "-" if m.group() != " " else "", dm.group(1))
                if dm
                else None,
            )
        )
    return out


def _last_text_line(body: list[str], first: int, end: int) -> int:
    for offset in range(len(body) - 1, -1, -1):
        if body[offset].strip():
            return first + offset
    return end


def _decision_chunks(rel: str, text: str) -> list[Chunk]:
    chunks = _section_chunks(rel, text, "decision", level=2)
    superseded = set(_SUPERSEDES_RE.findall(text))
    for chunk in chunks:
        m = DECISION_RE.match("## " + chunk.text)
        if m:
            chunk.source = m.group(1)
            chunk.superseded = chunk.source in superseded
    return [c for c in chunks if c.source]


def successors(root: Path) -> dict[str, str]:
    """Entry id → the id of the entry that replaced it, read from a workspace's files: the
    `superseded_by` of MEMORY.md's and the archive's entries, and each decision's `supersedes`
    line (the supersede chain search answers questions about the past from)."""
    out: dict[str, str] = {}
    for path in [root / MEMORY, *sorted((root / ARCHIVE_DIR).glob("*.md"))]:
        text = _read(path)
        for e in MemoryFile.parse(text).entries() if text else ():
            if e.fields.get("superseded_by"):
                out[e.id] = str(e.fields["superseded_by"])
    decisions = _read(root / DECISIONS)
    for _start, _end, head, body in _sections(decisions, 2) if decisions else ():
        if m := DECISION_RE.match(head):
            out.update((old, m.group(1)) for old in _SUPERSEDES_RE.findall("\n".join(body)))
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return ""


def _cap(chunk: Chunk) -> list[Chunk]:
    """Split a chunk over MAX_CHARS at line boundaries (and a single huge line by characters)."""
    if len(chunk.text) <= MAX_CHARS:
        return [chunk]
    pieces: list[tuple[int, str]] = []
    for offset, line in enumerate(chunk.text.split("\n")):
        for i in range(0, max(len(line), 1), MAX_CHARS):
            pieces.append((offset, line[i : i + MAX_CHARS]))
    out: list[Chunk] = []
    current: list[str] = []
    first = 0
    for offset, piece in pieces:
        if current and sum(len(p) + 1 for p in current) + len(piece) > MAX_CHARS:
            out.append(_part(chunk, first, offset, current, len(out)))
            current, first = [], offset
        current.append(piece)
    out.append(_part(chunk, first, pieces[-1][0], current, len(out)))
    return out


def _part(chunk: Chunk, first: int, last: int, lines: list[str], n: int) -> Chunk:
    start = min(chunk.start_line + first, chunk.end_line)
    part = Chunk(
        **{
            **chunk.__dict__,
            "start_line": start,
            "end_line": max(start, min(chunk.start_line + last, chunk.end_line)),
            "text": "\n".join(lines),
            "embed_text": "",
        }
    )
    if chunk.source and n:
        part.source = chunk.source  # every part answers for the same entry
    return part
