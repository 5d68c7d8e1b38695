"""A workspace: one agent's folder of markdown files under git, and every write to it.

This is the store-level workspace: opening, creating, the lock, the one write transaction
(giok.store.transaction), MEMORY.md and the other files read back, and the changes that need
no judgement (moving an entry between layers). It imports only the store, the text helpers
and the errors; the features built on it (remember, forget, search, the notes) are added by
the facade `giok.workspace.Workspace` (docs/architecture.md).

Each write takes the workspace lock, reads the file, changes it, writes it atomically
(refusing if the file changed underneath) and commits at once (write-on-decision)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

from giok.errors import DirtyFileError, GiokError, InvalidInput, NotFound, WorkspaceError
from giok.settings import Settings
from giok.store import git, journal, templates
from giok.store.clock import parse_date, today
from giok.store.fsutil import (
    atomic_write,
    clean_text,
    file_lock,
    read_bytes,
    temp_files,
)
from giok.store.home import Home, check_name
from giok.store.layout import (
    DATA_DIR,
    DECISIONS,
    HEARTBEAT,
    JOURNAL,
    LESSONS,
    LOGGED,
    MEMO,
    MEMORY,
    OPENCLAW_FILES,
    REQUIRED,
    SYNC_MARK,
    TASKS,
    Layout,
    diary_path,
)
from giok.store.memoryfile import (
    ID_RE,
    LAYER_DAYS,
    LAYERS,
    MemoryEntry,
    MemoryFile,
    forget_kept,
    read_kept,
)
from giok.store.sections import Doc
from giok.store.transaction import Message, Transaction, prepare, require_git
from giok.text.lazy import lazy

__all__ = [
    "DECISIONS",
    "HEARTBEAT",
    "LESSONS",
    "MEMO",
    "MEMORY",
    "OPENCLAW_FILES",
    "TASKS",
    "Workspace",
    "WriteResult",
]

R = TypeVar("R")
Writes = Mapping[str, bytes | None]
TYPES = ("preference", "fact", "workflow", "episode", "lesson", "decision")
_SCOPE_RE = lazy(r"^(workspace|(user|thread|task):(?!.*\.\.)[\w@.+-]{1,64})$")
DECISION_RE = lazy(r"^##\s+(D-(\d{3,}))\b")  # a decision heading; group 1 is its id
_TASK_RE = lazy(r"^-\s+(?:\[[ x~!]\]\s+)?(T-(\d{3,}))\s+(.*)$")
_HELD = threading.local()  # workspace roots whose lock this thread holds, with depth
TASK_MARK = {"todo": "[ ]", "doing": "[~]", "done": "[x]", "blocked": "[!]"}
TASK_RE = _TASK_RE
# MEMORY.md parsed, per path: ((mtime_ns, size, inode), MemoryFile); see Workspace.memory


@dataclass
class WriteResult:
    """What a write did: action is written, refused, duplicate, superseded, removed, unchanged."""

    action: str
    entry: MemoryEntry | None = None
    reason: str = ""
    commit: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The result as JSON-ready data."""
        return {
            "action": self.action,
            "reason": self.reason,
            "commit": self.commit,
            "notes": list(self.notes),
            "entry": self.entry.to_dict() if self.entry else None,
        }


def check_layer(layer: str) -> str:
    value = (layer or "").strip().upper()
    if value not in LAYERS:
        raise InvalidInput(f"invalid layer {layer!r}: choose one of {', '.join(LAYERS)}")
    return value


def check_scope(scope: str | None) -> str:
    scope = (scope or "workspace").strip()
    if not _SCOPE_RE.match(scope):
        raise InvalidInput(f"invalid scope {scope!r}: use workspace, user:NAME, thread:ID or task:ID")
    return scope


def check_id(entry_id: str) -> str:
    if not entry_id or not ID_RE.match(entry_id.strip()):
        raise InvalidInput(f"malformed memory id {entry_id!r}: ids look like m-7f3a2c")
    return entry_id.strip()


_OPENCLAW_MARKERS = (
    "IDENTITY.md",
    "BOOTSTRAP.md",
    ".openclaw/workspace-state.json",
    "openclaw-workspace-state.json",
)


def is_openclaw(root: Path) -> bool:
    """A folder OpenClaw set up (its IDENTITY.md or BOOTSTRAP.md, an old state sidecar) or
    will: `~/.openclaw/workspace*`."""
    root = Path(root).expanduser().resolve()
    if any((root / m).exists() for m in _OPENCLAW_MARKERS):
        return True
    home = Path.home().resolve() / ".openclaw"
    return root.parent == home and root.name.startswith("workspace")


def _not_a_workspace(spec: str, path: Path, spaces: dict) -> str:
    """Why `spec` names no workspace, and the next step: `giok init` only for a folder that is
    missing or empty (init adopts a folder: never suggest it for one that holds other things)."""
    known = ", ".join(sorted(spaces)) or "none yet"
    try:
        fresh = not path.exists() or (path.is_dir() and not any(path.iterdir()))
    except OSError:  # a folder we may not list
        fresh = False
    if fresh:
        return f"{spec} is not a giok workspace (no MEMORY.md); create one there with `giok init {spec}`"
    return (
        f"{spec} is not a giok workspace (no MEMORY.md there); "
        f"give a workspace's folder or name (known: {known})"
    )


class Workspace:
    """One agent's memory folder (MEMORY.md, diaries, state, notes) under git: every read
    and write of the library goes through it. `Workspace.init` makes one, `Workspace.open`
    finds a registered one."""

    def __init__(
        self,
        root: Path | str,
        name: str | None = None,
        home: Home | None = None,
        settings: Settings | None = None,
    ):
        self.root = Path(root).resolve()
        self.home = home or Home(settings=settings)
        self.settings = settings or self.home.settings
        self.name = name or self.home.name_for(self.root) or self.root.name
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace folder {self.root} does not exist")

    def __repr__(self) -> str:
        return f"Workspace({self.name!r}, {str(self.root)!r})"

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        spec: str | None = None,
        home: Home | None = None,
        cwd: Path | None = None,
        settings: Settings | None = None,
    ) -> Self:
        """Resolve NAME|PATH, else $GIOK_WORKSPACE (`settings.workspace`), else the workspace
        containing cwd. `settings`: what the entry point read (default: the environment)."""
        home = home or Home(settings=settings)
        spec = spec or (settings or home.settings).workspace
        if spec:
            return cls._from_spec(spec, home)
        here = Path(cwd or os.getcwd()).resolve()
        for candidate in (here, *here.parents):
            if home.name_for(candidate) or ((candidate / MEMORY).is_file() and (candidate / ".git").exists()):
                return cls(candidate, home=home)
        raise WorkspaceError(
            "no workspace given: use -w NAME|PATH, set $GIOK_WORKSPACE, or cd into a workspace"
        )

    @classmethod
    def _from_spec(cls, spec: str, home: Home) -> Self:
        spaces = home.workspaces()
        if spec in spaces:
            path = Path(spaces[spec]["path"])
            if not path.is_dir():
                raise WorkspaceError(f"workspace {spec!r} points to {path}, which no longer exists")
            return cls(path, name=spec, home=home)
        if "/" in spec or spec.startswith("."):
            path = Path(spec).expanduser().resolve()
            if path.is_dir() and ((path / MEMORY).is_file() or home.name_for(path)):
                return cls(path, home=home)
            raise WorkspaceError(_not_a_workspace(spec, path, spaces))
        check_name(spec)
        known = ", ".join(sorted(spaces)) or "none yet"
        raise WorkspaceError(
            f"unknown workspace {spec!r} (known: {known}); create it with `giok init PATH --name {spec}`"
        )

    @classmethod
    def init(
        cls,
        path: Path | str,
        name: str | None = None,
        lang: str = "en",
        user: str | None = None,
        home: Home | None = None,
        openclaw: bool | None = None,
    ) -> tuple[Self, list[str]]:
        """Create (or adopt) a workspace: add only missing files, never overwrite. Returns
        the workspace and the files it created. `openclaw`: write only giok's own files and
        leave SOUL/AGENTS/USER/TOOLS/HEARTBEAT.md to OpenClaw's templates (None: when the
        folder looks like an OpenClaw workspace, see `is_openclaw`)."""
        if lang not in ("en", "ko"):
            raise InvalidInput(f"invalid language {lang!r}: use en or ko")
        home = home or Home()
        root = Path(path).expanduser().resolve()
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} exists and is not a folder")
        name = check_name(name or re.sub(r"[^A-Za-z0-9._-]", "-", root.name).strip("-.") or "agent")
        user = clean_text(user or ("사용자" if lang == "ko" else "my user"), "user name", limit=200)
        existed = root.exists()
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create {root}: {exc.strerror}") from None
        try:
            home.register(name, root)
        except GiokError:
            if not existed:
                root.rmdir()  # leave no empty folder behind a refused name
            raise
        ws = cls(root, name=name, home=home)
        if openclaw is None:
            openclaw = is_openclaw(root)
        created = ws._scaffold(lang, user, skip=OPENCLAW_FILES if openclaw else ())
        return ws, created

    def _scaffold(self, lang: str, user: str, skip=()) -> list[str]:
        with self.lock():
            if not git.is_repo(self.root):
                git.init(self.root)
            if not git.has_identity(self.root):
                git.set_local_identity(self.root, f"{self.name} (giok)", f"{self.name}@giok.local")
            created = []
            for rel, content in templates.files(lang, self.name, user, today().isoformat()).items():
                if rel in skip:
                    continue
                path = self.root / rel
                if rel.startswith("memory/") and any((self.root / "memory").glob("*.md")):
                    continue  # an adopted diary folder already has its days
                if not path.exists():
                    atomic_write(path, content.encode("utf-8"))
                    created.append(rel)
            created += self._ensure_gitignore()
            adopted = self._untracked(
                [
                    rel
                    for rel in templates.files(lang, self.name, user, "x")
                    if rel not in created and not rel.startswith("memory/")
                ]
                + ["memory"],
                skip=created,
            )
            if created or adopted:
                body = "".join(
                    f"\n{label}: {', '.join(rels)}"
                    for label, rels in (("Created", created), ("Adopted", adopted))
                    if rels
                )
                # a random id in the first commit: two workspaces created apart never share a first
                # commit, which is their identity in the shared index (giok.retrieval.pg.identity)
                stamp = f"\n\nWorkspace-Id: {os.urandom(8).hex()}"
                git.commit(self.root, created + adopted, f"giok: init workspace {self.name}\n{body}{stamp}")
            return created

    def _untracked(self, rels: list[str], skip: list[str]) -> list[str]:
        """The files among rels (folders included) that exist, are not tracked, not ignored
        and not in skip."""
        present = [rel for rel in rels if (self.root / rel).exists()]
        if not present:
            return []
        out = git.run(self.root, "ls-files", "--others", "--exclude-standard", "-z", "--", *present).stdout
        return sorted(p for p in out.split("\0") if p and p not in skip)

    def _ensure_gitignore(self) -> list[str]:
        path = self.root / ".gitignore"
        text = path.read_text("utf-8") if path.exists() else ""
        if any(line.strip() in (".giok/", ".giok", "/.giok/") for line in text.splitlines()):
            return []
        sep = "" if not text or text.endswith("\n") else "\n"
        atomic_write(path, (text + sep + "# giok derived data (index, caches, locks)\n.giok/\n").encode())
        return [".gitignore"]

    # -- plumbing -------------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        """Every path of this workspace (giok.store.layout)."""
        return Layout(self.root)

    @property
    def data_dir(self) -> Path:
        """Derived data (index, caches, locks): ignored by git, rebuildable from the files."""
        return self.layout.data_dir

    @contextlib.contextmanager
    def lock(self, timeout: float = 30.0) -> Iterator[None]:
        """The workspace lock (flock on .giok/lock). Re-entrant within a thread, so a write
        helper can be called by code that already holds it."""
        key = str(self.root)
        held = getattr(_HELD, "roots", None)
        if held is None:
            held = _HELD.roots = {}
        if held.get(key):
            held[key] += 1
            try:
                yield
            finally:
                held[key] -= 1
            return
        with file_lock(self.layout.lock, timeout=timeout):
            held[key] = 1
            try:
                yield
            finally:
                held.pop(key, None)

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read_text(self, rel: str) -> str:
        return read_bytes(self.root / rel).decode("utf-8", errors="replace")

    @contextlib.contextmanager
    def transaction(
        self, message: Message, *, also: tuple[str, ...] = (), identity: bool = False
    ) -> Iterator[Transaction]:
        """One write (giok.store.transaction): under the lock, with what killed writers left
        settled and hand edits of `also` committed first, the block plans writes, deletions
        and renames on the transaction; they are committed together when it ends without an
        error (nothing is written when it raises). `identity`: check git's identity first."""
        with self.lock():
            require_git(self.root, identity)
            prepare(self.root, also)
            tx = Transaction(self.root, message)
            yield tx
            tx.commit()
            self._forget_parse()

    def edit(
        self, rel: str, change: Callable[[str], tuple[str, R]], message: str | Callable[[R], str]
    ) -> tuple[R, str | None]:
        """Under the lock: read rel, apply change(text) → (new text, result), write atomically
        if anything changed, commit. `message` is a string or a function of the result."""

        def on_bytes(before: bytes) -> tuple[bytes, R]:
            new_text, result = change(before.decode("utf-8", errors="surrogateescape"))
            return new_text.encode("utf-8", errors="surrogateescape"), result

        return self.edit_bytes(rel, on_bytes, message)

    def edit_bytes(
        self, rel: str, change: Callable[[bytes], tuple[bytes, R]], message: str | Callable[[R], str]
    ) -> tuple[R, str | None]:
        """`edit` on the file's bytes: change(bytes) → (new bytes, result)."""
        with self.lock():
            require_git(self.root)
            prepare(self.root, [rel])
            before = read_bytes(self.root / rel)
            after, result = change(before)
            if after == before:
                return result, None
            msg = message(result) if callable(message) else message
            tx = Transaction(self.root, msg)
            tx.write(rel, after, expected=before)
            self._forget_parse()
            return result, tx.commit(hand_edits=False)

    def write_files(
        self,
        writes: Writes | Callable[[Callable[[str], bytes]], Writes],
        message: Message,
        before: dict[str, bytes] | None = None,
        also: tuple[str, ...] = (),
    ) -> str | None:
        """Write several files and commit them as one change, under the lock. `writes` is a
        dict rel → bytes (None deletes the file), or a function of `read(rel) -> bytes` called
        under the lock that returns one; `before` holds bytes the caller planned from (a file
        that changed since raises DirtyFileError before anything is written); hand edits of
        the `also` paths are committed on their own first, like those of the written files.
        The write is journaled: if it or the commit fails, or the process dies, every file
        gets its previous bytes back (a new file is removed)."""
        with self.lock():
            require_git(self.root)
            prepare(self.root, also)
            if callable(writes):
                writes = writes(lambda rel: read_bytes(self.root / rel))
            for rel in writes:
                if before and rel in before and read_bytes(self.root / rel) != before[rel]:
                    raise DirtyFileError(f"{rel} changed on disk while giok was writing; nothing was written")
            tx = Transaction(self.root, message)
            for rel, data in writes.items():
                if data is None:
                    tx.delete(rel)
                else:
                    tx.write(rel, data)
            self._forget_parse()
            return tx.commit()

    def recover(self) -> dict | None:
        """Settle what a killed writer left (see `transaction.prepare`); returns the journal's
        account ({message, committed, restored, kept}) or None when no write was interrupted."""
        with self.lock():
            require_git(self.root)
            return prepare(self.root, ())

    def _require_git(self, identity: bool = False) -> None:
        require_git(self.root, identity)

    def _symlinks(self) -> list[dict]:
        """Tracked symlinks (git carries them; another machine's push can bring one): giok
        follows none of them — boot skips them, a write through one is refused."""
        out = git.run(self.root, "ls-files", "-s", "-z", check=False).stdout.split("\0")
        found: list[dict[str, Any]] = []
        for item in out:
            meta, _, rel = item.partition("\t")
            if not meta.startswith("120000 "):
                continue
            try:
                target = os.readlink(self.root / rel)
            except OSError:
                continue  # tracked as a link, not one on this disk
            found.append(
                {
                    "severity": "error" if rel in REQUIRED or rel.endswith(".md") else "warning",
                    "path": rel,
                    "line": None,
                    "message": f"a symlink (to {target}), as git brought it: giok reads and writes no "
                    "file through a link (boot skips it); replace it with the file",
                }
            )
        return found

    def _crash_leftovers(self) -> list[dict]:
        """What killed processes left (read-only): a pending journal, git locks, temp files."""
        found: list[dict[str, Any]] = []
        pending = journal.describe(self.root)
        if pending:
            found.append(
                {"severity": "warning", "path": f"{DATA_DIR}/{JOURNAL}", "line": None, "message": pending}
            )
        for lock in git.stale_locks(self.root):
            found.append(
                {
                    "severity": "warning",
                    "path": lock.relative_to(self.root).as_posix(),
                    "line": None,
                    "message": "git lock file: the next giok write removes it when no git process runs here",
                }
            )
        found += [
            {
                "severity": "warning",
                "path": rel,
                "line": None,
                "message": "temp file left by a killed writer; the next giok write removes it",
            }
            for rel in temp_files(self.root)
        ]
        return found + self._sync_leftovers()

    def _sync_leftovers(self) -> list[dict]:
        """What a killed `giok sync` left (giok.store.remote.settle rolls it back)."""
        found: list[dict[str, Any]] = []
        if os.path.lexists(self.root / DATA_DIR / SYNC_MARK):
            found.append(
                {
                    "severity": "warning",
                    "path": f"{DATA_DIR}/{SYNC_MARK}",
                    "line": None,
                    "message": "an interrupted sync: the next giok sync or write rolls back what it did "
                    "not commit, and the sync merges again",
                }
            )
        found += [
            {
                "severity": "warning",
                "path": name,
                "line": None,
                "message": "temp file left by a killed merge; the next giok sync or write removes it",
            }
            for name in git.merge_temp_files(self.root)
        ]
        return found

    # -- MEMORY.md ------------------------------------------------------------------------
    def memory(self) -> MemoryFile:
        """MEMORY.md, parsed. The parse is kept per file with the bytes it was made from
        (giok.store.memoryfile.read_kept): served again only for the same bytes. Each call
        returns its own copy, so a caller may change it freely."""
        path = self.root / MEMORY
        return read_kept(str(path), read_bytes(path))

    def _forget_parse(self) -> None:
        """Drop the kept parse of MEMORY.md (giok is writing the workspace)."""
        forget_kept(str(self.root / MEMORY))

    def _expiry(self, layer: str, expires) -> dt.date | None:
        if layer == "M0":
            if expires:
                raise InvalidInput("M0 is permanent: it takes no expiry")
            return None
        if expires:
            date = expires if isinstance(expires, dt.date) else parse_date(str(expires))
            if date < today():
                raise InvalidInput(f"expiry {date} is in the past")
            return date
        return today() + dt.timedelta(days=LAYER_DAYS[layer] or 0)

    def _entry_in(self, mf: MemoryFile, entry_id: str) -> MemoryEntry:
        entry = mf.find(entry_id)
        if entry is None:
            raise NotFound(f"no memory with id {entry_id} in {self.name}")
        return entry

    def get(self, entry_id: str) -> MemoryEntry:
        return self._entry_in(self.memory(), check_id(entry_id))

    # -- diary, lessons, decisions ----------------------------------------------------------
    def diary_path(self, day: dt.date | None = None) -> str:
        return diary_path(day or today())

    def decisions(self) -> list[dict]:
        doc = Doc.parse(self.read_text(DECISIONS))
        out = []
        for section in doc.sections:
            m = DECISION_RE.match(section.heading)
            if not m:
                continue
            rest = section.heading[m.end() :].strip()
            date_m = re.match(r"^\[([^\]]+)\]\s*", rest)
            fields = {}
            for line in section.lines:
                km = re.match(r"^-\s+(why|supersedes|이유|대체)\s*:\s*(.*)$", line.strip())
                if km:
                    fields[{"이유": "why", "대체": "supersedes"}.get(km.group(1), km.group(1))] = km.group(2)
            out.append(
                {
                    "id": m.group(1),
                    "date": date_m.group(1) if date_m else None,
                    "text": rest[date_m.end() :] if date_m else rest,
                    **fields,
                }
            )
        superseded = {d.get("supersedes") for d in out if d.get("supersedes")}
        for d in out:
            d["superseded"] = d["id"] in superseded
        return out

    # -- tasks --------------------------------------------------------------------------
    def tasks(self) -> list[dict]:
        doc = Doc.parse(self.read_text(TASKS))
        out = []
        for status in templates.TASK_STATUSES:
            section = doc.find(status)
            for line in section.lines if section else []:
                m = _TASK_RE.match(line.strip())
                if m:
                    out.append({"id": m.group(1), "status": status, "text": m.group(3)})
        return out

    # -- state memo ---------------------------------------------------------------------
    def state(self) -> dict[str, str]:
        doc = Doc.parse(self.read_text(MEMO))
        out = {}
        for key in templates.STATE_SECTIONS:
            titles = [templates.STATE_TITLES[lang][key] for lang in ("en", "ko")]
            section = doc.find(*titles, key)
            out[key] = section.body() if section else ""
        return out

    # -- heartbeat ----------------------------------------------------------------------
    def heartbeat(self) -> list[str]:
        return [
            ln.strip()[2:].strip()
            for ln in self.read_text(HEARTBEAT).splitlines()
            if re.match(r"^\s*[-*]\s+\S", ln)
        ]

    # -- reading ------------------------------------------------------------------------
    def show(self) -> dict:
        mf = self.memory()
        day = today()
        layers = {}
        for layer in LAYERS:
            entries = mf.entries(layer)
            layers[layer] = {"count": len(entries), "entries": [e.to_dict() for e in entries]}
        soon = [
            e.to_dict() for e in mf.entries() if e.expires and day <= e.expires <= day + dt.timedelta(days=7)
        ]
        expired = [e.to_dict() for e in mf.entries() if e.expired(day)]
        return {
            "workspace": self.name,
            "path": str(self.root),
            "today": day.isoformat(),
            "layers": layers,
            "expiring_soon": soon,
            "expired": expired,
            "problems": len(mf.unreadable),
            "outside_layers": len(mf.unheaded()),
        }

    def log(self, limit: int = 50) -> list[dict]:
        return git.log(
            self.root,
            list(LOGGED),
            limit,
        )

    def _invalid_utf8(self) -> list[dict]:
        """Lines of MEMORY.md and the diaries that are not valid UTF-8 (giok keeps their bytes
        as they are, but shows them as "�" and cannot search them as written)."""
        found: list[dict[str, Any]] = []
        rels = [MEMORY, *sorted(f"memory/{p.name}" for p in (self.root / "memory").glob("*.md"))]
        for rel in rels:
            try:
                data = read_bytes(self.root / rel)
            except (OSError, GiokError):
                continue
            for no, line in enumerate(data.split(b"\n"), 1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    found.append(
                        {
                            "severity": "warning",
                            "path": rel,
                            "line": no,
                            "message": (
                                "not valid UTF-8 (shown as \ufffd; fix the bytes or save the file as UTF-8)"
                            ),
                        }
                    )
        return found

    def check(self) -> list[dict]:
        """Problems in the files: {severity, path, line, message}."""
        found: list[dict[str, Any]] = []
        for rel in REQUIRED:
            if not (self.root / rel).is_file():
                found.append({"severity": "error", "path": rel, "line": None, "message": "missing file"})
        found += self._invalid_utf8()
        links = self._symlinks()
        found += links
        mf = self.memory() if not any(p["path"] == MEMORY for p in links) else MemoryFile.parse(b"")
        for line_no, problem, raw in mf.unreadable:
            found.append(
                {
                    "severity": "warning",
                    "path": MEMORY,
                    "line": line_no,
                    "message": f"{problem}: {raw.strip()}",
                }
            )
        outside = mf.unheaded()
        if outside:  # an adopted, plain MEMORY.md: its bullets are M30 entries for every reader
            lines = ", ".join(str(e.line_no) for e in outside[:10]) + (", …" if len(outside) > 10 else "")
            found.append(
                {
                    "severity": "info",
                    "path": MEMORY,
                    "line": outside[0].line_no,
                    "message": f"{len(outside)} entr{'y' if len(outside) == 1 else 'ies'} outside any layer "
                    f"heading (line{'s' if len(outside) > 1 else ''} {lines}): "
                    "read as M30, without expiry unless they carry one",
                }
            )
        seen: dict[str, int] = {}
        for e in mf.entries():
            if e.id in seen and e.fields.get("id"):
                found.append(
                    {
                        "severity": "error",
                        "path": MEMORY,
                        "line": e.line_no,
                        "message": f"duplicate id {e.id} (also line {seen[e.id]})",
                    }
                )
            seen.setdefault(e.id, e.line_no)
            if e.expired(today()):
                found.append(
                    {
                        "severity": "info",
                        "path": MEMORY,
                        "line": e.line_no,
                        "message": f"{e.id} expired on {e.expires}; `giok distill` archives it",
                    }
                )
            if e.layer == "M0" and e.expires:
                found.append(
                    {
                        "severity": "warning",
                        "path": MEMORY,
                        "line": e.line_no,
                        "message": f"{e.id} is in M0 (permanent) but carries an expiry",
                    }
                )
        rules = tier1_rules(self.read_text("AGENTS.md"))
        if len(rules) > 7:
            found.append(
                {
                    "severity": "warning",
                    "path": "AGENTS.md",
                    "line": None,
                    "message": (
                        f"TIER 1 has {len(rules)} rules; keep it to 7 or fewer (it is injected every session)"
                    ),
                }
            )
        if not git.is_repo(self.root):
            found.append({"severity": "error", "path": ".", "line": None, "message": "not a git repository"})
        return found + self._crash_leftovers()


# "- Name: Seojun", "- 이름: 서준", OpenClaw's "- **Name:** Seojun"; an empty value is no name.
_USER_RE = lazy(
    r"^[ \t]*[-*][ \t]*(?:\*\*)?(?:name|이름)[ \t]*:[ \t]*(?:\*\*)?[ \t]*(\S[^\n]*?)[ \t]*$", re.I | re.M
)


def default_user(user_md: str) -> str | None:
    """The user's name in USER.md (boot shows it; reads see that user's scoped entries)."""
    m = _USER_RE.search(user_md)
    return m.group(1) if m else None


def tier1_rules(agents_md: str) -> list[str]:
    doc = Doc.parse(agents_md)
    section = next((s for s in doc.sections if re.match(r"^tier\s*1\b", s.title.strip(), re.I)), None)
    return [ln.strip() for ln in section.lines if re.match(r"^\s*[-*]\s+\S", ln)] if section else []


def state_key(section: str) -> str:
    """The state section a name means (its key, or its English or Korean title); InvalidInput else."""
    wanted = (section or "").strip().lower().replace("_", "-")
    for key in templates.STATE_SECTIONS:
        titles = [templates.STATE_TITLES[lang][key].lower() for lang in ("en", "ko")]
        if wanted == key or wanted in titles or wanted == key.replace("-", " "):
            return key
    raise InvalidInput(
        f"unknown state section {section!r}: choose one of {', '.join(templates.STATE_SECTIONS)}"
    )


def check_confidence(value) -> str | None:
    """A confidence as an entry stores it (0 to 1, shortest form); None stays None."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"invalid confidence {value!r}: a number between 0 and 1") from None
    if not 0.0 <= number <= 1.0:
        raise InvalidInput(f"invalid confidence {value!r}: a number between 0 and 1")
    return f"{number:g}"


def one_line(text: str) -> str:
    """`text` on one line, runs of white space one space (commit messages, reasons)."""
    return " ".join(str(text).split())


def short(text: str, width: int = 60) -> str:
    """`one_line(text)` cut to `width` characters with an ellipsis (commit subjects)."""
    text = one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"
