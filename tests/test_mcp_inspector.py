"""`giok mcp` driven by the official MCP Inspector in --cli mode (from .tools/, see
.ci/setup-node-tools.sh): tools/list, every tool once with valid arguments, then invalid ones.
Each Inspector call starts its own server, as a client would: `python -m giok mcp -w zeon`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from giok import Workspace
from giok.edges.mcp import TOOLS
from giok.lifecycle.distill import distill

ROOT = Path(__file__).resolve().parents[1]
INSPECTOR = ROOT / ".tools" / "node_modules" / ".bin" / "mcp-inspector"
pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists(),
    reason="the MCP Inspector is not installed in .tools/ "
    "(run .ci/setup-node-tools.sh; it needs node >= 18 and the npm registry)",
)


class Inspector:
    def __init__(self, env: dict):
        self.env = env

    def run(self, method: str, tool: str | None = None, **arguments) -> subprocess.CompletedProcess:
        args = [str(INSPECTOR), "--cli"]
        for key in ("GIOK_HOME", "GIOK_EMBEDDINGS", "PYTHONPATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"):
            if key in self.env:
                args += ["-e", f"{key}={self.env[key]}"]
        args += [sys.executable, "-m", "giok", "mcp", "-w", "zeon", "--method", method]
        if tool:
            args += ["--tool-name", tool]
        for key, value in arguments.items():
            args += ["--tool-arg", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=600)  # a hang guard

    def call(self, tool: str, **arguments) -> dict:
        out = self.run("tools/call", tool, **arguments)
        assert out.returncode == 0, out.stdout + out.stderr
        return json.loads(out.stdout)

    def ok(self, tool: str, **arguments) -> dict:
        result = self.call(tool, **arguments)
        assert result.get("isError") is not True, (tool, result["content"][0]["text"])
        return result["structuredContent"]

    def error(self, tool: str, **arguments) -> str:
        result = self.call(tool, **arguments)
        assert result["isError"] is True, (tool, result)
        return result["content"][0]["text"]


@pytest.fixture
def inspector(ws, giok_home):
    Workspace.init(ws.root.parent / "sion", name="sion", home=giok_home)
    env = {**os.environ, "GIOK_EMBEDDINGS": "fake"}  # keyword evidence decides; no model load per call
    return Inspector(env)


def test_inspector_lists_the_tools_with_their_hints(inspector):
    out = inspector.run("tools/list")
    assert out.returncode == 0, out.stderr
    tools = {t["name"]: t for t in json.loads(out.stdout)["tools"]}
    assert set(tools) == set(TOOLS)
    for name, t in tools.items():
        hints = t["annotations"]
        assert hints["readOnlyHint"] is TOOLS[name].read_only
        assert hints["destructiveHint"] is TOOLS[name].destructive
        assert not (hints["readOnlyHint"] and hints["destructiveHint"]), name
    for read in (
        "memory_task_list",
        "memory_state_show",
        "memory_heartbeat_list",
        "memory_search",
        "memory_get",
    ):
        assert tools[read]["annotations"]["readOnlyHint"] is True, read


def test_inspector_calls_every_tool_once(inspector, ws):
    called = set()

    def ok(tool, **arguments):
        called.add(tool)
        return inspector.ok(tool, **arguments)

    entry = ok("memory_remember", text="Seojun drinks oolong tea every afternoon.", layer="M90")["entry"]
    assert "Boot context: zeon" in ok("memory_boot", budget=2000)["text"]
    hits = ok("memory_search", query="oolong tea afternoon", k=3)["results"]
    assert hits
    assert hits[0]["path"] == "MEMORY.md"
    got = ok("memory_get", path=hits[0]["path"], lines=1, **{"from": hits[0]["start_line"]})
    assert "oolong tea" in got["text"]
    assert ok("memory_recall", query="what tea does Seojun drink in the afternoon?")["answer"] == "found"
    assert ok("memory_decide", text="Keep the index in SQLite", why="no server to run")["id"].startswith("D-")
    assert ok("memory_lesson", title="Warm the index", body="the first search timed out")["heading"]
    task = ok("memory_task", action="add", text="write the inspector test")["id"]
    assert [t["id"] for t in ok("memory_task_list", status="todo")["tasks"]] == [task]
    assert (
        ok("memory_state", section="next-step", text="run the inspector")["next-step"] == "run the inspector"
    )
    assert ok("memory_state_show")["next-step"] == "run the inspector"
    ok("memory_heartbeat", action="add", text="check the inbox")
    assert ok("memory_heartbeat_list")["items"][-1] == "check the inbox"
    sent = ok("crossview_send", text="인스펙터 테스트 끝")
    assert sent["recipients"] == ["sion"]
    assert ok("crossview_inbox", unread=True)["messages"] == []
    assert ok("crossview_ack")["acked"] == []
    flushed = ok("memory_flush", gist={"decisions": ["Keep the inspector test in CI"]}, session="inspector")
    assert flushed["summary_by"] == "agent"
    plan = ok("memory_distill_plan")
    assert ok("memory_distill_apply", plan=plan["plan"], decisions={})["judges"] == ["agent"]
    ok("memory_remember", text="The release train leaves on Mondays")
    ok("memory_remember", text="The release train does not leave on Mondays")
    distill(ws)
    (item,) = ok("memory_review")["items"]
    assert ok("memory_review_resolve", id=item["id"], choice="both")["item"]["status"] == "resolved"
    assert ok("memory_forget", id=entry["id"], reason="test over")["action"] == "removed"
    assert called == set(TOOLS)
    assert entry["id"] not in ws.read_text("MEMORY.md")


def test_inspector_invalid_arguments(inspector):
    assert inspector.error("memory_search") == "Error: invalid arguments for memory_search: query is required"
    assert inspector.error("memory_search", query="tea", k=0).startswith(
        "Error: invalid arguments for memory_search: k: "
    )
    assert 'action: "list" is not one of' in inspector.error(
        "memory_task", action="list"
    )  # reads are memory_task_list now
    assert (
        inspector.error("memory_get", path="../sion/MEMORY.md")
        == "Error: path '../sion/MEMORY.md' escapes the workspace"
    )
    assert "Additional properties" in inspector.error("memory_state_show", section="phase")
    unknown = inspector.run("tools/call", "memory_nothing")
    assert unknown.returncode != 0
    assert "-32602" in unknown.stdout + unknown.stderr
