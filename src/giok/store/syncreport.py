"""What `giok sync` (giok.store.remote) and its handling of a rewritten remote
(giok.store.rewrites) share: the report both fill in (`SyncReport`) and the refusal of a remote
whose tree tracks giok's own folder (`refuse_private`), checked before anything is merged."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from giok.errors import ConflictError
from giok.store import git
from giok.store.layout import DATA_DIR

if TYPE_CHECKING:
    from giok.store.workspace import Workspace


@dataclass
class SyncReport:
    workspace: str
    remote: str
    branch: str
    fetched: int = 0  # commits that came in
    pushed: int = 0  # commits that went out
    merge: str | None = None  # "fast-forward", a merge commit id, or None
    forgets: int = 0  # incoming `memory: forget` commits
    forgotten: dict[str, str] = field(default_factory=dict)  # id → text, for the index purge (not printed)
    reports: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    adopt: bool = False  # --adopt-remote: take a rewritten remote, carrying this machine's writes
    rewritten: str | None = None  # "published" | "adopted": a rewritten history was handled
    lease: str | None = None  # the remote tip a forced push of a rewritten history expects
    forgotten_texts: list[str] = field(
        default_factory=list
    )  # other versions of forgotten texts (not printed)
    purge_paths: list[str] = field(default_factory=list)  # files whose index rows must be read again

    def to_dict(self) -> dict:
        return {
            "workspace": self.workspace,
            "remote": self.remote,
            "branch": self.branch,
            "fetched": self.fetched,
            "pushed": self.pushed,
            "merge": self.merge,
            "forgets": self.forgets,
            "rewritten": self.rewritten,
            "reports": self.reports,
            "notes": self.notes,
        }


def refuse_private(ws: Workspace, theirs: str, report: SyncReport) -> None:
    """Refuse a remote whose tree tracks giok's own folder (.giok/, in any case): a journal
    there would be acted on by this machine's next write. Checked before anything is merged."""
    top = git.run(ws.root, "ls-tree", "-z", "--name-only", theirs, check=False).stdout.split("\0")
    private = [name for name in top if name.lower() == DATA_DIR]
    if not private:
        return
    listed = git.run(ws.root, "ls-tree", "-r", "-z", "--name-only", theirs, "--", *private, check=False)
    found = [name for name in listed.stdout.split("\0") if name] or private
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    raise ConflictError(
        f"{report.remote}/{report.branch} tracks {', '.join(found[:3])}{more}: {DATA_DIR}/ is giok's private "
        "state (journal, lock, index) and is never committed, so this sync merged nothing. Untrack "
        f"it on the remote, from any clone: `git rm -r --cached {private[0]} && git commit -m "
        f"'untrack {private[0]}' && git push`, then `giok sync` again"
    )
