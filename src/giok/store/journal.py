"""The intent journal: a write is all or nothing, even when the process is killed.

Before a write touches a file it records, in `.giok/journal.json` (written atomically), the
commit message and, per file, where the bytes it had are kept (`.giok/journal-N.before`, a hard
link to the old file where possible: giok replaces files by rename, so the link holds the old
bytes without copying them) or that it did not exist, and the git blob id of the bytes it will
get (or that it will be deleted). A file that only grows by a few bytes at its end (a remember
into the last layer, a diary line) is written in place instead (fsutil.append_write) and
journaled by what the write adds: the old size, the bytes just before it and the added bytes
(`appends`); nothing of the old file is copied or hashed. After the commit the journal and the
kept bytes are removed.
Whoever next takes the workspace lock to write finds a journal left behind by a killed writer
and settles it with `recover`:

- HEAD moved past the journal's HEAD and holds every file's new bytes: the write was
  committed; only the index entries of its files are reset to HEAD (a commit killed after
  it moved the branch leaves a stale index) and the journal goes.
- Otherwise, when every file holds its new or its old bytes, the write is rolled back: each
  gets its old bytes again (a new file is removed; an appended file is cut back to its old
  size, also when the append was cut short). Whatever `git add` had staged for these files is
  unstaged.
- A file that holds anything else was edited by hand after the crash. Rolling the others back
  could then lose what the edit builds on, so the write is finished instead: its files are
  committed as they stand under its own message, with a line naming the hand-edited files.

Rolled back, not forward: the killed process never said it succeeded, so its caller retries
it; a write rolled forward as well would then happen twice (a diary line, a decision, a
second entry).

Nothing that names the journal's files can steer a write out of the workspace: `.giok/` is
giok's own and never comes from git (giok sync refuses commits that track it: giok.store.remote),
a `.giok/` that git tracks here is refused (`untrusted`), and a journal naming anything but a
plain relative path inside the workspace (absolute, `..`, through a symlink leading out, under
`.git/` or `.giok/`) is refused whole: moved aside to `.giok/journal.rejected.json`, never
acted on (`confined`)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import NoReturn

from giok.errors import WorkspaceError
from giok.store import git
from giok.store.fsutil import atomic_write, check_link, fsync_dir
from giok.text.lazy import lazy

NAME = "journal.json"
VERSION = 3  # 3: appends journaled by their added bytes; 2: the old bytes kept beside (journal-N.before)
PAGE = 4096  # an append that stays inside one page of the file is seen whole or not at all
WINDOW = 1024  # the old bytes kept of an appended file: those just before the added ones
REJECTED = "journal.rejected.json"  # a journal naming a path outside the workspace, moved aside
_KEPT_RE = lazy(r"^journal-[0-9]{1,6}\.before$")
_PRIVATE = (".git", ".giok")  # no journal names a file under these


def path(root: Path) -> Path:
    return root / ".giok" / NAME


def appends(old: bytes | None, new: bytes | None) -> bool:
    """Whether `new` is `old` (a file that exists and is not empty) with bytes added at its
    end, all inside one page (PAGE bytes) of the file: such a write goes into the file in place
    (fsutil.append_write). Within a page the kernel copies the bytes before it moves the file's
    size, so a reader without the lock sees the old file or the new one, never part of a line,
    and a killed process does not cut the write short (an append across a page boundary, a few
    % of remember's lines, replaces the file as any other write)."""
    return (
        bool(old)
        and new is not None
        and old is not None
        and len(old) < len(new)
        and len(old) // PAGE == (len(new) - 1) // PAGE
        and new.startswith(old)
    )


def begin(
    root: Path,
    message: str,
    changes: dict[str, bytes | None],
    known: dict[str, bytes] | None = None,
    appended: Collection[str] = (),
) -> dict[str, bytes | None]:
    """Record the intent to give each rel of `changes` its new bytes (None: delete it).
    Returns the bytes each file has now (None: absent), as recorded. `known`: bytes the caller
    read under the lock and checks again when it writes (not read back here); `appended`: rels
    of `known` the caller writes in place (fsutil.append_write, which writes only the bytes
    past the old size) because it found that the change `appends` to them."""
    _drop_kept(root)  # what a writer killed before its journal was whole left
    known = known or {}
    files: dict[str, dict] = {}
    grown: dict[str, dict] = {}
    previous: dict[str, bytes | None] = {}
    for n, (rel, new) in enumerate(changes.items()):
        if rel in appended and rel in known and new is not None:
            old = known[rel]
            previous[rel] = old
            grown[rel] = {
                "size": len(old),
                "window": _b64(old[-WINDOW:]),
                "added": _b64(new[len(old) :]),
            }
            continue
        kept, previous[rel] = _keep(root, rel, n, known.get(rel))
        files[rel] = {
            **({"before": None} if kept is None else {"kept": kept}),
            "after": None if new is None else git.blob_id(root, new),
        }
    data = {
        "version": VERSION,
        "pid": os.getpid(),
        "started": dt.datetime.now().isoformat(timespec="seconds"),
        "head": git.head_id(root),
        "message": message,
        "files": {},  # a giok that reads only version 1 finds nothing to undo here
        "writes": files,
        "appends": grown,  # nor does one of version 2 here: an append it leaves is a hand edit then
    }
    atomic_write(path(root), json.dumps(data, ensure_ascii=False).encode("utf-8"))
    if grown:  # an append changes the file in place: its journal must be on disk before it is
        fsync_dir(path(root).parent)
    return previous


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _keep(root: Path, rel: str, n: int, known: bytes | None = None) -> tuple[str | None, bytes | None]:
    """Keep the bytes a file has before the write beside the journal: (where, the bytes), or
    (None, None) when it does not exist. A hard link to the file where one can be made (giok
    replaces the files it links, never writes into them, so the link keeps the old bytes at no
    cost; they are read through it unless the caller read them: `known`), else a copy."""
    name = f"journal-{n}.before"
    kept = root / ".giok" / name
    kept.unlink(missing_ok=True)
    target = root / rel
    if target.is_file() and not target.is_symlink():
        check_link(target)
        with contextlib.suppress(OSError):
            os.link(target, kept, follow_symlinks=False)
            return name, kept.read_bytes() if known is None else known
    old = _current(root, rel)
    if old is None:
        return None, None
    atomic_write(kept, old)
    return name, old


def _before(root: Path, f: dict) -> bytes | None:
    """The bytes a journaled file had (None: it did not exist); version 1 kept them inline."""
    if f.get("kept"):
        return (root / ".giok" / str(f["kept"])).read_bytes()
    return None if f.get("before") is None else base64.b64decode(f["before"])


def _drop_kept(root: Path) -> None:
    with contextlib.suppress(OSError), os.scandir(root / ".giok") as found:
        for kept in found:
            if kept.name.startswith("journal-") and kept.name.endswith(".before"):
                os.unlink(kept.path)


def end(root: Path) -> None:
    path(root).unlink(missing_ok=True)
    _drop_kept(root)


def load(root: Path) -> dict | None:
    """The journal left behind, or None. A journal that does not parse (never written whole:
    it is renamed into place) counts as none."""
    try:
        data = json.loads(path(root).read_bytes())
    except FileNotFoundError:
        return None
    except ValueError:
        return {"version": VERSION, "head": None, "message": "", "files": {}, "unreadable": True}
    if isinstance(data, dict) and isinstance(data.get("writes"), dict):
        data["files"] = data.pop("writes")  # version 2: the records, out of version 1's sight
        appended = data.pop("appends", None)
        if isinstance(appended, dict):  # version 3: the appends, out of version 2's sight
            data["files"].update({rel: {"append": f} for rel, f in appended.items()})
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None


def committed(root: Path, data: dict) -> bool:
    files = data["files"]
    if not files or git.head_id(root) in (None, data.get("head")):
        return False
    blobs = git.head_blobs(root, list(files))
    return all(
        (rel in blobs and _grown(f, git.blob(root, blobs[rel])) == "new")
        if "append" in f
        else blobs.get(rel) == f.get("after")
        for rel, f in files.items()
    )


def recover(root: Path) -> dict | None:
    """Settle a journal a killed writer left (the caller holds the workspace lock). Returns
    {message, committed, restored, kept} or None when there was none. Raises WorkspaceError,
    acting on nothing, for a journal giok did not write: `.giok/` tracked by git (`untrusted`),
    or one naming a path outside the workspace (`confined`; moved aside first)."""
    data = load(root)
    if data is None:
        return None
    why = untrusted(root)
    if why:
        raise WorkspaceError(f"refused to recover the interrupted-write journal of {root}: {why}")
    bad = outside(root, data)
    if bad:
        _reject(root, bad)
    done = {
        "message": data.get("message", ""),
        "committed": committed(root, data),
        "restored": [],
        "kept": [],
        "finished": [],
    }
    if data["files"]:
        git.run(root, "reset", "-q", "--", *data["files"], check=False)
    if not done["committed"]:
        states = {rel: _state(root, rel, f) for rel, f in data["files"].items()}
        edited = [rel for rel, state in states.items() if state == "edited"]
        if edited:
            done["finished"], done["kept"] = _finish(root, data, states, edited), edited
        else:
            done["restored"], done["kept"] = roll_back(root, data["files"])
    end(root)
    return done


def untrusted(root: Path) -> str | None:
    """Why the journal in `root` cannot be giok's own (None: it can): `.giok` is a symlink, or
    git tracks something under it (it came from a commit, so anyone with push access wrote it)."""
    data_dir = root / ".giok"
    if data_dir.is_symlink():
        return ".giok is a symlink; giok keeps its own state there and writes nothing through it"
    tracked = git.run(root, "ls-files", "-z", "--", ".giok", check=False).stdout.split("\0")
    tracked = [t for t in tracked if t]
    if tracked:
        return (
            f"git tracks {tracked[0]}{f' and {len(tracked) - 1} more' if len(tracked) > 1 else ''}, "
            f"and giok never acts on what a commit can write. Untrack it (`git -C {root} rm -r "
            f"--cached .giok && git -C {root} commit -m 'untrack .giok'`) and push that"
        )
    return None


def confined(root: Path, rel: object) -> str | None:
    """Why `rel` is no path a journal may name (None: it may): it must be a plain relative
    path inside the workspace, not under .git/ or .giok/, not reached through a symlinked
    folder that leads outside."""
    if not isinstance(rel, str) or not rel or any(c in rel for c in "\0\\"):
        return "not a plain relative path"
    if rel.startswith(("/", ":")) or os.path.isabs(rel):
        return "an absolute path or a git pathspec"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "not a plain relative path (.. or an empty part)"
    if any(part.lower() in _PRIVATE for part in parts):
        return "under .git/ or .giok/"
    real_root = os.path.realpath(root)
    parent = os.path.realpath(os.path.join(root, *parts[:-1]))
    if parent != real_root and not parent.startswith(real_root + os.sep):
        return "reached through a symlink that leads outside the workspace"
    return None


def outside(root: Path, data: dict) -> str | None:
    """The first thing in a loaded journal that is not giok's to act on, described (None: all is)."""
    for rel, f in data["files"].items():
        why = confined(root, rel)
        if why is None and not _well_formed(f):
            why = "a record giok does not write"
        if why:
            return f"it names {rel!r}: {why}"
    return None


def _well_formed(f: object) -> bool:
    if not isinstance(f, dict):
        return False
    if "append" in f:
        r = f["append"]
        return (
            isinstance(r, dict)
            and isinstance(r.get("size"), int)
            and r["size"] >= 0
            and all(isinstance(r.get(k), str) for k in ("window", "added"))
        )
    kept = f.get("kept")
    return (kept is None or (isinstance(kept, str) and bool(_KEPT_RE.match(kept)))) and all(
        f.get(k) is None or isinstance(f.get(k), str) for k in ("before", "after")
    )


def _reject(root: Path, why: str) -> NoReturn:
    """Move a journal that names something outside the workspace aside, act on none of it."""
    aside = root / ".giok" / REJECTED
    os.replace(path(root), aside)
    _drop_kept(root)
    message = (
        f"refused the interrupted-write journal of {root}: {why}. giok writes no such journal, so "
        f"nothing in it was undone or redone; it was moved to {aside} (read it, then delete it). "
        "Run the command again"
    )
    import logging  # here: loading it cost every command ~8 ms

    logging.getLogger(__name__).warning(message)
    raise WorkspaceError(message)


def _state(root: Path, rel: str, f: dict) -> str:
    """old, new or edited: what a journaled file holds now; cut (an append cut short: its
    old bytes and the first of the added ones)."""
    if "append" in f:
        return _grown(f, _current(root, rel))
    try:
        before = _before(root, f)
    except OSError:
        return "edited"  # the kept bytes are gone: finish the write rather than guess
    now = _current(root, rel)
    if now == before:
        return "old"
    return "new" if (None if now is None else git.blob_id(root, now)) == f.get("after") else "edited"


def _grown(f: dict, now: bytes | None) -> str:
    """What `now` is to an append record: old (the old size, the bytes before the added ones as
    they were: an edit in place before them does not count, the append would not touch it),
    new (the added bytes after them), cut (some of them) or edited (anything else)."""
    size, window, added = _appended(f)
    if now is None or len(now) < size or now[size - len(window) : size] != window:
        return "edited"
    grown = now[size:]
    if not grown:
        return "old"
    if grown == added:
        return "new"
    return "cut" if added.startswith(grown) else "edited"


def _appended(f: dict) -> tuple[int, bytes, bytes]:
    record = f["append"]
    return int(record["size"]), base64.b64decode(record["window"]), base64.b64decode(record["added"])


def _finish(root: Path, data: dict, states: dict[str, str], edited: list[str]) -> list[str]:
    """A file of the interrupted write was edited by hand after the crash: rolling the others
    back could take away what the hand edit builds on (the entry distill archived, the line a
    write added), so what was written is committed as it stands, under the write's message,
    hand edit included and named. Nothing is lost; git log says what happened."""
    paths = [rel for rel, state in states.items() if state != "old"]
    for rel, state in states.items():
        if state == "cut":  # finished means whole: the rest of the added bytes, as journaled
            size, _, added = _appended(data["files"][rel])
            now = _current(root, rel) or b""
            atomic_write(root / rel, now[:size] + added)
    note = (
        f"\n\nFinished after an interrupted write: {', '.join(edited)} changed by hand since; "
        f"committed as found."
    )
    git.commit(root, paths, (data.get("message") or "giok: an interrupted write") + note)
    return paths


def roll_back(root: Path, files: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Give each file its recorded old bytes when it holds the old or the new ones."""
    restored, kept = [], []
    for rel, f in files.items():
        state = _state(root, rel, f)
        if state == "old":
            continue
        if state == "edited":
            kept.append(rel)  # changed again after the crash: a hand edit, not ours to undo
            continue
        target = root / rel
        if "append" in f:  # new or cut: back to the old size (what is before it was never written)
            atomic_write(target, (_current(root, rel) or b"")[: _appended(f)[0]])
            restored.append(rel)
            continue
        before = _before(root, f)
        if before is None:
            target.unlink(missing_ok=True)
            _prune_empty(root, target.parent)
        else:
            atomic_write(target, before)
        restored.append(rel)
    return restored, kept


def describe(root: Path) -> str | None:
    """A read-only account of a pending journal, for `giok check`."""
    data = load(root)
    if data is None:
        return None
    why = untrusted(root) or outside(root, data)
    if why:
        return f"a journal giok did not write is waiting ({why}); the next giok write refuses it"
    subject = (data.get("message") or "").split("\n", 1)[0] or "?"
    if committed(root, data):
        return f"an interrupted write ({subject!r}) was committed; the next write clears its journal"
    return (
        f"an interrupted write ({subject!r}, started {data.get('started', '?')}) left "
        f"{len(data['files'])} file(s) half-written; the next giok write rolls it back"
    )


def _current(root: Path, rel: str) -> bytes | None:
    target = root / rel
    if not os.path.lexists(target):
        return None
    from giok.store.fsutil import read_bytes

    return read_bytes(target) if target.is_file() else None


def _prune_empty(root: Path, folder: Path) -> None:
    while folder != root and root in folder.parents:
        with contextlib.suppress(OSError):
            folder.rmdir()
            folder = folder.parent
            continue
        return
