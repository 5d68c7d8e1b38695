"""giok's memory tool inside the anthropic SDK's tool runner, against a local stand-in for the
Messages API (no remote call), and side by side with the SDK's reference implementation."""

from __future__ import annotations

import subprocess

import pytest

from stand_in import StandIn, anthropic_message

anthropic = pytest.importorskip(
    "anthropic", reason="the anthropic SDK is not installed (pip install 'giok[anthropic]')"
)
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool  # noqa: E402
from anthropic.types.beta import (  # noqa: E402
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from giok.edges.anthropic_tool import GiokMemoryTool  # noqa: E402


def messages_api(replies: list[list[dict]]) -> StandIn:
    """A Messages API that answers each POST /v1/messages with the next scripted reply."""
    replies = list(replies)

    def answer(request: dict) -> dict:
        return anthropic_message(
            replies.pop(0), id=f"msg_{len(api.requests)}", model=request["body"]["model"]
        )

    api = StandIn(answer)
    return api


def use(i: int, **input) -> dict:
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "memory", "input": input}


def commits(ws) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(ws.root), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()


def test_the_tool_runner_drives_giok_through_the_memory_tool(ws):
    api = messages_api(
        [
            [{"type": "text", "text": "Let me check my memory."}, use(1, command="view", path="/memories")],
            [
                use(
                    2,
                    command="create",
                    path="/memories/notes/launch.md",
                    file_text="# Launch\n- date: Thursday\n",
                ),
                use(
                    3,
                    command="str_replace",
                    path="/memories/notes/launch.md",
                    old_str="Thursday",
                    new_str="Friday",
                ),
                use(
                    4,
                    command="insert",
                    path="/memories/MEMORY.md",
                    insert_line=0,
                    insert_text="- Seojun moved the launch to Friday.",
                ),
                use(5, command="create", path="/memories/notes/launch.json", file_text="{}"),
            ],
            [{"type": "text", "text": "Noted: the launch is on Friday."}],
        ]
    )
    try:
        client = anthropic.Anthropic(api_key="test-key", base_url=api.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=512,
            tools=[GiokMemoryTool(ws)],
            messages=[{"role": "user", "content": "The launch moved to Friday; remember it."}],
        )
        final = runner.until_done()
    finally:
        api.close()

    assert final.content[0].text == "Noted: the launch is on Friday."
    first = api.requests[0]["body"]
    assert api.requests[0]["path"].startswith("/v1/messages")
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = {
        r["tool_use_id"]: r
        for m in (api.requests[1]["body"]["messages"][-1], api.requests[2]["body"]["messages"][-1])
        for r in m["content"]
    }
    text = {
        k: r["content"] if isinstance(r["content"], str) else r["content"][0]["text"]
        for k, r in results.items()
    }
    assert text["toolu_01"].startswith("Here're the files and directories up to 2 levels deep in /memories")
    assert "/memories/MEMORY.md" in text["toolu_01"]
    assert not results["toolu_01"].get("is_error")
    assert text["toolu_02"] == "File created successfully at: /memories/notes/launch.md"
    assert "     2\t- date: Friday" in text["toolu_03"]
    assert "giok's write policy: written m-" in text["toolu_04"]
    assert results["toolu_05"]["is_error"] is True
    assert "end in .md" in text["toolu_05"]

    assert (ws.root / "notes/launch.md").read_text() == "# Launch\n- date: Friday\n"
    assert not (ws.root / "notes/launch.json").exists()
    entry = next(e for e in ws.memory().entries() if e.text == "Seojun moved the launch to Friday.")
    log = commits(ws)
    assert log[:3] == [
        f"memory: remember {entry.id} (M30) Seojun moved the launch to Friday.",
        "memory-tool: edit notes/launch.md",
        "memory-tool: create notes/launch.md",
    ]
    assert {r.path for r in ws.search("launch Friday")} >= {"MEMORY.md", "notes/launch.md"}


@pytest.fixture
def twins(ws, tmp_path):
    """giok's tool on the workspace and the SDK's reference tool on a plain folder, both
    holding the same notes/ folder."""
    ref = BetaLocalFilesystemMemoryTool(str(tmp_path / "ref"))
    files = {
        "notes/plan.md": "# Plan\n" + "".join(f"- step {i}\n" for i in range(1, 9)),
        "notes/deep/todo.md": "- a\n- b\n",
        "notes/empty.md": "x\n",
    }
    giok = GiokMemoryTool(ws)
    for rel, body in files.items():
        for root in (ws.root, ref.memory_root):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(body)
    return giok, ref


def both(twins, command):
    giok, ref = twins
    out = []
    for tool in (giok, ref):
        try:
            out.append(tool.execute(command))
        except Exception as exc:  # the SDK's ToolError in both
            out.append(f"{type(exc).__name__}: {exc}")
    return out


@pytest.mark.parametrize(
    "command",
    [
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/notes"),
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/notes/plan.md", view_range=[3, 5]),
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/notes/plan.md", view_range=[0, 2]),
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/notes/plan.md", view_range=[7, 40]),
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/notes/plan.md", view_range=[8, -1]),
        BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace",
            path="/memories/notes/plan.md",
            old_str="step 5",
            new_str="step five\n- step 5b",
        ),
        BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace", path="/memories/notes/plan.md", old_str="# Plan", new_str="# The plan"
        ),
        BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace", path="/memories/notes/plan.md", old_str="step", new_str="x"
        ),
        BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace", path="/memories/notes/plan.md", old_str="nowhere", new_str="x"
        ),
        BetaMemoryTool20250818InsertCommand(
            command="insert", path="/memories/notes/plan.md", insert_line=99, insert_text="x"
        ),
        BetaMemoryTool20250818InsertCommand(
            command="insert", path="/memories/notes/plan.md", insert_line=-1, insert_text="x"
        ),
        BetaMemoryTool20250818InsertCommand(
            command="insert", path="/memories/notes/empty.md", insert_line=1, insert_text="y"
        ),
    ],
)
def test_answers_match_the_sdk_reference_implementation(twins, command):
    ours, reference = both(twins, command)
    assert ours == reference
