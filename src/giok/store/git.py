"""The few git operations giok needs, through the git CLI."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import subprocess
import time
from pathlib import Path

from giok import settings
from giok.errors import GitError
from giok.store import clock
from giok.text.lazy import lazy

_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def run(
    root: Path, *args: str, check: bool = True, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = settings.child_env(**{**_ENV, **(env or {})})
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, input=input
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        locked = lock_error(root, args[0], proc.stdout + proc.stderr)
        if locked:
            raise locked
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(
            f"git {args[0]} failed in {root}: {detail[-1] if detail else 'exit ' + str(proc.returncode)}"
        )
    return proc


def is_repo(root: Path) -> bool:
    proc = run(root, "rev-parse", "--show-toplevel", check=False)
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == root.resolve()


def init(root: Path) -> None:
    run(root, "init", "-q")
    run(root, "symbolic-ref", "HEAD", "refs/heads/main", check=False)


def has_identity(root: Path) -> bool:
    """True when user.name and user.email are configured (one git process)."""
    if settings.git_identity():
        return True
    out = run(root, "config", "--get-regexp", r"^user\.(name|email)$", check=False).stdout
    keys = {
        line.split(" ", 1)[0] for line in out.splitlines() if " " in line and line.split(" ", 1)[1].strip()
    }
    return {"user.name", "user.email"} <= keys


def set_local_identity(root: Path, name: str, email: str) -> None:
    run(root, "config", "user.name", name)
    run(root, "config", "user.email", email)


# -- git's own lock files ----------------------------------------------------------------------
LOCK_NAMES = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "config.lock", "packed-refs.lock", "shallow.lock")
_LOCK_RE = lazy(r"'([^']+\.lock)'")
LOCK_WAIT = 2.0  # seconds to wait for a git process still running in the repository


def lock_error(root: Path, command: str, output: str) -> GitError | None:
    """A GitError naming the lock file when git failed because one exists, else None."""
    m = (
        _LOCK_RE.search(output)
        if ".lock" in output and ("exists" in output or "Unable to create" in output)
        else None
    )
    if not m:
        return None
    lock = m.group(1)
    return GitError(
        f"git {command} failed in {root}: the lock file {lock} exists (a git process is running "
        f"there, or one was killed). If no git runs in {root}, delete it: rm '{lock}' "
        f"(giok removes it itself on its next write when no git process runs there)"
    )


def git_dir(root: Path) -> Path | None:
    """The repository's git folder: root/.git, or where a `.git` file points (a worktree or a
    submodule: `gitdir: PATH`); None when there is none."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[7:].strip())
    return (target if target.is_absolute() else root / target).resolve()


def common_dir(gitdir: Path) -> Path:
    """Where refs, packed-refs and config live: a worktree's `commondir`, else gitdir itself."""
    try:
        target = Path((gitdir / "commondir").read_text("utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return gitdir
    return (target if target.is_absolute() else gitdir / target).resolve()


def stale_locks(root: Path) -> list[Path]:
    """The lock files git has left in the repository's git folder (and, for a worktree, its
    common folder): index, HEAD, config, packed-refs, every ref."""
    gitdir = git_dir(root)
    if gitdir is None or not gitdir.is_dir():
        return []
    found = []
    for folder in dict.fromkeys((gitdir, common_dir(gitdir))):
        found += [folder / name for name in LOCK_NAMES if (folder / name).exists()]
        refs = folder / "refs"
        found += sorted(refs.rglob("*.lock")) if refs.is_dir() else []
    return found


def running_in(root: Path) -> list[int]:
    """Ids of git processes working in root (their -C path or their cwd is in it), from /proc."""
    real = root.resolve()
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
            if not os.path.basename(argv[0].decode(errors="replace")).startswith("git"):
                continue
            where = Path(os.readlink(f"/proc/{entry.name}/cwd"))
        except OSError:
            continue  # gone meanwhile, or not ours to read
        for flag, value in itertools.pairwise(argv):
            if flag == b"-C":
                where = where / os.fsdecode(value)
        with contextlib.suppress(OSError):
            where = where.resolve()
        if where == real or real in where.parents:
            pids.append(int(entry.name))
    return pids


def recover_locks(root: Path, wait: float | None = None) -> list[str]:
    """Remove the lock files a killed git left in root, once no git process runs there (the
    caller holds the workspace lock, so no giok git does). Waits up to `wait` seconds for a
    running one, then raises GitError naming the lock. Returns the removed files."""
    locks = stale_locks(root)
    if not locks:
        return []
    deadline = time.monotonic() + (LOCK_WAIT if wait is None else wait)
    seen = {lock: _stamp(lock) for lock in locks}
    while True:
        seen = {lock: stamp for lock, stamp in seen.items() if _stamp(lock) == stamp and stamp}
        if not seen:
            return []
        if not os.path.isdir("/proc"):
            pids = [] if all(s is not None and time.time() - s[1] > 60 for s in seen.values()) else [0]
        else:
            pids = running_in(root)
        if not pids:
            break
        if time.monotonic() >= deadline:
            names = " ".join(f"'{lock}'" for lock in seen)
            who = f"git process {pids[0]}" if pids[0] else "a git process"
            raise GitError(
                f"{who} is running in {root} and {next(iter(seen))} exists: wait for it to finish, "
                f"or stop it and delete the lock: rm {names}"
            )
        time.sleep(0.05)
    removed = []
    for lock, stamp in seen.items():
        if _stamp(lock) == stamp:  # still the file seen while no git ran
            lock.unlink(missing_ok=True)
            removed.append(lock.relative_to(root).as_posix())
    return removed


_MERGE_TEMP_RE = lazy(r"^\.merge_file_[A-Za-z0-9]{6}$")  # git's copies of a file for a merge driver


def merge_temp_files(root: Path) -> list[str]:
    """The temp files git writes for a merge driver (`.merge_file_XXXXXX`, in the work tree's
    top folder) that a killed merge left."""
    try:
        return sorted(e.name for e in os.scandir(root) if _MERGE_TEMP_RE.match(e.name) and e.is_file())
    except OSError:
        return []


def _stamp(path: Path) -> tuple[int, float] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime)


def head_id(root: Path) -> str | None:
    """The commit HEAD points to, read from .git without a git process (None: no commit yet)."""
    gitdir = git_dir(root)
    if gitdir is None:
        return None
    common = common_dir(gitdir)
    try:
        head = (gitdir / "HEAD").read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("ref: "):
        return head or None
    ref = head[5:]
    try:
        return (common / ref).read_text("ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        pass
    try:
        for line in (common / "packed-refs").read_text("ascii").splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except (OSError, UnicodeDecodeError):
        pass
    return None


def rev(root: Path, ref: str) -> str | None:
    """The commit `ref` names, or None when it names none."""
    proc = run(root, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def is_ancestor(root: Path, a: str, b: str) -> bool:
    """Whether commit `b` holds commit `a`."""
    return run(root, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def count(root: Path, spec: str) -> int:
    """The number of commits of a `rev-list` range (`A..B`); 0 when it names none."""
    out = run(root, "rev-list", "--count", spec, check=False).stdout.strip()
    return int(out) if out.isdigit() else 0


def blob_id(root: Path, data: bytes) -> str:
    """The id git gives a blob of these bytes (sha1, or sha256 in a sha256 repository)."""
    try:
        gitdir = git_dir(root)
        config = (common_dir(gitdir) / "config").read_text("utf-8", errors="replace") if gitdir else ""
        sha256 = re.search(r"objectformat\s*=\s*sha256", config.lower()) is not None
    except OSError:
        sha256 = False
    digest = hashlib.new("sha256" if sha256 else "sha1", b"blob %d\0" % len(data))
    digest.update(data)  # not header + data: a large file is not copied to be hashed
    return digest.hexdigest()


def head_blobs(root: Path, paths: list[str]) -> dict[str, str]:
    """path → blob id in HEAD, for the paths that HEAD holds."""
    proc = run(root, "ls-tree", "-z", "HEAD", "--", *paths, check=False)
    out = {}
    for item in proc.stdout.split("\0"):
        meta, _, name = item.partition("\t")
        if name and meta.split(" ")[1:2] == ["blob"]:
            out[name] = meta.split(" ")[2]
    return out


def blob(root: Path, blob: str) -> bytes | None:
    """The bytes of a blob (None when git cannot give them)."""
    proc = subprocess.run(
        ["git", "-C", str(root), "cat-file", "blob", blob],
        capture_output=True,
        env=settings.child_env(**_ENV),
    )
    return proc.stdout if proc.returncode == 0 else None


def commit(root: Path, paths: list[str], message: str) -> str | None:
    """Stage paths (including deletions) and commit. Returns the new commit id, or None
    when nothing changed. Three git processes on the happy path (identity, add, commit);
    the slower checks run only to explain a failure."""
    if not has_identity(root):
        raise GitError(
            f"no git identity in {root}: run `git -C {root} config user.name NAME` and `... user.email EMAIL`"
        )
    missing = [p for p in paths if not os.path.lexists(root / p)]
    if missing:  # a deletion: only paths git knows can be staged
        known = set(run(root, "ls-files", "-z", "--", *missing).stdout.split("\0"))
        paths = [
            p
            for p in paths
            if p not in missing or p in known or any(k.startswith(p.rstrip("/") + "/") for k in known)
        ]
        if not paths:
            return None
    run(root, "add", "-A", "--", *paths)
    # Only these paths: whatever else the user has staged in an adopted repository stays staged.
    proc = run(root, "commit", "--no-verify", "-m", message, "--", *paths, check=False, env=clock_dates())
    if proc.returncode == 0:
        match = re.search(r"^\[[^\]]*?([0-9a-f]{7,40})\]", proc.stdout, re.M)
        return match.group(1) if match else None
    output = proc.stdout + proc.stderr
    if "to commit" in output and "Please tell me" not in output:
        return None
    if not is_repo(root):
        raise GitError(f"{root} is not a git repository; run `giok init {root}`")
    if "Please tell me who you are" in output or "empty ident" in output:
        raise GitError(
            f"no git identity in {root}: run `git -C {root} config user.name NAME` and `... user.email EMAIL`"
        )
    locked = lock_error(root, "commit", output)
    if locked:
        raise locked
    detail = output.strip().splitlines()
    raise GitError(f"git commit failed in {root}: {detail[-1] if detail else 'exit ' + str(proc.returncode)}")


def clock_dates() -> dict[str, str]:
    """Under a simulated clock ($GIOK_NOW), commits carry giok's time, so the history of
    simulated days reads as those days (giok.store.history); else git's own clock."""
    if not clock.simulated():
        return {}
    stamp = clock.now().isoformat(timespec="seconds")
    return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


def log(root: Path, paths: list[str], limit: int = 50) -> list[dict]:
    """Commits touching paths, newest first: {commit, date, message, files}."""
    if run(root, "rev-parse", "HEAD", check=False).returncode != 0:
        return []
    proc = run(
        root,
        "log",
        f"-n{limit}",
        "--date=iso-strict",
        "--name-only",
        "--format=%x1e%h%x1f%ad%x1f%B",
        "--",
        *paths,
    )
    out = []
    for record in proc.stdout.split("\x1e")[1:]:
        head, _, rest = record.partition("\x1f")
        date, _, body = rest.partition("\x1f")
        message, _, files = body.rstrip().rpartition("\n\n")
        if not message:
            message, files = files, ""
        out.append(
            {
                "commit": head,
                "date": date,
                "message": message.strip(),
                "files": [f for f in files.split("\n") if f.strip()],
            }
        )
    return out
