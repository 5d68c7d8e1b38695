"""A remote whose history was rewritten (`giok forget --rewrite-history`), as `giok sync` sees it.

A merge of two histories, one of which rewrote the other's commits, brings every old commit back,
with the forgotten text in it, and its three-way base predates the forgotten entry, so the entry
itself comes back as "added on one side". Neither side of such a sync merges:

- **The machine that rewrote.** `forget --rewrite-history` records where each remote-tracking
  ref pointed before (`record`, in .giok/rewritten.json). Its next `giok sync` finds the remote
  still at (or past) that old tip: it carries onto its own history what others pushed since
  (one commit: a three-way of the files with the old tip as base, `carry`; none of the old
  commits), pushes with `--force-with-lease` on the tip it fetched, and drops the old objects
  from its own .git (`finish`).
- **Every other clone.** `giok sync` finds that the remote's branch no longer holds the commit
  this clone last synced (`last_synced`: the newest value of the remote-tracking ref, before
  the fetch and in its reflog, that HEAD holds). It refuses, changing nothing, and names
  `giok sync --adopt-remote`: one commit on the remote's tip carrying this machine's changes
  since that commit (the same three-way: an entry the remote forgot is removed, one this machine
  wrote since is kept), checked out, pushed, and the old history dropped from this clone.

Both carry forget's tombstones: an entry they name is dropped from every memory file the carry
writes, so no carried change brings one back.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from giok import settings
from giok.errors import ConflictError, GitError
from giok.store import git
from giok.store import tombstones as tomb
from giok.store.layout import DATA_DIR, MEMORY, REWRITTEN
from giok.store.memoryfile import MemoryFile
from giok.store.merge import MEMORY_RE, Context, merge_driven, merge_file
from giok.store.syncreport import SyncReport, refuse_private

if TYPE_CHECKING:
    from giok.store.workspace import Workspace

REFLOG_LOOK = 30  # how many past values of the remote-tracking ref are looked at
_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


# -- the record the rewriting machine keeps -------------------------------------------------------
def _record_path(root: Path) -> Path:
    return root / DATA_DIR / REWRITTEN


def load(root: Path) -> dict[str, str]:
    """remote-tracking ref → the commit it held before this machine rewrote its history."""
    try:
        data = json.loads(_record_path(root).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    ok = re.compile(r"^[0-9a-f]{40,64}$")
    return (
        {k: v for k, v in data.items() if isinstance(v, str) and ok.match(v)}
        if isinstance(data, dict)
        else {}
    )


def _save(root: Path, data: dict[str, str]) -> None:
    path = _record_path(root)
    if not data:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)


def record(root: Path) -> None:
    """Before a history rewrite: remember every remote-tracking ref's commit (a ref already
    recorded keeps its first value: that is what the remote still holds)."""
    out = git.run(
        root, "for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes", check=False
    ).stdout
    data = load(root)
    for line in out.splitlines():
        sha, _, ref = line.partition(" ")
        if ref and not ref.endswith("/HEAD"):
            data.setdefault(ref, sha)
    _save(root, data)


# -- detection ------------------------------------------------------------------------------------
def last_synced(root: Path, tracking: str, pre: str | None, theirs: str) -> str | None:
    """The commit this clone last synced when the remote no longer holds it, else None: the
    newest value of the remote-tracking ref (before this fetch, then its reflog) that HEAD
    holds; None when that one is in the remote's branch too (an ordinary sync)."""
    log = git.run(root, "log", "-g", f"-n{REFLOG_LOOK}", "--format=%H", tracking, "--", check=False)
    seen: set[str] = set()
    for value in [pre or "", *log.stdout.split()]:
        if not value or value == theirs or value in seen:
            continue
        seen.add(value)
        if git.is_ancestor(root, value, "HEAD"):
            return None if git.is_ancestor(root, value, theirs) else value
    return None


def handle(ws: Workspace, report: SyncReport, pre: str | None, theirs: str) -> bool:
    """Called by giok sync after the fetch. True when this module took care of the pull (HEAD
    now holds what must be pushed; report.lease set for a forced push); False for an ordinary
    sync. Raises ConflictError, changing nothing, for a clone the remote rewrote away from
    when --adopt-remote was not given."""
    root = ws.root
    tracking = f"refs/remotes/{report.remote}/{report.branch}"
    head = git.rev(ws.root, "HEAD") or ""
    recorded = load(root)
    was = recorded.get(tracking)
    if was is not None:
        if not git.is_ancestor(root, was, theirs):
            recorded.pop(
                tracking
            )  # published already (a force-push by hand), or the remote moved on elsewhere
            _save(root, recorded)
        elif git.is_ancestor(root, was, head):
            raise ConflictError(_merged_back(ws, report, was))
        else:
            refuse_private(ws, theirs, report)
            incoming = held(root, head, tomb.at(root, theirs))  # what others forgot since the rewrite
            new = carry(ws, was, head, theirs, parent=head, message=_carry_message(ws, report, was, theirs))
            _dropped(ws, report, head, new, incoming)
            _checkout(ws, report.branch, new)
            report.fetched += git.count(ws.root, f"{was}..{theirs}")
            report.lease, report.rewritten = theirs, "published"
            report.merge = report.merge or (new if new != head else None)
            report.notes.append(
                f"pushed the history this machine rewrote (forget --rewrite-history) over "
                f"{report.remote}/{report.branch}; every other clone's next `giok sync` asks it to run "
                "`giok sync --adopt-remote`"
            )
            return True
    synced = last_synced(root, tracking, pre, theirs)
    if synced is None:
        return False
    stones = tomb.at(root, theirs).union(tomb.at(root, head))
    was_held = held(root, synced, stones)
    holds = {**was_held, **held(root, head, stones)}
    local = git.count(ws.root, f"{synced}..HEAD")
    if not report.adopt:
        what = (
            f"it forgot {', '.join(sorted(holds)[:5])}{' and more' if len(holds) > 5 else ''}"
            " (giok forget --rewrite-history) and this clone still holds"
            f" {'them' if len(holds) > 1 else 'it'}"
            if holds
            else "a history rewrite, such as `giok forget --rewrite-history` on another machine"
        )
        raise ConflictError(
            f"{report.remote}/{report.branch} was rewritten: it no longer holds {synced[:10]}, the commit "
            f"this clone last synced ({what}). Merging would bring the rewritten-away commits and what was "
            f"forgotten back, so nothing was merged or pushed. Run `giok -w {ws.name} sync --adopt-remote`: "
            f"it takes {report.remote}/{report.branch} as it is now, carries over what this machine wrote "
            f"since {synced[:10]} ({local} commit{'s' if local != 1 else ''}), and drops the old history "
            "from this clone (or clone the remote again)"
        )
    refuse_private(ws, theirs, report)
    message = (
        f"sync: adopt the rewritten {report.remote}/{report.branch}\n\n"
        f"Carried: this machine's {local} commit(s) since {synced[:10]}, the last commit synced"
    )
    new = carry(ws, synced, theirs, head, parent=theirs, message=message)
    gone = _dropped(ws, report, head, new, holds)
    report.forgotten_texts += [text for eid, text in was_held.items() if eid in gone and text != gone[eid]]
    report.fetched += git.count(ws.root, f"{head}..{theirs}")
    _checkout(ws, report.branch, new)
    report.rewritten, report.merge = "adopted", new
    report.notes.append(
        f"adopted the rewritten {report.remote}/{report.branch}: "
        f"{local} commit(s) of this machine carried over"
        + (f", {len(gone)} forgotten entr{'ies' if len(gone) != 1 else 'y'} dropped" if gone else "")
        + "; the old history was dropped from this clone"
    )
    return True


def _merged_back(ws: Workspace, report: SyncReport, was: str) -> str:
    """The refusal for a machine that rewrote its history and then merged the old one back in
    (a plain `git pull` of the remote it had not yet pushed over): pushing would publish every
    old commit, the forgotten text in them."""
    chain = git.run(ws.root, "rev-list", "--first-parent", "-n", "200", "HEAD", check=False).stdout.split()
    before = next((c for c in chain if not git.is_ancestor(ws.root, was, c)), None)
    reset = (
        f"reset the branch to the rewritten history (`git -C {ws.root} reset --keep {before[:10]}`, "
        "the last commit of this branch without the old history; commits made after the merge "
        "must be made again), or "
        if before
        else ""
    )
    return (
        f"this clone rewrote its history (giok forget --rewrite-history) and has since merged the old "
        f"history of {report.remote}/{report.branch} back in (HEAD holds {was[:10]}, the remote's tip before "
        "the rewrite, with what was forgotten in its commits): pushing would publish the old commits again, "
        f"so nothing was merged or pushed. To go on, {reset}rewrite it again "
        "(`giok forget --match TEXT --rewrite-history`), then `giok sync`"
    )


def _dropped(ws: Workspace, report: SyncReport, head: str, new: str, named: dict[str, str]) -> dict[str, str]:
    """Of `named` (id → text held at head), the entries the carried commit `new` no longer
    holds: put in the report for this machine's derived data to lose (index, snapshots,
    .giok/ caches), with every file the carry changed for the index to read again."""
    now = {
        e.id
        for rel in memory_files(ws.root, new)
        for e in MemoryFile.parse(tomb.show(ws.root, new, rel) or b"").entries()
    }
    gone = {eid: text for eid, text in named.items() if eid not in now}
    report.forgotten.update(gone)
    report.forgets += len(gone)
    report.purge_paths += git.run(ws.root, "diff", "--name-only", "-z", head, new).stdout.split("\0")[:-1]
    return gone


def held(root: Path, commit: str, stones: tomb.Tombstones, *, exact: bool = False) -> dict[str, str]:
    """id → text of the entries commit's memory files hold under a tombstoned id (the forgotten
    text, or an edit of it made since); exact: only those the tombstones hold, id and text."""
    if not stones:
        return {}
    out: dict[str, str] = {}
    for rel in memory_files(root, commit):
        for e in MemoryFile.parse(tomb.show(root, commit, rel) or b"").entries():
            if e.id in stones.ids and (not exact or stones.holds(e)):
                out.setdefault(e.id, e.text)
    return out


def memory_files(root: Path, commit: str) -> list[str]:
    """The memory files (MEMORY.md, memory/archive/*.md) commit's tree holds."""
    names = git.run(
        root, "ls-tree", "-r", "-z", "--name-only", commit, "--", MEMORY, "memory/archive", check=False
    )
    return [n for n in names.stdout.split("\0") if n and MEMORY_RE.match(n)]


def _carry_message(ws: Workspace, report: SyncReport, was: str, theirs: str) -> str:
    return (
        f"sync: carry {report.remote}/{report.branch} onto the rewritten history\n\n"
        f"Carried: the remote's commits since {was[:10]} (up to {theirs[:10]}), the tip before the rewrite"
    )


# -- the three-way carry --------------------------------------------------------------------------
def _changes(root: Path, a: str, b: str) -> dict[str, tuple[str, str] | None]:
    """path → (mode, blob) in b, or None (deleted), for every path that differs from a."""
    out = git.run(root, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", a, b).stdout.split("\0")
    changes: dict[str, tuple[str, str] | None] = {}
    for meta, path in zip(out[0::2], out[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) < 5 or not path:
            continue
        changes[path] = None if parts[4].startswith("D") else (parts[1], parts[3])
    return changes


def _later(root: Path, path: str, base: str, keep: str, other: str) -> Callable[[str], str]:
    """key → "ours" (keep) | "theirs" (other): whose newest commit since base names the key."""

    def when(side: str, key: str) -> int:
        out = git.run(
            root,
            "log",
            "-1",
            "--format=%ct",
            f"-G{re.escape(key)}",
            f"{base}..{side}",
            "--",
            path,
            check=False,
        )
        return int(out.stdout.strip() or 0)

    return lambda key: "theirs" if when(other, key) > when(keep, key) else "ours"


def carry(ws: Workspace, base: str, keep: str, other: str, *, parent: str, message: str) -> str:
    """A commit on `parent` whose tree is keep's with the changes other made since base: a path
    only other changed takes other's version; one both changed is merged three ways (giok's
    driver rules for the memory files, `git merge-file` for other text); every memory file
    written loses the entries the tombstones of both sides name. Returns parent itself when
    the tree is parent's. ConflictError (nothing changed) when a file cannot be merged."""
    root = ws.root
    mine, theirs = _changes(root, base, keep), _changes(root, base, other)
    stones = tomb.at(root, keep).union(tomb.at(root, other))
    result: dict[str, tuple[str, bytes] | None] = {}
    for path, change in theirs.items():
        if path in mine and mine[path] == change:
            continue
        if path not in mine:
            result[path] = None if change is None else (change[0], _blob(root, change[1]))
            continue
        ours_change = mine[path]
        if change is None or ours_change is None:
            raise ConflictError(
                f"{path} was changed on one side and removed on the other since {base[:10]}: nothing was "
                f"changed; merge it by hand (`git -C {root} merge` is not safe here: it would bring the old "
                "history back), or clone the remote again"
            )
        old = tomb.show(root, base, path) or b""
        a, b = _blob(root, ours_change[1]), _blob(root, change[1])
        if merge_driven(path):
            ctx = Context(path, later=_later(root, path, base, keep, other), tombstones=stones)
            merged = merge_file(path, old, a, b, ctx)
        else:
            merged = _merge_text(root, path, old, a, b)
        result[path] = (ours_change[0], merged)
    for path, item in list(result.items()):
        if item is not None and MEMORY_RE.match(path):
            result[path] = (item[0], tomb.drop(item[1], stones)[0])
    if not result and parent == keep:
        return parent
    return _commit(root, keep, result, parent, message)


def _blob(root: Path, sha: str) -> bytes:
    data = git.blob(root, sha)
    if data is None:
        raise GitError(f"cannot read blob {sha[:10]} in {root}")
    return data


def _merge_text(root: Path, path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    with tempfile.TemporaryDirectory(prefix="giok-carry-") as tmp:
        files = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_bytes(data)
            files.append(str(Path(tmp) / name))
        proc = subprocess.run(["git", "merge-file", "-p", "-q", *files], capture_output=True, env=_env())
    if proc.returncode != 0:
        raise ConflictError(
            f"{path} was changed on both sides since the last sync and does not merge: nothing was "
            "changed; bring the two versions together by hand in one clone, then sync again (or clone "
            "the remote again)"
        )
    return proc.stdout


def _env(**extra: str) -> dict[str, str]:
    return settings.child_env(**{**_ENV, **extra})


def _commit(
    root: Path, tree_of: str, result: dict[str, tuple[str, bytes] | None], parent: str, message: str
) -> str:
    with tempfile.TemporaryDirectory(prefix="giok-carry-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git.run(root, "read-tree", tree_of, env=env)
        for path, item in sorted(result.items()):
            if item is None:
                git.run(root, "update-index", "--force-remove", "--", path, env=env)
                continue
            proc = subprocess.run(
                ["git", "-C", str(root), "hash-object", "-w", "--stdin"],
                input=item[1],
                capture_output=True,
                env=_env(),
            )
            if proc.returncode != 0:
                raise GitError(
                    f"cannot store {path} in {root}: {proc.stderr.decode(errors='replace').strip()[-200:]}"
                )
            sha = proc.stdout.decode().strip()
            git.run(root, "update-index", "--add", "--cacheinfo", f"{item[0]},{sha},{path}", env=env)
        tree = git.run(root, "write-tree", env=env).stdout.strip()
    return git.run(
        root, "commit-tree", tree, "-p", parent, "-m", message, env=git.clock_dates()
    ).stdout.strip()


def _checkout(ws: Workspace, branch: str, new: str) -> None:
    """Point the branch at new and the work tree with it, in one git process (a clean work
    tree: giok sync checked; `--keep` refuses to overwrite anything else)."""
    if new != git.run(ws.root, "rev-parse", "HEAD").stdout.strip():
        git.run(ws.root, "reset", "-q", "--keep", new)


# -- after the push -------------------------------------------------------------------------------
def finish(ws: Workspace, report: SyncReport) -> None:
    """After a published or adopted rewrite was pushed: forget the record and drop the old
    commits from this clone's .git: the reflogs of the synced branch, its remote-tracking ref
    and HEAD expired, ORIG_HEAD removed, then gc --prune=now. Stashes, other branches and tags
    (and their reflogs) keep what they point at."""
    tracking = f"refs/remotes/{report.remote}/{report.branch}"
    recorded = load(ws.root)
    if recorded.pop(tracking, None) is not None:
        _save(ws.root, recorded)
    git.run(ws.root, "update-ref", "-d", "ORIG_HEAD", check=False)  # the reset's old tip
    refs = [f"refs/heads/{report.branch}", tracking, "HEAD"]
    git.run(ws.root, "reflog", "expire", "--expire=now", "--expire-unreachable=now", *refs, check=False)
    git.run(ws.root, "gc", "--prune=now", "-q", check=False)
