"""giok's settings from the environment, as one small value object.

The entry points (the CLI, the MCP server) build `Settings.from_env()` once and pass it down;
a library user who passes nothing gets the same from the top-level constructor
(`Workspace(..., settings=None)`, `Home(settings=None)`). Library code reads `ws.settings`,
never `os.environ` deep inside a function. The variables, as documented:

- GIOK_HOME — the giok home (config, registry); default $XDG_DATA_HOME/giok or ~/.local/share/giok
- GIOK_WORKSPACE — the workspace when none is named (`-w`)
- GIOK_INDEX_BUSY_TIMEOUT — seconds to wait for the index's write lock (docs/search.md)
- GIOK_SESSION — the watchdog's session id when none is given

GIOK_NOW (the clock, giok.store.clock), GIOK_EMBEDDINGS, GIOK_TOKENIZER and GIOK_CRONTAB are
still read where they apply, at each use (tests and scripts change them within one process;
moving them here is the next step, docs/architecture.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BUSY_TIMEOUT = 30.0  # seconds: the default of GIOK_INDEX_BUSY_TIMEOUT


@dataclass(frozen=True)
class Settings:
    home: Path  # resolved
    workspace: str | None = None
    index_busy_timeout: float = BUSY_TIMEOUT
    session: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            home=_home(env),
            workspace=env.get("GIOK_WORKSPACE") or None,
            index_busy_timeout=_seconds(env.get("GIOK_INDEX_BUSY_TIMEOUT"), BUSY_TIMEOUT),
            session=env.get("GIOK_SESSION") or None,
        )


def _home(env: Mapping[str, str]) -> Path:
    given = env.get("GIOK_HOME")
    if given:
        return Path(given).expanduser().resolve()
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base).resolve() / "giok"


def _seconds(raw: str | None, default: float) -> float:
    if raw is None:
        return default
    try:
        return max(0.0, float(raw))
    except ValueError:
        return default
