"""Domain errors. The library raises these; the CLI prints one line and exits with the
error's `exit_code`, the MCP server returns a tool error with the same message.

    GiokError                   exit 1  every error giok raises on purpose
    ├── WorkspaceError          exit 1  unknown / invalid / not-a-workspace
    │   └── PermissionDenied    exit 3  a read the allow-list refuses
    ├── InvalidInput            exit 2  empty, too long, binary, bad date, bad id, path traversal
    │   └── LoopRefused         exit 2  a cross-view reply to a reply, or a relay of a relay
    ├── NotFound                exit 4  unknown entry id, task, decision, heartbeat item
    ├── ConflictError           exit 5  concurrent change
    │   ├── LockTimeout         exit 5  another writer held the workspace lock too long
    │   └── DirtyFileError      exit 5  a file changed on disk between read and write
    ├── GitError                exit 6  git missing, not a repo, no identity, commit failed
    ├── IndexError_             exit 7  the search index is stale, corrupt or built by another model
    └── ProviderError           exit 8  an embedding or LLM provider failed (after its retries)

Anything else escaping the library is a bug: the CLI reports it as an internal error.
`tests/test_public_docs.py` checks this drawing against the classes below.
"""


class GiokError(Exception):
    """Base class: every error giok raises on purpose."""

    exit_code = 1


class WorkspaceError(GiokError):
    """The workspace is unknown, invalid, or the folder is not a giok workspace."""


class PermissionDenied(WorkspaceError):
    """A read the workspace's allow-list refuses (another workspace's files, a hidden path)."""

    exit_code = 3


class InvalidInput(GiokError):
    """Bad input from a user or an agent: empty, too long, binary, a bad date, id or path."""

    exit_code = 2


class LoopRefused(InvalidInput):
    """The cross-view loop rule refused a message (a reply to a reply, a relay of a relay)."""


class NotFound(GiokError):
    """No such entry id, task, decision, heartbeat item, tool or message."""

    exit_code = 4


class ConflictError(GiokError):
    """A concurrent change got in the way; nothing was written."""

    exit_code = 5


class LockTimeout(ConflictError):
    """Another writer held the workspace lock longer than the wait allows."""


class DirtyFileError(ConflictError):
    """A file changed on disk between giok's read and its write."""


class GitError(GiokError):
    """git is missing, the folder is not a repository, no identity is set, or a commit failed."""

    exit_code = 6


class IndexError_(GiokError):
    """The search index is stale, corrupt or built by another embedding model (rebuildable)."""

    exit_code = 7


class ProviderError(GiokError):
    """An embedding or LLM provider failed: no key, unreachable, a timeout or an HTTP error
    after its retries, or an answer giok cannot read."""

    exit_code = 8
