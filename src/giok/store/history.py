"""Time travel: what a workspace held at a past moment, read from its git history (never from
a second store).

- A date means the end of that day on giok's clock (store/clock.py: local time, or $GIOK_NOW
  when days are simulated); `YYYY-MM-DDTHH:MM[:SS]` means that moment. The state then is the
  newest commit at or before it along HEAD's first parents: what this clone knew, not what
  another machine was writing meanwhile (those commits join at the sync's merge).
- `memory_at`, `read_at`, `files_at` read a commit's files straight from git.
- `at(ws, when)` opens the files as they were then as a read-only Workspace, with the clock
  frozen at that moment, for boot and search. The files are extracted once per commit into
  `.giok/history/<commit>/` (derived, ignored by git); its search index lives inside it, apart
  from the live one. Snapshots of commits no longer in the repository (after `forget
  --rewrite-history`) are deleted before any is served; `drop_snapshots` deletes them all.
- `diff(ws, a, b)` lists the memories added, edited in place (same id, another text: with the
  text before), superseded, promoted, demoted, expired, merged,
  forgotten and removed between two moments, from the two MEMORY.md states, the archive
  (distill files expired and merged entries there, `status: expired|merged`) and the commit
  subjects in between (`memory: forget m-…` marks a forget; after a `forget --match` every
  unarchived entry that left MEMORY.md counts as forgotten; a forgotten text is never shown).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from giok import settings
from giok.errors import GitError, InvalidInput, NotFound
from giok.store import clock, git
from giok.store.layout import MEMORY
from giok.store.memoryfile import LAYERS, MemoryEntry, MemoryFile
from giok.text.lazy import lazy

if TYPE_CHECKING:
    from giok.store.workspace import Workspace

ARCHIVE_DIR = "memory/archive"
SNAPSHOTS = "history"  # under .giok/
KEEP_SNAPSHOTS = 8  # extracted commits kept, newest used first
_RANK = {layer: rank for rank, layer in enumerate(reversed(LAYERS))}  # M30 < M90 < M365 < M0
_FORGET_RE = lazy(r"^memory: forget (m-[0-9a-f]{6,12})\b(?: \((M\d+)\))?")
_REMEMBER_RE = lazy(r"^memory: remember (m-[0-9a-f]{6,12}) \((M\d+)\)")
_MATCH = "--match"  # the subject of a forget by text: `memory: forget --match (N line(s) in …)`
_MOMENT_RE = lazy(r"^\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2})?$")

When = str | dt.date | dt.datetime


@dataclass(frozen=True)
class Point:
    """A moment asked about and the commit that holds the workspace's state then."""

    asked: dt.datetime
    commit: str
    at: dt.datetime  # when that commit was made

    def to_dict(self) -> dict:
        return {
            "asked": self.asked.isoformat(),
            "commit": self.commit,
            "at": self.at.isoformat(),
        }


def describe(point: dict) -> str:
    """One line naming the moment and the commit a past state was read from."""
    return f"as of {point['asked'].replace('T', ' ')} (commit {point['commit'][:10]} of {point['at'][:16]})"


# -- dates and commits ----------------------------------------------------------------------------
def moment(when: When) -> dt.datetime:
    """The moment a date or date-time names: a day means its end (or now, for today). A
    moment in the future is refused."""
    current = clock.now()
    if isinstance(when, dt.datetime):
        value = when.replace(tzinfo=None, microsecond=0)
    elif isinstance(when, dt.date):
        value = dt.datetime.combine(when, dt.time(23, 59, 59))
    else:
        text = str(when).strip().translate(clock._DASHES)
        if _MOMENT_RE.match(text):
            value = dt.datetime.fromisoformat(text.replace(" ", "T"))
        else:
            value = dt.datetime.combine(clock.parse_date(text), dt.time(23, 59, 59))
    if value.date() > current.date():
        raise InvalidInput(f"{value.date().isoformat()} is in the future (today is {current.date()})")
    return min(value, current)


def commits(ws: Workspace) -> list[tuple[str, dt.datetime]]:
    """(commit, commit time) along HEAD's first parents, newest first; [] with no commit."""
    if git.head_id(ws.root) is None:
        return []
    out = git.run(ws.root, "log", "--first-parent", "--format=%H %ct", "HEAD", check=False).stdout
    rows = []
    for line in out.splitlines():
        sha, _, stamp = line.partition(" ")
        if stamp.strip().isdigit():
            rows.append((sha, dt.datetime.fromtimestamp(int(stamp))))
    return rows


def commit_at(ws: Workspace, when: When) -> str | None:
    """The commit holding the workspace's state at `when`; None before the first commit."""
    point = _point(ws, moment(when), commits(ws))
    return point.commit if point else None


def point_at(ws: Workspace, when: When) -> Point:
    """Like commit_at, but a moment before the first commit is a NotFound naming that commit."""
    asked = moment(when)
    rows = commits(ws)
    point = _point(ws, asked, rows)
    if point is None:
        if not rows:
            raise NotFound(f"workspace {ws.name} has no commits yet: it has no history to read")
        first = min(at for _, at in rows)
        raise NotFound(
            f"workspace {ws.name} has no history before {first.isoformat(sep=' ')} "
            f"(its first commit); {asked.date().isoformat()} is earlier"
        )
    return point


def _point(ws: Workspace, asked: dt.datetime, rows: list[tuple[str, dt.datetime]]) -> Point | None:
    for sha, at in rows:  # newest first; a clock set back shows the newest commit made before
        if at <= asked:
            return Point(asked, sha, at)
    return None


# -- reading a commit -----------------------------------------------------------------------------
def _git_bytes(ws: Workspace, *args: str) -> bytes | None:
    env = settings.child_env(GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        proc = subprocess.run(["git", "-C", str(ws.root), *args], capture_output=True, env=env)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    return proc.stdout if proc.returncode == 0 else None


def _commit_of(ws: Workspace, when: When | Point) -> str:
    return when.commit if isinstance(when, Point) else point_at(ws, when).commit


def read_at(ws: Workspace, rel: str, when: When | Point) -> bytes | None:
    """A file's bytes as they were at `when`; None when it did not exist then."""
    return _git_bytes(ws, "show", f"{_commit_of(ws, when)}:{rel}")


def files_at(ws: Workspace, when: When | Point, under: str = "") -> list[str]:
    """The tracked files at `when` (under a folder, when given), sorted."""
    args = ["ls-tree", "-r", "-z", "--name-only", _commit_of(ws, when)]
    out = _git_bytes(ws, *args, *(["--", under] if under else []))
    return sorted(n.decode("utf-8", "surrogateescape") for n in (out or b"").split(b"\0") if n)


def memory_at(ws: Workspace, when: When | Point) -> MemoryFile:
    """MEMORY.md as it was at `when` (an empty file before MEMORY.md existed)."""
    return MemoryFile.parse(read_at(ws, MEMORY, when) or b"")


def show_at(ws: Workspace, when: When) -> dict:
    """`Workspace.show()` as of `when`, with the commit it was read from."""
    point = point_at(ws, when)
    with at(ws, point) as then:
        data = then.show()
    return {**data, "path": str(ws.root), "at": point.to_dict()}


# -- snapshots ------------------------------------------------------------------------------------
@contextlib.contextmanager
def at(ws: Workspace, when: When | Point) -> Iterator[Workspace]:
    """The workspace as it was at `when`: a read-only Workspace over the files then, with the
    clock frozen at that moment (so "today", expiry and the diaries of the day are then's)."""
    point = when if isinstance(when, Point) else point_at(ws, when)
    then = snapshot(ws, point.commit)
    with clock.frozen(point.asked):
        yield then


def snapshot(ws: Workspace, commit: str) -> Workspace:
    """The files of `commit`, extracted once into .giok/history/<commit>/ (its index inside)."""
    from giok.store.workspace import Workspace

    base = ws.data_dir / SNAPSHOTS
    base.mkdir(exist_ok=True)
    _prune(ws, base, keep=commit)
    target = base / commit
    if not target.is_dir():
        _extract(ws, commit, base, target)
    os.utime(target)  # most recently used
    return Workspace(target, name=ws.name, home=ws.home)


def _extract(ws: Workspace, commit: str, base: Path, target: Path) -> None:
    data = _git_bytes(ws, "archive", "--format=tar", commit)
    if data is None:
        raise GitError(f"cannot read commit {commit[:12]} of {ws.name}")
    work = Path(tempfile.mkdtemp(prefix=".tmp-", dir=base))
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(work, filter="data")
        try:
            work.rename(target)
        except OSError:  # another process extracted it meanwhile
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _prune(ws: Workspace, base: Path, keep: str) -> None:
    """Delete snapshots of commits the repository no longer has, then all but the newest few."""
    known = set((_git_bytes(ws, "rev-list", "--all") or b"").decode().split())
    dirs = [p for p in base.iterdir() if p.is_dir()]
    stale = [p for p in dirs if p.name not in known and not p.name.startswith(".tmp-")]
    live = sorted((p for p in dirs if p.name in known), key=lambda p: p.stat().st_mtime, reverse=True)
    stale += [p for p in live[KEEP_SNAPSHOTS:] if p.name != keep]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


def drop_snapshots(ws: Workspace) -> list[str]:
    """Delete every extracted past state (after a forget: they are rebuilt from git)."""
    base = ws.root / ".giok" / SNAPSHOTS
    if not base.is_dir():
        return []
    gone = [str(p.relative_to(ws.root)) for p in base.iterdir() if p.is_dir()]
    shutil.rmtree(base, ignore_errors=True)
    return gone


# -- diff -----------------------------------------------------------------------------------------
KINDS = ("added", "edited", "superseded", "promoted", "demoted", "expired", "merged", "forgotten", "removed")


@dataclass
class Diff:
    """What changed in MEMORY.md between two points (see the module docstring)."""

    since: Point
    until: Point
    changes: dict[str, list[dict]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def add(self, kind: str, entry: MemoryEntry | None, **extra) -> None:
        row = _row(entry) if entry is not None else {}
        self.changes[kind].append({**row, **extra})

    def to_dict(self) -> dict:
        return {
            "since": self.since.to_dict(),
            "until": self.until.to_dict(),
            **{k: self.changes[k] for k in KINDS},
            "counts": {k: len(self.changes[k]) for k in KINDS},
        }


_ROW = ("id", "layer", "date", "text", "expires", "type", "scope")


def _row(e: MemoryEntry) -> dict:
    data = e.to_dict()
    return {k: data[k] for k in _ROW}


def diff(ws: Workspace, since: When, until: When) -> Diff:
    """Memories added, superseded, promoted, demoted, expired, merged, forgotten and removed
    between `since` and `until` (since must not be later)."""
    a, b = point_at(ws, since), point_at(ws, until)
    if a.asked > b.asked:
        raise InvalidInput(f"{a.asked.date()} is after {b.asked.date()}: give the earlier date first")
    old = {e.id: e for e in memory_at(ws, a).entries()}
    new = {e.id: e for e in memory_at(ws, b).entries()}
    written, forgets = _commits_between(ws, a.commit, b.commit)
    archived = _archived(ws, b)
    matched = forgets.pop(_MATCH, None)
    if matched:  # `forget --match` names no id: what left MEMORY.md unarchived went with it
        for eid, e in old.items():
            if eid not in new and eid not in archived and eid not in forgets:
                forgets[eid] = dict(matched, layer=e.layer)
    out = Diff(a, b)
    for eid, e in new.items():
        _still_there(out, old.get(eid), e, written.get(eid))
    for eid, e in old.items():
        if eid not in new and eid not in forgets:  # a forgotten one is listed below, without its text
            _gone(out, e, archived.get(eid), was_superseded=e.superseded)
    before_archived = set(_archived(ws, a))
    for eid, e in archived.items():  # written and archived between the two points
        if eid not in old and eid not in new and eid not in before_archived and eid not in forgets:
            out.add("added", e, supersedes=e.fields.get("supersedes"))
            _gone(out, e, e, was_superseded=False)
    for eid, info in forgets.items():
        if eid not in new:
            out.add("forgotten", None, id=eid, **info)
    return out


def _still_there(out: Diff, before: MemoryEntry | None, e: MemoryEntry, written_in: str | None) -> None:
    """An entry in MEMORY.md at the end: added, moved between layers (from its layer at the
    start, or the one it was written in), superseded or past its expiry meanwhile."""
    if before is None:
        out.add("added", e, supersedes=e.fields.get("supersedes"))
    elif before.text != e.text:  # edited in place (giok edit, a hand edit, a merge): same id
        out.add("edited", e, before=before.text)
    start = before.layer if before is not None else written_in
    if start and e.layer and start != e.layer:
        up = _RANK.get(e.layer, 0) > _RANK.get(start, 0)
        out.add("promoted" if up else "demoted", e, **{"from": start, "to": e.layer})
    if e.superseded and not (before is not None and before.superseded):
        out.add("superseded", e, superseded_by=e.fields.get("superseded_by"))
    if e.expired(out.until.asked.date()) and not (
        before is not None and before.expired(out.since.asked.date())
    ):
        out.add("expired", e, archived=False)


def _gone(out: Diff, e: MemoryEntry, kept: MemoryEntry | None, was_superseded: bool) -> None:
    """An entry that left MEMORY.md: expired or merged by distill (its archive copy says so),
    else removed by hand; superseded too when that happened before it left."""
    fields = kept.fields if kept is not None else {}
    if kept is not None and kept.superseded and not was_superseded:
        out.add("superseded", e, superseded_by=fields.get("superseded_by"))
    status = fields.get("status")
    if status == "expired":
        out.add("expired", e, archived=True, archived_on=fields.get("archived"))
    elif status == "merged":
        out.add("merged", e, merged_into=fields.get("merged_into"))
    else:
        out.add("removed", e, note="gone from MEMORY.md with no forget or distill recorded (a hand edit)")


def _commits_between(ws: Workspace, a: str, b: str) -> tuple[dict[str, str], dict[str, dict]]:
    """From the commit subjects after a up to b: id → the layer it was written in
    (`memory: remember m-… (M30) …`), and id → {layer, reason, commit} of each forget."""
    raw = _git_bytes(ws, "log", "--format=%x1e%H%x1f%B", f"{a}..{b}") or b""
    written: dict[str, str] = {}
    forgets: dict[str, dict] = {}
    for record in raw.decode("utf-8", "replace").split("\x1e")[1:]:
        sha, _, body = record.partition("\x1f")
        if m := _REMEMBER_RE.match(body.strip()):
            written[m.group(1)] = m.group(2)
        elif (m := _FORGET_RE.match(body.strip())) and m.group(1) not in forgets:
            forgets[m.group(1)] = {"layer": m.group(2), "reason": _reason(body), "commit": sha}
        elif body.startswith(f"memory: forget {_MATCH} ") and _MATCH not in forgets:
            files = next((x[7:] for x in body.splitlines() if x.startswith("Files: ")), "")
            if MEMORY in [f.strip() for f in files.split(",")]:
                forgets[_MATCH] = {"layer": None, "reason": _reason(body), "commit": sha}
    return written, forgets


def _reason(body: str) -> str | None:
    return next((x[8:].strip() for x in body.splitlines() if x.startswith("Reason: ")), None)


def _archived(ws: Workspace, point: Point) -> dict[str, MemoryEntry]:
    """id → entry for the archive files at point."""
    out: dict[str, MemoryEntry] = {}
    for rel in files_at(ws, point, ARCHIVE_DIR):
        if rel.endswith(".md"):
            for e in MemoryFile.parse(read_at(ws, rel, point) or b"").entries():
                out[e.id] = e
    return out
