"""Many writers at once, and writers killed mid-write: nothing lost, files always valid."""

import os
import signal
import subprocess
import sys
import time

import pytest

from giok.errors import LockTimeout
from giok.store.fsutil import file_lock
from giok.store.memoryfile import MemoryFile

WRITER = r"""
import hashlib, sys
from giok import Workspace
ws = Workspace.open(sys.argv[1])
worker = int(sys.argv[2])
for i in range(int(sys.argv[3])):
    words = [hashlib.sha1(f"{worker}-{i}-{k}".encode()).hexdigest()[:8] for k in range(6)]
    ws.remember("Note " + " ".join(words), layer="M30", type="fact")
    print("wrote", flush=True)
"""


def _spawn(ws, worker, count):
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(ws.root), str(worker), str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def git(ws, *args):
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_eight_processes_writing_25_entries_each_lose_nothing(ws):
    procs = [_spawn(ws, w, 25) for w in range(8)]
    for p in procs:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    mf = MemoryFile.parse((ws.root / "MEMORY.md").read_bytes())
    assert len(mf.entries("M30")) == 200
    assert len(mf.ids()) == 200
    assert mf.problems == []
    assert git(ws, "status", "--porcelain") == ""
    subjects = git(ws, "log", "--format=%s").splitlines()
    assert len([s for s in subjects if s.startswith("memory: remember")]) == 200
    git(ws, "fsck", "--no-progress")


def _git_children_gone(ws) -> None:
    """Wait until no git runs in the workspace: a killed writer's git child (a commit) runs on
    and holds .git/index.lock, and the next write waits only LOCK_WAIT seconds for it (on a busy
    machine a commit can take longer). The event waited on is that process ending."""
    from giok.store.git import running_in

    deadline = time.monotonic() + 300  # a hang guard
    while running_in(ws.root):
        assert time.monotonic() < deadline, "a git process of the killed writer never ended"
        time.sleep(0.05)


def test_writer_killed_mid_write_leaves_valid_files(ws):
    for round_ in range(6):
        proc = _spawn(ws, 100 + round_, 1000)
        # the event: this writer has finished round_ + 1 writes; the kill then lands at a point
        # of a later write that varies by round (any point must be safe, so no timing is asserted)
        for _ in range(round_ + 1):
            assert proc.stdout.readline() == "wrote\n", proc.stderr.read()
        time.sleep(0.013 * round_)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        _git_children_gone(ws)
        mf = MemoryFile.parse((ws.root / "MEMORY.md").read_bytes())
        assert mf.problems == []
    # what was committed survives; a write killed before its commit is rolled back (giok.store.journal)
    written = len(MemoryFile.parse(git(ws, "show", "HEAD:MEMORY.md").encode()).entries())
    assert written > 0
    result = ws.remember("written after the crashes", layer="M90")
    assert result.entry.id in ws.memory().ids()
    # the next write's recovery rolls a killed write back, or completes it when its bytes were all
    # written before the kill (giok.store.journal): one entry more than HEAD had, or two
    assert len(ws.memory().entries()) in (written + 1, written + 2)
    assert len(MemoryFile.parse(git(ws, "show", "HEAD:MEMORY.md").encode()).entries()) == len(
        ws.memory().entries()
    )
    assert git(ws, "status", "--porcelain") == ""
    assert not list(ws.root.glob(".MEMORY.md.*.tmp"))


HOLDER = r"""
import sys, time
from pathlib import Path
from giok.store.fsutil import file_lock
for turn in range(int(sys.argv[2])):
    with file_lock(Path(sys.argv[1])):
        if turn == 0:
            print("holding", flush=True)
        time.sleep(0.1)
"""


def test_a_waiter_gets_the_lock_while_writers_take_turns(tmp_path):
    """A writer that releases the lock and takes it again at once, turn after turn for longer
    than the waiter's timeout: the waiter is not starved into LockTimeout (writers are taking
    turns, the line moves); it gets the lock."""
    lock = tmp_path / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock), "30"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "holding\n"
        with file_lock(lock, timeout=1.0):
            pass
    finally:
        holder.wait(60)
    assert holder.returncode == 0


def test_a_holder_that_keeps_the_lock_times_the_waiter_out(tmp_path):
    lock = tmp_path / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER.replace("0.1", "600"), str(lock), "1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "holding\n"
        with pytest.raises(LockTimeout, match="for over 1s"), file_lock(lock, timeout=1.0):
            pass
    finally:
        holder.kill()
        holder.wait()
    with file_lock(lock, timeout=1.0):  # the kernel freed it with the process: no stale lock
        pass


def test_a_waiter_interrupted_leaves_the_lock_free(tmp_path):
    """Ctrl-C while waiting for the lock: once the holder is gone, the lock is free (the thread
    that waited in the kernel does not keep it)."""

    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupted

    lock = tmp_path / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER.replace("0.1", "600"), str(lock), "1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        assert holder.stdout.readline() == "holding\n"
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # the interruption, while the waiter waits
        with pytest.raises(Interrupted), file_lock(lock, timeout=60):
            pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        holder.kill()
        holder.wait()
    with file_lock(lock, timeout=5):
        pass
