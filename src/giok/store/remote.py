"""A workspace on several machines: git remotes, pulled and pushed by `giok sync`, with giok's
merge driver (giok.store.merge) for the memory files so two machines' writes never conflict.

- `add(ws, name, url)` adds the remote and installs the driver: `merge.giok.driver` in the
  repository's config (this machine's python, `-m giok merge-driver %O %A %B %P`) and
  `PATTERN merge=giok` lines in `.gitattributes` (committed, so every clone carries them;
  each clone's `giok sync` writes its own config line).
- `sync(ws, remote)` under the workspace lock: fetch; fast-forward when only one side moved;
  else merge with the driver and commit the merge with what it reported (`Merge-Report:`
  lines); then push. A push the remote refused because it moved meanwhile is retried after
  another fetch and merge (3 times). A conflict outside the driver's files aborts the merge
  and names the files: nothing is lost, the workspace is as before the sync.
- Nothing that arrives can steer giok's own writes: incoming commits whose tree tracks
  anything under `.giok/` (giok's journal, lock, index: never committed by giok) are refused
  before the merge or fast-forward, so they are never checked out
  (`giok.store.syncreport.refuse_private`).
- Which write is later, for an item both machines changed: the newest commit on each side,
  since their merge base, whose diff names the item's id (`git log -G`).
- Forgetting travels: the driver drops entries forget's tombstones name (state/tombstones.txt,
  giok.store.tombstones), sync removes any a fast-forward brought back (`_bury_returned`), and a
  history rewritten by `forget --rewrite-history` is never merged with the old one: the machine
  that rewrote pushes it with a lease, every other clone is asked to `--adopt-remote`
  (giok.store.rewrites).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from giok.errors import ConflictError, GiokError, GitError, InvalidInput, NotFound
from giok.store import clock, git, rewrites
from giok.store import tombstones as tomb
from giok.store.fsutil import atomic_write
from giok.store.layout import DATA_DIR, MEMORY, SYNC_MARK
from giok.store.merge import PATTERNS, merge_driven
from giok.store.syncreport import SyncReport, refuse_private
from giok.text.lazy import lazy

if TYPE_CHECKING:
    from giok.store.workspace import Workspace

DRIVER = "giok"
ATTRIBUTES = ".gitattributes"
REPORT_ENV = "GIOK_MERGE_REPORT"
THEIRS_ENV = "GIOK_MERGE_THEIRS"
PUSH_TRIES = 3
_FORGET_RE = lazy(r"^memory: forget (m-[0-9a-f]{6,12})\b")
_NAME_RE = lazy(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


# -- setup ----------------------------------------------------------------------------------------
def driver_command() -> str:
    return f"{shlex.quote(sys.executable)} -m giok merge-driver %O %A %B %P"


def install_driver(ws: Workspace) -> str | None:
    """Register the driver in the repository's config and .gitattributes (commits the latter
    when it changed). Returns the commit, if any."""
    git.run(ws.root, "config", f"merge.{DRIVER}.name", "giok: memory files merged by id")
    git.run(ws.root, "config", f"merge.{DRIVER}.driver", driver_command())
    wanted = [f"{p} merge={DRIVER}" for p in PATTERNS]

    def change(old: str):
        have = {line.strip() for line in old.splitlines()}
        missing = [line for line in wanted if line not in have]
        if not missing:
            return old, []
        base = old if not old or old.endswith("\n") else old + "\n"
        head = "# giok: memory files merge by id (docs/teams.md)\n" if "# giok:" not in old else ""
        return base + head + "".join(line + "\n" for line in missing), missing

    _, sha = ws.edit(ATTRIBUTES, change, "giok: merge driver for the memory files")
    return sha


def remotes(ws: Workspace) -> dict[str, str]:
    out = git.run(ws.root, "remote", "-v", check=False).stdout
    return {p[0]: p[1] for line in out.splitlines() if len(p := line.split()) >= 2 and p[-1] == "(fetch)"}


def add(ws: Workspace, name: str, url: str) -> dict:
    """Add remote NAME at URL (a path, file://, ssh or https) and install the merge driver."""
    if not _NAME_RE.match(name):
        raise InvalidInput(f"invalid remote name {name!r}: letters, digits, . _ - (at most 64)")
    url = url.strip()
    if not url or url.startswith("-") or any(c in url for c in "\n\r\0"):
        raise InvalidInput(f"invalid remote URL {url!r}")
    if name in remotes(ws):
        raise InvalidInput(f"{ws.name} already has a remote {name!r} ({remotes(ws)[name]})")
    with ws.lock():
        git.run(ws.root, "remote", "add", name, url)
        sha = install_driver(ws)
    return {"workspace": ws.name, "remote": name, "url": url, "commit": sha}


# -- sync -----------------------------------------------------------------------------------------
def sync(ws: Workspace, remote: str | None = None, *, adopt_remote: bool = False) -> SyncReport:
    """Pull (merge with the driver) and push the current branch. adopt_remote: the remote's
    history was rewritten (forget --rewrite-history elsewhere): take it, carrying this
    machine's writes since the last sync (giok.store.rewrites)."""
    known = remotes(ws)
    if remote is None:
        if not known:
            raise NotFound(f"{ws.name} has no remote: add one with `giok remote add NAME URL`")
        remote = "origin" if "origin" in known else sorted(known)[0]
    elif remote not in known:
        raise NotFound(f"{ws.name} has no remote {remote!r} (known: {', '.join(sorted(known)) or 'none'})")
    with ws.lock():
        if git.head_id(ws.root) is None:
            raise GitError(f"{ws.name} has no commit yet: write something first")
        branch = git.run(ws.root, "symbolic-ref", "--short", "HEAD").stdout.strip()
        report = SyncReport(ws.name, remote, branch, adopt=adopt_remote)
        report.notes += settle(ws.root)
        install_driver(ws)
        _refuse_dirty(ws)
        before = _numbered_files(ws)
        for _ in range(PUSH_TRIES):
            _pull(ws, report)
            _bury_returned(ws, report)
            if _push(ws, report):
                break
        else:
            raise ConflictError(f"{remote} kept moving during the sync: run `giok sync` again")
        if report.rewritten:
            rewrites.finish(ws, report)
        report.reports += _renumbered_here(ws, before)
    if report.forgets:
        from giok.store import history

        history.drop_snapshots(ws)  # an incoming forget must not stay in a past-state cache
    return report


def _refuse_dirty(ws: Workspace) -> None:
    if _merge_head(ws.root):
        raise ConflictError(
            f"a merge is in progress in {ws.name} (not one giok sync started): finish it "
            f"(`git -C {ws.root} commit`) or undo it (`git -C {ws.root} merge --abort`), then sync again"
        )
    out = git.run(ws.root, "status", "--porcelain", "--untracked-files=no").stdout
    changed = [line[3:] for line in out.splitlines() if line.strip()]
    if changed:
        raise ConflictError(
            f"uncommitted changes in {ws.name} ({', '.join(changed[:5])}): commit them "
            f"(`git -C {ws.root} commit -am ...`) and sync again"
        )


def _pull(ws: Workspace, report: SyncReport) -> None:
    pre = git.rev(ws.root, f"refs/remotes/{report.remote}/{report.branch}")  # what this clone last fetched
    proc = git.run(ws.root, "fetch", "-q", report.remote, check=False)
    if proc.returncode != 0:
        raise GitError(f"cannot fetch {report.remote}: {(proc.stderr or proc.stdout).strip()[-200:]}")
    theirs = git.rev(ws.root, f"refs/remotes/{report.remote}/{report.branch}")
    if theirs is None:
        _refuse_split(ws, report)
        return  # the remote has no such branch yet: the push creates it
    if rewrites.handle(ws, report, pre, theirs):
        return
    ours = git.rev(ws.root, "HEAD") or ""
    if git.is_ancestor(ws.root, theirs, ours):
        return
    refuse_private(ws, theirs, report)
    report.fetched += git.count(ws.root, f"HEAD..{theirs}")
    _incoming_forgets(ws, theirs, report)
    if git.is_ancestor(ws.root, ours, theirs):
        with _marked(ws.root, ours, theirs):
            git.run(ws.root, "merge", "-q", "--ff-only", theirs)
        report.merge = report.merge or "fast-forward"
        return
    report.merge = _merge(ws, theirs, report)


def _incoming_forgets(ws: Workspace, theirs: str, report: SyncReport) -> None:
    """Count the other side's forgets, and note the text each forgotten entry has here: this
    machine's derived data (index, snapshots) must lose it too (giok sync does that)."""
    from giok.store.memoryfile import MemoryFile

    subjects = git.run(ws.root, "log", "--format=%s", f"HEAD..{theirs}", check=False).stdout
    ids = [m.group(1) for s in subjects.splitlines() if (m := _FORGET_RE.match(s))]
    report.forgets += len(ids)
    if ids:
        here = MemoryFile.parse((ws.root / MEMORY).read_bytes() if (ws.root / MEMORY).exists() else b"")
        report.forgotten.update({i: e.text for i in ids if (e := here.find(i)) is not None})
    _incoming_tombstones(ws, theirs, report)


def _incoming_tombstones(ws: Workspace, theirs: str, report: SyncReport) -> None:
    """Entries the other side tombstoned (a forget by id or by --match) that this machine
    holds: its derived data must lose them too."""
    for eid, text in rewrites.held(ws.root, "HEAD", tomb.at(ws.root, theirs), exact=True).items():
        report.forgotten.setdefault(eid, text)


def _refuse_split(ws: Workspace, report: SyncReport) -> None:
    """A remote holding other branches but not ours: pushing would start a second history."""
    prefix = f"refs/remotes/{report.remote}/"
    refs = git.run(ws.root, "for-each-ref", "--format=%(refname)", prefix, check=False).stdout.split()
    others = sorted(r[len(prefix) :] for r in refs if not r.endswith("/HEAD"))
    if others:
        raise ConflictError(
            f"{report.remote} has no branch {report.branch!r} but has {', '.join(others)}: this clone "
            f"started its own history. Clone it again with `git clone --branch {others[0]} URL PATH` "
            f"(then `giok init PATH`), or rename the branch here (`git -C {ws.root} branch -m {others[0]}`) "
            "if it should be that one"
        )


def _merge(ws: Workspace, theirs: str, report: SyncReport) -> str | None:
    with _marked(ws.root, git.rev(ws.root, "HEAD") or "", theirs):
        return _merge_marked(ws, theirs, report)


def _merge_marked(ws: Workspace, theirs: str, report: SyncReport) -> str | None:
    # The driver's reports: a temp file in .giok/ that the next write removes if this one dies.
    fd, log = tempfile.mkstemp(prefix=".merge-report.", suffix=".tmp", dir=ws.data_dir)
    os.close(fd)
    env = {REPORT_ENV: log, THEIRS_ENV: theirs, **git.clock_dates()}
    try:
        proc = git.run(ws.root, "merge", "--no-ff", "--no-commit", theirs, check=False, env=env)
        found = [json.loads(line) for line in Path(log).read_text("utf-8").splitlines() if line.strip()]
    finally:
        Path(log).unlink(missing_ok=True)
    if proc.returncode != 0:
        conflicted = git.run(ws.root, "diff", "--name-only", "--diff-filter=U", check=False).stdout.split()
        git.run(ws.root, "merge", "--abort", check=False)
        ours_to_merge = [p for p in conflicted if merge_driven(p)]
        why = (
            f"giok's merge driver failed on {', '.join(ours_to_merge)}: {(proc.stderr or '').strip()[-200:]}"
            if ours_to_merge
            else "files giok does not merge"
        )
        raise ConflictError(
            f"the sync with {report.remote} conflicts in {', '.join(conflicted) or 'some files'} "
            f"({why}): nothing was changed; merge by hand with "
            f"`git -C {ws.root} merge {report.remote}/{report.branch}`"
        )
    report.reports += found
    lines = [f"Merge-Report: {r['path']}: {r['detail']}" for r in found]
    message = f"sync: merge {report.remote}/{report.branch}" + ("\n\n" + "\n".join(lines) if lines else "")
    proc = git.run(ws.root, "commit", "--no-verify", "-q", "-m", message, check=False, env=git.clock_dates())
    if proc.returncode != 0:
        git.run(ws.root, "merge", "--abort", check=False)
        raise GitError(f"cannot commit the merge: {(proc.stderr or proc.stdout).strip()[-200:]}")
    return git.rev(ws.root, "HEAD")


def _push(ws: Workspace, report: SyncReport) -> bool:
    theirs = git.rev(ws.root, f"refs/remotes/{report.remote}/{report.branch}")
    ahead = git.count(ws.root, f"{theirs}..HEAD" if theirs else "HEAD")
    if theirs is not None and ahead == 0:
        return True
    lease = [f"--force-with-lease=refs/heads/{report.branch}:{report.lease}"] if report.lease else []
    proc = git.run(
        ws.root, "push", "-q", *lease, report.remote, f"HEAD:refs/heads/{report.branch}", check=False
    )
    if proc.returncode == 0:
        report.lease = None
        report.pushed += ahead
        git.run(ws.root, "fetch", "-q", report.remote, check=False)  # the tracking ref moves on
        return True
    out = proc.stderr + proc.stdout
    if "rejected" in out or "fetch first" in out or "non-fast-forward" in out:
        return False
    raise GitError(f"cannot push to {report.remote}: {out.strip()[-200:]}")


def _bury_returned(ws: Workspace, report: SyncReport) -> None:
    """Entries forget tombstoned that the pull brought back (a fast-forward to a commit that
    holds one): removed again in one commit before the push (giok.store.tombstones)."""
    back = tomb.drop_returned(ws)
    if back.entries:
        report.forgotten.update(back.entries)
        report.forgets += len(back.entries)
        report.reports += [
            {
                "path": ", ".join(back.files),
                "kind": "tombstoned",
                "id": eid,
                "detail": f"memory {eid} was forgotten "
                "(state/tombstones.txt) and came back by sync: removed again",
            }
            for eid in sorted(back.entries)
        ]


# -- renumbering, as this machine sees it --------------------------------------------------------
_NUMBERED = ("state/decisions.md", "state/tasks.md")


def _numbered_files(ws: Workspace) -> dict[str, str]:
    """HEAD's blob ids of the decisions and tasks files."""
    return git.head_blobs(ws.root, list(_NUMBERED))


def _renumbered_here(ws: Workspace, before: dict[str, str]) -> list[dict]:
    """Reports for this machine's decisions and tasks whose ids the sync changed (a merge here
    reports the other side's; one made on the other machine is seen only here, by this)."""
    from giok.store.merge import renumbered

    after = _numbered_files(ws)
    out = []
    for rel in _NUMBERED:
        if rel in before and rel in after and before[rel] != after[rel]:
            old, new = git.blob(ws.root, before[rel]) or b"", git.blob(ws.root, after[rel]) or b""
            out += renumbered(rel, old, new)
    return out


# -- a killed sync --------------------------------------------------------------------------------


@contextlib.contextmanager
def _marked(root: Path, head: str, theirs: str) -> Iterator[None]:
    """Mark a merge or fast-forward of `theirs` into `head` as running: if the process dies
    before it is committed, `settle` finds the mark and rolls the work tree back to `head`."""
    mark = root / DATA_DIR / SYNC_MARK
    atomic_write(mark, json.dumps({"head": head, "theirs": theirs, "pid": os.getpid()}).encode())
    try:
        yield
    except GiokError:  # refused or aborted cleanly (the merge's own failure paths abort it)
        mark.unlink(missing_ok=True)
        raise
    mark.unlink(missing_ok=True)


def settle(root: Path) -> list[str]:
    """Under the workspace lock, before a sync or a write: undo what a killed sync left —
    git's lock files and its merge driver's temp files, and a merge or fast-forward that was
    not committed (the work tree and index go back to the commit the sync started from; the
    next sync merges again: every entry is in a commit on one side or the other, so nothing
    is lost). Leaves everything alone while a git process runs here (a plain `git pull`).
    Returns what it did, one note a line."""
    removed = git.recover_locks(root)  # a fetch killed holding a ref's lock, too
    notes = [f"removed git's lock file(s) a killed git left: {', '.join(removed)}"] if removed else []
    mark = root / DATA_DIR / SYNC_MARK
    strays = git.merge_temp_files(root)
    if not strays and not os.path.lexists(mark):
        return notes
    if git.running_in(root):
        return notes
    if os.path.lexists(mark):
        notes += _roll_back(root, _read_mark(mark))
        mark.unlink(missing_ok=True)
    for name in strays:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / name)
    if strays:
        notes.append(f"removed {len(strays)} temp file(s) a killed merge left ({', '.join(strays[:3])})")
    return notes


def _read_mark(mark: Path) -> dict:
    try:
        data = json.loads(mark.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _roll_back(root: Path, mark: dict) -> list[str]:
    head, theirs = str(mark.get("head") or ""), str(mark.get("theirs") or "")
    if not head or git.head_id(root) != head:
        return []  # committed (HEAD moved on), or no mark to trust: nothing to undo
    if _merge_head(root):
        if git.run(root, "merge", "--abort", check=False).returncode != 0:
            git.run(root, "reset", "-q", "--merge", check=False)
        return [f"an interrupted sync's merge of {theirs[:10]} was rolled back; this sync merges again"]
    # Killed inside git's checkout: the files that differ between head and theirs may be half
    # updated. The tree was clean when the sync started (it refuses uncommitted changes).
    if not re.fullmatch(r"[0-9a-f]{40,64}", theirs) or not _rev_root(root, theirs):
        return []
    paths = [
        p
        for p in git.run(root, "diff", "--name-only", "-z", head, theirs, check=False).stdout.split("\0")
        if p
    ]
    if not paths:
        return []
    git.run(root, "reset", "-q", "--", *paths, check=False)
    status = git.run(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths, check=False)
    changed: list[str] = []
    new: list[str] = []
    for item in status.stdout.split("\0"):
        if len(item) > 3:
            (new if item.startswith("??") else changed).append(item[3:])
    if changed:
        git.run(root, "checkout", "-q", head, "--", *changed, check=False)
    theirs_blobs = _blobs(root, theirs, new)
    for rel in new:  # a file theirs adds, written before the kill: removed when it is theirs' exactly
        if rel in theirs_blobs and git.blob_id(root, (root / rel).read_bytes()) == theirs_blobs[rel]:
            (root / rel).unlink()
    if not changed and not new:
        return []
    return [
        f"an interrupted sync's update to {theirs[:10]} was rolled back ({len(changed) + len(new)} file(s))"
    ]


def _rev_root(root: Path, ref: str) -> bool:
    return git.run(root, "cat-file", "-e", ref + "^{commit}", check=False).returncode == 0


def _blobs(root: Path, commit: str, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    out = {}
    for item in git.run(root, "ls-tree", "-z", commit, "--", *paths, check=False).stdout.split("\0"):
        meta, _, name = item.partition("\t")
        if name and meta.split(" ")[1:2] == ["blob"]:
            out[name] = meta.split(" ")[2]
    return out


# -- the driver's side ----------------------------------------------------------------------------
def later_by_git(root: Path, path: str, theirs: str | None = None) -> Callable[[str], str]:
    """key → "ours" | "theirs": whose newest commit since the merge base names the key.
    `theirs`: the commit merged in (giok sync passes it, as $GIOK_MERGE_THEIRS), else MERGE_HEAD."""
    theirs = theirs or _merge_head(root)
    if not theirs:
        return lambda key: "ours"
    base = git.run(root, "merge-base", "HEAD", theirs, check=False).stdout.strip()

    def when(side: str, key: str) -> int:
        if "\0" in key:  # no argument can carry it (a title with a NUL byte): unknown, ours
            return 0
        span = f"{base}..{side}" if base else side
        out = git.run(root, "log", "-1", "--format=%ct", f"-G{re.escape(key)}", span, "--", path, check=False)
        return int(out.stdout.strip() or 0)

    return lambda key: "theirs" if when(theirs, key) > when("HEAD", key) else "ours"


def _merge_head(root: Path) -> str | None:
    gitdir = git.git_dir(root)
    try:
        return (gitdir / "MERGE_HEAD").read_text("ascii").split()[0] if gitdir else None
    except (OSError, IndexError):
        return None


def run_driver(
    base: Path,
    ours: Path,
    theirs: Path,
    path: str,
    root: Path | None = None,
    *,
    their_commit: str | None = None,
    report: Path | None = None,
) -> list[dict]:
    """Merge the three files into `ours` (git's %A) and return the reports (also appended to
    `report`, else .giok/merge-reports.jsonl). `their_commit` and `report` are what giok sync
    hands the driver through git ($GIOK_MERGE_THEIRS, $GIOK_MERGE_REPORT; giok.settings)."""
    from giok.store.merge import MEMORY_RE, Context, merge_file

    root = root or Path.cwd()
    ctx = Context(path, later=later_by_git(root, path, their_commit))
    if MEMORY_RE.match(path):  # what either side forgot stays forgotten
        ctx.tombstones = tomb.for_merge(root, their_commit or _merge_head(root))
    merged = merge_file(path, base.read_bytes(), ours.read_bytes(), theirs.read_bytes(), ctx)
    ours.write_bytes(merged)
    for r in ctx.reports:
        r["at"] = clock.now().isoformat(timespec="seconds")
    target = report or root / ".giok" / "merge-reports.jsonl"
    if ctx.reports:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as out:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in ctx.reports)
    return ctx.reports
