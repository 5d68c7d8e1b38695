"""Forgetting for good: an entry (by id) or the lines holding a text (`--match`) leave the
memory files, the search index (chunks, vectors, embedding cache), the derived caches in
.giok/ and, when asked, git history.

- By id: the lines carrying that id go: its MEMORY.md entry, its copy in memory/archive/, the
  state/trace.jsonl events about it, its line in the review queue state/review.md, and the
  diary lines it came from (lines of memory/YYYY-MM-DD.md holding its whole text, when that
  text has at least MIN_MATCH characters). Nothing else is touched: not state/decisions.md,
  lessons, drafts or the identity files, even when they mention the same words.
- By match: the lines holding TEXT (case-insensitive, at least MIN_MATCH characters) in the
  memory files only: MEMORY.md, memory/archive/, the diaries, compound/lessons.md,
  state/trace.jsonl and state/review.md. Decisions, tasks, drafts and identity files are the
  user's to edit.
- Under the workspace lock: every file is read once (line numbers and checksums come from
  the same bytes), the repository and the git identity are checked before anything is
  written, and when a write or the commit fails every file gets its previous bytes back.
- One commit for all files, `memory: forget …` with the reason; the forgotten text is never
  put in the message.
- A tombstone per forgotten MEMORY.md / archive entry (its id and a digest of its text, never
  the text) goes into state/tombstones.txt in the same commit: it travels with git, and every
  sync and merge drops that entry wherever it comes back (giok.store.tombstones).
- `--purge` lists the commits that still hold the text and how to remove it;
  `--rewrite-history` does it (git filter-branch over all refs, limited to the same memory
  files and to text files, then reflog expiry and gc). Where the remote-tracking refs pointed
  before is recorded, so the next `giok sync` pushes the rewritten history with a lease instead
  of merging the old one back (giok.store.rewrites).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from giok import settings
from giok.errors import GiokError, GitError, InvalidInput, NotFound
from giok.store import git, history, rewrites
from giok.store import tombstones as tomb
from giok.store.fsutil import atomic_write, clean_text, read_bytes
from giok.store.layout import (
    ARCHIVE_RE,
    FORGETTABLE_RE,
    JOURNAL,
    LESSONS,
    MEMORY,
    REVIEW,
    TOMBSTONES,
    TRACE,
    diary_day,
)
from giok.store.memoryfile import MemoryEntry, MemoryFile
from giok.store.reviewfile import entry_line
from giok.store.workspace import Workspace, check_id, short
from giok.text.lazy import lazy

_SKIP_DERIVED = (".db", ".sqlite", ".sqlite3", "-wal", "-shm", "lock", ".key")
MIN_MATCH = 8
SCOPE_RE = FORGETTABLE_RE
__all__ = [
    "LESSONS",
    "MIN_MATCH",
    "SCOPE_RE",
    "Forgotten",
    "forget",
    "history_report",
    "rewrite",
    "scrub_derived",
]
T = TypeVar("T")
_LINE_RE = lazy(r"[^\n]*\n|[^\n]+$")  # lines as MemoryFile numbers them


@dataclass
class Forgotten:
    reason: str
    entry: MemoryEntry | None = None  # when forgotten by id
    texts: list[str] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)  # {path, line}
    commit: str | None = None
    index_chunks: int | None = None
    caches: list[str] = field(default_factory=list)
    history: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    tombstones: list[str] = field(default_factory=list)  # ids tombstoned (state/tombstones.txt)

    def to_dict(self) -> dict:
        return {
            "reason": self.reason,
            "entry": self.entry.to_dict() if self.entry else None,
            "removed": self.removed,
            "commit": self.commit,
            "index_chunks": self.index_chunks,
            "caches": self.caches,
            "history": self.history,
            "notes": self.notes,
            "tombstones": self.tombstones,
        }


class _Files:
    """Each file read once, under the lock: the lines chosen and the checksum checked at write
    time come from the same bytes."""

    def __init__(self, ws: Workspace):
        self.root = ws.root
        self.data: dict[str, bytes] = {}

    def read(self, rel: str) -> bytes:
        if rel not in self.data:
            self.data[rel] = read_bytes(self.root / rel)
        return self.data[rel]

    def lines(self, rel: str) -> list[str]:
        return _LINE_RE.findall(self.read(rel).decode("utf-8", errors="surrogateescape"))


def forget(
    ws: Workspace,
    entry_id: str | None = None,
    reason: str = "",
    *,
    match: str | None = None,
    purge: bool = False,
    rewrite_history: bool = False,
    dry_run: bool = False,
    purge_index: Callable[[Workspace, Forgotten], int | None] | None = None,
    scrub_bus: Callable[[Workspace, Forgotten], list[str]] | None = None,
) -> Forgotten:
    """Forget (see the module's docstring). After the commit, `purge_index` and `scrub_bus`
    (given by the layers above: the search index, the cross-view bus) clean derived copies;
    a failure there is a warning note, never an error."""
    reason = clean_text(reason, "reason", limit=1000)
    if bool(entry_id) == bool(match):
        raise InvalidInput("give either a memory id or --match TEXT (not both, not neither)")
    if match:
        match = _check_match(match)
    with ws.lock():
        ws._require_git()
        files = _Files(ws)
        history_only = purge or rewrite_history
        if entry_id:
            done = _by_id(ws, files, entry_id, reason)
        else:
            done = _by_match(ws, files, match or "", reason, history_only)
        if rewrite_history and not needles(done):
            raise InvalidInput(
                f"the text is too short to rewrite history safely (under {MIN_MATCH} characters); "
                "forget it without --rewrite-history"
            )
        if dry_run:
            return done
        done.commit = _write(ws, files, done) if done.removed else None
    if purge_index is not None:
        done.index_chunks = _after_commit(done, "search index", purge_index, ws)
    done.caches = (_after_commit(done, "past states", _drop_snapshots, ws) or []) + (
        _after_commit(done, "giok caches", _scrub_caches, ws) or []
    )
    if scrub_bus is not None:
        done.caches += _after_commit(done, "cross-view bus", scrub_bus, ws) or []
    if purge or rewrite_history:
        done.history = history_report(ws, done.texts)
    if rewrite_history and done.history.get("commits"):
        with ws.lock():
            rewrite(ws, done.texts)
        done.history = {**history_report(ws, done.texts), "rewritten": True}
    return done


def _check_match(match: str) -> str:
    match = clean_text(match, "match text", limit=1000).strip()
    if len(match) < MIN_MATCH:
        raise InvalidInput(
            f"--match text is too short ({len(match)} characters): give at least {MIN_MATCH}, "
            f"or forget one entry by its id"
        )
    return match


def _by_id(ws: Workspace, files: _Files, entry_id: str, reason: str) -> Forgotten:
    entry_id = check_id(entry_id)
    entry = MemoryFile.parse(files.read(MEMORY)).find(entry_id)
    if entry is None:
        raise NotFound(f"no memory with id {entry_id} in {ws.name}")
    done = Forgotten(reason, entry=entry, texts=[entry.text])
    done.removed.append({"path": MEMORY, "line": entry.line_no})
    scoped = _scoped_files(ws)
    for rel in (r for r in scoped if ARCHIVE_RE.match(r)):
        copy = MemoryFile.parse(files.read(rel)).find(entry_id)
        if copy is not None:
            done.removed.append({"path": rel, "line": copy.line_no})
    if TRACE in scoped:
        done.removed += [
            {"path": TRACE, "line": no}
            for no, line in enumerate(files.lines(TRACE), 1)
            if _trace_target(line) == entry_id
        ]
    if REVIEW in scoped:  # the review queue's copy of the entry (its item then closes)
        named = entry_line(entry_id)
        done.removed += [
            {"path": REVIEW, "line": no}
            for no, line in enumerate(files.lines(REVIEW), 1)
            if named.match(line)
        ]
    done.removed += _diary_sources(files, scoped, entry)
    return done


def _trace_target(line: str) -> str | None:
    try:
        item = json.loads(line)
    except ValueError:
        return None
    return item.get("target") if isinstance(item, dict) else None


def _diary_sources(files: _Files, scoped: list[str], entry: MemoryEntry) -> list[dict]:
    """Diary lines holding the entry's whole text: where it was written down first. A text
    shorter than MIN_MATCH is too common to say where it came from."""
    needle = " ".join(entry.text.split()).casefold()
    if len(needle) < MIN_MATCH:
        return []
    source = entry.fields.get("source") or ""
    day = source[len("diary:") :] if source.startswith("diary:") else None
    diaries = [r for r in scoped if diary_day(r) and (day is None or diary_day(r) == day)]
    return [
        {"path": rel, "line": no}
        for rel in diaries
        for no, line in enumerate(files.lines(rel), 1)
        if needle in " ".join(line.split()).casefold()
    ]


def _by_match(ws: Workspace, files: _Files, match: str, reason: str, history_only: bool = False) -> Forgotten:
    done = Forgotten(reason, texts=[match])
    needle = match.casefold()
    for rel in _scoped_files(ws):
        for no, line in enumerate(files.lines(rel), 1):
            if needle in line.casefold():
                done.removed.append({"path": rel, "line": no})
    if not done.removed and not history_only:
        raise NotFound(f"no line in the memory files of {ws.name} contains {match!r}")
    return done


def _write(ws: Workspace, files: _Files, done: Forgotten) -> str | None:
    """Drop the chosen lines from each file and commit them together, checked against the
    bytes they were chosen from; any failure puts every file back before it is raised."""
    by_path: dict[str, set[int]] = {}
    for item in done.removed:
        by_path.setdefault(item["path"], set()).add(item["line"])
    paths = sorted(by_path)
    writes = {
        rel: "".join(ln for i, ln in enumerate(files.lines(rel), 1) if i not in by_path[rel]).encode(
            "utf-8", errors="surrogateescape"
        )
        for rel in paths
    }
    stones = _tombstones(files, by_path)
    if stones:
        writes[TOMBSTONES] = tomb.render(files.read(TOMBSTONES), stones)
        done.tombstones = sorted(stones.ids)
        paths = sorted({*paths, TOMBSTONES})
    what = (
        f"{done.entry.id} ({done.entry.layer})"
        if done.entry
        else f"--match ({len(done.removed)} line(s) in {len(by_path)} file(s))"
    )
    return ws.write_files(
        writes,
        f"memory: forget {what}\n\nReason: {done.reason}\nFiles: {', '.join(paths)}",
        before={rel: files.read(rel) for rel in paths},
    )


def _tombstones(files: _Files, by_path: dict[str, set[int]]) -> tomb.Tombstones:
    """A tombstone for every entry among the lines removed from MEMORY.md and the archive."""
    stones = tomb.Tombstones()
    for rel, lines in by_path.items():
        if rel == MEMORY or ARCHIVE_RE.match(rel):
            for entry in MemoryFile.parse(files.read(rel)).entries():
                if entry.line_no in lines:
                    stones.add(entry.id, entry.text)
    return stones


def _scoped_files(ws: Workspace) -> list[str]:
    """The memory files forget may edit: tracked or new, not ignored, plain files."""
    proc = git.run(ws.root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", check=False)
    names = [n for n in proc.stdout.split("\0") if n] if proc.returncode == 0 else []
    return sorted(
        n
        for n in set(names)
        if SCOPE_RE.match(n) and (ws.root / n).is_file() and not (ws.root / n).is_symlink()
    )


def _after_commit(
    done: Forgotten, what: str, step: Callable[[Workspace, Forgotten], T], ws: Workspace
) -> T | None:
    """A step after the commit: the forget is done, so a failure here is a warning note, never
    an error (and never a traceback)."""
    try:
        return step(ws, done)
    except (GiokError, OSError, sqlite3.Error) as exc:
        done.notes.append(f"warning: {what} not cleaned ({exc}); the files and the commit are done")
        return None


def needles(done: Forgotten) -> list[str]:
    """The texts worth matching elsewhere: a short entry text ("Tea") would hit everything."""
    return [t for t in done.texts if len(t.strip()) >= MIN_MATCH]


def scrub_derived(ws: Workspace, ids: list[str], texts: list[str]) -> list[str]:
    """Entries forgotten on another machine (their ids and the texts this machine held), after
    a sync: the past-state snapshots and the derived text files in .giok/ lose them, as forget's
    own steps do here (the search index is the caller's). Returns the files changed."""
    if not ids and not texts:
        return []
    wanted = [t.casefold() for t in texts if len(t.strip()) >= MIN_MATCH] + list(ids)
    return history.drop_snapshots(ws) + _scrub_lines(ws, wanted)


def _drop_snapshots(ws: Workspace, done: Forgotten) -> list[str]:
    """The extracted past states (giok.store.history): rebuilt from git when next asked."""
    return history.drop_snapshots(ws)


def _scrub_caches(ws: Workspace, done: Forgotten) -> list[str]:
    """Remove lines holding the text (or the id) from derived text files in .giok/ (the
    reference log, any boot or summary cache). SQLite files are the index's to purge."""
    return _scrub_lines(ws, [t.casefold() for t in needles(done)] + ([done.entry.id] if done.entry else []))


def _scrub_lines(ws: Workspace, wanted: list[str]) -> list[str]:
    changed = []
    for path in sorted(p for p in ws.data_dir.rglob("*") if p.is_file()):
        if path.name == JOURNAL:  # a write in progress: its own recovery, never a cache
            continue
        if path.name.endswith(_SKIP_DERIVED) or path.stat().st_size > 50_000_000:
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue
        lines = data.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        kept = [ln for ln in lines if not any(n in ln.casefold() for n in wanted)]
        if len(kept) != len(lines):
            atomic_write(path, "".join(kept).encode("utf-8", errors="surrogateescape"))
            changed.append(str(path.relative_to(ws.root)))
    return changed


# -- git history ------------------------------------------------------------------------------
def history_report(ws: Workspace, texts: list[str]) -> dict:
    """Commits (any ref) whose files or message still hold one of texts, and how to remove them."""
    found: dict[str, str] = {}
    for text in texts:
        for args in (["-S" + text, "--regexp-ignore-case"], ["-i", "-F", "--grep=" + text]):
            proc = git.run(ws.root, "log", "--all", "--format=%h %s", *args, check=False)
            for line in proc.stdout.splitlines():
                sha, _, subject = line.partition(" ")
                found[sha] = subject
    how = (
        (
            "git history still holds it: run `giok forget ... --rewrite-history` (rewrites every commit "
            "of this workspace with git filter-branch, expires the reflog and runs gc --prune=now); the "
            "next `giok sync` pushes the rewritten history over the remote (with a lease), and every other "
            "clone's next `giok sync` asks it to run `giok sync --adopt-remote`."
        )
        if found
        else "git history holds no copy."
    )
    return {"commits": [{"commit": k, "message": v} for k, v in found.items()], "how": how}


_TREE_FILTER = r"""
import json, os, re, sys
with open(sys.argv[1], encoding="utf-8") as f:
    needles = [t.casefold() for t in json.load(f)]
scope = re.compile(sys.argv[2])
for base, dirs, files in os.walk("."):
    dirs[:] = [d for d in dirs if d != ".git"]
    for name in files:
        path = os.path.join(base, name)
        if os.path.islink(path) or not scope.match(os.path.relpath(path, ".").replace(os.sep, "/")):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue
        text = data.decode("utf-8", "surrogateescape")
        lines = text.splitlines(keepends=True)
        kept = [l for l in lines if not any(n in l.casefold() for n in needles)]
        if len(kept) != len(lines):
            with open(path, "wb") as f:
                f.write("".join(kept).encode("utf-8", "surrogateescape"))
"""

_MSG_FILTER = r"""
import json, re, sys
message = sys.stdin.read()
with open(sys.argv[1], encoding="utf-8") as f:
    texts = json.load(f)
for text in texts:
    message = re.sub(re.escape(text), "[forgotten]", message, flags=re.I)
sys.stdout.write(message)
"""


def rewrite(ws: Workspace, texts: list[str]) -> None:
    """Remove every line holding one of texts from the memory files (SCOPE_RE, text files
    only) of every commit, and the texts from every commit message; then drop the old objects
    (reflog expiry + gc)."""
    texts = [t for t in texts if len(t.strip()) >= MIN_MATCH]
    if not texts:
        raise InvalidInput(f"the text is too short to rewrite history safely (under {MIN_MATCH} characters)")
    variants = sorted(
        {v for t in texts for v in (t, short(t), t[:60], " ".join(t.split())[:60]) if len(v) >= MIN_MATCH},
        key=len,
        reverse=True,
    )
    rewrites.record(ws.root)  # where the remotes stand: the next sync pushes over them with a lease
    work = Path(tempfile.mkdtemp(prefix="giok-forget-"))
    try:
        (work / "texts.json").write_text(json.dumps(list(texts)), "utf-8")
        (work / "variants.json").write_text(json.dumps(variants), "utf-8")
        (work / "tree.py").write_text(_TREE_FILTER, "utf-8")
        (work / "msg.py").write_text(_MSG_FILTER, "utf-8")
        py = sys.executable
        env = settings.child_env(FILTER_BRANCH_SQUELCH_WARNING="1", LC_ALL="C")
        cmd = [
            "git",
            "-C",
            str(ws.root),
            "filter-branch",
            "-f",
            "-d",
            str(work / "scratch"),
            "--tree-filter",
            f"'{py}' '{work / 'tree.py'}' '{work / 'texts.json'}' '{SCOPE_RE.pattern}'",
            "--msg-filter",
            f"'{py}' '{work / 'msg.py'}' '{work / 'variants.json'}'",
            "--",
            "--all",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise GitError(
                f"rewriting history failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
            )
        for ref in git.run(ws.root, "for-each-ref", "--format=%(refname)", "refs/original").stdout.split():
            git.run(ws.root, "update-ref", "-d", ref)
        git.run(ws.root, "reflog", "expire", "--expire=now", "--all")
        git.run(ws.root, "gc", "--prune=now", "-q")
    finally:
        shutil.rmtree(work, ignore_errors=True)
