"""Where everything lives in a workspace: every file, folder and file set, in one place.

The files (under git): MEMORY.md, the identity files, the diaries `memory/YYYY-MM-DD.md`, the
archive `memory/archive/`, `compound/lessons.md`, `state/*`. The derived data (ignored by git,
rebuildable): `.giok/` — the lock, the write journal, the search index and its pending purges,
the reference log, the trace key, the Claude Code prompt files. Nothing else builds a
workspace path by hand (docs/architecture.md)."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path

from giok.text.lazy import lazy

# -- the files, relative to the workspace root ---------------------------------------------------
MEMORY = "MEMORY.md"
SOUL = "SOUL.md"
USER = "USER.md"
AGENTS = "AGENTS.md"
TOOLS = "TOOLS.md"
HEARTBEAT = "HEARTBEAT.md"
LESSONS = "compound/lessons.md"
CONTEXT = "compound/context.md"  # the last flush's session context (boot injects it)
DECISIONS = "state/decisions.md"
TASKS = "state/tasks.md"
MEMO = "state/memo.md"
TRACE = "state/trace.jsonl"
REVIEW = "state/review.md"  # the review queue: contradictions and unsure changes until resolved
TOMBSTONES = "state/tombstones.txt"  # forgotten entries: id + digest of the text (giok.store.tombstones)
DIARY_DIR = "memory"
ARCHIVE_DIR = "memory/archive"
LEDGER = "memory/distilled.txt"

IDENTITY = (SOUL, USER, AGENTS)  # `giok check` reports a missing one
REQUIRED = (*IDENTITY, MEMORY)
# the files giok writes through its own commands: the memory tool may not create, delete or move
# them (nor anything under state/ and compound/) as plain files
PROTECTED = (SOUL, USER, AGENTS, TOOLS, MEMORY, HEARTBEAT, "state", "compound")
READ_ONLY = (LEDGER, TRACE)  # and everything under ARCHIVE_DIR: distillation's own
# OpenClaw's templates own these (`openclaw setup` writes them); `giok init --openclaw` leaves them alone
OPENCLAW_FILES = (SOUL, AGENTS, USER, TOOLS, HEARTBEAT)
LOGGED = (MEMORY, "memory", "compound", "state", HEARTBEAT, AGENTS, SOUL, USER)  # what `giok log` shows
# what distillation writes (diaries, ledger, archive under memory/; the review queue)
OWN_PATHS = (MEMORY, "memory", LESSONS, REVIEW)

DIARY_RE = lazy(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")  # group 1: the day
ARCHIVE_RE = lazy(r"^memory/archive/[^/]+\.md$")
# the memory files forget may edit (by id or by match)
FORGETTABLE_RE = lazy(
    r"^(MEMORY\.md|compound/lessons\.md|state/trace\.jsonl|state/review\.md|memory/\d{4}-\d{2}-\d{2}\.md"
    r"|memory/archive/[^/]+\.md)$"
)

# -- what the search index reads -------------------------------------------------------------------
SKIP_DIRS = frozenset({".giok", ".git", "node_modules", "__pycache__"})
SKIP_FILES = frozenset(
    {
        CONTEXT,  # its points are in the diary
        REVIEW,  # copies of MEMORY.md entries' texts, queued for a person: not memory itself
        "BOOTSTRAP.md",  # OpenClaw's first-run ritual: instructions, not memory
        "skills",  # OpenClaw's workspace skills (a folder, matched at the root)
    }
)
INDEXED_SUFFIX = ".md"

# -- derived data, under .giok/ --------------------------------------------------------------------
DATA_DIR = ".giok"
LOCK = "lock"
JOURNAL = "journal.json"
INDEX = "index.sqlite"
INDEX_PENDING = "index-pending"  # purges forget could not run yet, one .json each
REFS = "refs.jsonl"
TRACE_KEY = "trace.key"
PROMPTS = "claude-code"  # the turn's prompt per Claude Code session, `<session>.prompt`
PROMPT_MAX_AGE = 2 * 24 * 3600  # seconds: a session's prompt file older than this is removed
REWRITTEN = "rewritten.json"  # remote-tracking refs as they were before forget --rewrite-history
SYNC_MARK = "sync.json"  # {head, theirs} while a `giok sync` merge or fast-forward runs


def diary_path(day: dt.date) -> str:
    """The diary of `day`, relative to the workspace root."""
    return f"{DIARY_DIR}/{day.isoformat()}.md"


def diary_day(rel: str) -> str | None:
    """The ISO day of a diary path, or None when rel is no diary."""
    m = DIARY_RE.match(rel)
    return m.group(1) if m else None


def is_read_only(rel: str) -> bool:
    """Distillation's own files: the ledger, the trace, the archive."""
    return rel in READ_ONLY or rel == ARCHIVE_DIR or rel.startswith(ARCHIVE_DIR + "/")


def is_append_only(rel: str) -> bool:
    """Files whose earlier lines are never rewritten: the decisions and the diaries."""
    return rel == DECISIONS or diary_day(rel) is not None


def is_protected(rel: str) -> bool:
    """A workspace file (or folder) giok writes only through its own commands."""
    return rel in ("", DIARY_DIR) or rel.split("/", 1)[0] in PROTECTED or diary_day(rel) is not None


def is_readable(rel: str) -> bool:
    """A memory file an agent may read (MCP `memory_get`): a `.md` file outside hidden and
    skipped folders, so every path search returns opens."""
    parts = rel.split("/")
    return rel.endswith(INDEXED_SUFFIX) and not any(p.startswith(".") or p in SKIP_DIRS for p in parts)


def skipped(name: str, rel: str) -> bool:
    """The rule of what search reads, applied while walking the tree: a hidden or skipped entry
    (folder or file) the index never reads; it reads every other `.md` file (giok.retrieval.index)."""
    return name.startswith(".") or name in SKIP_DIRS or rel in SKIP_FILES


@dataclass(frozen=True)
class Layout:
    """The paths of one workspace (root resolved by the caller). Paths under .giok/ are
    created on demand by their writers, not here (`data_dir` creates the folder)."""

    root: Path

    def diaries(self) -> list[tuple[str, str]]:
        """Every diary of the workspace as (path relative to the root, ISO day), oldest first;
        other files in `memory/` (the archive, notes) are no diaries."""
        folder = self.root / DIARY_DIR
        found = (f"{DIARY_DIR}/{p.name}" for p in folder.glob("*.md")) if folder.is_dir() else ()
        return sorted((rel, day) for rel in found if (day := diary_day(rel)) is not None)

    @property
    def data_dir(self) -> Path:
        """Derived data (index, caches, locks): ignored by git, rebuildable from the files."""
        path = self.root / DATA_DIR
        path.mkdir(exist_ok=True)
        return path

    def derived(self, name: str) -> Path:
        """A path under .giok/ (the folder is not created)."""
        return self.root / DATA_DIR / name

    @property
    def lock(self) -> Path:
        return self.data_dir / LOCK

    @property
    def journal(self) -> Path:
        return self.derived(JOURNAL)

    @property
    def refs(self) -> Path:
        return self.data_dir / REFS

    @property
    def trace_key(self) -> Path:
        return self.data_dir / TRACE_KEY

    def prompt_file(self, session: str) -> Path:
        """Where the Claude Code hooks keep a session's last prompt."""
        return self.data_dir / PROMPTS / f"{session}.prompt"

    def clean_prompts(self, max_age: float = PROMPT_MAX_AGE, keep: Path | None = None) -> int:
        """Remove the prompt files of sessions older than max_age seconds; returns how many."""
        removed = 0
        cut = time.time() - max_age
        for path in (self.root / DATA_DIR / PROMPTS).glob("*.prompt"):
            try:
                if path != keep and path.stat().st_mtime < cut:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        return removed


def index_pending(db: Path) -> Path:
    """The folder of purges waiting for the index file `db` (beside it, under .giok/)."""
    return Path(db).parent / INDEX_PENDING
