"""MEMORY.md as a model: layers of entries, parsed tolerantly and rendered back byte for byte.

The grammar (see docs/formats.md):

    ## 🔮 M0 : core memory (permanent)          a heading naming a layer (M0, M365, M90, M30)
    - I am Zeon.                                an entry: bullet, optional [date], text,
    - [2026-02-22] Decided X <!-- expires: 2026-05-21; id: m-7f3a2c; type: decision -->
                                                optional trailing comment of `key: value` fields

Anything else is kept verbatim. A line that looks like an entry but cannot be read (a bad
date, a broken comment) is kept verbatim too and reported in `problems`. Unchanged lines are
rendered from their original text, so rendering an unchanged file returns the same bytes.

Escaping is lossless (docs/formats.md): in the text, `<!` is written `&lt;!` (and a literal
`&lt;!` gains an `amp;`); in a field value, the separators (`;`, `|`, `<`, `>`, `%` before
a code) and line breaks are percent-encoded. Parsing decodes both, so every text and value
reads back exactly as it was given, and a re-rendered entry keeps its derived id.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import re
import threading
from collections.abc import Container
from dataclasses import dataclass, field

from giok.errors import InvalidInput
from giok.store.clock import parse_date
from giok.store.grammar import loose_heading
from giok.text.analysis import has_hangul
from giok.text.lazy import lazy

LAYERS = ("M0", "M365", "M90", "M30")
LAYER_DAYS = {"M0": None, "M365": 365, "M90": 90, "M30": 30}
LAYER_TITLES = {
    "en": {
        "M0": "## 🔮 M0 : core memory (permanent)",
        "M365": "## 🌳 M365 : 1-year memory",
        "M90": "## 📚 M90 : 90-day memory",
        "M30": "## 📝 M30 : 30-day memory",
    },
    "ko": {
        "M0": "## 🔮 M0 : 코어 메모리 (영구)",
        "M365": "## 🌳 M365 : 1년 기억",
        "M90": "## 📚 M90 : 90일 기억",
        "M30": "## 📝 M30 : 30일 기억",
    },
}
# Machine fields, in the order they are rendered after `expires`.
FIELD_ORDER = ("id", "type", "scope", "source", "confidence", "supersedes", "superseded_by", "refs", "status")
ID_RE = lazy(r"^m-[0-9a-f]{6,12}$")
OUTSIDE_LAYERS = "entry outside any layer heading (read as M30)"

_LAYER_RE = lazy(r"(?<![A-Za-z0-9])[Mm]\s?(0|30|90|365)(?![0-9])")
_ENTRY_RE = lazy(r"^(\s*)([-*+])\s+(.*?)\s*$")
_DATE_PREFIX_RE = lazy(r"^\[([^\]]*)\]\s*")
_COMMENT_RE = lazy(r"\s*<!\s*[-–—]*\s*(?P<body>.*?)\s*[-–—]*\s*(?:>|→)\s*$")
_BROKEN_COMMENT_RE = lazy(r"<!\s*[-–—]")
_INNER_COMMENT_RE = lazy(r"<!\s*[-–—]*\s*([^<>→]*?)\s*[-–—]*\s*[>→]")  # linear: no `<` inside
_DATEISH_RE = lazy(r"^\d{4}\s*[-–—‒−]\s*\d{1,2}\s*[-–—‒−]\s*\d{1,2}$")
_KEY_RE = lazy(r"^[a-z_][a-z0-9_]*$")
_SPACES_RE = lazy(r"\s+")
_OPENER_RE = lazy(r"\s*<!")
_FIELD_SEP_RE = lazy(r"\s*[;|]\s*")
_PIECES_RE = lazy(r"[^\n]*\n|[^\n]+$")
# The shape the write path writes: `- [date] text <!-- key: value; … -->` (date and comment
# optional) with no indent, no `<` or `&` in the text, no `[` first, no `<`, `>`, `%`, `;`, `|`
# or `→` in a value. One match reads it (`_parse_plain`); every other line, and one of this
# shape the match cannot settle (a bad date, a value ending in a dash), takes the general path.
_PLAIN_RE = lazy(
    r"- (?:\[([0-9]{4}-[0-9]{2}-[0-9]{2})\] )?([^\s\[<&][^<&\n]*)"
    r"(?: <!-- ([a-z_][a-z0-9_]*: [^;|<>%→\n]*(?:; [a-z_][a-z0-9_]*: [^;|<>%→\n]*)*) -->)?"
)
_COMMENT_END = frozenset("-–—")

# -- escaping ---------------------------------------------------------------------------------
# Text: a character that would break the line becomes an entity; `&` gains one `amp;` only
# where the result would otherwise read as one of these entities (so `&lt;` and `R&D` stay).
_TEXT_CODES = {
    "<!": "lt;!",
    "[": "#91;",
    "\n": "#10;",
    "\r": "#13;",
    "\x0b": "#11;",
    "\x0c": "#12;",
    "\x1c": "#28;",
    "\x1d": "#29;",
    "\x1e": "#30;",
    "\x85": "#133;",
    "\u2028": "#8232;",
    "\u2029": "#8233;",
}
_TEXT_CHARS = {code: char for char, code in _TEXT_CODES.items()}
_TEXT_BODIES = "|".join(re.escape(c) for c in _TEXT_CODES.values())
_TEXT_ENCODE_RE = lazy(r"<!|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]|&((?:amp;)*)(" + _TEXT_BODIES + ")")
_TEXT_DECODE_RE = lazy(r"&((?:amp;)*)(" + _TEXT_BODIES + ")")
# Field values: percent codes for the separators and line breaks; `%` is written `%25` only
# where it would otherwise start one of these codes (so `100% sure` stays).
_VALUE_CODES = {
    ";": "%3B",
    "|": "%7C",
    "<": "%3C",
    ">": "%3E",
    "\x7f": "%7F",
    "\x85": "%C2%85",
    "\u2028": "%E2%80%A8",
    "\u2029": "%E2%80%A9",
    "%": "%25",
    **{chr(n): f"%{n:02X}" for n in range(32)},
}  # control characters, line breaks included
_VALUE_CHARS = {code: char for char, code in _VALUE_CODES.items()}
_VALUE_DECODE_RE = lazy("|".join(re.escape(c) for c in sorted(_VALUE_CHARS, key=len, reverse=True)))
_VALUE_ENCODE_RE = lazy(
    "%(?=" + "|".join(re.escape(c[1:]) for c in _VALUE_CHARS) + ")|[;|<>\x00-\x1f\x7f\x85\u2028\u2029]"
)
# Lone surrogates other than surrogateescape's (invalid bytes read from a file) cannot be written.
_UNWRITABLE_RE = lazy("[\ud800-\udc7f\udd00-\udfff]")


def encode_text(text: str, dated: bool = True) -> str:
    """An entry's text as it is written in the line (see decode_text)."""

    def one(m: re.Match) -> str:
        if m.group(2):
            return "&amp;" + m.group(1) + m.group(2)
        return "&" + _TEXT_CODES[m.group(0)]

    out = _TEXT_ENCODE_RE.sub(one, text)
    dm = None if dated else _DATE_PREFIX_RE.match(out)
    if dm and _DATEISH_RE.match(dm.group(1).strip()):
        out = "&#91;" + out[1:]  # an undated text that starts like a date would be read as one
    return out


def decode_text(written: str) -> str:
    def one(m: re.Match) -> str:
        return "&" + m.group(1)[4:] + m.group(2) if m.group(1) else _TEXT_CHARS[m.group(2)]

    return _TEXT_DECODE_RE.sub(one, written)


def encode_value(value: str) -> str:
    """A field value as it is written in the comment: no `;`/`|` that would start a field,
    no `<`/`>` that would open or close a comment, no line break."""
    return _VALUE_ENCODE_RE.sub(
        lambda m: _VALUE_CODES[m.group(0)], value
    ).strip()  # spaces around are no part of it


def decode_value(written: str) -> str:
    return _VALUE_DECODE_RE.sub(lambda m: _VALUE_CHARS[m.group(0)], written)


def check_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY_RE.match(key) or key == "expires":
        raise InvalidInput(
            f"invalid field name {key!r}: lowercase letters, digits and _ (expires is not a field)"
        )
    return key


def new_id(taken: Container[str] = frozenset()) -> str:
    import secrets  # only a write makes an id

    while True:
        candidate = "m-" + secrets.token_hex(3)
        if candidate not in taken:
            return candidate


def derived_id(text: str, date: dt.date | None) -> str:
    """The id of a hand-written entry that has none: stable while its text and date are."""
    digest = hashlib.sha1(f"{date or ''}|{text}".encode("utf-8", "surrogateescape")).hexdigest()
    return "m-" + digest[:6]


@dataclass
class MemoryEntry:
    text: str
    layer: str | None = None
    date: dt.date | None = None
    expires: dt.date | None = None
    fields: dict[str, str] = field(default_factory=dict)
    raw: str | None = None  # original line text; None once changed
    indent: str = ""
    bullet: str = "-"
    line_no: int = 0  # 1-based, in the file as last parsed
    headed: bool = True  # False: outside any layer heading (read as M30)

    @property
    def id(self) -> str:
        """The `id` field, or an id derived from the text and date when the line has none."""
        return self.fields.get("id") or derived_id(self.text, self.date)

    @property
    def type(self) -> str | None:
        """The `type` field (decision, preference, …), or None."""
        return self.fields.get("type")

    @property
    def scope(self) -> str:
        """The `scope` field, `workspace` when absent."""
        return self.fields.get("scope") or "workspace"

    @property
    def refs(self) -> int:
        """The stored reference count (`refs` field; 0 when absent or not a number)."""
        try:
            return int(self.fields.get("refs", "0"))
        except ValueError:
            return 0

    @property
    def superseded(self) -> bool:
        """Whether a later entry replaced this one (`superseded_by` set or status `superseded`)."""
        return bool(self.fields.get("superseded_by")) or self.fields.get("status") == "superseded"

    def expired(self, today: dt.date) -> bool:
        """Whether the entry's expiry date is before `today`."""
        return self.expires is not None and self.expires < today

    def set(self, key: str, value) -> None:
        """Change a machine field; the line is re-rendered canonically."""
        check_key(key)
        value = None if value is None else str(value).strip()
        if not value:
            self.fields.pop(key, None)
        else:
            self.fields[key] = value
        self.raw = None

    def touch(self) -> None:
        """Mark the line changed: it is rendered canonically instead of kept verbatim."""
        self.raw = None

    def copy(self) -> MemoryEntry:
        """An independent copy (its own fields)."""
        return _copy_entry(self)

    def __str__(self) -> str:
        if self.raw is not None:
            return self.raw
        parts = [f"{self.indent}{self.bullet} "]
        if self.date:
            parts.append(f"[{self.date.isoformat()}] ")
        if not self.text.strip():
            raise InvalidInput("a memory entry needs text")
        text = encode_text(self.text, dated=self.date is not None).strip()
        if _UNWRITABLE_RE.search(text) or any(_UNWRITABLE_RE.search(str(v)) for v in self.fields.values()):
            raise InvalidInput("memory text or field contains a lone surrogate (invalid UTF-8)")
        parts.append(text)
        meta = []
        if self.expires:
            meta.append(f"expires: {self.expires.isoformat()}")
        keys = [k for k in FIELD_ORDER if k in self.fields] + sorted(
            k for k in self.fields if k not in FIELD_ORDER
        )
        meta += [f"{check_key(k)}: {encode_value(str(self.fields[k]))}" for k in keys]
        if meta:
            parts.append(" <!-- " + "; ".join(meta) + " -->")
        return "".join(parts)

    def to_dict(self) -> dict:
        """The entry as JSON-ready data."""
        return {
            "id": self.id,
            "layer": self.layer,
            "date": self.date.isoformat() if self.date else None,
            "text": self.text,
            "expires": self.expires.isoformat() if self.expires else None,
            "type": self.type,
            "scope": self.scope,
            "source": self.fields.get("source"),
            "confidence": _float(self.fields.get("confidence")),
            "supersedes": self.fields.get("supersedes"),
            "superseded_by": self.fields.get("superseded_by"),
            "refs": self.refs,
            "line": self.line_no,
        }


def _float(value):
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


@dataclass
class Heading:
    raw: str
    layer: str | None

    def __str__(self) -> str:
        return self.raw


@dataclass
class RawLine:
    raw: str
    problem: str | None = None

    def __str__(self) -> str:
        return self.raw


Line = MemoryEntry | Heading | RawLine


def parse_entry(raw: str, layer: str | None) -> MemoryEntry | RawLine | None:
    """One line → an entry, a verbatim line with a problem, or None when it is no entry."""
    if raw.startswith("- "):
        plain = _parse_plain(raw, layer)
        if plain is not None:
            return plain
    return _parse_general(raw, layer)


def _parse_plain(raw: str, layer: str | None) -> MemoryEntry | None:
    """The entry on a line of the common shape (`_PLAIN_RE`), read as `_parse_general` reads it
    (tests/test_memoryfile_plain.py compares the two); None when the line is not of that shape."""
    m = _PLAIN_RE.fullmatch(raw)
    if m is None:
        return None
    day, text, comment = m.groups()
    try:
        date = dt.date.fromisoformat(day) if day else None  # ASCII digits: what parse_date does
        expires, fields = None, {}
        if comment:
            if comment[-1] in _COMMENT_END or comment[-1].isspace():
                return None  # the general reading leaves a dash or space before `-->` out
            for part in comment.split(";"):
                key, _, value = part.partition(":")
                if key.lstrip() == "expires":
                    expires = parse_date(value.strip())
                else:
                    fields[key.lstrip()] = value.strip()
    except (InvalidInput, ValueError):
        return None  # a bad date: the general path reports it
    return MemoryEntry(text=text.rstrip(), layer=layer, date=date, expires=expires, fields=fields, raw=raw)


def _parse_general(raw: str, layer: str | None) -> MemoryEntry | RawLine | None:
    """Any line: see `parse_entry`."""
    match = _ENTRY_RE.match(raw)
    if not match:
        return None
    indent, bullet, body = match.groups()
    if not body:
        return None
    date = expires = None
    fields: dict[str, str] = {}
    dm = _DATE_PREFIX_RE.match(body)
    if dm and _DATEISH_RE.match(dm.group(1).strip()):
        try:
            date = parse_date(_SPACES_RE.sub("", dm.group(1)))
        except InvalidInput as exc:
            return RawLine(raw, f"bad date in entry: {exc}")
        body = body[dm.end() :]
    comment = _trailing_comment(body)
    if isinstance(comment, str):
        return RawLine(raw, comment)
    if comment:
        start, expires, fields = comment
        body = body[:start]
    elif _BROKEN_COMMENT_RE.search(body, max(body.rfind(">"), body.rfind("→")) + 1):
        return RawLine(raw, "comment marker is not closed")  # an opener after the last closer
    elif any(not isinstance(_fields(m.group(1)), str) for m in _INNER_COMMENT_RE.finditer(body)):
        return RawLine(raw, "text after the comment's fields")
    text = decode_text(body.strip())
    if not text.strip():
        return RawLine(raw, "entry has no text")
    return MemoryEntry(
        text=text,
        layer=layer,
        date=date,
        expires=expires,
        fields=fields,
        raw=raw,
        indent=indent,
        bullet=bullet,
    )


def _trailing_comment(body: str):
    """The entry's trailing `<!-- key: value; … -->`: (where it starts, expires, fields), None
    when there is none, or a problem. The rightmost `<!` that opens a readable comment wins,
    so a hand-written `<!` in the text does not swallow the fields."""
    starts = [m.start() for m in _OPENER_RE.finditer(body)]
    problem = None
    for start in reversed(starts[-8:]):  # a few candidates: a line of many `<!` stays linear
        cm = _COMMENT_RE.match(body, start)
        if not cm:
            continue
        found = _fields(cm.group("body"))
        if not isinstance(found, str):
            return (start, *found)
        problem = problem or found
    return problem


def _fields(comment: str):
    """(expires, fields) of a comment's body, or the problem that makes it unreadable."""
    expires, fields = None, {}
    for part in _FIELD_SEP_RE.split(comment):
        if not part:
            continue
        key, sep, value = part.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep or not _KEY_RE.match(key):
            return f"unreadable comment field {part!r}"
        if key == "expires":
            try:
                expires = parse_date(value)
            except InvalidInput as exc:
                return f"bad expiry: {exc}"
        else:
            fields[key] = decode_value(value)
    return expires, fields


# Parsed lines by (the line with its end of line, the layer heading above it): a line's parse
# depends on nothing else, so a write that changes one line of MEMORY.md re-reads only that
# line (the rest are copies of what the last parse made). Kept entries are never handed out,
# only copies; headings and raw lines are never changed in place. Cleared when full.
_LINES: dict[tuple[str, str | None], tuple[Line, str, str | None]] = {}
_LINES_MAX = 20_000


class MemoryFile:
    """The parsed MEMORY.md. `lines` holds every line; entries are MemoryEntry objects. Lines
    are put in and taken out through `add`, `insert_line`, `remove` and `move`."""

    def __init__(self, lines: list[Line], eols: list[str], bom: bool, newline: str, lang: str = "en"):
        self.lines = lines
        self.eols = eols
        self.bom = bom
        self.newline = newline
        self.lang = lang
        self._heads: tuple[int, list[int]] | None = None  # (number of lines, where the headings are)

    # -- parse / render -------------------------------------------------------------------
    @classmethod
    def parse(cls, data: bytes | str) -> MemoryFile:
        """Read MEMORY.md (bytes or text); every line is kept, unreadable ones verbatim, so that
        `render()` gives back the same bytes until something changes."""
        text = data.decode("utf-8", errors="surrogateescape") if isinstance(data, bytes) else data
        bom = text.startswith("\ufeff")
        if bom:
            text = text[1:]
        pieces = _PIECES_RE.findall(text)
        lines: list[Line] = []
        eols: list[str] = []
        collecting = gc.isenabled()
        gc.disable()  # thousands of new objects and no cycle among them: no collection meanwhile
        try:
            cls._parse_pieces(pieces, lines, eols)
        finally:
            if collecting:
                gc.enable()
        crlf = sum(1 for e in eols if e == "\r\n")
        newline = "\r\n" if crlf > len(eols) / 2 else "\n"
        lang = "ko" if has_hangul(text) else "en"
        return cls(lines, eols, bom, newline, lang)

    @classmethod
    def _parse_pieces(cls, pieces: list[str], lines: list[Line], eols: list[str]) -> None:
        """Each line with its end of line → its parse and its end of line, in `lines` and `eols`."""
        layer: str | None = None
        for number, piece in enumerate(pieces, 1):
            key = (piece, layer)
            kept = _LINES.get(key)
            if kept is None:
                kept = _LINES[key] = cls._parse_piece(piece, layer)
                if len(_LINES) > _LINES_MAX:
                    _LINES.clear()
            line, eol, layer = kept
            if isinstance(line, MemoryEntry):
                line = _copy_entry(line)
                line.line_no = number
            lines.append(line)
            eols.append(eol)

    @classmethod
    def _parse_piece(cls, piece: str, layer: str | None) -> tuple[Line, str, str | None]:
        """One line with its end of line, under `layer` → (its parse, the end of line, the layer
        of the lines after it)."""
        body = piece.rstrip("\n")
        eol = piece[len(body) :]
        if body.endswith("\r"):
            body, eol = body[:-1], "\r" + eol
        line = cls._parse_line(body, layer)
        if isinstance(line, Heading):
            layer = line.layer
        elif isinstance(line, MemoryEntry) and line.layer is None:
            line.layer, line.headed = "M30", False  # a plain, adopted bullet: M30 everywhere
        return line, eol, layer

    @staticmethod
    def _parse_line(body: str, layer: str | None) -> Line:
        plain = _parse_plain(body, layer) if body.startswith("- ") else None  # `- ` is no heading
        if plain is not None:
            return plain
        hm = loose_heading(body)
        if hm:
            lm = _LAYER_RE.search(hm.title)
            return Heading(body, f"M{lm.group(1)}" if lm else None)
        entry = _parse_general(body, layer)  # the quick reading was tried above
        return entry if entry is not None else RawLine(body)

    def render(self) -> bytes:
        """The file's bytes: untouched lines as read, changed ones in canonical form."""
        out = []
        for line, eol in zip(self.lines, self.eols, strict=True):
            out.append(str(line) + eol)
        text = ("\ufeff" if self.bom else "") + "".join(out)
        return text.encode("utf-8", errors="surrogateescape")

    def copy(self) -> MemoryFile:
        """An independent copy (entries and their fields copied; headings and raw lines are
        never changed in place)."""
        lines: list[Line] = [
            _copy_entry(line) if isinstance(line, MemoryEntry) else line for line in self.lines
        ]
        copied = MemoryFile(lines, list(self.eols), self.bom, self.newline, self.lang)
        copied._heads = None if self._heads is None else (self._heads[0], list(self._heads[1]))
        return copied

    def _number(self, start: int = 0) -> None:
        """Number the entries from line `start` (0-based) on: those above it have not moved."""
        for i in range(start, len(self.lines)):
            line = self.lines[i]
            if isinstance(line, MemoryEntry):
                line.line_no = i + 1

    # -- queries --------------------------------------------------------------------------
    def entries(self, layer: str | None = None) -> list[MemoryEntry]:
        """The entries in file order, only those of `layer` when given."""
        return [
            line
            for line in self.lines
            if isinstance(line, MemoryEntry) and (layer is None or line.layer == layer)
        ]

    def find(self, entry_id: str) -> MemoryEntry | None:
        """The entry with id `entry_id`, or None."""
        for entry in self.entries():
            if entry.id == entry_id:
                return entry
        return None

    def ids(self) -> set[str]:
        """The ids of all entries."""
        return {e.id for e in self.entries()}

    @property
    def unreadable(self) -> list[tuple[int, str, str]]:
        """(line number, problem, the line) for every line kept verbatim for a reason."""
        return [
            (i, line.problem, line.raw)
            for i, line in enumerate(self.lines, 1)
            if isinstance(line, RawLine) and line.problem
        ]

    def unheaded(self) -> list[MemoryEntry]:
        """Entries outside any layer heading (a plain, adopted MEMORY.md): they are M30 entries."""
        return [e for e in self.entries() if not e.headed]

    @property
    def problems(self) -> list[tuple[int, str, str]]:
        """The unreadable lines, and the entries outside any layer heading (read as M30)."""
        found = self.unreadable + [(e.line_no, OUTSIDE_LAYERS, e.raw or str(e)) for e in self.unheaded()]
        return sorted(found)

    # -- changes --------------------------------------------------------------------------
    def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Insert entry at the end of its layer's section, creating the heading if missing."""
        layer = entry.layer or "M30"
        entry.layer, entry.headed = layer, True
        entry.raw = None
        headings = self._headings()
        start = next((i for i in headings if self.lines[i].layer == layer), None)  # type: ignore[union-attr]
        if start is None:
            start = self._add_heading(layer)
            headings = self._headings()
        end = next((i for i in headings if i > start), len(self.lines))
        pos = end
        while pos > start + 1 and isinstance(prev := self.lines[pos - 1], RawLine) and not prev.raw.strip():
            pos -= 1
        self._insert(pos, entry)
        self._number(pos)
        return entry

    def _headings(self) -> list[int]:
        """Where the headings are: kept from the last call and moved along by `_insert`, found
        again (at C speed) when the lines changed otherwise."""
        if self._heads is not None and self._heads[0] == len(self.lines):
            heads = self._heads[1]
            if all(type(self.lines[i]) is Heading for i in heads):
                return heads
        kinds = list(map(type, self.lines))
        heads = []
        at = -1
        while True:
            try:
                at = kinds.index(Heading, at + 1)
            except ValueError:
                self._heads = (len(self.lines), heads)
                return heads
            heads.append(at)

    def insert_line(self, pos: int, line: Line) -> None:
        """Put line before line `pos` (0-based), ending the line above it if it had no end."""
        self._insert(pos, line)
        self._number(pos)

    def _insert(self, pos: int, line: Line) -> None:
        if pos > 0 and self.eols[pos - 1] == "":
            self.eols[pos - 1] = self.newline
        heads = self._heads[1] if self._heads is not None and self._heads[0] == len(self.lines) else None
        self.lines.insert(pos, line)
        self.eols.insert(pos, self.newline)
        self._heads = None
        if heads is not None:
            moved = [i + 1 if i >= pos else i for i in heads]
            self._heads = (len(self.lines), sorted([*moved, pos]) if isinstance(line, Heading) else moved)

    def _add_heading(self, layer: str) -> int:
        """Place a missing layer heading after the headings of deeper layers."""
        order = LAYERS.index(layer)
        pos = len(self.lines)
        for i, line in enumerate(self.lines):
            if isinstance(line, Heading) and line.layer in LAYERS and LAYERS.index(line.layer) > order:
                pos = i
                break
        title = LAYER_TITLES[self.lang][layer]
        if pos > 0 and str(self.lines[pos - 1]).strip():
            self._insert(pos, RawLine(""))
            pos += 1
        self._insert(pos, Heading(title, layer))
        return pos

    def remove(self, entry_id: str) -> MemoryEntry:
        """Take the (first) entry with this id out of the file and return it; KeyError when
        there is none."""
        entry = self.find(entry_id)
        if entry is None:
            raise KeyError(entry_id)
        return self.remove_entry(entry)

    def remove_entry(self, entry: MemoryEntry) -> MemoryEntry:
        """Take this very entry (this line, not the first one with its id) out of the file and
        return it; KeyError when the file does not hold it."""
        for i, line in enumerate(self.lines):
            if line is entry:
                del self.lines[i]
                self._heads = None
                eol = self.eols.pop(i)
                if i == len(self.lines) and i > 0:
                    self.eols[i - 1] = eol if eol else self.eols[i - 1]
                self._number()
                return entry
        raise KeyError(entry.id)

    def move(self, entry_id: str, layer: str) -> MemoryEntry:
        """Move the entry under the heading of `layer` (created when missing) and return it."""
        entry = self.remove(entry_id)
        entry.layer = layer
        return self.add(entry)


# -- the kept parse -----------------------------------------------------------------------------
# The last parse of each MEMORY.md, kept with the exact bytes it was made from: it is served only
# for those bytes (compared whole, which costs far less than a parse), so a file another process
# or a hand edit changed is parsed again, whatever its size, time stamps or inode say. Readers get
# copies; one writer at a time takes the parse itself (`take`) and keeps the one it wrote.
_KEPT: dict[str, tuple[bytes, MemoryFile]] = {}
_KEPT_MAX = 8
_KEPT_LOCK = threading.Lock()


def read_kept(key: str, data: bytes) -> MemoryFile:
    """A copy of the parse of `data` (the bytes of the file `key`), kept for the next call."""
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None and kept[0] == data:
            return kept[1].copy()
    parsed = MemoryFile.parse(data)
    keep(key, data, parsed)
    return parsed.copy()


def take_kept(key: str, data: bytes) -> tuple[MemoryFile, bool]:
    """(the parse of `data`, whether it was kept): the caller owns it, the keep no longer has it,
    so no reader copies it while the caller changes it."""
    with _KEPT_LOCK:
        kept = _KEPT.pop(key, None)
    if kept is not None and kept[0] == data:
        return kept[1], True
    return MemoryFile.parse(data), False


def keep(key: str, data: bytes, parsed: MemoryFile) -> None:
    """Keep `parsed` as the parse of `data`, the bytes of the file `key` (nothing may change
    it afterwards: it is handed out as copies, or to the next `take_kept`)."""
    with _KEPT_LOCK:
        _KEPT.pop(key, None)
        while len(_KEPT) >= _KEPT_MAX:
            _KEPT.pop(next(iter(_KEPT)))  # the oldest: a process rarely reads many workspaces
        _KEPT[key] = (data, parsed)


def forget_kept(key: str) -> None:
    with _KEPT_LOCK:
        _KEPT.pop(key, None)


def splice(data: bytes, lines: int, edits: list[tuple[int, int, bytes]]) -> bytes:
    """`data` (a file of `lines` lines, ending with a line break) with each edit (line number
    from 0, bytes taken away at the start of that line, bytes put there) applied: a change of
    a few lines of a large MEMORY.md without rendering the rest."""
    out: list[bytes | memoryview] = []
    view, done = memoryview(data), 0  # slices of the view: the bytes are copied once, by join
    for line, cut, put in sorted(edits):
        at = _line_start(data, line, lines)
        out += [view[done:at], put]
        done = at + cut
    out.append(view[done:])
    return b"".join(out)


def _line_start(data: bytes, line: int, lines: int) -> int:
    """Where line `line` (from 0) starts, counting line breaks from the nearer end."""
    if line <= lines - line:
        at = 0
        for _ in range(line):
            at = data.index(b"\n", at) + 1
        return at
    at = len(data) - 1  # the break that ends the last line
    for _ in range(lines - line):
        at = data.rindex(b"\n", 0, at)
    return at + 1


def _copy_entry(entry: MemoryEntry) -> MemoryEntry:
    """A copy of entry with its own fields (a plain copy of the attributes: 5,000 entries in a
    few milliseconds, where dataclasses.replace takes tens)."""
    new = object.__new__(MemoryEntry)
    new.__dict__.update(entry.__dict__)
    new.fields = dict(entry.fields)
    return new


def empty(lang: str = "en", title: str | None = None) -> str:
    head = title or ("# MEMORY.md : 장기 기억" if lang == "ko" else "# MEMORY.md : long-term memory")
    body = "\n\n".join(LAYER_TITLES[lang][layer] for layer in LAYERS)
    return f"{head}\n\n{body}\n"
