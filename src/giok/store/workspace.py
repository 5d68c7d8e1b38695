"""A workspace: one agent's folder of markdown files under git, and every write to it.

Each write takes the workspace lock, reads the file, changes it, writes it atomically
(refusing if the file changed underneath) and commits at once (write-on-decision)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from giok.errors import DirtyFileError, GiokError, GitError, InvalidInput, NotFound, WorkspaceError
from giok.store import git, templates
from giok.store.clock import now, parse_date, today
from giok.store.fsutil import (
    atomic_write,
    check_link,
    checksum,
    clean_temp_files,
    clean_text,
    file_lock,
    read_bytes,
    temp_files,
)
from giok.store.home import Home, check_name
from giok.store.memoryfile import ID_RE, LAYER_DAYS, LAYERS, MemoryEntry, MemoryFile, new_id
from giok.store.sections import Doc, append_item

MEMORY = "MEMORY.md"
LESSONS = "compound/lessons.md"
DECISIONS = "state/decisions.md"
TASKS = "state/tasks.md"
MEMO = "state/memo.md"
HEARTBEAT = "HEARTBEAT.md"
TYPES = ("preference", "fact", "workflow", "episode", "lesson", "decision")
_SCOPE_RE = re.compile(r"^(workspace|(user|thread|task):(?!.*\.\.)[\w@.+-]{1,64})$")
DECISION_RE = re.compile(r"^##\s+(D-(\d{3,}))\b")  # a decision heading; group 1 is its id
_TASK_RE = re.compile(r"^-\s+(?:\[[ x~!]\]\s+)?(T-(\d{3,}))\s+(.*)$")
_HELD = threading.local()  # workspace roots whose lock this thread holds, with depth
_TASK_MARK = {"todo": "[ ]", "doing": "[~]", "done": "[x]", "blocked": "[!]"}


@dataclass
class WriteResult:
    """What a write did: action is written, refused, duplicate, superseded, removed, unchanged."""

    action: str
    entry: MemoryEntry | None = None
    reason: str = ""
    commit: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
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


# OpenClaw's templates own these (`openclaw setup` writes them); `giok init --openclaw` leaves them alone
OPENCLAW_FILES = ("SOUL.md", "AGENTS.md", "USER.md", "TOOLS.md", "HEARTBEAT.md")
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


class Workspace:
    def __init__(self, root: Path | str, name: str | None = None, home: Home | None = None):
        self.root = Path(root).resolve()
        self.home = home or Home()
        self.name = name or self.home.name_for(self.root) or self.root.name
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace folder {self.root} does not exist")

    def __repr__(self) -> str:
        return f"Workspace({self.name!r}, {str(self.root)!r})"

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def open(cls, spec: str | None = None, home: Home | None = None, cwd: Path | None = None) -> Workspace:
        """Resolve NAME|PATH, else $GIOK_WORKSPACE, else the workspace containing cwd."""
        home = home or Home()
        spec = spec or os.environ.get("GIOK_WORKSPACE") or None
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
    def _from_spec(cls, spec: str, home: Home) -> Workspace:
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
            raise WorkspaceError(f"{spec} is not a giok workspace (no MEMORY.md); run `giok init {spec}`")
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
    ) -> tuple[Workspace, list[str]]:
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
                git.commit(self.root, created + adopted, f"giok: init workspace {self.name}\n{body}")
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
    def data_dir(self) -> Path:
        """Derived data (index, caches, locks): ignored by git, rebuildable from the files."""
        path = self.root / ".giok"
        path.mkdir(exist_ok=True)
        return path

    @contextlib.contextmanager
    def lock(self, timeout: float = 30.0):
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
        with file_lock(self.data_dir / "lock", timeout=timeout):
            held[key] = 1
            try:
                yield
            finally:
                held.pop(key, None)

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read_text(self, rel: str) -> str:
        return read_bytes(self.root / rel).decode("utf-8", errors="replace")

    def edit(self, rel: str, change, message) -> tuple[object, str | None]:
        """Under the lock: read rel, apply change(text) → (new text, result), write atomically
        if anything changed, commit. `message` is a string or a function of the result."""
        with self.lock():
            self._require_git()
            self._prepare([rel])
            path = self.root / rel
            before = read_bytes(path)
            new_text, result = change(before.decode("utf-8", errors="surrogateescape"))
            after = new_text.encode("utf-8", errors="surrogateescape")
            if after == before:
                return result, None
            msg = message(result) if callable(message) else message
            return result, self._transaction({rel: after}, msg, expected={rel: before})

    def write_files(
        self, writes, message, before: dict[str, bytes] | None = None, also: tuple[str, ...] = ()
    ) -> str | None:
        """Write several files and commit them as one change, under the lock. `writes` is a
        dict rel → bytes (None deletes the file), or a function of `read(rel) -> bytes` called
        under the lock that returns one; `before` holds bytes the caller planned from (a file
        that changed since raises DirtyFileError before anything is written); hand edits of
        the `also` paths are committed on their own first, like those of the written files.
        The write is journaled: if it or the commit fails, or the process dies, every file
        gets its previous bytes back (a new file is removed)."""
        with self.lock():
            self._require_git()
            self._prepare(also)
            if callable(writes):
                writes = writes(lambda rel: read_bytes(self.root / rel))
            for rel in writes:
                if (
                    before
                    and rel in before
                    and checksum(read_bytes(self.root / rel)) != checksum(before[rel])
                ):
                    raise DirtyFileError(f"{rel} changed on disk while giok was writing; nothing was written")
            self._commit_hand_edits(list(writes))
            return self._transaction(writes, message() if callable(message) else message)

    def recover(self) -> dict | None:
        """Settle what a killed writer left (see `_prepare`); returns the journal's account
        ({message, committed, restored, kept}) or None when no write was interrupted."""
        with self.lock():
            self._require_git()
            return self._prepare(())

    def _prepare(self, rels) -> dict | None:
        """Before a write, under the lock: remove the git locks and temp files killed
        processes left, settle an interrupted write's journal (giok.store.journal), and commit hand
        edits of `rels` as their own commit, so giok's commit holds only giok's change."""
        from giok.store import journal

        git.recover_locks(self.root)
        settled = journal.recover(self.root)
        clean_temp_files(self.root)
        if rels:
            self._commit_hand_edits(list(rels))
        return settled

    def _commit_hand_edits(self, rels: list[str]) -> str | None:
        """Commit, as `hand edit: …`, what changed in the tracked files of rels since the last
        commit (no giok write explains it: the journal was settled first), before giok
        writes them. A path through a symlink is refused first (fsutil.check_link)."""
        for rel in rels:
            check_link(self.root / rel, write=True)
        tracked = self._tracked(rels)
        present = [rel for rel in rels if os.path.lexists(self.root / rel) or rel in tracked]
        if not present:
            return None
        out = git.run(
            self.root,
            "--no-optional-locks",
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=no",
            "--",
            *present,
            check=False,
        ).stdout.split("\0")
        dirty, skip = [], False
        for item in out:
            if skip or len(item) < 4:
                skip = False
                continue
            if not item.startswith("??"):  # a file git never tracked is adopted by giok's own commit
                dirty.append(item[3:])
            skip = item[0] in "RC"  # a rename's old path follows
        if not dirty:
            return None
        names = ", ".join(sorted(dirty)[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        return git.commit(
            self.root,
            sorted(dirty),
            f"hand edit: {names}\n\nChanged in the work tree outside "
            f"giok; committed on its own before giok's next write to it.",
        )

    def _tracked(self, rels: list[str]) -> set[str]:
        missing = [rel for rel in rels if not os.path.lexists(self.root / rel)]
        if not missing:
            return set()
        return set(git.run(self.root, "ls-files", "-z", "--", *missing, check=False).stdout.split("\0"))

    def _transaction(
        self, writes: dict[str, bytes | None], message: str, expected: dict[str, bytes] | None = None
    ) -> str | None:
        """Journal, write each file atomically (refusing one whose bytes differ from those the
        caller read, else from those journaled), commit, clear the journal; on any failure,
        the process's death included, the files get their previous bytes back."""
        from giok.store import journal

        previous = journal.begin(self.root, message, writes)
        try:
            for rel, data in writes.items():
                path = self.root / rel
                if data is None:
                    if os.path.lexists(path):
                        path.unlink()
                    continue
                old = (expected or {}).get(rel, previous[rel])
                atomic_write(path, data, expected_checksum=checksum(old or b""))
            sha = git.commit(self.root, list(writes), message)
        except BaseException:
            self._roll_back()
            raise
        journal.end(self.root)
        return sha

    def _roll_back(self) -> None:
        """Undo the journaled write in progress (lock held): files get their previous bytes,
        so files and history never disagree."""
        from giok.store import journal

        data = journal.load(self.root)
        if data is None:
            return
        try:
            journal.roll_back(self.root, data["files"])
        finally:
            git.run(self.root, "reset", "-q", "--", *data["files"], check=False)
            journal.end(self.root)

    def _require_git(self, identity: bool = False) -> None:
        """Guard before writing. By default no git process runs: `git.commit` checks the
        identity and a write whose commit fails is rolled back. `identity=True` checks it
        first, for changes that may need no commit at all."""
        if not (self.root / ".git").exists():
            raise GitError(f"{self.root} is not a git repository; run `giok init {self.root}` to adopt it")
        if identity and not git.has_identity(self.root):
            raise GitError(
                f"no git identity in {self.root}: run `git -C {self.root} config user.name NAME` "
                f"and `... user.email EMAIL`"
            )

    def _crash_leftovers(self) -> list[dict]:
        """What killed processes left (read-only): a pending journal, git locks, temp files."""
        from giok.store import journal

        found = []
        pending = journal.describe(self.root)
        if pending:
            found.append(
                {"severity": "warning", "path": ".giok/journal.json", "line": None, "message": pending}
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
        return found

    # -- MEMORY.md ------------------------------------------------------------------------
    def memory(self) -> MemoryFile:
        return MemoryFile.parse(read_bytes(self.root / MEMORY))

    def remember(
        self,
        text: str,
        layer: str | None = None,
        expires: str | dt.date | None = None,
        type: str | None = None,
        scope: str | None = None,
        source: str | None = None,
        confidence: float | None = None,
        force: bool = False,
        user: str | None = None,
        thread: str | None = None,
        task: str | None = None,
        via: str | None = "api",
        date: str | dt.date | None = None,
    ) -> WriteResult:
        """Decide (giok.write.policy), then add an entry to MEMORY.md and commit, with the decision in
        the commit message. Greetings, questions and guesses are refused (force=True overrides);
        an exact duplicate is not written again; an update or contradiction supersedes the old
        entry; secrets are redacted first. Layer: M30 unless given; an entry that supersedes
        another keeps at least that one's layer unless `layer` or `expires` is given (a note
        says so). `date`: the day of the event (not in the future), shown as the entry's date;
        the expiry still counts from today. Default expiry: today + the layer's days."""
        from giok.store import refs, trace
        from giok.write import policy

        text = clean_text(text, "memory text")
        if source:  # every field is redacted, not only the text: source lands in MEMORY.md, the trace and git
            source = policy.redact(source)[0]
        asked = check_layer(layer) if layer is not None else None
        layer = asked or "M30"
        expiry = self._expiry(layer, expires)
        when = _event_date(date)
        if type is not None and type not in TYPES:
            raise InvalidInput(f"invalid type {type!r}: choose one of {', '.join(TYPES)}")
        scope = check_scope(policy.scope_for(scope, user, thread, task))
        conf = _confidence(confidence)

        def change(old: str):
            mf = MemoryFile.parse(old) if old else MemoryFile.parse(_empty_memory())
            decision = policy.decide(
                mf, text, type, scope, None if conf is None else float(conf), force, today()
            )
            if decision.action in ("refuse", "duplicate"):
                return old, (decision, None)
            entry = MemoryEntry(text=decision.text, layer=layer, date=when, expires=expiry)
            fields = {
                "id": new_id(mf.ids()),
                "type": decision.type,
                "scope": scope,
                "source": source,
                "confidence": conf,
            }
            if decision.action == "supersede":
                fields["supersedes"] = decision.target.id
                mf.find(decision.target.id).set("superseded_by", fields["id"])
                for other in decision.also:  # a change that replaces several older entries
                    mf.find(other.id).set("superseded_by", fields["id"])
                kept = _kept_layer(decision.target, layer) if asked is None and not expires else None
                if kept:
                    entry.layer, entry.expires = kept, self._expiry(kept, None)
            entry.fields = {k: str(v) for k, v in fields.items() if v is not None}
            mf.add(entry)
            return mf.render().decode("utf-8", errors="surrogateescape"), (decision, entry)

        def message(result) -> str:
            decision, e = result
            return f"memory: remember {e.id} ({e.layer}) {_short(e.text)}\n\n" + trace.trailers(
                decision, source, via
            )

        (decision, entry), sha = self.edit(MEMORY, change, message)
        notes = _redaction_notes(decision)
        if entry is not None:
            cited = [i for i in dict.fromkeys(_CITED_ID.findall(entry.text)) if i != entry.id]
            if cited:  # a memory that names another is a use of it (docs/distill.md)
                live = self.memory().ids()
                refs.record(self, [i for i in cited if i in live], "cite")
            if decision.action == "supersede":
                notes.append(f"{decision.target.id} is now superseded by {entry.id}")
                if entry.layer != layer:
                    notes.append(
                        f"kept layer {entry.layer} of {decision.target.id} (give --layer to choose another)"
                    )
            return WriteResult(trace.ACTIONS[decision.action], entry, decision.reason, sha, tuple(notes))
        if decision.action == "duplicate":
            refs.record(self, [decision.target.id], "duplicate")
        rid, sha = trace.record(self, decision, source, via)
        notes.append(f"decision recorded as {rid} (`giok trace {rid}`)")
        return WriteResult(
            trace.ACTIONS[decision.action], decision.target, decision.reason, sha, tuple(notes)
        )

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
        return today() + dt.timedelta(days=LAYER_DAYS[layer])

    def _entry_in(self, mf: MemoryFile, entry_id: str) -> MemoryEntry:
        entry = mf.find(entry_id)
        if entry is None:
            raise NotFound(f"no memory with id {entry_id} in {self.name}")
        return entry

    def get(self, entry_id: str) -> MemoryEntry:
        return self._entry_in(self.memory(), check_id(entry_id))

    def edit_entry(
        self, entry_id: str, text: str, reason: str | None = None, force: bool = False
    ) -> WriteResult:
        """Replace the text of entry `entry_id`, keeping its id, layer, dates and fields; the old
        text stays in git history. The new text goes through the write policy first (checked
        against the other entries): a greeting, question or guess is refused (force=True
        overrides), a duplicate of another entry is refused, secrets are redacted. Returns
        action edited, refused, duplicate or unchanged."""
        from giok.store import trace
        from giok.write import policy

        entry_id = check_id(entry_id)
        text = clean_text(text, "memory text")
        reason = _safe_text(reason, "reason") if reason else None

        def change(old: str):
            mf = MemoryFile.parse(old)
            entry = self._entry_in(mf, entry_id)
            others = MemoryFile.parse(old)
            others.remove(entry_id)
            conf = entry.fields.get("confidence")
            decision = policy.decide(
                others, text, entry.type, entry.scope, None if conf is None else float(conf), force, today()
            )
            if decision.action in ("refuse", "duplicate") or decision.text == entry.text:
                return old, (decision, entry, False)
            entry.fields.setdefault("id", entry_id)  # an adopted line's id is derived from its text: pin it
            entry.text = decision.text
            entry.touch()
            return mf.render().decode("utf-8", errors="surrogateescape"), (decision, entry, True)

        def message(result) -> str:
            decision, e, _ = result
            body = f"Edit: {e.id}\n" + (f"Why: {_one_line(reason)}\n" if reason else "")
            return f"memory: edit {e.id} ({e.layer}) {_short(e.text)}\n\n{body}" + trace.trailers(
                decision, None, "edit"
            )

        (decision, entry, changed), sha = self.edit(MEMORY, change, message)
        notes = _redaction_notes(decision)
        if decision.action == "refuse":
            return WriteResult("refused", entry, decision.reason, None, tuple(notes))
        if decision.action == "duplicate":
            return WriteResult(
                "duplicate",
                entry,
                f"the new text duplicates {decision.target.id}: forget one of them instead",
                None,
                tuple(notes),
            )
        if not changed:
            return WriteResult("unchanged", entry, "the entry already has this text", None, tuple(notes))
        if decision.action == "supersede":
            notes.append(
                f"it now reads as an update of {decision.target.id}; "
                f"`giok remember` would have superseded that one"
            )
        return WriteResult("edited", entry, reason or "edited", sha, tuple(notes))

    def move_entry(self, entry_id: str, layer: str, reason: str | None = None) -> WriteResult:
        """Move entry `entry_id` to `layer` (promote to a deeper layer, demote to a shallower
        one), keeping its id and text. The expiry is recomputed for the new layer, counted from
        today (M0 has none). The reason goes into the commit message. Returns action promoted,
        demoted or unchanged."""
        entry_id = check_id(entry_id)
        layer = check_layer(layer)
        reason = _safe_text(reason, "reason") if reason else None

        def change(old: str):
            mf = MemoryFile.parse(old)
            entry = self._entry_in(mf, entry_id)
            was = entry.layer or "M30"
            if was == layer and entry.headed:
                return old, (entry, was, "unchanged")
            entry.fields.setdefault("id", entry_id)
            mf.move(entry_id, layer)
            entry.expires = self._expiry(layer, None)
            entry.touch()
            how = "promoted" if LAYERS.index(layer) < LAYERS.index(was) else "demoted"
            return mf.render().decode("utf-8", errors="surrogateescape"), (entry, was, how)

        def message(result) -> str:
            e, was, how = result
            verb = {"promoted": "promote", "demoted": "demote"}[how]
            return (
                f"memory: {verb} {e.id} {was} → {e.layer} {_short(e.text)}\n\n"
                f"Move: {was} → {e.layer}\nExpires: {e.expires or 'never'}\n"
                + (f"Reason: {_one_line(reason)}\n" if reason else "")
            )

        (entry, was, how), sha = self.edit(MEMORY, change, message)
        reason_text = (
            f"already in {layer}"
            if how == "unchanged"
            else f"{was} → {layer}" + (f": {reason}" if reason else "")
        )
        return WriteResult(how, entry, reason_text, sha)

    def forget(
        self,
        entry_id: str | None = None,
        reason: str = "",
        match: str | None = None,
        purge: bool = False,
        rewrite_history: bool = False,
        dry_run: bool = False,
    ) -> WriteResult:
        """Forget an entry (by id) or every line holding `match`: from the files, the search
        index, the embedding cache and .giok/ caches, in one commit whose message carries the
        reason. purge reports the commits still holding it; rewrite_history removes it from git
        history too. See giok.write.forget."""
        from giok.write.forget import forget

        done = forget(
            self, entry_id, reason, match=match, purge=purge, rewrite_history=rewrite_history, dry_run=dry_run
        )
        notes = [f"{'would remove' if dry_run else 'removed'} {r['path']}:{r['line']}" for r in done.removed]
        if done.index_chunks is not None:
            notes.append(f"search index: {done.index_chunks} chunk(s) purged")
        notes += [f"cache scrubbed: {c}" for c in done.caches] + done.notes
        if done.history:
            notes.append(
                f"git history: {len(done.history['commits'])} commit(s) hold it"
                + (" (rewritten)" if done.history.get("rewritten") else "")
                + f"; {done.history['how']}"
            )
        action = "unchanged" if dry_run else "removed"
        return WriteResult(action, done.entry, done.reason, done.commit, tuple(notes))

    # -- diary, lessons, decisions ----------------------------------------------------------
    def diary_path(self, day: dt.date | None = None) -> str:
        return f"memory/{(day or today()).isoformat()}.md"

    def diary(self, text: str, when: dt.datetime | None = None) -> str:
        """Append a timestamped line to today's diary; earlier lines are never rewritten."""
        text = _safe_text(text, "diary text")
        when = when or now()
        rel = self.diary_path(when.date())
        line = f"- {when:%H:%M} {text}"

        def change(old: str):
            head = old if old else f"# {when.date().isoformat()}\n\n"
            sep = "" if head.endswith("\n") else "\n"
            return head + sep + line + "\n", line

        self.edit(rel, change, f"diary: {when.date().isoformat()} {_short(text)}")
        return line

    def lesson(self, title: str, body: str) -> str:
        """Add a dated `## [YYYY-MM-DD] title` section to compound/lessons.md, or, when a lesson
        of that title (case and spacing aside) exists, append the body's new lines to it, dated
        when the day differs; lines it already holds are not repeated (no change, no commit).
        Returns the lesson's heading."""
        title = _safe_text(title, "lesson title", limit=300)
        body = _safe_text(body, "lesson body", multiline=True)
        day = today().isoformat()
        heading = f"## [{day}] {title}"
        lines = [l if l.lstrip().startswith(("-", "*")) else f"- {l}" for l in body.split("\n") if l.strip()]
        wanted = " ".join(title.split()).casefold()

        def change(old: str):
            doc = Doc.parse(old or f"# lessons.md : {self.name}\n")
            for section in doc.sections:
                m = re.match(r"^\[([^\]]+)\]\s*(.*)$", section.title.strip())
                if m and " ".join(m.group(2).split()).casefold() == wanted:
                    held = {l.strip() for l in section.lines}
                    dated = m.group(1) != day
                    for line in lines:
                        if line.strip() not in held and (
                            not dated or f"- [{day}] {line.strip()[2:]}" not in held
                        ):
                            append_item(section, f"- [{day}] {line.strip()[2:]}" if dated else line)
                    return doc.render(), (section.heading, "appended")
            base = old or f"# lessons.md : {self.name}\n"
            base = base if base.endswith("\n") else base + "\n"
            return base + "\n" + heading + "\n" + "\n".join(lines) + "\n", (heading, "added")

        def message(result) -> str:
            shown, action = result
            return (
                f"lesson: append to {shown.split('] ', 1)[-1]}"
                if action == "appended"
                else f"lesson: {title}"
            )

        (heading, _), _ = self.edit(LESSONS, change, message)
        return heading

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

    def decide(self, text: str, why: str, supersedes: str | None = None) -> str:
        """Append D-NNN with date and reason; earlier entries are never edited."""
        text = _safe_text(text, "decision")
        why = _safe_text(why, "reason")

        def change(old: str):
            doc = Doc.parse(old or "# Decision log\n")
            known = [int(m.group(2)) for s in doc.sections if (m := DECISION_RE.match(s.heading))]
            ids = {f"D-{n:03d}" for n in known}
            if supersedes and supersedes not in ids:
                raise NotFound(
                    f"no decision {supersedes} to supersede (known: {', '.join(sorted(ids)) or 'none'})"
                )
            did = f"D-{max(known, default=0) + 1:03d}"
            block = [f"## {did} [{today().isoformat()}] {text}", f"- why: {why}"]
            if supersedes:
                block.append(f"- supersedes: {supersedes}")
            base = old if old.endswith("\n") else old + "\n"
            return base + "\n" + "\n".join(block) + "\n", did

        did, _ = self.edit(
            DECISIONS,
            change,
            lambda d: f"decision: {d} {_short(text)}" + (f" (supersedes {supersedes})" if supersedes else ""),
        )
        return did

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

    def task_add(self, text: str) -> str:
        text = _safe_text(text, "task")

        def change(old: str):
            doc = Doc.parse(old or "# Tasks\n")
            numbers = [
                int(m.group(2)) for s in doc.sections for l in s.lines if (m := _TASK_RE.match(l.strip()))
            ]
            tid = f"T-{max(numbers, default=0) + 1:03d}"
            append_item(doc.ensure("todo"), f"- {_TASK_MARK['todo']} {tid} {text}")
            return doc.render(), tid

        tid, _ = self.edit(TASKS, change, lambda t: f"task: add {t} {_short(text)}")
        return tid

    def task_move(self, task_id: str, status: str, note: str | None = None) -> dict:
        if status not in templates.TASK_STATUSES:
            raise InvalidInput(f"invalid task status {status!r}")
        task_id = task_id.strip().upper()
        if not re.match(r"^T-\d{3,}$", task_id):
            raise InvalidInput(f"malformed task id {task_id!r}: ids look like T-001")
        note = _safe_text(note, "note", limit=1000) if note else None

        def change(old: str):
            doc = Doc.parse(old)
            for section in doc.sections:
                for i, line in enumerate(section.lines):
                    m = _TASK_RE.match(line.strip())
                    if m and m.group(1) == task_id:
                        del section.lines[i]
                        text = m.group(3)
                        if note:
                            text = f"{re.sub(r' — .*$', '', text)} — {note}"
                        append_item(doc.ensure(status), f"- {_TASK_MARK[status]} {task_id} {text}")
                        return doc.render(), {"id": task_id, "status": status, "text": text}
            raise NotFound(f"no task {task_id} in {TASKS}")

        task, _ = self.edit(TASKS, change, lambda t: f"task: {status} {task_id} {_short(t['text'])}")
        return task

    # -- state memo ---------------------------------------------------------------------
    def state(self) -> dict[str, str]:
        doc = Doc.parse(self.read_text(MEMO))
        out = {}
        for key in templates.STATE_SECTIONS:
            titles = [templates.STATE_TITLES[lang][key] for lang in ("en", "ko")]
            section = doc.find(*titles, key)
            out[key] = section.body() if section else ""
        return out

    def state_set(self, section: str, text: str) -> dict[str, str]:
        key = _state_key(section)
        text = _safe_text(text, "state text", multiline=True)

        def change(old: str):
            doc = Doc.parse(old or "# State memo\n")
            lang = "ko" if re.search(r"[가-힣]", old) else "en"
            titles = [templates.STATE_TITLES[l][key] for l in ("en", "ko")]
            target = doc.find(*titles, key) or doc.ensure(templates.STATE_TITLES[lang][key])
            target.lines = [""] + text.split("\n") + [""]
            stamp = f"{now():%Y-%m-%d %H:%M}"
            if doc.preamble and doc.preamble[0].startswith("# "):
                doc.preamble[0] = templates.memo_stamped(doc.preamble[0], stamp, lang)
            return doc.render(), key

        self.edit(MEMO, change, f"state: {key} — {_short(text)}")
        return self.state()

    # -- heartbeat ----------------------------------------------------------------------
    def heartbeat(self) -> list[str]:
        return [
            l.strip()[2:].strip()
            for l in self.read_text(HEARTBEAT).splitlines()
            if re.match(r"^\s*[-*]\s+\S", l)
        ]

    def heartbeat_add(self, text: str) -> str:
        text = _safe_text(text, "heartbeat item")

        def change(old: str):
            base = old or "# HEARTBEAT.md\n\n"
            base = base if base.endswith("\n") else base + "\n"
            return base + f"- {text}\n", text

        self.edit(HEARTBEAT, change, f"heartbeat: add {_short(text)}")
        return text

    def heartbeat_done(self, item: str) -> str:
        """Remove an open item, by its 1-based number or by its exact text."""
        item = clean_text(item, "heartbeat item")

        def change(old: str):
            lines = old.split("\n")
            items = [i for i, l in enumerate(lines) if re.match(r"^\s*[-*]\s+\S", l)]
            pick = None
            if item.isdigit() and 1 <= int(item) <= len(items):
                pick = items[int(item) - 1]
            else:
                matches = [i for i in items if lines[i].strip()[2:].strip() == item] or [
                    i for i in items if item.lower() in lines[i].lower()
                ]
                if len(matches) > 1:
                    raise InvalidInput(f"{item!r} matches {len(matches)} heartbeat items; give its number")
                pick = matches[0] if matches else None
            if pick is None:
                raise NotFound(f"no open heartbeat item {item!r}")
            removed = lines.pop(pick).strip()[2:].strip()
            return "\n".join(lines), removed

        removed, _ = self.edit(HEARTBEAT, change, lambda r: f"heartbeat: done {_short(r)}")
        return removed

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
            [MEMORY, "memory", "compound", "state", HEARTBEAT, "AGENTS.md", "SOUL.md", "USER.md"],
            limit,
        )

    def _invalid_utf8(self) -> list[dict]:
        """Lines of MEMORY.md and the diaries that are not valid UTF-8 (giok keeps their bytes
        as they are, but shows them as "�" and cannot search them as written)."""
        found = []
        rels = [MEMORY] + sorted(
            p.relative_to(self.root).as_posix() for p in (self.root / "memory").glob("*.md")
        )
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
                            "message": "not valid UTF-8 (shown as \ufffd; fix the bytes or save the file as UTF-8)",
                        }
                    )
        return found

    def check(self) -> list[dict]:
        """Problems in the files: {severity, path, line, message}."""
        found = []
        for rel in ("SOUL.md", "USER.md", "AGENTS.md", MEMORY):
            if not (self.root / rel).is_file():
                found.append({"severity": "error", "path": rel, "line": None, "message": "missing file"})
        found += self._invalid_utf8()
        mf = self.memory()
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
                    f"heading (line{'s' if len(outside) > 1 else ''} {lines}): read as M30, without expiry unless they carry one",
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
                    "message": f"TIER 1 has {len(rules)} rules; keep it to 7 or fewer (it is injected every session)",
                }
            )
        if not git.is_repo(self.root):
            found.append({"severity": "error", "path": ".", "line": None, "message": "not a git repository"})
        return found + self._crash_leftovers()

    # -- search (giok.retrieval.search) ------------------------------------------------------------
    def search(self, query: str, k: int = 5, **opts):
        """Hybrid search of this workspace (or opts workspaces=[...]); see giok.retrieval.search."""
        from giok.retrieval.search import search

        return search(self, query, k, **opts)

    def recall(self, query: str, **opts):
        """The seed's agentic recall: decide, search, retry once, else "no memory"."""
        from giok.retrieval.search import recall

        return recall(self, query, **opts)


def tier1_rules(agents_md: str) -> list[str]:
    doc = Doc.parse(agents_md)
    section = next((s for s in doc.sections if re.match(r"^tier\s*1\b", s.title.strip(), re.I)), None)
    return [l.strip() for l in section.lines if re.match(r"^\s*[-*]\s+\S", l)] if section else []


def _safe_text(text: str, what: str, **limits) -> str:
    """Validate text for a workspace file and redact secrets in it: no write path (diary,
    lessons, decisions, tasks, state memo, heartbeat) lets a key or password reach git."""
    from giok.write.policy import redact

    return redact(clean_text(text, what, **limits))[0]


def _state_key(section: str) -> str:
    wanted = (section or "").strip().lower().replace("_", "-")
    for key in templates.STATE_SECTIONS:
        titles = [templates.STATE_TITLES[lang][key].lower() for lang in ("en", "ko")]
        if wanted == key or wanted in titles or wanted == key.replace("-", " "):
            return key
    raise InvalidInput(
        f"unknown state section {section!r}: choose one of {', '.join(templates.STATE_SECTIONS)}"
    )


def _confidence(value) -> str | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"invalid confidence {value!r}: a number between 0 and 1") from None
    if not 0.0 <= number <= 1.0:
        raise InvalidInput(f"invalid confidence {value!r}: a number between 0 and 1")
    return f"{number:g}"


_CITED_ID = re.compile(ID_RE.pattern.strip("^$").join((r"\b", r"\b")))  # an entry id inside a text


def _redaction_notes(decision) -> list[str]:
    kinds = decision.redactions
    return (
        [f"redacted {len(kinds)} secret(s) before writing: {', '.join(sorted(set(kinds)))}"] if kinds else []
    )


def _kept_layer(target: MemoryEntry, layer: str) -> str | None:
    """The layer a superseding entry takes from the one it replaces, when that one is deeper."""
    old = target.layer or "M30"
    return old if old in LAYERS and LAYERS.index(old) < LAYERS.index(layer) else None


def _event_date(value) -> dt.date:
    """The date of the event a memory is about: a real day, not in the future; default today."""
    if value is None or value == "":
        return today()
    day = value if isinstance(value, dt.date) else parse_date(str(value))
    if day > today():
        raise InvalidInput(f"event date {day} is in the future (today is {today()})")
    return day


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _short(text: str, width: int = 60) -> str:
    text = _one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _empty_memory() -> str:
    from giok.store.memoryfile import empty

    return empty("en")
