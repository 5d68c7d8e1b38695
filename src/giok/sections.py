"""Markdown files made of `## ` sections (tasks, state memo, decisions, lessons): parsed into
a preamble and sections, edited by section, rendered back with untouched lines intact."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_H2 = re.compile(r"^##\s+(.*?)\s*$")


@dataclass
class Section:
    heading: str                       # the whole heading line
    lines: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        m = _H2.match(self.heading)
        return m.group(1) if m else self.heading

    def body(self) -> str:
        return "\n".join(self.lines).strip("\n")


@dataclass
class Doc:
    preamble: list[str]
    sections: list[Section]
    newline: str = "\n"
    bom: bool = False

    @classmethod
    def parse(cls, text: str) -> "Doc":
        bom = text.startswith("\ufeff")
        text = text[1:] if bom else text
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = text.replace("\r\n", "\n").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        preamble: list[str] = []
        sections: list[Section] = []
        for line in lines:
            if _H2.match(line):
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
