"""Safe file handling: atomic writes, one lock per workspace, input checks, path confinement."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any

from giok.errors import DirtyFileError, InvalidInput, LockTimeout
from giok.store.layout import MEMORY
from giok.text.lazy import lazy

MAX_ENTRY_BYTES = 8 * 1024
_UMASK = os.umask(0o022)  # read once, at import (os.umask can only read by setting)
os.umask(_UMASK)


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes:
    """The file's bytes (b"" when it does not exist). A workspace file that is a symlink
    leading outside its workspace is refused (InvalidInput naming it)."""
    check_link(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def read_regular(path: Path, limit: int) -> bytes | None:
    """A derived file's bytes (giok's own caches in .giok/, which others may write too): a
    regular file only, not through a symlink, not beyond `limit` bytes; None otherwise (and
    when it cannot be read), never an error. A FIFO or /dev/zero planted there cannot hang or
    exhaust the reader."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = os.read(fd, info.st_size + 1)
        return data if len(data) <= info.st_size else None  # grew while read: being written
    except OSError:
        return None
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, expected_checksum: bytes | None = None) -> None:
    """Write via temp file + fsync + rename. When expected_checksum is given (the bytes the
    caller read: compared whole, cheaper than hashing them), refuse to replace a file whose
    bytes changed since they were read (someone edited it)."""
    check_link(path, write=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    if expected_checksum is not None and read_bytes(path) != expected_checksum:
        raise DirtyFileError(
            f"{path.name} changed on disk while giok was writing it; nothing was written, try again"
        )
    import tempfile  # here: a command that only reads (a prompt hook) never loads it (~10 ms)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes 0600; keep an existing file's mode, else what the umask allows
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a file's fsync does not cover its directory entry)."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_write(path: Path, data: bytes, expected: bytes) -> None:
    """Give the file `data`, which is `expected` (its bytes now: checked whole, through the
    handle that writes) with bytes added at the end: only those are written, in place, then
    fsynced. Not atomic by itself: the caller journals the added bytes first (giok.store.journal),
    so a write cut short is rolled back by truncating to `expected`'s size. A file whose bytes
    changed since they were read is refused (DirtyFileError), nothing written."""
    check_link(path, write=True)
    with open(path, "r+b", buffering=0) as handle:
        if handle.readall() != expected:
            raise DirtyFileError(
                f"{path.name} changed on disk while giok was writing it; nothing was written, try again"
            )
        _write_at(handle.fileno(), memoryview(data)[len(expected) :], len(expected))
        os.fsync(handle.fileno())


def _write_at(fd: int, data: memoryview, at: int) -> None:
    """All of data at offset `at` (pwrite may write less than it was given)."""
    while data:
        done = os.pwrite(fd, data, at)
        data, at = data[done:], at + done


# -- symlinks and leftovers ----------------------------------------------------------------------
TEMP_RE = lazy(r"^\..+\.[a-z0-9_]{8}\.tmp$")  # what atomic_write's mkstemp names look like


def workspace_of(path: Path) -> Path | None:
    """The workspace folder holding path (the nearest folder above it with MEMORY.md and
    .git), or None."""
    for folder in Path(os.path.abspath(path)).parents:
        if os.path.lexists(folder / MEMORY) and os.path.lexists(folder / ".git"):
            return folder
    return None


def check_link(path: Path, write: bool = False) -> None:
    """Refuse a workspace file reached through a symlink that leads outside the workspace;
    when writing, refuse any symlink below the workspace folder (git would commit the link,
    not the file giok changed). Paths with no symlink cost one realpath."""
    plain = os.path.abspath(path)
    real = os.path.realpath(plain)
    if real == plain:
        return
    root = workspace_of(Path(plain))
    if root is None:
        return
    rel = Path(plain).relative_to(root).as_posix()
    real_root = os.path.realpath(root)
    if os.path.join(real_root, rel) == real:
        return  # the link is above the workspace folder, not in it
    if real != real_root and not real.startswith(real_root + os.sep):
        raise InvalidInput(
            f"{rel} in workspace {root} is a symlink to {real}, outside the workspace: giok "
            f"does not read or write files outside it (replace the link with the file)"
        )
    if write:
        raise InvalidInput(
            f"{rel} in workspace {root} is reached through a symlink (to {real}): giok does not "
            f"write through symlinks (replace the link with the file)"
        )


def temp_files(root: Path) -> list[str]:
    """The temp files killed writers left in the work tree (hidden folders such as .git are
    skipped), and those in .giok/ (the journal's, and the caches' — boot's and the policy
    index's, written outside the workspace lock: a cache write whose temp file goes is only
    not kept), relative to root."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        found += [os.path.relpath(os.path.join(folder, name), root) for name in files if TEMP_RE.match(name)]
    derived = [p for p in (root / ".giok").glob(".*.tmp") if TEMP_RE.match(p.name) and p.is_file()]
    return found + [p.relative_to(root).as_posix() for p in derived]


def clean_temp_files(root: Path) -> list[str]:
    """Remove what temp_files finds (the caller holds the workspace lock)."""
    removed = temp_files(root)
    for rel in removed:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / rel)
    return removed


@contextlib.contextmanager
def file_lock(lock_path: Path, timeout: float = 30.0):
    """An exclusive advisory lock (flock) held for the duration of the block. The kernel
    releases it when the process dies, so a killed writer never leaves a stale lock.

    A waiter blocks in the kernel, which wakes it the moment the lock is free (a poll would
    miss a writer that releases and takes the lock again at once, and starve). It gives up
    (LockTimeout) only when one holder has kept the lock for `timeout` seconds: each holder
    stamps the lock file as it takes it, and a stamp that changed while waiting means writers
    are taking turns, so the wait goes on however many are in line."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            os.close(fd)
            raise
        if not _wait_for_lock(fd, timeout):  # the fd now belongs to the waiting thread
            raise LockTimeout(
                f"another giok writer has held {lock_path} for over {timeout:.0f}s; nothing was written"
            ) from None
    try:
        _stamp(fd)  # a sign of progress for waiters
        yield
    finally:
        _stamp(fd)  # again at release: what a holder wrote is done (see `lock_stamp`)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _stamp(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.pwrite(fd, f"{os.getpid():>10} {time.time_ns():>20}\n".encode(), 0)


def lock_stamp(lock_path: Path) -> bytes:
    """What the lock file says now: pid and time of its last take or release. Each holder
    rewrites it as it takes the lock and again before it lets go, so a stamp read before
    looking at the files changes whenever any writer (in any process) finishes a write after
    that read: the search index compares it to skip its per-file scan (giok.retrieval.index).
    b"" when there is no lock file yet."""
    try:
        with open(lock_path, "rb", buffering=0) as f:
            return f.read(64)
    except OSError:
        return b""


def _wait_for_lock(fd: int, timeout: float) -> bool:
    """Take the lock on fd with a blocking flock in a thread; True once taken. False when the
    holder's stamp did not change for `timeout` seconds: then the thread owns fd, and releases
    and closes it whenever its flock returns (fd must not be closed under it: its number could
    be reused for another file)."""
    taken = threading.Event()
    guard = threading.Lock()
    state: dict[str, Any] = {"gave_up": False, "error": None}

    def wait() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            state["error"] = exc
        with guard:
            if not state["gave_up"]:
                taken.set()
                return
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def give_up() -> bool:
        """True when the thread will release and close fd; False when it took the lock first."""
        with guard:
            state["gave_up"] = not taken.is_set()
            return state["gave_up"]

    stamp = _lock_stamp(fd)
    threading.Thread(target=wait, name="giok-lock-wait", daemon=True).start()
    try:
        while not taken.wait(timeout):
            now = _lock_stamp(fd)
            if now != stamp:  # another writer took its turn meanwhile: the line moves
                stamp = now
                continue
            if give_up():
                return False
            break
    except BaseException:  # interrupted while waiting (Ctrl-C): the lock must not stay taken
        if not give_up():
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        raise
    if state["error"] is not None:
        os.close(fd)
        raise state["error"]
    return True


def _lock_stamp(fd: int) -> bytes:
    try:
        return os.pread(fd, 64, 0)
    except OSError:
        return b""


def check_binary(text: str, what: str = "text") -> None:
    """Refuse NUL and control bytes, and bytes that were not valid UTF-8 (which Python
    hands over as lone surrogates)."""
    if any((ord(c) < 32 and c not in "\t\n\r") or 0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise InvalidInput(f"{what} contains binary data, control characters or invalid UTF-8")


def clean_text(text: str, what: str = "text", limit: int = MAX_ENTRY_BYTES, multiline: bool = False) -> str:
    """Validate one piece of memory text: not empty, not binary, not huge. Returns it with
    whitespace normalised (runs collapsed, unless multiline)."""
    if text is None:
        raise InvalidInput(f"{what} is empty")
    check_binary(text, what)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise InvalidInput(f"{what} is {size} bytes; the limit is {limit} bytes")
    if multiline:
        lines = [" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n")]
        cleaned = "\n".join(lines).strip("\n")
    else:
        cleaned = " ".join(text.split())
    if not cleaned.strip():
        raise InvalidInput(f"{what} is empty")
    return cleaned


MAX_PATH_BYTES = 1024  # a whole relative path
MAX_NAME_BYTES = 255  # one file or folder name (the file system's own limit)
_ENCODED = lazy(r"%(2e|2f|5c|00)", re.IGNORECASE)


def _check_path_text(relative: str) -> None:
    """Refuse what only an attack or a mistake sends: encoded dots or separators, backslashes,
    padded `..`, paths over MAX_PATH_BYTES or names over MAX_NAME_BYTES."""
    size = len(relative.encode("utf-8", "surrogateescape"))
    if size > MAX_PATH_BYTES or any(
        len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for p in relative.split("/")
    ):
        raise InvalidInput(
            f"path is too long ({size:,} bytes): at most {MAX_PATH_BYTES} bytes, {MAX_NAME_BYTES} per name"
        )
    if _ENCODED.search(relative) or "\\" in relative:
        raise InvalidInput(
            f"path {relative!r} holds an encoded or Windows separator (%2e, %2f, %5c, \\): "
            f"give a plain path relative to the workspace"
        )
    if any(part.strip() == ".." for part in relative.split("/")):
        raise InvalidInput(f"path {relative!r} escapes the workspace")


def confine(root: Path, relative: str) -> Path:
    """Resolve a path given by a user or agent inside root; refuse traversal and symlinks out."""
    if not relative or "\x00" in relative:
        raise InvalidInput("empty path")
    _check_path_text(relative)
    candidate = Path(relative)
    if candidate.is_absolute():
        raise InvalidInput(f"path {relative!r} must be relative to the workspace")
    if any(part == ".." for part in candidate.parts):
        raise InvalidInput(f"path {relative!r} escapes the workspace")
    root_resolved = root.resolve()
    resolved = (root_resolved / candidate).resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise InvalidInput(
            f"path {relative!r} is a symlink (or under one) that leads outside the workspace: refused"
        )
    return resolved
