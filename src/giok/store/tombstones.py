"""Tombstones: what was forgotten, kept without its text, so that no sync brings it back.

A forget adds one line per forgotten MEMORY.md or archive entry to `state/tombstones.txt`:

    m-7f3a2c 5d0c8e1f9a2b4c6d7e8f9a0b1c2d3e4f 2026-03-02

the entry's id, a digest of its text and the day it was forgotten. The file is tracked, so it
travels with git to the remote and every clone, and giok's merge driver merges it as a set: a
line either side holds is kept, a merge never removes one.

The digest is PBKDF2-HMAC-SHA256 of the text (spaces collapsed), salted with the id, ROUNDS
rounds, 16 bytes in hex: it recognises the forgotten text when it is seen again and does not
give it back. Each guess costs a guesser ~0.1 s, so a text guessable from a small set (a 4-digit
code in a known sentence) is slowed down, not hidden: the text itself is gone from the files and,
after `--rewrite-history`, from git.

An entry is *tombstoned* when a line names its id and the digest of its text. The same id with
another text (an entry edited since, or two machines that drew the same id) is not, and is
reported: nothing is dropped on a guess. Where entries come in, tombstoned ones are dropped:
giok's merge driver, for MEMORY.md and memory/archive/*.md whatever either side holds
(`drop`), and `giok sync` after a fast-forward or merge (`drop_returned`), together with the
lines forget removes with an entry (its trace events, its review line, the diary lines holding
its whole text).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from giok import settings
from giok.store import clock
from giok.store.fsutil import read_bytes
from giok.store.layout import ARCHIVE_RE, DIARY_RE, MEMORY, REVIEW, TOMBSTONES, TRACE
from giok.store.memoryfile import MemoryEntry, MemoryFile
from giok.store.reviewfile import entry_line

if TYPE_CHECKING:
    from giok.store.workspace import Workspace

ROUNDS = 100_000
MIN_TEXT = (
    8  # a diary line is removed with a returned entry only when its text is this long (forget's MIN_MATCH)
)
HEADER = (
    "# Forgotten entries: id, digest of the text (never the text), day. Written by `giok forget`,\n"
    "# merged as a set by `giok sync`; an entry with this id and text is dropped wherever it comes\n"
    "# back (docs/formats.md, docs/teams.md).\n"
)
_LINE_RE = re.compile(r"^(m-[0-9a-f]{6,12})\s+([0-9a-f]{32})(?:\s+(\d{4}-\d{2}-\d{2}))?\s*$")


@functools.lru_cache(maxsize=4096)
def digest(entry_id: str, text: str) -> str:
    """The tombstone digest of an entry's text (spaces collapsed), salted with its id."""
    norm = " ".join(text.split()).encode("utf-8", "surrogateescape")
    return hashlib.pbkdf2_hmac("sha256", norm, f"giok-tombstone:{entry_id}".encode(), ROUNDS, 16).hex()


@dataclass
class Tombstones:
    """(id, digest) → the day it was forgotten (None when the line gives none)."""

    stones: dict[tuple[str, str], str | None] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: bytes | str) -> Tombstones:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        out = cls()
        for line in text.splitlines():
            if m := _LINE_RE.match(line.strip()):
                out.stones.setdefault((m.group(1), m.group(2)), m.group(3))
        return out

    def __bool__(self) -> bool:
        return bool(self.stones)

    def __len__(self) -> int:
        return len(self.stones)

    @property
    def ids(self) -> set[str]:
        return {eid for eid, _ in self.stones}

    def holds(self, entry: MemoryEntry) -> bool:
        """True when this entry (its id and its text) was forgotten."""
        if entry.id not in self.ids:
            return False
        return (entry.id, digest(entry.id, entry.text)) in self.stones

    def add(self, entry_id: str, text: str, day: dt.date | None = None) -> bool:
        """Tombstone an entry; False when it already was."""
        key = (entry_id, digest(entry_id, text))
        if key in self.stones:
            return False
        self.stones[key] = (day or clock.today()).isoformat()
        return True

    def union(self, other: Tombstones) -> Tombstones:
        out = Tombstones(dict(self.stones))
        for key, day in other.stones.items():
            mine = out.stones.get(key)
            out.stones[key] = min(d for d in (mine, day) if d) if (mine or day) else None
        return out


def render(old: bytes, stones: Tombstones) -> bytes:
    """`old` (the file as it is) with the lines of `stones` it lacks added at the end; its other
    lines (comments, hand-written notes) kept as they are."""
    have = Tombstones.parse(old)
    new = [(k, d) for k, d in stones.stones.items() if k not in have.stones]
    if not new:
        return old
    text = old.decode("utf-8", "surrogateescape") if old else HEADER
    if text and not text.endswith("\n"):
        text += "\n"
    text += "".join(f"{eid} {dig}" + (f" {day}" if day else "") + "\n" for (eid, dig), day in new)
    return text.encode("utf-8", "surrogateescape")


def merge(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The merge driver's rule for state/tombstones.txt: ours, plus every tombstone only theirs
    holds. A tombstone removed on one side stays: a forget is never undone by a merge."""
    return render(ours, Tombstones.parse(theirs))


def read(root: Path) -> Tombstones:
    """The tombstones in the work tree."""
    return Tombstones.parse(read_bytes(root / TOMBSTONES))


def at(root: Path, commit: str | None) -> Tombstones:
    """The tombstones a commit holds (none when it holds no file, or commit is None)."""
    if not commit:
        return Tombstones()
    return Tombstones.parse(show(root, commit, TOMBSTONES) or b"")


def show(root: Path, commit: str, rel: str) -> bytes | None:
    """The bytes of rel in commit, None when it holds none."""
    proc = subprocess.run(
        ["git", "-C", str(root), "cat-file", "blob", f"{commit}:{rel}"],
        capture_output=True,
        env=settings.child_env(GIT_TERMINAL_PROMPT="0", LC_ALL="C"),
    )
    return proc.stdout if proc.returncode == 0 else None


def for_merge(root: Path, theirs: str | None) -> Tombstones:
    """What git's merge driver buries: the tombstones of both sides' commits. The other side is
    `theirs` (giok sync names it), else every commit git names to the driver in its environment
    (`GITHEAD_<id>`, set by `git merge` and `git pull`, which write MERGE_HEAD only later)."""
    others = [theirs] if theirs else settings.git_merge_heads()
    out = at(root, "HEAD")
    for commit in others:
        if re.fullmatch(r"[0-9a-f]{40,64}", commit):
            out = out.union(at(root, commit))
    return out


def drop(data: bytes, stones: Tombstones) -> tuple[bytes, list[MemoryEntry], list[MemoryEntry]]:
    """MEMORY.md or an archive file without its tombstoned entries: (bytes, the entries dropped,
    the entries kept that carry a tombstoned id with another text). The bytes are `data`
    itself when nothing was dropped."""
    if not stones:
        return data, [], []
    mf = MemoryFile.parse(data)
    named = [e for e in mf.entries() if e.id in stones.ids]
    gone = [e for e in named if stones.holds(e)]
    other = [e for e in named if not stones.holds(e)]
    if not gone:
        return data, [], other
    for entry in gone:
        mf.remove_entry(entry)  # this line: another may carry the same id with a text kept
    return mf.render(), gone, other


# -- after a sync ---------------------------------------------------------------------------------
@dataclass
class Returned:
    """Tombstoned entries found in the work tree, and what was done about them."""

    entries: dict[str, str] = field(default_factory=dict)  # id → text (for the index purge; never printed)
    files: list[str] = field(default_factory=list)
    commit: str | None = None


def drop_returned(ws: Workspace) -> Returned:
    """Remove every tombstoned entry the work tree holds (after a fast-forward or a merge
    brought one back) with the lines forget removes with it, in one commit
    `memory: forget ID (tombstoned) …`. Under the workspace lock; a no-op (nothing read
    beyond the tombstones) when there are none."""
    done = Returned()
    stones = read(ws.root)
    if not stones:
        return done
    with ws.lock():
        archives = (f"memory/archive/{p.name}" for p in (ws.root / "memory" / "archive").glob("*.md"))
        rels = [MEMORY, *sorted(rel for rel in archives if ARCHIVE_RE.match(rel))]
        before: dict[str, bytes] = {}
        writes: dict[str, bytes] = {}
        for rel in rels:
            if not (ws.root / rel).is_file() or (ws.root / rel).is_symlink():
                continue
            data = read_bytes(ws.root / rel)
            new, gone, _ = drop(data, stones)
            if gone:
                before[rel], writes[rel] = data, new
                done.entries.update({e.id: e.text for e in gone})
        if not done.entries:
            return done
        for rel, new in _companions(ws, done.entries).items():
            before[rel], writes[rel] = read_bytes(ws.root / rel), new
        done.files = sorted(writes)
        ids = ", ".join(sorted(done.entries))
        done.commit = ws.write_files(
            writes,
            f"memory: forget {ids} (tombstoned)\n\n"
            f"Reason: forgotten before (state/tombstones.txt); a sync brought it back\n"
            f"Files: {', '.join(done.files)}",
            before=before,
        )
    return done


def _companions(ws: Workspace, entries: dict[str, str]) -> dict[str, bytes]:
    """The other lines forget removes with an entry: its trace events, its review line, the
    diary lines holding its whole text. rel → new bytes, for the files that change."""
    out: dict[str, bytes] = {}
    named = [entry_line(eid) for eid in entries]
    needles = [n for t in entries.values() if len(n := " ".join(t.split()).casefold()) >= MIN_TEXT]
    diaries = sorted(
        f"memory/{p.name}" for p in (ws.root / "memory").glob("*.md") if DIARY_RE.match(f"memory/{p.name}")
    )

    def keep(rel: str, line: str) -> bool:
        if rel == TRACE:
            return _trace_target(line) not in entries
        if rel == REVIEW:
            return not any(p.match(line) for p in named)
        return not any(n in " ".join(line.split()).casefold() for n in needles)

    for rel in [TRACE, REVIEW, *diaries]:
        path = ws.root / rel
        if not path.is_file() or path.is_symlink():
            continue
        data = read_bytes(path)
        lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
        kept = [line for line in lines if keep(rel, line)]
        if len(kept) != len(lines):
            out[rel] = "".join(kept).encode("utf-8", "surrogateescape")
    return out


def _trace_target(line: str) -> str | None:
    try:
        item = json.loads(line)
    except ValueError:
        return None
    return item.get("target") if isinstance(item, dict) else None
