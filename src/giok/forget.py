"""Forgetting for good: an entry (by id) or every line holding a text (`--match`) leaves the
files, the search index (chunks, vectors, embedding cache), the derived caches in .giok/ and,
when asked, git history.

- By id: the MEMORY.md entry goes, and so does every line elsewhere that holds its exact text
  (a diary copy, the archive, state/trace.jsonl), so that search cannot bring it back.
- By match: every line of every tracked text file that contains TEXT (case-insensitive) goes.
- One commit for all files, `memory: forget …` with the reason; the forgotten text is never
  put in the message.
- `--purge` lists the commits that still hold the text and how to remove it;
  `--rewrite-history` does it (git filter-branch over all refs, then reflog expiry and gc).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import git
from .errors import GitError, InvalidInput, NotFound
from .fsutil import atomic_write, checksum, clean_text, read_bytes

TEXT_SUFFIXES = (".md", ".jsonl", ".txt", ".json", ".markdown")
_SKIP_DERIVED = (".db", ".sqlite", ".sqlite3", "-wal", "-shm", "lock")
MIN_MATCH = 4


@dataclass
class Forgotten:
    reason: str
    entry: object = None                       # the MemoryEntry, when forgotten by id
    texts: list[str] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)   # {path, line}
    commit: str | None = None
    index_chunks: int | None = None
    caches: list[str] = field(default_factory=list)
    history: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"reason": self.reason, "entry": self.entry.to_dict() if self.entry else None,
                "removed": self.removed, "commit": self.commit, "index_chunks": self.index_chunks,
                "caches": self.caches, "history": self.history, "notes": self.notes}


def forget(ws, entry_id: str | None = None, reason: str = "", match: str | None = None,
           purge: bool = False, rewrite_history: bool = False, dry_run: bool = False) -> Forgotten:
    reason = clean_text(reason, "reason", limit=1000)
    if bool(entry_id) == bool(match):
        raise InvalidInput("give either a memory id or --match TEXT (not both, not neither)")
    with ws.lock():
        ws._require_git()
        history_only = purge or rewrite_history
        done = _by_id(ws, entry_id, reason) if entry_id else _by_match(ws, match, reason, history_only)
        if dry_run:
            return done
        done.commit = _write(ws, done) if done.removed else None
    done.index_chunks = _purge_index(ws, done)
    done.caches = _scrub_caches(ws, done)
    if purge or rewrite_history:
        done.history = history_report(ws, done.texts)
    if rewrite_history and done.history.get("commits"):
        with ws.lock():
            rewrite(ws, done.texts)
        done.history = {**history_report(ws, done.texts), "rewritten": True}
    return done


def _by_id(ws, entry_id: str, reason: str) -> Forgotten:
    from .workspace import MEMORY, check_id
    entry_id = check_id(entry_id)
    entry = ws.memory().find(entry_id)
    if entry is None:
        raise NotFound(f"no memory with id {entry_id} in {ws.name}")
    done = Forgotten(reason, entry=entry, texts=[entry.text])
    done.removed.append({"path": MEMORY, "line": entry.line_no})
    for rel in _text_files(ws):
        if rel == MEMORY:
            continue
        for no, line in enumerate(ws.read_text(rel).splitlines(), 1):
            if entry.text in line:
                done.removed.append({"path": rel, "line": no})
    return done


def _by_match(ws, match: str, reason: str, history_only: bool = False) -> Forgotten:
    match = clean_text(match, "match text", limit=1000)
    if len(match) < MIN_MATCH:
        raise InvalidInput(f"--match text is too short ({len(match)} characters): give at least {MIN_MATCH}")
    done = Forgotten(reason, texts=[match])
    needle = match.casefold()
    for rel in _text_files(ws):
        for no, line in enumerate(ws.read_text(rel).splitlines(), 1):
            if needle in line.casefold():
                done.removed.append({"path": rel, "line": no})
    if not done.removed and not history_only:
        raise NotFound(f"no line in {ws.name} contains {match!r}")
    return done


def _write(ws, done: Forgotten) -> str | None:
    """Drop the chosen lines from each file (atomic, checked) and commit them together."""
    by_path: dict[str, set[int]] = {}
    for item in done.removed:
        by_path.setdefault(item["path"], set()).add(item["line"])
    for rel, numbers in by_path.items():
        path = ws.root / rel
        before = read_bytes(path)
        lines = before.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        kept = [l for i, l in enumerate(lines, 1) if i not in numbers]
        atomic_write(path, "".join(kept).encode("utf-8", errors="surrogateescape"), expected_checksum=checksum(before))
    what = (f"{done.entry.id} ({done.entry.layer})" if done.entry
            else f"--match ({len(done.removed)} line(s) in {len(by_path)} file(s))")
    files = ", ".join(sorted(by_path))
    return git.commit(ws.root, sorted(by_path), f"memory: forget {what}\n\nReason: {done.reason}\nFiles: {files}")


def _text_files(ws) -> list[str]:
    proc = git.run(ws.root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", check=False)
    names = [n for n in proc.stdout.split("\0") if n] if proc.returncode == 0 else []
    return sorted(n for n in names if n.endswith(TEXT_SUFFIXES) and (ws.root / n).is_file())


def _purge_index(ws, done: Forgotten) -> int | None:
    try:
        from . import index
        purge = index.purge
    except (ImportError, AttributeError):
        done.notes.append("search index not purged: giok.index is not available")
        return None
    ids = [done.entry.id] if done.entry else []
    return purge(ws, done.texts, ids=ids)


def _scrub_caches(ws, done: Forgotten) -> list[str]:
    """Remove lines holding the text (or the id) from derived text files in .giok/ (the
    reference log, any boot or summary cache). SQLite files are the index's to purge."""
    needles = [t.casefold() for t in done.texts] + ([done.entry.id] if done.entry else [])
    changed = []
    for path in sorted(p for p in ws.data_dir.rglob("*") if p.is_file()):
        if path.name.endswith(_SKIP_DERIVED) or path.stat().st_size > 50_000_000:
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue
        lines = data.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        kept = [l for l in lines if not any(n in l.casefold() for n in needles)]
        if len(kept) != len(lines):
            atomic_write(path, "".join(kept).encode("utf-8", errors="surrogateescape"))
            changed.append(str(path.relative_to(ws.root)))
    return changed


# -- git history ------------------------------------------------------------------------------
def history_report(ws, texts: list[str]) -> dict:
    """Commits (any ref) whose files or message still hold one of texts, and how to remove them."""
    found: dict[str, str] = {}
    for text in texts:
        for args in (["-S" + text, "--regexp-ignore-case"], ["-i", "-F", "--grep=" + text]):
            proc = git.run(ws.root, "log", "--all", "--format=%h %s", *args, check=False)
            for line in proc.stdout.splitlines():
                sha, _, subject = line.partition(" ")
                found[sha] = subject
    how = ("git history still holds it: run `giok forget ... --rewrite-history` (rewrites every commit "
           "of this workspace with git filter-branch, expires the reflog and runs gc --prune=now), then "
           "force-push any remote and ask every clone to re-clone.") if found else "git history holds no copy."
    return {"commits": [{"commit": k, "message": v} for k, v in found.items()], "how": how}


_TREE_FILTER = r'''
import json, os, sys
needles = [t.casefold() for t in json.load(open(sys.argv[1]))]
for base, dirs, files in os.walk("."):
    dirs[:] = [d for d in dirs if d != ".git"]
    for name in files:
        path = os.path.join(base, name)
        if os.path.islink(path):
            continue
        data = open(path, "rb").read()
        text = data.decode("utf-8", "surrogateescape")
        lines = text.splitlines(keepends=True)
        kept = [l for l in lines if not any(n in l.casefold() for n in needles)]
        if len(kept) != len(lines):
            open(path, "wb").write("".join(kept).encode("utf-8", "surrogateescape"))
'''

_MSG_FILTER = r'''
import json, re, sys
message = sys.stdin.read()
for text in json.load(open(sys.argv[1])):
    message = re.sub(re.escape(text), "[forgotten]", message, flags=re.I)
sys.stdout.write(message)
'''


def rewrite(ws, texts: list[str]) -> None:
    """Remove every line holding one of texts from every commit, and the texts from every
    commit message; then drop the old objects (reflog expiry + gc)."""
    from .workspace import _short
    variants = sorted({v for t in texts for v in (t, _short(t), t[:60], " ".join(t.split())[:60]) if len(v) >= MIN_MATCH},
                      key=len, reverse=True)
    work = Path(tempfile.mkdtemp(prefix="giok-forget-"))
    try:
        (work / "texts.json").write_text(json.dumps(list(texts)), "utf-8")
        (work / "variants.json").write_text(json.dumps(variants), "utf-8")
        (work / "tree.py").write_text(_TREE_FILTER, "utf-8")
        (work / "msg.py").write_text(_MSG_FILTER, "utf-8")
        py = sys.executable
        env = {**os.environ, "FILTER_BRANCH_SQUELCH_WARNING": "1", "LC_ALL": "C"}
        cmd = ["git", "-C", str(ws.root), "filter-branch", "-f", "-d", str(work / "scratch"),
               "--tree-filter", f"'{py}' '{work / 'tree.py'}' '{work / 'texts.json'}'",
               "--msg-filter", f"'{py}' '{work / 'msg.py'}' '{work / 'variants.json'}'", "--", "--all"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise GitError(f"rewriting history failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
        for ref in git.run(ws.root, "for-each-ref", "--format=%(refname)", "refs/original").stdout.split():
            git.run(ws.root, "update-ref", "-d", ref)
        git.run(ws.root, "reflog", "expire", "--expire=now", "--all")
        git.run(ws.root, "gc", "--prune=now", "-q")
    finally:
        shutil.rmtree(work, ignore_errors=True)
