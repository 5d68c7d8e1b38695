"""The markdown grammar of the workspace files, in one place: headings, list items, the
diary's times. MEMORY.md (giok.store.memoryfile), the `## ` section files
(giok.store.sections), the diaries and search's chunker (giok.retrieval.chunks) all read
headings through here, so they agree on what a heading is.

Two readings of an ATX heading, on purpose:
- `heading` is CommonMark's: `#`..`######`, then a space, then the title (closing `#`s
  dropped). The notes files, the diaries and the chunker use it.
- `loose_heading` is MEMORY.md's, forgiving what people type by hand: up to three spaces
  before the `#`s, no space needed after them (`#M30`), the title kept as written. A line it
  reads as a heading is never read as an entry.
"""

from __future__ import annotations

from typing import NamedTuple

from giok.text.lazy import lazy

HEADING_RE = lazy(r"^(#{1,6})\s+(.*?)\s*#*\s*$")  # level, title (closing #s dropped)
LOOSE_HEADING_RE = lazy(r"^\s{0,3}(#{1,6})\s*(.*?)\s*$")
SECTION_RE = lazy(r"^##\s+(.*?)\s*$")  # a `## ` section heading: its title as written
BULLET_RE = lazy(r"^\s*[-*+]\s+")  # a list item's marker, indent included
TIME_RE = lazy(r"^(\d{1,2}:\d{2})(?::\d{2})?\s+")  # a diary line's HH:MM[:SS]


class Heading(NamedTuple):
    level: int
    title: str


def heading(line: str) -> Heading | None:
    """The heading on line (CommonMark ATX), or None."""
    m = HEADING_RE.match(line)
    return Heading(len(m.group(1)), m.group(2)) if m else None


def loose_heading(line: str) -> Heading | None:
    """The heading on a MEMORY.md line (the forgiving reading above), or None."""
    m = LOOSE_HEADING_RE.match(line)
    return Heading(len(m.group(1)), m.group(2)) if m and line.lstrip().startswith("#") else None


def section_title(line: str) -> str | None:
    """The title of a `## ` section heading, or None when line is not one."""
    m = SECTION_RE.match(line)
    return m.group(1) if m else None
