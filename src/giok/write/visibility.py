"""What a reader may see of a MEMORY.md-format file (MEMORY.md, the archive): every entry
scoped to another user or thread (giok.write.policy.visible) becomes one HIDDEN line, so
line numbers still match the file and search hits. Task-scoped entries are shown: a task
scope says when to inject, not who may read. The MCP server and the memory tool both read
through here."""

from __future__ import annotations

from giok.store.memoryfile import MemoryEntry, MemoryFile
from giok.write import policy

HIDDEN = "(hidden: an entry scoped to another user or thread)"


def scoped_lines(data: bytes, user: str | None, thread: str | None) -> tuple[list[str], set[str]]:
    """The file's lines as this reader sees them, and the ids of the entries shown."""
    lines, shown = [], set()
    for line in MemoryFile.parse(data).lines:
        if isinstance(line, MemoryEntry):
            if not line.scope.startswith("task:") and not policy.visible(line.scope, user, thread):
                lines.append(HIDDEN)
                continue
            shown.add(line.id)
        lines.append(str(line).encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    return lines, shown
