"""Appends written in place (docs/architecture.md, "The write path"): a remember into the last
layer writes only its new line into MEMORY.md, journaled by the added bytes; a process killed
in the middle of that write, or before its commit, is rolled back to the old bytes; a hand
edit in between is refused or kept, never overwritten."""

from __future__ import annotations

import base64
import json
import os
import subprocess

import pytest

from conftest import killed_at, run_giok
from giok.errors import DirtyFileError
from giok.store import fsutil, journal
from giok.store.memoryfile import MemoryFile

# The CLI with the in-place write cut short: half the added bytes go in, then SIGKILL (what a
# power cut may leave). Or killed before the commit (the whole line written). Every append
# goes in place here, wherever the file's page boundaries fall.
KILLER = r"""
import os, signal, sys
from giok.store import fsutil, git, journal
journal.PAGE = 1 << 30
die = lambda: os.kill(os.getpid(), signal.SIGKILL)
if os.environ["KILL_AT"] == "mid-append":
    real = fsutil._write_at
    def half(fd, data, at):
        real(fd, data[: len(data) // 2], at)
        die()
    fsutil._write_at = half
elif os.environ["KILL_AT"] == "after-commit":
    real_commit = git.commit
    git.commit = lambda *a, **k: (real_commit(*a, **k), die())
else:
    git.commit = lambda *a, **k: die()
from giok.edges.cli import main
main(sys.argv[1:], prog_name="giok")
"""


@pytest.fixture(autouse=True)
def one_page(monkeypatch):
    """Every append of these tests goes in place (the page rule has its own test)."""
    monkeypatch.setattr(journal, "PAGE", 1 << 30)


def killed(ws, point: str, *args: str) -> subprocess.CompletedProcess:
    return killed_at(KILLER, ws, point, *args)


def git(ws, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_a_remember_killed_in_the_middle_of_its_write_is_rolled_back(ws):
    ws.remember("The build server runs on the walnut rack")
    before = (ws.root / "MEMORY.md").read_bytes()
    killed(ws, "mid-append", "remember", "Project gamma ships from the teal harbor dock")
    cut = (ws.root / "MEMORY.md").read_bytes()
    assert cut.startswith(before)
    assert len(before) < len(cut)
    assert not cut.endswith(b"\n")  # the line is cut short: what recovery has to undo
    done = run_giok("-w", ws.root, "remember", "Project delta runs on the amber lake cluster")
    assert done.returncode == 0, done.stderr
    after = ws.read_text("MEMORY.md")
    assert "teal harbor" not in after
    assert [line for line in after.splitlines(True) if line not in before.decode()] == [
        next(line for line in after.splitlines(True) if "amber lake" in line)
    ]
    assert MemoryFile.parse(after.encode()).problems == []
    assert git(ws, "status", "--porcelain") == ""
    assert git(ws, "show", "HEAD:MEMORY.md") == after
    assert not (ws.root / ".giok" / "journal.json").exists()


def test_a_remember_killed_before_its_commit_is_rolled_back(ws):
    ws.remember("The build server runs on the walnut rack")
    before = ws.read_text("MEMORY.md")
    killed(ws, "before-commit", "remember", "Project gamma ships from the teal harbor dock")
    assert "teal harbor" in ws.read_text("MEMORY.md")  # written, not committed
    assert ws.recover()["restored"] == ["MEMORY.md"]
    assert ws.read_text("MEMORY.md") == before
    assert git(ws, "status", "--porcelain") == ""


def test_an_append_killed_after_its_commit_stays_despite_a_hand_edit_before_it(ws):
    """Committed is decided by what HEAD holds, not by the file: an edit in place of the
    title after the crash does not make the committed line look uncommitted."""
    killed(ws, "after-commit", "remember", "Project gamma ships from the teal harbor dock")
    memory = ws.read_text("MEMORY.md")
    edited = memory.replace("long-term memory", "LONG-TERM MEMORY", 1)
    assert edited != memory
    (ws.root / "MEMORY.md").write_text(edited, encoding="utf-8")
    settled = ws.recover()
    assert settled["committed"] is True
    assert ws.read_text("MEMORY.md") == edited
    assert "teal harbor" in git(ws, "show", "HEAD:MEMORY.md")


def test_a_hand_edit_after_a_killed_append_is_kept_and_committed(ws):
    killed(ws, "before-commit", "remember", "Project gamma ships from the teal harbor dock")
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- a note added by hand\n")
    ws.diary("the next write settles the journal")
    memory = ws.read_text("MEMORY.md")
    assert "teal harbor" in memory
    assert "a note added by hand" in memory
    assert git(ws, "status", "--porcelain") == ""
    assert "Finished after an interrupted write: MEMORY.md changed by hand" in git(
        ws, "log", "--format=%B", "-n", "2"
    )


def test_a_failed_append_leaves_the_file_and_the_kept_parse_as_they_were(ws, monkeypatch):
    """In the same process: the write fails halfway (disk full), the file gets its old bytes,
    and the next remember of the same text is an add, not a duplicate of the failed one."""
    for i in range(3):  # the kept parse and its policy index are in use from the second write on
        ws.remember(f"Warm-up fact number {i} about the quartz lumen cluster")
    before = (ws.root / "MEMORY.md").read_bytes()
    real = fsutil._write_at

    def full(fd, data, at):
        real(fd, data[:7], at)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil, "_write_at", full)
    with pytest.raises(OSError):
        ws.remember("Project gamma ships from the teal harbor dock")
    assert (ws.root / "MEMORY.md").read_bytes() == before
    monkeypatch.setattr(fsutil, "_write_at", real)
    result = ws.remember("Project gamma ships from the teal harbor dock")
    assert result.action == "written"
    assert git(ws, "status", "--porcelain") == ""


def test_a_hand_edit_between_the_read_and_the_append_is_refused_and_kept(ws, monkeypatch):
    ws.remember("The build server runs on the walnut rack")
    real = journal.begin

    def begin_then_edit(*args, **kwargs):
        previous = real(*args, **kwargs)
        with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
            f.write("- typed by hand while giok wrote\n")
        return previous

    monkeypatch.setattr(journal, "begin", begin_then_edit)
    with pytest.raises(DirtyFileError):
        ws.remember("Project gamma ships from the teal harbor dock")
    monkeypatch.setattr(journal, "begin", real)
    memory = ws.read_text("MEMORY.md")
    assert "typed by hand while giok wrote" in memory
    assert "teal harbor" not in memory
    ws.remember("Project delta runs on the amber lake cluster")
    assert "typed by hand while giok wrote" in git(ws, "show", "HEAD:MEMORY.md")


def test_an_append_goes_in_place_only_inside_one_page(monkeypatch):
    page = 4096
    monkeypatch.setattr(journal, "PAGE", page)
    assert journal.appends(b"a" * page, b"a" * page + b"x" * 100)
    assert journal.appends(b"a" * (page - 100), b"a" * page)
    assert not journal.appends(b"a" * (page - 99), b"a" * (page + 1))  # a reader could see half
    assert not journal.appends(b"a" * page, b"b" + b"a" * page)
    assert not journal.appends(b"", b"a")
    assert not journal.appends(b"a", None)


def test_a_remember_into_a_large_file_writes_only_its_line(ws, monkeypatch):
    """No whole-file copy: the file keeps its inode, the journal holds the added bytes."""
    monkeypatch.undo()  # the real page rule: the file is filled to a page boundary
    lines = "".join(f"- [2026-03-01] Filler fact {i} <!-- id: m-{i:06x} -->\n" for i in range(2000))
    size = len(ws.read_text("MEMORY.md").encode()) + len(lines.encode())
    lines += "<!--" + "-" * (-(size + 8) % journal.PAGE) + "-->\n"
    ws.edit("MEMORY.md", lambda old: (old + lines, None), "fill")
    assert (ws.root / "MEMORY.md").stat().st_size % journal.PAGE == 0
    inode = os.stat(ws.root / "MEMORY.md").st_ino
    journals = []
    real = journal.begin

    def spy(root, *args, **kwargs):
        previous = real(root, *args, **kwargs)
        journals.append(json.loads(journal.path(root).read_bytes()))
        return previous

    monkeypatch.setattr(journal, "begin", spy)
    entry = ws.remember("Project gamma ships from the teal harbor dock").entry
    assert os.stat(ws.root / "MEMORY.md").st_ino == inode
    [record] = journals
    assert record["writes"] == {}
    added = base64.b64decode(record["appends"]["MEMORY.md"]["added"]).decode()
    assert entry.id in added
    assert added.count("\n") == 1
    assert not list((ws.root / ".giok").glob("journal-*.before"))


def test_a_cut_append_is_completed_when_another_file_of_its_write_was_edited(ws):
    """Finishing a write whose other file was edited by hand after the crash commits the
    append whole, not the half line the crash left."""
    before = (ws.root / "MEMORY.md").read_bytes()
    grown = before + b"- [2026-03-01] Project gamma ships from the teal harbor dock\n"
    notes = b"# Notes\n\n- the gamma dock\n"
    journal.begin(
        ws.root,
        "memory: two files",
        {"MEMORY.md": grown, "notes.md": notes},
        {"MEMORY.md": before},
        {"MEMORY.md"},
    )
    with open(ws.root / "MEMORY.md", "ab") as f:
        f.write(grown[len(before) : len(before) + 20])
    (ws.root / "notes.md").write_bytes(notes + b"- and a line by hand\n")
    settled = ws.recover()
    assert settled["kept"] == ["notes.md"]
    assert (ws.root / "MEMORY.md").read_bytes() == grown
    assert git(ws, "show", "HEAD:MEMORY.md").encode() == grown
    assert git(ws, "status", "--porcelain") == ""


def test_a_read_only_file_is_still_replaced_when_it_cannot_be_opened_for_writing(ws, monkeypatch):
    """giok replaced a read-only MEMORY.md (in a writable folder) by rename; an append that
    cannot open it for writing does the same."""
    from giok.store import transaction

    def refused(path, data, expected):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(transaction, "append_write", refused)
    entry = ws.remember("Project gamma ships from the teal harbor dock").entry
    assert entry.id in ws.read_text("MEMORY.md")
    assert git(ws, "status", "--porcelain") == ""
