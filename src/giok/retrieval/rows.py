"""What both index backends share about a row: who may read it (`Reader`, `reader_key`), how its
vector is stored (`encode_vector`, `decode_vector`) and the text match a purge uses (`holds`).

The local SQLite index (`giok.retrieval.index`) and the shared PostgreSQL one
(`giok.retrieval.pg`, built over the local one) both import it; neither imports the other's
helpers through it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from giok.write.policy import scope_name


def encode_vector(vec: np.ndarray) -> bytes:
    """A vector as the index stores it: float16 (unit vectors lose ~1e-4 of cosine; half the bytes)."""
    return np.asarray(vec, dtype=np.float16).tobytes()


def decode_vector(blob: bytes) -> np.ndarray:
    """A stored vector as float32, what every computation uses."""
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)


EVERYONE = "*"  # the reader key of an entry every reader of the workspace sees


def reader_key(scope: str | None) -> str:
    """A row's scope as the SQL scope rule compares it (the rule of `search._visible` and
    `policy.visible`): EVERYONE for workspace and task: entries, user:<name casefolded>,
    thread:<name>; any other scope a key no reader asks for (hidden, as policy hides it)."""
    scope = scope or "workspace"
    kind, _, name = scope.partition(":")
    if kind == "workspace" or scope.startswith("task:"):
        return EVERYONE
    if kind == "user":
        return "user:" + name.casefold()
    if kind == "thread":
        return scope
    return "-" + scope


@dataclass(frozen=True)
class Reader:
    """Who searches, as the SQL that fetches candidates and rows filters for (both backends):
    a chunk this reader may not see is never read from the database. `search._visible` checks
    every row again (and the superseded and system rules)."""

    user: str | None = None
    thread: str | None = None
    all_scopes: bool = False

    def allowed(self) -> list[str]:
        keys = [EVERYONE]
        if self.user is not None:
            keys.append("user:" + scope_name(self.user).casefold())
        if self.thread is not None:
            keys.append(f"thread:{self.thread}")
        return keys

    def where(self, column: str = "reader", mark: str = "?") -> tuple[str, list[str]]:
        """(SQL condition, its arguments); `mark` is the driver's placeholder."""
        if self.all_scopes:
            return "1 = 1", []
        keys = self.allowed()
        return f"{column} IN ({', '.join([mark] * len(keys))})", keys


def holds(text: str | None, needle: str) -> int:
    """1 when `text` contains `needle` (already casefolded), ignoring case; the SQL function
    `giok_holds` both backends register for a purge."""
    if not text:
        return 0
    return int(needle in text.casefold())
