"""giok — long-term memory for AI agents.

The library is the product: the CLI and the MCP server are thin edges over these names.
The core (workspace, MEMORY.md model, errors) is imported at once; the heavier parts
(search, distillation, routines, cross-view) are imported on first use, so a short-lived
command does not pay for modules it never touches.
"""

from importlib import import_module

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
from giok.store.home import Home
from giok.store.memoryfile import LAYERS, MemoryEntry, MemoryFile
from giok.store.workspace import WriteResult
from giok.workspace import Workspace

__version__ = "0.1.0"

_LAZY = {
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
    "ConflictError",
    "DirtyFileError",
    "GiokError",
    "GitError",
    "Home",
    "InvalidInput",
    "LAYERS",
    "LockTimeout",
    "LoopRefused",
    "MemoryEntry",
    "MemoryFile",
    "NotFound",
    "PermissionDenied",
    "ProviderError",
    "Workspace",
    "WorkspaceError",
    "WriteResult",
    "__version__",
    *sorted(_LAZY),
]


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'giok' has no attribute {name!r}")
