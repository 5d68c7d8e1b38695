"""The few git operations giok needs, through the git CLI."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

from .errors import GitError

_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def run(root: Path, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **_ENV}
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, input=input
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(f"git {args[0]} failed in {root}: {detail[-1] if detail else 'exit ' + str(proc.returncode)}")
    return proc


def is_repo(root: Path) -> bool:
    proc = run(root, "rev-parse", "--show-toplevel", check=False)
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == root.resolve()


def init(root: Path) -> None:
    run(root, "init", "-q")
    run(root, "symbolic-ref", "HEAD", "refs/heads/main", check=False)


def has_identity(root: Path) -> bool:
    """True when user.name and user.email are configured (one git process)."""
    if os.environ.get("GIT_AUTHOR_NAME") and os.environ.get("GIT_AUTHOR_EMAIL"):
        return True
    out = run(root, "config", "--get-regexp", r"^user\.(name|email)$", check=False).stdout
    keys = {line.split(" ", 1)[0] for line in out.splitlines() if " " in line and line.split(" ", 1)[1].strip()}
    return {"user.name", "user.email"} <= keys


def set_local_identity(root: Path, name: str, email: str) -> None:
    run(root, "config", "user.name", name)
    run(root, "config", "user.email", email)


def _clear_stale_index_lock(root: Path) -> None:
    """A git process killed mid-commit leaves .git/index.lock. Callers hold the workspace
    lock, so no giok process is inside git now; wait briefly for a human's git, then clear."""
    lock = root / ".git" / "index.lock"
    for _ in range(50):
        if not lock.exists():
            return
        time.sleep(0.02)
    lock.unlink(missing_ok=True)


def commit(root: Path, paths: list[str], message: str) -> str | None:
    """Stage paths (including deletions) and commit. Returns the new commit id, or None
    when nothing changed. Three git processes on the happy path (identity, add, commit);
    the slower checks run only to explain a failure."""
    _clear_stale_index_lock(root)
    if not has_identity(root):
        raise GitError(
            f"no git identity in {root}: run `git -C {root} config user.name NAME` and `... user.email EMAIL`"
        )
    run(root, "add", "-A", "--", *paths)
    # Only these paths: whatever else the user has staged in an adopted repository stays staged.
    proc = run(root, "commit", "--no-verify", "-m", message, "--", *paths, check=False)
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
    detail = output.strip().splitlines()
    raise GitError(f"git commit failed in {root}: {detail[-1] if detail else 'exit ' + str(proc.returncode)}")


def log(root: Path, paths: list[str], limit: int = 50) -> list[dict]:
    """Commits touching paths, newest first: {commit, date, message, files}."""
    if run(root, "rev-parse", "HEAD", check=False).returncode != 0:
        return []
    proc = run(
        root, "log", f"-n{limit}", "--date=iso-strict", "--name-only",
        "--format=%x1e%h%x1f%ad%x1f%B", "--", *paths,
    )
    out = []
    for record in proc.stdout.split("\x1e")[1:]:
        head, _, rest = record.partition("\x1f")
        date, _, body = rest.partition("\x1f")
        message, _, files = body.rstrip().rpartition("\n\n")
        if not message:
            message, files = files, ""
        out.append({
            "commit": head, "date": date, "message": message.strip(),
            "files": [f for f in files.split("\n") if f.strip()],
        })
    return out
