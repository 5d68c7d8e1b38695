"""A write is all or nothing across crashes: real giok processes killed at chosen moments
(SIGKILL from inside, at a patched seam), stale git locks, stray temp files, hand edits, and
a reduced run of bench/soak.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import killed_at, run_giok
from giok.store import git
from giok.store.memoryfile import MemoryFile

ROOT = Path(__file__).resolve().parents[2]

# Runs the CLI with one seam patched to SIGKILL the process: before the commit, right after
# it, or after the Nth atomic file write.
KILLER = r"""
import os, signal, sys
from giok.store import git, transaction
point, n = os.environ["KILL_AT"], [0]
die = lambda: os.kill(os.getpid(), signal.SIGKILL)
real_commit, real_write = git.commit, transaction.atomic_write
if point == "before-commit":
    git.commit = lambda *a, **k: die()
elif point == "after-commit":
    git.commit = lambda *a, **k: (real_commit(*a, **k), die())
elif point.startswith("after-write-"):
    def write(*a, **k):
        real_write(*a, **k)
        n[0] += 1
        if n[0] == int(point.rsplit("-", 1)[1]):
            die()
    transaction.atomic_write = write
from giok.edges.cli import main
main(sys.argv[1:], prog_name="giok")
"""


def killed(ws, point: str, *args: str) -> subprocess.CompletedProcess:
    return killed_at(KILLER, ws, point, *args)


def sh(ws, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def head_memory(ws) -> MemoryFile:
    return MemoryFile.parse(sh(ws, "show", "HEAD:MEMORY.md").encode())


def probe(ws, text: str = "Project probe runs on the quartz lumen cluster") -> list[str]:
    """The next, unrelated write; returns what its commit changed (numstat)."""
    done = run_giok("-w", ws.root, "remember", text)
    assert done.returncode == 0, done.stderr
    return [line for line in sh(ws, "show", "--numstat", "--format=", "HEAD").splitlines() if line.strip()]


def test_killed_forget_is_rolled_back_not_swept_into_the_next_commit(ws):
    entry = ws.remember("The staging server lives at stage.local").entry.id
    killed(ws, "before-commit", "forget", entry, "--reason", "moved to prod")
    assert entry not in (ws.root / "MEMORY.md").read_text()  # half-done: file changed, no commit
    changed = probe(ws)
    assert changed == ["1\t0\tMEMORY.md"], changed  # only the probe's own line
    assert head_memory(ws).find(entry) is not None  # the forget never happened, so it is not half-kept
    assert sh(ws, "status", "--porcelain") == ""
    assert not (ws.root / ".giok" / "journal.json").exists()
    again = run_giok("-w", ws.root, "forget", entry, "--reason", "moved to prod")  # the retry does it whole
    assert again.returncode == 0, again.stderr
    assert "Reason: moved to prod" in sh(ws, "log", "-1", "--format=%B")


def test_distill_killed_between_its_files_is_rolled_back(ws):
    ws.diary("We decided to ship the parser on Fridays")
    ws.remember("Project alpha runs on the amber falcon cluster")
    before = sh(ws, "rev-parse", "HEAD").strip()
    killed(ws, "after-write-1", "distill")
    assert sh(ws, "status", "--porcelain")  # something was written, nothing committed
    changed = probe(ws)
    assert changed == ["1\t0\tMEMORY.md"], changed
    assert sh(ws, "status", "--porcelain") == ""
    assert len(sh(ws, "rev-list", f"{before}..HEAD").split()) == 1
    report = run_giok("-w", ws.root, "distill", "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["changed"], report.stderr
    assert not list(ws.root.rglob(".*.tmp"))


def test_killed_right_after_its_commit_the_write_stays(ws):
    killed(ws, "after-commit", "remember", "Project beta runs on the cedar harbor cluster")
    assert "cedar harbor" in sh(ws, "show", "HEAD:MEMORY.md")
    changed = probe(ws)
    assert changed == ["1\t0\tMEMORY.md"], changed
    assert "cedar harbor" in sh(ws, "show", "HEAD:MEMORY.md")
    assert sh(ws, "status", "--porcelain") == ""


def test_memory_tool_delete_killed_before_its_commit_puts_the_note_back(ws):
    from giok.edges.memory_tool import MemoryTool

    MemoryTool(ws).handle({"command": "create", "path": "/memories/notes/a.md", "file_text": "keep me\n"})
    killed_delete = subprocess.run(
        [
            sys.executable,
            "-c",
            KILLER.replace(
                'from giok.edges.cli import main\nmain(sys.argv[1:], prog_name="giok")',
                "from giok import Workspace\nfrom giok.edges.memory_tool import MemoryTool\n"
                "MemoryTool(Workspace(sys.argv[1])).handle("
                "{'command': 'delete', 'path': '/memories/notes/a.md'})",
            ),
            str(ws.root),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "KILL_AT": "before-commit"},
    )
    assert killed_delete.returncode == -9, killed_delete.stderr
    assert not (ws.root / "notes/a.md").exists()
    probe(ws)
    assert (ws.root / "notes/a.md").read_text() == "keep me\n"
    assert sh(ws, "status", "--porcelain") == ""


def test_check_reports_an_interrupted_write_and_changes_nothing(ws):
    entry = ws.remember("The staging server lives at stage.local").entry.id
    killed(ws, "before-commit", "forget", entry, "--reason", "moved")
    dirty = sh(ws, "status", "--porcelain")
    report = run_giok("-w", ws.root, "check", "--json")
    assert "rolls it back" in report.stdout, report.stdout
    assert sh(ws, "status", "--porcelain") == dirty


@pytest.mark.parametrize(
    "locks",
    [["HEAD.lock"], ["index.lock", "HEAD.lock", "refs/heads/main.lock", "packed-refs.lock", "config.lock"]],
)
def test_stale_git_locks_left_by_a_killed_git_are_recovered(ws, locks):
    for name in locks:
        (ws.root / ".git" / name).write_text("")
    done = run_giok("-w", ws.root, "remember", "Project gamma runs on the onyx pewter cluster")
    assert done.returncode == 0, done.stderr
    assert not [n for n in locks if (ws.root / ".git" / n).exists()]
    assert "onyx pewter" in sh(ws, "show", "HEAD:MEMORY.md")
    assert sh(ws, "status", "--porcelain") == ""


def test_a_running_git_keeps_its_lock_and_the_error_names_the_file(ws):
    lock = ws.root / ".git" / "HEAD.lock"
    lock.write_text("")
    holder = subprocess.Popen(
        ["git", "-C", str(ws.root), "hash-object", "--stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.1)
        done = run_giok("-w", ws.root, "remember", "Project delta runs on the garnet juniper cluster")
        assert done.returncode == 6
        assert str(lock) in done.stderr, done.stderr
        assert "rm" in done.stderr, done.stderr
        assert lock.exists()
        assert "garnet" not in (ws.root / "MEMORY.md").read_text()
    finally:
        holder.communicate(b"")
    done = run_giok("-w", ws.root, "remember", "Project delta runs on the garnet juniper cluster")
    assert done.returncode == 0, done.stderr


def test_a_git_error_caused_by_a_lock_names_it(ws):
    (ws.root / "MEMORY.md").write_text((ws.root / "MEMORY.md").read_text() + "- hand line\n")
    lock = ws.root / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(git.GitError, match=r"index\.lock") as err:
        git.commit(ws.root, ["MEMORY.md"], "x")
    assert "rm" in str(err.value)


def test_stray_temp_files_are_removed_everywhere(ws):
    strays = [
        ws.root / "memory" / ".2026-01-01.md.abcd1234.tmp",
        ws.root / "state" / ".tasks.md.x1y2z3w4.tmp",
        ws.root / ".MEMORY.md.k9k9k9k9.tmp",
    ]
    for stray in strays:
        stray.write_text("half")
    assert "temp file" in run_giok("-w", ws.root, "check").stdout
    ws.task_add("check the soak")
    assert not [s for s in strays if s.exists()]


def test_a_cache_temp_file_a_killed_process_left_in_giok_dir_is_removed(ws):
    """Boot's cache and the policy index are written outside the workspace lock: a process killed
    in the middle leaves its temp file in .giok/, which the next write removes."""
    ws.remember("The soak runs nightly")
    stray = ws.root / ".giok" / ".policy-index.json.q1w2e3r4.tmp"
    stray.write_text("half")
    ws.remember("The soak writes four processes at once")
    assert not stray.exists()


def test_a_hand_edit_gets_its_own_commit_before_giok_writes(ws):
    memory = ws.root / "MEMORY.md"
    memory.write_text(memory.read_text() + "- 2026-01-01 Minji prefers tea\n")
    ws.remember("Project epsilon runs on the saffron willow cluster")
    subjects = sh(ws, "log", "-2", "--format=%s").splitlines()
    assert subjects[0].startswith("memory: remember")
    assert subjects[1] == "hand edit: MEMORY.md"
    assert "+- 2026-01-01 Minji prefers tea" in sh(ws, "show", "HEAD~1", "--", "MEMORY.md")
    assert "+- 2026-01-01 Minji prefers tea" not in sh(ws, "show", "HEAD", "--", "MEMORY.md")
    diary = ws.root / ws.diary_path()
    ws.diary("first line")
    diary.write_text(diary.read_text() + "- 10:00 typed by hand\n")
    entry = ws.remember("Project zeta runs on the ember nickel cluster").entry.id
    ws.forget(entry, "wrong cluster")
    assert sh(ws, "log", "-1", "--format=%s").startswith("memory: forget")
    ws.diary("second line")
    assert sh(ws, "log", "-2", "--format=%s").splitlines()[1] == f"hand edit: {ws.diary_path()}"
    assert sh(ws, "status", "--porcelain") == ""


def test_soak_reduced(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "soak.py"),
            "--kills",
            "15",
            "--writers",
            "4",
            "--duration",
            "3",
            "--json",
            "--seed",
            "11",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    table = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, row in table.items():
        assert row["failed"] == 0, (name, row, proc.stderr[-2000:])
        assert row["lost"] == 0, (name, row, proc.stderr[-2000:])
        assert row["tried"] >= 4, (name, row)


def _interrupted(ws, message: str, changes: dict[str, bytes]) -> None:
    """What a writer killed after writing its files and before its commit leaves behind."""
    from giok.store import journal
    from giok.store.fsutil import atomic_write

    journal.begin(ws.root, message, changes)
    for rel, data in changes.items():
        atomic_write(ws.root / rel, data)


def test_a_hand_edit_after_a_killed_write_finishes_the_write_and_loses_nothing(ws):
    """Distill killed after archiving an entry (MEMORY.md without it, a new archive file),
    then a hand edit of MEMORY.md: rolling the archive back would leave the entry nowhere."""
    entry = ws.remember("The VPN certificate for the lab is valid until spring").entry
    memory = ws.read_text("MEMORY.md")
    without = "".join(l for l in memory.splitlines(True) if entry.id not in l)
    archive = f"# Archive 2026-11\n\n- {entry.text} <!-- id: {entry.id} -->\n"
    _interrupted(
        ws,
        "nightly-distill: 2026-12-03",
        {"MEMORY.md": without.encode(), "memory/archive/2026-11.md": archive.encode()},
    )
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- a note added by hand\n")
    ws.diary("the next write settles the journal")
    assert entry.text in ws.read_text("memory/archive/2026-11.md")
    assert "a note added by hand" in ws.read_text("MEMORY.md")
    assert git.run(ws.root, "status", "--porcelain").stdout == ""
    subjects = git.run(ws.root, "log", "--format=%B", "-n", "2").stdout
    assert "nightly-distill: 2026-12-03" in subjects
    assert "Finished after an interrupted write: MEMORY.md changed by hand" in subjects


def test_a_killed_write_without_hand_edits_is_still_rolled_back(ws):
    before = ws.read_text("MEMORY.md")
    _interrupted(
        ws, "memory: remember m-000001 (M30) x", {"MEMORY.md": (before + "- [2026-12-03] x\n").encode()}
    )
    ws.diary("the next write settles the journal")
    assert ws.read_text("MEMORY.md") == before


def test_a_workspace_in_a_git_worktree_keeps_a_committed_write(tmp_path, giok_home):
    """`.git` is a file there (`gitdir: …`): a write killed after its commit must count as
    committed, not be undone."""
    from giok import Workspace
    from giok.store import journal

    main = tmp_path / "repo"
    main.mkdir()
    git.run(main, "init", "-q")
    git.run(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "root")
    git.run(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    ws, _ = Workspace.init(tmp_path / "wt", name="wt", home=giok_home)
    assert git.head_id(ws.root) == git.run(ws.root, "rev-parse", "HEAD").stdout.strip()
    text = ws.read_text("MEMORY.md") + "- [2026-12-03] Deploys happen on Fridays\n"
    journal.begin(ws.root, "memory: remember (killed after its commit)", {"MEMORY.md": text.encode()})
    (ws.root / "MEMORY.md").write_text(text, encoding="utf-8")
    git.commit(ws.root, ["MEMORY.md"], "memory: remember (killed after its commit)")
    ws.diary("the next write settles the journal")
    assert "Deploys happen on Fridays" in ws.read_text("MEMORY.md")
    assert "hand edit" not in git.run(ws.root, "log", "--format=%s").stdout
