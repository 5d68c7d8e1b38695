"""Markdown files made of `## ` sections (tasks, state memo, decisions, lessons): parsed into
a preamble and sections, edited by section, rendered back with untouched lines intact."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from giok.store.grammar import BULLET_RE, HEADING_RE, TIME_RE, heading, section_title
from giok.text.lazy import lazy

__all__ = ["HEADING_RE", "TIME_RE", "DiaryItem", "Doc", "Section", "append_item", "parse_diary"]


@dataclass
class Section:
    heading: str  # the whole heading line
    lines: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        title = section_title(self.heading)
        return self.heading if title is None else title

    def body(self) -> str:
        return "\n".join(self.lines).strip("\n")


@dataclass
class Doc:
    preamble: list[str]
    sections: list[Section]
    newline: str = "\n"
    bom: bool = False

    @classmethod
    def parse(cls, text: str) -> Doc:
        bom = text.startswith("\ufeff")
        text = text[1:] if bom else text
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = text.replace("\r\n", "\n").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        preamble: list[str] = []
        sections: list[Section] = []
        for line in lines:
            if section_title(line) is not None:
                sections.append(Section(line))
            elif sections:
                sections[-1].lines.append(line)
            else:
                preamble.append(line)
        return cls(preamble, sections, newline, bom)

    def render(self) -> str:
        out = list(self.preamble)
        for section in self.sections:
            out.append(section.heading)
            out.extend(section.lines)
        text = self.newline.join(out) + self.newline
        return ("\ufeff" if self.bom else "") + text

    def find(self, *titles: str) -> Section | None:
        wanted = {t.strip().lower() for t in titles}
        for section in self.sections:
            if section.title.strip().lower() in wanted:
                return section
        return None

    def ensure(self, title: str) -> Section:
        section = self.find(title)
        if section is None:
            if self.sections and self.sections[-1].lines and self.sections[-1].lines[-1].strip():
                self.sections[-1].lines.append("")
            elif not self.sections and self.preamble and self.preamble[-1].strip():
                self.preamble.append("")
            section = Section(f"## {title}")
            self.sections.append(section)
        return section


def append_item(section: Section, line: str) -> None:
    """Add a line after the section's last non-blank line, keeping one blank line after it."""
    pos = len(section.lines)
    while pos > 0 and not section.lines[pos - 1].strip():
        pos -= 1
    section.lines.insert(pos, line)
    if pos + 1 >= len(section.lines):
        section.lines.append("")


# -- diaries ----------------------------------------------------------------------------------
# A day's notes, as giok writes them (`- HH:MM text`) or as a person or OpenClaw writes them
# (`## topic` headings, plain bullets, wrapped or nested lines, paragraphs). Search's chunker
# and nightly distillation both read a diary through parse_diary, so they see the same items.
_DIARY_BULLET_RE = BULLET_RE
_DIARY_NOISE_RE = lazy(r"^(?:([-*_])(?:\s*\1){2,}|<!--.*-->)$")  # rules, comment-only lines
_CHECKBOX_RE = lazy(r"^\[[ xX~!-]\]\s*")


@dataclass
class DiaryItem:
    start: int  # first line, 1-based
    end: int  # last line (continuation lines included)
    lines: list[str]  # the raw lines
    heading: str = ""  # the nearest `##`-or-deeper heading above it ("" if none)

    @property
    def body(self) -> str:
        """The lines stripped, the first one without its bullet (what search returns)."""
        return _DIARY_BULLET_RE.sub("", "\n".join(ln.strip() for ln in self.lines), count=1)

    @property
    def time(self) -> str | None:
        m = TIME_RE.match(self.body) or TIME_RE.match(self.heading + " ")
        return m.group(1) if m else None

    @property
    def text(self) -> str:
        """One line: no bullet, time or checkbox; wrapped lines joined by a space, nested
        bullets by "; " (what distillation judges and keeps)."""
        first, *rest = self.body.split("\n")
        out = _CHECKBOX_RE.sub("", TIME_RE.sub("", first, count=1))
        for line in rest:
            nested = _DIARY_BULLET_RE.match(line)
            out += ("; " if nested else " ") + _CHECKBOX_RE.sub("", line[nested.end() :] if nested else line)
        return " ".join(out.split())


def parse_diary(text: str) -> list[DiaryItem]:
    """The items of a diary day, in file order: each top-level bullet with its indented
    continuation lines, and each paragraph. Headings, blank lines, rules (`---`) and
    comment-only lines separate items; an item with no words is no item."""
    items: list[DiaryItem] = []
    block: list[str] = []
    start, topic, block_heading = 0, "", ""

    def flush():
        if block:
            item = DiaryItem(start, start + len(block) - 1, list(block), block_heading)
            if re.search(r"\w", item.text):
                items.append(item)
            block.clear()

    for no, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        hm = heading(stripped)
        if not stripped or hm or _DIARY_NOISE_RE.match(stripped):
            flush()
            if hm:
                topic = hm.title if hm.level > 1 else ""
            continue
        top_bullet = bool(_DIARY_BULLET_RE.match(line)) and not line.startswith((" ", "\t"))
        continues = (
            block
            and not top_bullet
            and (line.startswith((" ", "\t")) or not _DIARY_BULLET_RE.match(block[0]))
        )
        if not continues:
            flush()
            start, block_heading = no, topic
        block.append(line)
    flush()
    return items
