"""Readers for the memory people already have: each turns a file or folder in another tool's
format into `Item`s that giok.edges.porting writes through the write policy. Readers only read;
nothing here writes to a workspace. `export_items` is a giok workspace read as the items of an
export: `giok export` writes them (giok.edges.porting) and a workspace folder is imported from them.

    giok          a `giok export` (jsonl or tar), or a giok workspace folder
    openclaw      an OpenClaw workspace: MEMORY.md (curated) + memory/YYYY-MM-DD.md (daily notes)
    mem0          a mem0 `get_all` / export JSON: [{id, memory, user_id, agent_id, run_id, metadata,
                  categories, created_at, updated_at}], bare or under "results" / "memories"
    claude-code   Claude Code's auto memory (~/.claude/projects/<p>/memory/): MEMORY.md index +
                  topic files with frontmatter (name, description, type: user|feedback|project|reference)
    basic-memory  basic-memory notes: frontmatter, `- [category] text #tag (context)` observations,
                  `- relation_type [[Target]]` relations
    markdown      a plain folder of markdown notes: bullets and paragraphs; YYYY-MM-DD.md are diary days
"""

from __future__ import annotations

import json
import re
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from giok.errors import InvalidInput
from giok.store.clock import now
from giok.store.layout import LESSONS, MEMORY, Layout
from giok.store.sections import Doc
from giok.text.lazy import lazy
from giok.workspace import Workspace

EXPORT_VERSION = 1  # the "version" of a `giok export` header line
FORMATS = ("giok", "openclaw", "mem0", "claude-code", "basic-memory", "markdown")
TOOL_MEMORY = "MEMORY.md"  # OpenClaw's curated file, Claude Code's index: their names, not giok's layout
CURATED_LAYER = "M365"  # what another tool keeps as long-term memory stays a year, not 30 days
_DAY_FILE = lazy(r"^(\d{4}-\d{2}-\d{2})(?:[-_ ].*)?\.md$")
_TIME = lazy(r"^(?:\*\*)?\[?([01]?\d|2[0-3]):([0-5]\d)(?![\d:])\]?(?:\*\*)?\s*(?:[-–—:]\s*)?")
_BULLET = lazy(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
_CHECKBOX = lazy(r"^\[([ xX])\]\s+")
_SUBJECTLESS = lazy(r"^(Is|Are|Am|Was|Were|Has|Have|Had|Does|Did|Can|Will|Would|Should|May)\b")
_HEADING = lazy(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = lazy(r"^\s*(```|~~~)")
_LINK_ONLY = lazy(r"^\[([^\]]+)\]\(([^)]+)\)\s*(?:[-–—:]\s*(.*))?$")
_OBSERVATION = lazy(r"^\s*[-*]\s+\[([^\]\[]+)\]\s+(.+?)\s*$")
_RELATION = lazy(r"^\s*[-*]\s+([A-Za-z_][\w-]*)\s+\[\[([^\]]+)\]\]\s*(?:\((.*)\))?\s*$")
_TAG = lazy(r"(?<![\w&])#([\w/-]+)")
_SCOPE_PART = lazy(r"[^\w@.+-]")
_TYPES = {
    "decision": "decision",
    "decisions": "decision",
    "preference": "preference",
    "preferences": "preference",
    "lesson": "lesson",
    "lessons": "lesson",
    "learning": "lesson",
    "fact": "fact",
    "facts": "fact",
    "workflow": "workflow",
    "process": "workflow",
    "technique": "workflow",
    "episode": "episode",
    "event": "episode",
}


@dataclass
class Item:
    """One thing to import. kind: entry, diary, decision, task, lesson, state, heartbeat."""

    kind: str
    text: str
    origin: str  # where it came from: file:line, or the source's id
    fields: dict = field(default_factory=dict)  # entry: layer, type, scope, date, expires, source, …

    def to_dict(self) -> dict:
        return {"kind": self.kind, "text": self.text, "origin": self.origin, **self.fields}


# -- choosing a reader --------------------------------------------------------------------------
def detect(path: Path) -> str:
    """The format of a file or folder, by what it holds."""
    if path.is_file():
        name = path.name.lower()
        if name.endswith((".jsonl", ".tar", ".tar.gz", ".tgz")):
            return "giok"
        if name.endswith(".json"):
            return "mem0"
        return "markdown"
    if (path / ".giok").is_dir() or (
        (path / MEMORY).is_file()
        and (path / ".git").exists()
        and re.search(r"^##.*\bM(0|30|90|365)\b", _read(path / MEMORY), re.MULTILINE)
    ):
        return "giok"
    notes = sorted(path.rglob("*.md"))
    if (path / TOOL_MEMORY).is_file() and any(
        _frontmatter(_read(p))[0].get("type") for p in notes if p.parent == path and p.name != TOOL_MEMORY
    ):
        return "claude-code"
    if (path / TOOL_MEMORY).is_file() and (
        (path / "memory").is_dir() or (path / "SOUL.md").is_file() or (path / "AGENTS.md").is_file()
    ):
        return "openclaw"
    if any("## Observations" in _read(p) or _frontmatter(_read(p))[0].get("permalink") for p in notes[:200]):
        return "basic-memory"
    return "markdown"


def read(path: Path | str, fmt: str | None = None) -> tuple[str, list[Item]]:
    """(format, items) of a file or folder; fmt None detects it."""
    path = Path(path).expanduser()
    if not path.exists():
        raise InvalidInput(f"nothing to import at {path}: no such file or folder")
    fmt = fmt or detect(path)
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown import format {fmt!r}: choose one of {', '.join(FORMATS)}")
    reader = {
        "giok": read_giok,
        "openclaw": read_openclaw,
        "mem0": read_mem0,
        "claude-code": read_claude_code,
        "basic-memory": read_basic_memory,
        "markdown": read_markdown,
    }[fmt]
    return fmt, reader(path)


# -- giok ---------------------------------------------------------------------------------------
def read_giok(path: Path) -> list[Item]:
    """A `giok export`: jsonl lines, a tar of a workspace, or a workspace folder."""
    if path.is_dir():
        return _from_workspace(path)
    if path.name.lower().endswith((".tar", ".tar.gz", ".tgz")):
        with tempfile.TemporaryDirectory(prefix="giok-import-") as tmp:
            try:
                with tarfile.open(path) as tar:
                    tar.extractall(tmp, filter="data")
            except (tarfile.TarError, OSError) as exc:
                raise InvalidInput(f"{path} is not a readable tar archive: {exc}") from None
            inner = [p for p in Path(tmp).iterdir() if (p / MEMORY).is_file()]
            return _from_workspace(inner[0] if len(inner) == 1 else Path(tmp))
    items = []
    for n, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path}:{n} is not JSON: {exc.msg}") from None
        if not isinstance(data, dict) or "kind" not in data:
            raise InvalidInput(f'{path}:{n} has no "kind": not a giok export line')
        if data["kind"] == "giok-export":
            continue
        kind = data.pop("kind")
        text = data.pop("text", None) or data.get("title") or ""
        items.append(Item(kind, text, f"{path.name}:{n}", data))
    return items


def _from_workspace(root: Path) -> list[Item]:
    if not (root / MEMORY).is_file():
        raise InvalidInput(f"{root} holds no {MEMORY}: not a giok workspace or export")
    out = []
    for n, data in enumerate(export_items(Workspace(root)), 1):
        kind = data.pop("kind")
        if kind != "giok-export":
            out.append(
                Item(kind, data.pop("text", None) or data.get("title") or "", f"{root.name}#{n}", data)
            )
    return out


def export_items(ws: Workspace):
    """Every item of the workspace as a dict with a `kind`, header first."""
    yield {
        "kind": "giok-export",
        "version": EXPORT_VERSION,
        "workspace": ws.name,
        "exported": now().isoformat(timespec="seconds"),
    }
    for e in ws.memory().entries():
        data = e.to_dict()
        data.pop("line", None)
        yield {"kind": "entry", **data, "fields": dict(e.fields)}
    yield from _diary_items(ws)
    for d in ws.decisions():
        yield {"kind": "decision", **d}
    for t in ws.tasks():
        yield {"kind": "task", **t}
    yield from _lesson_items(ws)
    for section, text in ws.state().items():
        if text.strip():
            yield {"kind": "state", "section": section, "text": text.strip()}
    for text in ws.heartbeat():
        yield {"kind": "heartbeat", "text": text}


def _diary_items(ws: Workspace):
    from giok.lifecycle.distill import diary_items  # distill's reading of a diary, loaded when needed

    for rel, day in Layout(ws.root).diaries():
        for at, text in diary_items(ws.read_text(rel)):  # as search and distill read it
            yield {"kind": "diary", "day": day, "time": at, "text": text}


def _lesson_items(ws: Workspace):
    for section in Doc.parse(ws.read_text(LESSONS)).sections:
        m = re.match(r"^\[([^\]]+)\]\s*(.*)$", section.title.strip())
        lines = [line.strip() for line in section.lines if line.strip()]
        if m and lines:
            yield {"kind": "lesson", "date": m.group(1), "title": m.group(2), "text": "\n".join(lines)}


# -- OpenClaw -----------------------------------------------------------------------------------
def read_openclaw(path: Path) -> list[Item]:
    """MEMORY.md bullets and paragraphs → entries (curated: M365); memory/YYYY-MM-DD.md → diary
    lines of their day; HEARTBEAT.md bullets → heartbeat items."""
    root = path if path.is_dir() else path.parent
    items = []
    if (root / TOOL_MEMORY).is_file():
        items += _notes(root / TOOL_MEMORY, root, layer=CURATED_LAYER, source="openclaw")
    for day_file in sorted((root / "memory").glob("*.md")) if (root / "memory").is_dir() else []:
        items += _day_notes(day_file, root)
    if (root / "HEARTBEAT.md").is_file():
        for n, line in enumerate(_read(root / "HEARTBEAT.md").splitlines(), 1):
            m = _BULLET.match(line)
            if m:
                items.append(Item("heartbeat", _CHECKBOX.sub("", m.group(1)), f"HEARTBEAT.md:{n}"))
    return items


def _day_notes(path: Path, root: Path) -> list[Item]:
    """One diary day: each bullet or paragraph line is a diary line; a `HH:MM` before it, or in
    the last heading, is its time."""
    m = _DAY_FILE.match(path.name)
    if not m:
        return _notes(path, root, source="openclaw")
    day, when, items = m.group(1), None, []
    rel = path.relative_to(root).as_posix()
    for n, text, heading in _lines(_read(path)):
        if heading is not None:
            tm = re.search(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])", heading)  # "## Session 10:12"
            when = f"{int(tm.group(1)):02d}:{tm.group(2)}" if tm else None
            continue
        text = _CHECKBOX.sub("", text)
        tm = _TIME.match(text)
        at = f"{int(tm.group(1)):02d}:{tm.group(2)}" if tm else when
        text = text[tm.end() :] if tm else text
        if text.strip():
            items.append(Item("diary", text, f"{rel}:{n}", {"day": day, "time": at}))
    return items


# -- mem0 ---------------------------------------------------------------------------------------
def read_mem0(path: Path) -> list[Item]:
    """mem0 memories: user_id → scope user:ID, else run_id → thread:ID; agent_id goes into the
    source; created_at → the entry's date; metadata.category / categories → the type. mem0
    writes facts without their subject; one that starts like a question ("Is a vegetarian")
    gets the user id in front ("alex is a vegetarian"), so the policy does not read it as one."""
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc.msg} (line {exc.lineno})") from None
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        raise InvalidInput(
            f'{path} is not a mem0 export: expected a list of memories, or one under "results"'
        )
    items = []
    for n, memory in enumerate(data):
        if not isinstance(memory, dict) or not isinstance(memory.get("memory"), str):
            raise InvalidInput(f'{path}: memory #{n + 1} has no "memory" text')
        metadata, categories = memory.get("metadata"), memory.get("categories")
        meta = metadata if isinstance(metadata, dict) else {}
        listed = categories if isinstance(categories, list) else []
        cats = [meta.get("category"), *listed]
        kind = next((_TYPES[c.lower()] for c in cats if isinstance(c, str) and c.lower() in _TYPES), None)
        scope = _scope("user", memory.get("user_id")) or _scope("thread", memory.get("run_id")) or "workspace"
        source = "mem0:" + str(memory.get("id") or n + 1)
        if memory.get("agent_id"):
            source += f" agent:{memory['agent_id']}"
        text = memory["memory"].strip()
        if memory.get("user_id") and _SUBJECTLESS.match(
            text
        ):  # "Is a vegetarian": about the user, not a question
            text = f"{memory['user_id']} {text[0].lower()}{text[1:]}"
        items.append(
            Item(
                "entry",
                text,
                f"{path.name}#{memory.get('id') or n + 1}",
                {
                    "layer": CURATED_LAYER,
                    "scope": scope,
                    "type": kind,
                    "source": source,
                    "date": _day_of(memory.get("created_at")),
                },
            )
        )
    return items


def _scope(prefix: str, value) -> str | None:
    if value in (None, ""):
        return None
    return f"{prefix}:{_SCOPE_PART.sub('-', str(value))[:64]}"


def _day_of(stamp) -> str | None:
    """The calendar day of an ISO time stamp, as written (its own time zone)."""
    if not isinstance(stamp, str):
        return None
    m = re.match(r"^(\d{4}-\d{2}-\d{2})", stamp.strip())
    return m.group(1) if m else None


# -- Claude Code --------------------------------------------------------------------------------
_CLAUDE_TYPES = {"feedback": "preference", "reference": "fact", "user": None, "project": None}


def read_claude_code(path: Path) -> list[Item]:
    """Each topic file is one entry: its body (rule, **Why:**, **How to apply:**) in one line,
    typed from its frontmatter; MEMORY.md index lines that point at a topic file are that file,
    other index lines are entries of their own."""
    root = path if path.is_dir() else path.parent
    items, linked = [], set()
    index = root / TOOL_MEMORY
    for n, line in enumerate(_read(index).splitlines() if index.is_file() else [], 1):
        m = _BULLET.match(line)
        if not m:
            continue
        link = _LINK_ONLY.match(m.group(1))
        if link and (root / link.group(2)).is_file():
            linked.add(link.group(2))
            continue
        items.append(
            Item(
                "entry",
                _plain(m.group(1)),
                f"MEMORY.md:{n}",
                {"layer": CURATED_LAYER, "source": "claude-code:MEMORY.md"},
            )
        )
    for topic in sorted(root.glob("*.md")):
        if topic.name == TOOL_MEMORY:
            continue
        meta, body = _frontmatter(_read(topic))
        text = " ".join(_plain(t) for _, t, h in _lines(body) if h is None)
        text = text or meta.get("description", "")
        if text:
            kind = meta.get("type")
            if not kind and isinstance(meta.get("metadata"), dict):
                kind = meta["metadata"].get("type")  # the layout newer versions write
            items.append(
                Item(
                    "entry",
                    text,
                    topic.name,
                    {
                        "layer": CURATED_LAYER,
                        "type": _CLAUDE_TYPES.get(kind) if isinstance(kind, str) else None,
                        "source": f"claude-code:{topic.name}",
                    },
                )
            )
    return items


# -- basic-memory -------------------------------------------------------------------------------
def read_basic_memory(path: Path) -> list[Item]:
    """Observations → entries "Title: text" (the category picks the type when it is one of
    giok's, tags are kept in the text); relations → entries "Title relation Target"."""
    root = path if path.is_dir() else path.parent
    items = []
    for note in sorted(root.rglob("*.md")) if path.is_dir() else [path]:
        text = _read(note)
        meta, body = _frontmatter(text)
        title = str(meta.get("title") or note.stem)
        rel = note.relative_to(root).as_posix()
        source = f"basic-memory:{meta.get('permalink') or note.stem}"
        offset = text[: len(text) - len(body)].count("\n")
        for n, line in enumerate(body.splitlines(), offset + 1):
            if m := _RELATION.match(line):
                what = f"{title} {m.group(1).replace('_', ' ')} {m.group(2)}" + (
                    f" ({m.group(3)})" if m.group(3) else ""
                )
                items.append(
                    Item(
                        "entry",
                        what,
                        f"{rel}:{n}",
                        {"layer": CURATED_LAYER, "type": "fact", "source": source},
                    )
                )
            elif (m := _OBSERVATION.match(line)) and m.group(1).strip() not in (" ", "x", "X"):
                category = m.group(1).strip().lower()
                body_text = m.group(2)
                what = body_text if title.casefold() in body_text.casefold() else f"{title}: {body_text}"
                items.append(
                    Item(
                        "entry",
                        what,
                        f"{rel}:{n}",
                        {
                            "layer": CURATED_LAYER,
                            "type": _TYPES.get(category),
                            "source": f"{source} [{category}]",
                        },
                    )
                )
    return items


# -- a plain folder of markdown -----------------------------------------------------------------
def read_markdown(path: Path) -> list[Item]:
    """Every bullet and paragraph of every note is an entry (M30: nobody curated it); a note
    named YYYY-MM-DD.md is a diary day."""
    root = path if path.is_dir() else path.parent
    items = []
    for note in sorted(root.rglob("*.md")) if path.is_dir() else [path]:
        if any(part.startswith(".") for part in note.relative_to(root).parts):
            continue
        if _DAY_FILE.match(note.name):
            items += _day_notes(note, root)
        else:
            items += _notes(note, root, source="markdown")
    return items


def _notes(path: Path, root: Path, layer: str | None = None, source: str = "markdown") -> list[Item]:
    """Bullets and paragraphs → entries; `- [ ]` / `- [x]` checkboxes → tasks (todo / done)."""
    rel = path.relative_to(root).as_posix()
    fields = {"source": f"{source}:{rel}", **({"layer": layer} if layer else {})}
    items = []
    for n, text, heading in _lines(_frontmatter(_read(path))[1]):
        if heading is not None:
            continue
        box = _CHECKBOX.match(text)
        if box:
            items.append(
                Item(
                    "task",
                    text[box.end() :],
                    f"{rel}:{n}",
                    {"status": "todo" if box.group(1) == " " else "done"},
                )
            )
        else:
            items.append(Item("entry", text, f"{rel}:{n}", dict(fields)))
    return items


# -- markdown helpers ---------------------------------------------------------------------------
def _lines(text: str):
    """(line number, text, None) for each bullet and each paragraph (joined), and
    (line number, None, heading) for each heading; code blocks, tables, rules, comments and
    quotes' markers are left out."""
    para: list[str] = []
    start, fenced = 0, False

    def flush():
        if para:
            joined = " ".join(para)
            para.clear()
            return [(start, joined, None)]
        return []

    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            yield from flush()
            continue
        stripped = line.strip()
        if fenced or stripped.startswith(("|", "<!--", "---", "***")) or not stripped:
            yield from flush()
            continue
        if m := _HEADING.match(line):
            yield from flush()
            yield n, None, m.group(1)
            continue
        stripped = stripped.lstrip("> ").strip()
        if m := _BULLET.match(stripped):
            yield from flush()
            yield n, m.group(1), None
        elif stripped:
            if not para:
                start = n
            para.append(stripped)
    yield from flush()


def _plain(text: str) -> str:
    """Markdown emphasis and links as plain words."""
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    return " ".join(text.split())


def _frontmatter(text: str) -> tuple[dict, str]:
    """(fields, body) of a note with YAML frontmatter. A small reader for the flat keys these
    tools write: `key: value`, `key: [a, b]`, `key:` + `- item` lists, one nested level."""
    if not text.startswith("---"):
        return {}, text
    end = re.search(r"^(---|\.\.\.)\s*$", text[3:], re.MULTILINE)
    if not end or text[3:].split("\n", 1)[0].strip():
        return {}, text
    head, body = text[3 : 3 + end.start()], text[3 + end.end() :].lstrip("\n")
    fields: dict = {}
    parent = None
    for line in head.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[:1] in (" ", "\t")
        m = re.match(r"^\s*-\s+(.*)$", line)
        if m and parent is not None:
            if not isinstance(fields.get(parent), list):
                fields[parent] = []
            fields[parent].append(_scalar(m.group(1)))
            continue
        m = re.match(r"^\s*([\w.-]+)\s*:\s*(.*)$", line)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if indented and parent is not None and isinstance(fields.get(parent), dict):
            fields[parent][key] = _scalar(value)
            continue
        fields[key] = _scalar(value) if value else {}
        parent = key
    return fields, body


def _scalar(value: str):
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
