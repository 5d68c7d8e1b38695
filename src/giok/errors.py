"""Domain errors. The library raises these; the CLI prints one line and exits non-zero,
the MCP server returns a tool error with the same message.

    GiokError
    ├── WorkspaceError          unknown / invalid / not-a-workspace
    │   └── PermissionDenied    a read the allow-list refuses
    ├── InvalidInput            empty, too long, binary, bad date, bad id, path traversal
    │   └── LoopRefused         a cross-view reply to a reply, or a relay of a relay
    ├── NotFound                unknown entry id, task, decision, heartbeat item
    ├── ConflictError           concurrent change
    │   ├── LockTimeout         another writer held the workspace lock too long
    │   └── DirtyFileError      a file changed on disk between read and write
    ├── GitError                git missing, not a repo, no identity, commit failed
    ├── IndexError_             the search index is stale, corrupt or built by another model
    └── ProviderError           an embedding or LLM provider failed
"""


class GiokError(Exception):
    """Base class: every error giok raises on purpose."""

    exit_code = 1


class WorkspaceError(GiokError):
    pass


class PermissionDenied(WorkspaceError):
    exit_code = 3


class InvalidInput(GiokError):
    exit_code = 2


class LoopRefused(InvalidInput):
    """The cross-view loop rule refused a message (a reply to a reply, a relay of a relay)."""


class NotFound(GiokError):
    exit_code = 4


class ConflictError(GiokError):
    exit_code = 5


class LockTimeout(ConflictError):
    pass


class DirtyFileError(ConflictError):
    pass


class GitError(GiokError):
    exit_code = 6


class IndexError_(GiokError):
    exit_code = 7


class ProviderError(GiokError):
    exit_code = 8
