"""giok — long-term memory for AI agents.

The library is the product: the CLI and the MCP server are thin edges over these names.
"""

from .errors import (
    ConflictError, DirtyFileError, GiokError, GitError, InvalidInput, LockTimeout, LoopRefused, NotFound,
    PermissionDenied, ProviderError, WorkspaceError,
)
from .home import Home
from .memoryfile import LAYERS, MemoryEntry, MemoryFile
from .workspace import Workspace, WriteResult
from .distill import Report as DistillReport
from .judges import LLMJudge, OfflineJudge, Panel
from .routines import Routine, Scheduler
from .watchdog import Thresholds, Watchdog
from .boot import Boot
from .policy import Decision
from .crossview import Bus as CrossView

__version__ = "0.1.0"

__all__ = [
    "ConflictError", "DirtyFileError", "GiokError", "GitError", "Home", "InvalidInput", "LAYERS",
    "LockTimeout", "MemoryEntry", "MemoryFile", "NotFound", "PermissionDenied", "ProviderError",
    "Workspace", "WorkspaceError", "WriteResult", "__version__", "Boot", "Decision", "CrossView", "LoopRefused",
]
