"""giok's memory tool for the `anthropic` SDK's tool runner (`pip install 'giok[anthropic]'`).

```python
import anthropic
from giok import Workspace
from giok.edges.anthropic_tool import GiokMemoryTool

client = anthropic.Anthropic()
runner = client.beta.messages.tool_runner(
    model="claude-sonnet-4-5", max_tokens=2048, tools=[GiokMemoryTool(Workspace.open("zeon"))],
    messages=[{"role": "user", "content": "Remember that the launch moved to Friday."}])
final = runner.until_done()
```

`GiokMemoryTool` is a `BetaAbstractMemoryTool`: the runner declares it as
`{"type": "memory_20250818", "name": "memory"}`, parses each `tool_use` into the SDK's command
model and calls `view`/`create`/`str_replace`/`insert`/`delete`/`rename`, which hand the
command to `giok.edges.memory_tool.MemoryTool`. A giok refusal is raised as the SDK's `ToolError`,
so the runner answers with `is_error: true` and giok's message (no traceback in the log).
"""

from __future__ import annotations

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        "giok.edges.anthropic_tool needs the anthropic SDK: pip install 'giok[anthropic]'"
    ) from exc

from giok.edges.memory_tool import MemoryTool
from giok.errors import GiokError
from giok.workspace import Workspace


class GiokMemoryTool(BetaAbstractMemoryTool):
    """The SDK's memory tool backed by a giok workspace. `user`/`thread`: on whose behalf
    Claude reads (see MemoryTool); `cache_control` as in the SDK."""

    def __init__(
        self, ws: Workspace, *, user: str | None = None, thread: str | None = None, cache_control=None
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.giok = MemoryTool(ws, user=user, thread=thread)

    def _run(self, command) -> str:
        params = command.model_dump(exclude_none=True) if hasattr(command, "model_dump") else dict(command)
        try:
            return self.giok.handle(params)
        except GiokError as exc:
            raise ToolError(str(exc)) from None

    def view(self, command) -> str:
        return self._run(command)

    def create(self, command) -> str:
        return self._run(command)

    def str_replace(self, command) -> str:
        return self._run(command)

    def insert(self, command) -> str:
        return self._run(command)

    def delete(self, command) -> str:
        return self._run(command)

    def rename(self, command) -> str:
        return self._run(command)

    def clear_all_memory(self) -> str:
        raise ToolError(
            "giok keeps its workspace: forget entries one by one (`giok forget ID`), "
            "a workspace is never cleared whole"
        )
