"""One transaction for every write: lock → write / delete / rename → commit → roll back on failure.

A `Transaction` collects the changes of one write (new bytes, deletions, renames), then
`commit` journals them (giok.store.journal), writes each file atomically (refusing one whose
bytes changed since the caller read them; a file the caller read that only grows at its end
gets just the added bytes, in place, journaled by them), commits them in one git commit and
clears the journal. When a write or the commit fails — the process's death included — every file gets
its previous bytes back (a new file is removed), so files and history never disagree.

The workspace opens it under its lock (`Workspace.transaction`, `edit`, `write_files`); the
helpers here run with the lock held."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from giok.errors import GitError
from giok.store import git, journal
from giok.store.fsutil import append_write, atomic_write, check_link, clean_temp_files, read_bytes
from giok.store.layout import DATA_DIR

Message = str | Callable[[], str]


class Transaction:
    """The changes of one write in a workspace (root), applied and committed by `commit`."""

    def __init__(self, root: Path, message: Message):
        self.root = root
        self.message = message
        self.writes: dict[str, bytes | None] = {}
        self.expected: dict[str, bytes] = {}
        self.commit_id: str | None = None

    def read(self, rel: str) -> bytes:
        """The bytes rel will have: planned in this transaction, else on disk."""
        if rel in self.writes:
            data = self.writes[rel]
            return b"" if data is None else data
        return read_bytes(self.root / rel)

    def write(self, rel: str, data: bytes, expected: bytes | None = None) -> None:
        """Give rel new bytes; `expected`: the bytes the caller planned from (else those
        journaled), checked when the file is written."""
        self.writes[rel] = data
        if expected is not None:
            self.expected[rel] = expected

    def delete(self, rel: str) -> None:
        self.writes[rel] = None

    def rename(self, old: str, new: str) -> None:
        """Move a file: new gets old's bytes, old is deleted (in the same commit)."""
        data = self.read(old)
        self.delete(old)
        self.write(new, data)

    def commit(self, hand_edits: bool = True) -> str | None:
        """Apply and commit (nothing to do: None). `hand_edits`: first commit, on their own,
        hand edits of the written files (see `commit_hand_edits`)."""
        if not self.writes:
            return None
        if hand_edits:
            commit_hand_edits(self.root, list(self.writes))
        message = self.message() if callable(self.message) else self.message
        grown = {rel for rel, old in self.expected.items() if journal.appends(old, self.writes.get(rel))}
        previous = journal.begin(self.root, message, self.writes, self.expected, grown)
        try:
            for rel, data in self.writes.items():
                path = self.root / rel
                if data is None:
                    if os.path.lexists(path):
                        path.unlink()
                    continue
                old = self.expected.get(rel, previous[rel])
                if rel in grown:  # only the added bytes, in place: journaled by them (docs/architecture.md)
                    try:
                        append_write(path, data, self.expected[rel])
                        continue
                    except PermissionError:  # a read-only file in a writable folder is replaced, as before
                        pass
                atomic_write(path, data, expected_checksum=old or b"")  # the bytes compared, not hashed
            self.commit_id = git.commit(self.root, list(self.writes), message)
        except BaseException:
            roll_back(self.root)
            raise
        journal.end(self.root)
        return self.commit_id


def require_git(root: Path, identity: bool = False) -> None:
    """Guard before writing. By default no git process runs: `git.commit` checks the identity
    and a write whose commit fails is rolled back. `identity=True` checks it first, for changes
    that may need no commit at all."""
    if not (root / ".git").exists():
        raise GitError(f"{root} is not a git repository; run `giok init {root}` to adopt it")
    if identity and not git.has_identity(root):
        raise GitError(
            f"no git identity in {root}: run `git -C {root} config user.name NAME` and `... user.email EMAIL`"
        )


def prepare(root: Path, rels: list[str] | tuple[str, ...]) -> dict | None:
    """Before a write, under the lock: remove the git locks and temp files killed processes
    left, settle an interrupted write's journal, and commit hand edits of `rels` as their own
    commit, so giok's commit holds only giok's change. Returns the journal's account."""
    git.recover_locks(root)
    _settle_sync(root)
    settled = journal.recover(root)
    clean_temp_files(root)
    if rels:
        commit_hand_edits(root, list(rels))
    return settled


def _settle_sync(root: Path) -> None:
    """A sync killed during its merge left it uncommitted (git refuses giok's commit then):
    roll it back first (giok.store.remote.settle; one stat when there is nothing)."""
    if os.path.lexists(root / DATA_DIR / "sync.json") or any(
        name.startswith(".merge_file_") for name in os.listdir(root)
    ):
        from giok.store import remote

        remote.settle(root)


def commit_hand_edits(root: Path, rels: list[str]) -> str | None:
    """Commit, as `hand edit: …`, what changed in the tracked files of rels since the last
    commit (no giok write explains it: the journal was settled first), before giok writes
    them. A path through a symlink is refused first (fsutil.check_link)."""
    for rel in rels:
        check_link(root / rel, write=True)
    tracked = _tracked(root, rels)
    present = [rel for rel in rels if os.path.lexists(root / rel) or rel in tracked]
    if not present:
        return None
    out = git.run(
        root,
        "--no-optional-locks",
        "status",
        "--porcelain",
        "-z",
        "--untracked-files=no",
        "--",
        *present,
        check=False,
    ).stdout.split("\0")
    dirty, skip = [], False
    for item in out:
        if skip or len(item) < 4:
            skip = False
            continue
        if not item.startswith("??"):  # a file git never tracked is adopted by giok's own commit
            dirty.append(item[3:])
        skip = item[0] in "RC"  # a rename's old path follows
    if not dirty:
        return None
    names = ", ".join(sorted(dirty)[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
    return git.commit(
        root,
        sorted(dirty),
        f"hand edit: {names}\n\nChanged in the work tree outside "
        f"giok; committed on its own before giok's next write to it.",
    )


def _tracked(root: Path, rels: list[str]) -> set[str]:
    missing = [rel for rel in rels if not os.path.lexists(root / rel)]
    if not missing:
        return set()
    return set(git.run(root, "ls-files", "-z", "--", *missing, check=False).stdout.split("\0"))


def roll_back(root: Path) -> None:
    """Undo the journaled write in progress (lock held): files get their previous bytes, so
    files and history never disagree."""
    data = journal.load(root)
    if data is None:
        return
    try:
        journal.roll_back(root, data["files"])
    finally:
        git.run(root, "reset", "-q", "--", *data["files"], check=False)
        journal.end(root)
