"""A teammate with push access is not trusted with this machine's writes: a `.giok/journal.json`
force-added to the shared history names `../outside.txt`, an absolute path and a file to
delete outside the workspace. `giok sync` (fast-forward and a true merge) refuses it before
anything is checked out; a journal that gets in anyway (a plain `git pull`, a file dropped in
`.giok/`) is refused by the next ordinary write, and nothing outside the workspace is ever
written or deleted. Real git: a bare remote in tmp_path, two clones, as tests/test_sync.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import run_giok
from giok import Home, Workspace
from giok.errors import ConflictError, WorkspaceError
from giok.store import journal, remote

PLANTED = b"written by a teammate's journal\n"
VICTIM = b"a file outside the workspace that must survive\n"


def git(root, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], input=data, capture_output=True, check=True
    ).stdout.decode()


@pytest.fixture
def team(tmp_path, monkeypatch):
    """The victim's workspace (`mine`) and a teammate's clone of it, both on one bare remote;
    `outside`: a file outside every workspace the hostile journal wants deleted."""
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    mine, _ = Workspace.init(
        tmp_path / "me" / "zeon", name="zeon", user="Seojun", home=Home(tmp_path / "home-me")
    )
    remote.add(mine, "origin", str(bare))
    remote.sync(mine)
    theirs = tmp_path / "teammate"
    subprocess.run(["git", "clone", "-q", str(bare), str(theirs)], check=True)
    git(theirs, "config", "user.name", "Mallory")
    git(theirs, "config", "user.email", "mallory@example.com")
    (tmp_path / "elsewhere").mkdir()
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.write_bytes(VICTIM)
    return mine, theirs, tmp_path


def hostile_journal(tmp_path: Path, where: Path) -> None:
    """Write into `where/.giok/` a version-3 journal (and its kept bytes) that, rolled back,
    writes `../outside.txt` and an absolute path and deletes elsewhere/victim.txt."""
    blob = git(where, "hash-object", "--stdin", data=VICTIM).strip()
    writes = {
        "../outside.txt": {"kept": "journal-0.before", "after": None},
        str(tmp_path / "elsewhere" / "absolute.txt"): {"kept": "journal-1.before", "after": None},
        str(tmp_path / "elsewhere" / "victim.txt"): {"before": None, "after": blob},
    }
    data = {
        "version": 3,
        "pid": 1,
        "head": None,
        "message": "x",
        "files": {},
        "writes": writes,
        "appends": {},
    }
    (where / ".giok").mkdir(exist_ok=True)
    (where / ".giok" / "journal.json").write_text(json.dumps(data))
    for n in (0, 1):
        (where / ".giok" / f"journal-{n}.before").write_bytes(PLANTED)


def push_hostile_journal(theirs: Path, tmp_path: Path) -> None:
    """The teammate force-adds the journal past .gitignore and pushes it."""
    git(theirs, "pull", "-q", "origin", "main")
    hostile_journal(tmp_path, theirs)
    git(theirs, "add", "-f", ".giok/journal.json", ".giok/journal-0.before", ".giok/journal-1.before")
    git(theirs, "commit", "-q", "-m", "notes")
    git(theirs, "push", "-q", "origin", "HEAD:main")


def outside_files(tmp_path: Path, mine: Workspace) -> dict[str, bytes]:
    """Every file under tmp_path but the victim's workspace, its home and the remote."""
    skip = (mine.root, tmp_path / "home-me", tmp_path / "remote.git")
    return {
        str(p): p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file() and not any(p == s or s in p.parents for s in skip)
    }


@pytest.mark.parametrize("diverged", [False, True], ids=["fast-forward", "merge"])
def test_sync_refuses_a_tracked_journal_and_nothing_outside_is_touched(team, diverged):
    mine, theirs, tmp_path = team
    push_hostile_journal(theirs, tmp_path)
    if diverged:  # a true merge: this machine wrote too
        mine.remember("The standup is at ten")
    head = git(mine.root, "rev-parse", "HEAD")
    before = outside_files(tmp_path, mine)

    with pytest.raises(ConflictError) as refused:
        remote.sync(mine)
    message = str(refused.value)
    assert "origin/main tracks .giok/" in message and ".giok/journal.json" in message
    assert "git rm -r --cached .giok" in message
    assert git(mine.root, "rev-parse", "HEAD") == head  # nothing merged, nothing checked out
    assert not (mine.root / ".giok" / "journal.json").exists()
    assert not git(mine.root, "status", "--porcelain")

    mine.remember("The release train leaves on Fridays")  # an ordinary write after the refusal
    assert outside_files(tmp_path, mine) == before
    assert not (tmp_path / "me" / "outside.txt").exists()
    assert (tmp_path / "elsewhere" / "victim.txt").read_bytes() == VICTIM


def test_sync_refuses_a_giok_folder_pushed_as_a_symlink(team):
    mine, theirs, _ = team
    git(theirs, "pull", "-q", "origin", "main")
    (theirs / ".GIOK").symlink_to("../elsewhere")  # another case: a case-insensitive disk's .giok
    git(theirs, "add", "-f", ".GIOK")
    git(theirs, "commit", "-q", "-m", "notes")
    git(theirs, "push", "-q", "origin", "HEAD:main")
    head = git(mine.root, "rev-parse", "HEAD")
    with pytest.raises(ConflictError, match=r"tracks \.GIOK: .*git rm -r --cached \.GIOK"):
        remote.sync(mine)
    assert git(mine.root, "rev-parse", "HEAD") == head
    assert not (mine.root / ".GIOK").exists()


def test_giok_sync_prints_one_clear_error(team):
    mine, theirs, tmp_path = team
    push_hostile_journal(theirs, tmp_path)
    out = run_giok("-w", mine.root, "sync", env={"GIOK_HOME": str(mine.home.path)})
    assert out.returncode == ConflictError.exit_code
    assert ".giok/journal.json" in out.stderr and "git rm -r --cached .giok" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_journal_pulled_by_plain_git_is_refused_by_the_next_write(team):
    """`git pull` bypasses giok sync's check: the tracked journal reaches the work tree, and
    the next write refuses to act on it (and keeps refusing until it is untracked)."""
    mine, theirs, tmp_path = team
    push_hostile_journal(theirs, tmp_path)
    before = outside_files(tmp_path, mine)
    git(mine.root, "pull", "-q", "--ff-only", "origin", "main")
    assert (mine.root / ".giok" / "journal.json").exists()

    with pytest.raises(WorkspaceError, match=r"git tracks \.giok/.*git -C .* rm -r --cached \.giok"):
        mine.remember("The release train leaves on Fridays")
    assert "did not write" in (journal.describe(mine.root) or "")
    assert outside_files(tmp_path, mine) == before
    assert (tmp_path / "elsewhere" / "victim.txt").read_bytes() == VICTIM

    git(mine.root, "rm", "-q", "-r", "--cached", ".giok")
    git(mine.root, "commit", "-q", "-m", "untrack .giok")
    with pytest.raises(WorkspaceError, match="moved to"):  # untracked now, still not giok's
        mine.remember("The release train leaves on Fridays")
    mine.remember("The release train leaves on Fridays")
    assert outside_files(tmp_path, mine) == before


@pytest.mark.parametrize(
    "rel",
    ["../outside.txt", "/ABS", ".git/config", "linked/out.md", "a/../../outside.txt", ".giok/index.sqlite"],
)
def test_a_journal_naming_a_path_outside_is_rejected_whole(team, rel):
    mine, _, tmp_path = team
    (mine.root / "linked").symlink_to(tmp_path / "elsewhere")
    rel = str(tmp_path / "elsewhere" / "absolute.txt") if rel == "/ABS" else rel
    hostile_journal(tmp_path, mine.root)
    data = json.loads((mine.root / ".giok" / "journal.json").read_text())
    data["writes"] = {
        "MEMORY.md": {"before": None, "after": None},
        rel: {"kept": "journal-0.before", "after": None},
    }
    (mine.root / ".giok" / "journal.json").write_text(json.dumps(data))
    config = (mine.root / ".git" / "config").read_bytes()
    before = outside_files(tmp_path, mine)
    memory = (mine.root / "MEMORY.md").read_bytes()

    assert "did not write" in (journal.describe(mine.root) or "")
    with pytest.raises(WorkspaceError, match=f"names {rel!r}"):
        mine.remember("The release train leaves on Fridays")
    assert (mine.root / "MEMORY.md").read_bytes() == memory  # rejected whole: not even the inside file
    assert (mine.root / ".giok" / journal.REJECTED).exists()
    assert not (mine.root / ".giok" / "journal.json").exists()
    assert (mine.root / ".git" / "config").read_bytes() == config
    assert outside_files(tmp_path, mine) == before

    mine.remember("The release train leaves on Fridays")
    assert "The release train leaves on Fridays" in (mine.root / "MEMORY.md").read_text()
    assert outside_files(tmp_path, mine) == before
