"""The MCP server's warm-up, end to end with the official `mcp` client over stdio: the keyword
index is ready at once and searches answer from it, saying so, while the vectors are built."""

from __future__ import annotations

import contextlib
import os
import sys
import time

import pytest

pytest.importorskip("mcp")

from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client

from giok import Workspace
from test_speed import plugin  # noqa: F401 - the `gated` embedding provider, a fixture

TIMEOUT = 20.0  # seconds a call may take (an MCP client gives up at about 60)


@contextlib.asynccontextmanager
async def _session(params):
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_searches_answer_from_keywords_while_the_vectors_are_built(tmp_path, giok_home, plugin):  # noqa: F811
    ws, _ = Workspace.init(tmp_path / "fresh", name="fresh", home=giok_home)
    ws.remember("The fresh workspace keeps its launch date in March.", layer="M30")
    gate = tmp_path / "gate"  # the embedding model does nothing until this file exists
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("GIT_", "GIOK_"))},
        **plugin,
        "GIOK_HOME": str(giok_home.path),
        "EMBED_GATE": str(gate),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "giok", "mcp", "-w", "fresh"], env=env, cwd=str(tmp_path)
    )
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_session(params)) as session:

        def call(name: str, **arguments):
            result = portal.call(session.call_tool, name, arguments, TIMEOUT)
            assert not result.is_error, result.content[0].text
            return result

        early = call("memory_search", query="launch date")
        data = early.structured_content
        assert data["index"]["vectors"] == "building" and data["index"]["pending_chunks"] > 0
        assert "keywords only" in early.content[0].text  # the agent reads it in the text too
        assert any("launch date in March" in r["text"] for r in data["results"])
        recalled = call("memory_recall", query="when is the launch date?").structured_content
        assert recalled["index"]["vectors"] == "building"
        assert any("launch date in March" in r["text"] for r in recalled["results"])

        gate.touch()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            late = call("memory_search", query="launch date").structured_content
            if "index" not in late:
                break
            time.sleep(0.2)
        assert "index" not in late, late
        assert any("launch date in March" in r["text"] for r in late["results"])
