"""giok serve: MCP over streamable HTTP, driven by the official `mcp` client (its
streamable_http_client transport and ClientSession), with the stdio server's tools."""

from __future__ import annotations

import anyio
import pytest
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from giok.edges.mcp import TOOLS
from giok.store import git
from serve_support import serve_fixture

srv = serve_fixture("serve-mcp")


def session(srv, workspace: str, token: str, work):
    """Open an MCP session at /mcp/WORKSPACE with the token and run `await work(session)`."""

    async def main():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {srv.tokens[token]}"})
        async with (
            http,
            streamable_http_client(f"{srv.url}/mcp/{workspace}", http_client=http) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            return await work(s)

    return anyio.run(main)


def test_the_http_server_lists_the_stdio_tools(srv):
    async def work(s):
        return (await s.list_tools()).tools

    tools = session(srv, "zeon", "zeon-write", work)
    assert {t.name for t in tools} == set(TOOLS)
    boot = next(t for t in tools if t.name == "memory_boot")
    assert boot.annotations.read_only_hint is True


def test_a_read_token_is_shown_only_the_read_only_tools(srv):
    async def work(s):
        return (await s.list_tools()).tools

    names = {t.name for t in session(srv, "zeon", "zeon-read", work)}
    assert names == {name for name, spec in TOOLS.items() if spec.read_only}
    assert "memory_remember" not in names


def test_remember_search_and_boot_over_http(srv):
    async def work(s):
        wrote = await s.call_tool(
            "memory_remember", {"text": "서준은 회의록을 노션에 정리한다", "layer": "M90"}
        )
        found = await s.call_tool("memory_search", {"query": "회의록 노션"})
        boot = await s.call_tool("memory_boot", {})
        return wrote, found, boot

    wrote, found, boot = session(srv, "zeon", "zeon-write", work)
    assert not wrote.is_error, wrote.content[0].text
    entry_id = wrote.structured_content["entry"]["id"]
    assert entry_id in srv.workspaces["zeon"].path("MEMORY.md").read_text()
    assert any(r["id"] == entry_id for r in found.structured_content["results"])
    assert "회의록" in boot.content[0].text


def test_a_read_token_cannot_write_over_mcp(srv):
    ws = srv.workspaces["zeon"]
    before = (ws.path("MEMORY.md").read_bytes(), git.head_id(ws.root))

    async def work(s):
        refused = await s.call_tool("memory_remember", {"text": "The office moved to Seongsu-dong"})
        task = await s.call_tool("memory_task", {"action": "add", "text": "pack the boxes"})
        read = await s.call_tool("memory_task_list", {})
        return refused, task, read

    refused, task, read = session(srv, "zeon", "zeon-read", work)
    assert refused.is_error and "read-only" in refused.content[0].text
    assert task.is_error and "read-only" in task.content[0].text
    assert not read.is_error
    assert (ws.path("MEMORY.md").read_bytes(), git.head_id(ws.root)) == before


def test_the_path_picks_the_workspace(srv):
    async def work(s):
        return await s.call_tool("memory_search", {"query": "marketing calendar"})

    found = session(srv, "mira", "both-write", work)
    assert found.structured_content["results"][0]["workspace"] == "mira"


def test_a_token_for_another_workspace_gets_no_session(srv):
    async def work(s):
        return await s.list_tools()

    with pytest.raises(BaseExceptionGroup) as caught:  # the SDK's task group wraps the refusal
        session(srv, "zeon", "mira-write", work)
    assert caught.group_contains(MCPError, match="error response", depth=2)
