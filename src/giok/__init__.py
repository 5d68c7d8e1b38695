"""giok — long-term memory for AI agents.

The library is the product: the CLI and the MCP server are thin edges over these names.
Every name is imported on first use (`giok.Workspace` loads the workspace modules, `giok.Boot`
the boot builder), so a short-lived command does not pay for modules it never touches.
"""

from importlib import import_module

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook starts in ~10 ms)

if TYPE_CHECKING:  # what the names below are; at run time each loads on first use
    from giok.errors import (
        ConflictError,
        DirtyFileError,
        GiokError,
        GitError,
        InvalidInput,
        LockTimeout,
        LoopRefused,
        NotFound,
        PermissionDenied,
        ProviderError,
        WorkspaceError,
    )
    from giok.lifecycle.boot import Boot
    from giok.lifecycle.crossview import Bus as CrossView
    from giok.lifecycle.distill import Report as DistillReport
    from giok.lifecycle.routines import Routine, Scheduler
    from giok.lifecycle.watchdog import Thresholds, Watchdog
    from giok.store.home import Home
    from giok.store.memoryfile import LAYERS, MemoryEntry, MemoryFile
    from giok.store.workspace import WriteResult
    from giok.workspace import Workspace
    from giok.write.judges import LLMJudge, OfflineJudge, Panel
    from giok.write.policy import Decision

__version__ = "0.1.0"

_ERRORS = (
    "ConflictError",
    "DirtyFileError",
    "GiokError",
    "GitError",
    "InvalidInput",
    "LockTimeout",
    "LoopRefused",
    "NotFound",
    "PermissionDenied",
    "ProviderError",
    "WorkspaceError",
)
# Every public name loads on first use, so that `import giok` costs nothing: a Claude Code hook
# that hands its prompt to a running giok process (giok.edges.hookline) imports almost none of it.
_LAZY = {
    **{name: ("errors", name) for name in _ERRORS},
    "Home": ("store.home", "Home"),
    "LAYERS": ("store.memoryfile", "LAYERS"),
    "MemoryEntry": ("store.memoryfile", "MemoryEntry"),
    "MemoryFile": ("store.memoryfile", "MemoryFile"),
    "WriteResult": ("store.workspace", "WriteResult"),
    "Workspace": ("workspace", "Workspace"),
    "Boot": ("lifecycle.boot", "Boot"),
    "CrossView": ("lifecycle.crossview", "Bus"),
    "Decision": ("write.policy", "Decision"),
    "DistillReport": ("lifecycle.distill", "Report"),
    "LLMJudge": ("write.judges", "LLMJudge"),
    "OfflineJudge": ("write.judges", "OfflineJudge"),
    "Panel": ("write.judges", "Panel"),
    "Routine": ("lifecycle.routines", "Routine"),
    "Scheduler": ("lifecycle.routines", "Scheduler"),
    "Thresholds": ("lifecycle.watchdog", "Thresholds"),
    "Watchdog": ("lifecycle.watchdog", "Watchdog"),
}

__all__ = [
    "LAYERS",
    "Boot",
    "ConflictError",
    "CrossView",
    "Decision",
    "DirtyFileError",
    "DistillReport",
    "GiokError",
    "GitError",
    "Home",
    "InvalidInput",
    "LLMJudge",
    "LockTimeout",
    "LoopRefused",
    "MemoryEntry",
    "MemoryFile",
    "NotFound",
    "OfflineJudge",
    "Panel",
    "PermissionDenied",
    "ProviderError",
    "Routine",
    "Scheduler",
    "Thresholds",
    "Watchdog",
    "Workspace",
    "WorkspaceError",
    "WriteResult",
    "__version__",
]


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'giok' has no attribute {name!r}")
