"""Claude's memory tool (memory_20250818) served from a giok workspace: every command, each
write committed to git, traversal and the workspace's own files guarded."""

from __future__ import annotations

import subprocess

import pytest

from giok.edges.memory_tool import MemoryTool
from giok.errors import GitError, InvalidInput, NotFound
from giok.store import git


@pytest.fixture
def tool(ws):
    return MemoryTool(ws)


def last_commit(ws) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), "log", "-1", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_create_view_edit_insert_rename_delete(tool, ws):
    assert (
        tool.handle(
            {
                "command": "create",
                "path": "/memories/notes/progress.md",
                "file_text": "# Progress\n- parser done\n- index todo\n",
            }
        )
        == "File created successfully at: /memories/notes/progress.md"
    )
    assert (ws.root / "notes/progress.md").read_text() == "# Progress\n- parser done\n- index todo\n"
    assert last_commit(ws) == "memory-tool: create notes/progress.md"

    view = tool.handle({"command": "view", "path": "/memories/notes/progress.md"})
    assert view.splitlines() == [
        "Here's the content of /memories/notes/progress.md with line numbers:",
        "     1\t# Progress",
        "     2\t- parser done",
        "     3\t- index todo",
        "     4\t",
    ]
    assert tool.handle(
        {"command": "view", "path": "/memories/notes/progress.md", "view_range": [2, 3]}
    ).splitlines()[1:] == ["     2\t- parser done", "     3\t- index todo"]

    assert tool.handle(
        {
            "command": "str_replace",
            "path": "/memories/notes/progress.md",
            "old_str": "- index todo",
            "new_str": "- index done",
        }
    ).splitlines() == [
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):",
        "     1\t# Progress",
        "     2\t- parser done",
        "     3\t- index done",
        "     4\t",
    ]
    assert (
        tool.handle(
            {
                "command": "insert",
                "path": "/memories/notes/progress.md",
                "insert_line": 1,
                "insert_text": "(updated by Claude)",
            }
        )
        == "The file /memories/notes/progress.md has been edited."
    )
    assert (
        ws.root / "notes/progress.md"
    ).read_text() == "# Progress\n(updated by Claude)\n- parser done\n- index done\n"
    assert last_commit(ws) == "memory-tool: insert into notes/progress.md"

    assert (
        tool.handle(
            {
                "command": "rename",
                "old_path": "/memories/notes/progress.md",
                "new_path": "/memories/notes/2026-progress.md",
            }
        )
        == "Successfully renamed /memories/notes/progress.md to /memories/notes/2026-progress.md"
    )
    assert (ws.root / "notes/2026-progress.md").exists()
    assert not (ws.root / "notes/progress.md").exists()
    assert (
        tool.handle({"command": "delete", "path": "/memories/notes"})
        == "Successfully deleted /memories/notes"
    )
    assert not (ws.root / "notes").exists()
    assert last_commit(ws) == "memory-tool: delete notes"
    assert not [p for p in ws.check() if p["severity"] == "error"]


def test_view_root_lists_two_levels_without_hidden_items(tool, ws):
    listing = tool.handle({"command": "view", "path": "/memories"}).splitlines()
    assert listing[0].startswith("Here're the files and directories up to 2 levels deep in /memories")
    shown = [row.split("\t")[1] for row in listing[1:]]
    assert "/memories" in shown
    assert "/memories/MEMORY.md" in shown
    assert "/memories/state/tasks.md" in shown
    assert not any("/." in s for s in shown)


def test_an_insert_near_the_top_is_not_made_permanent_by_the_heading_above_it(tool, ws):
    """Line 3 of a new MEMORY.md lies under the M0 heading: the layer is the judgement's, as on
    every other path, and only a tag in the line asks for M0."""
    lines = ws.read_text("MEMORY.md").splitlines()
    under_m0 = next(n for n, line in enumerate(lines, 1) if line.startswith("## ") and "M0" in line)
    for text in ("- The demo moved to 3pm on Thursday.", "- Seojun's blood type is O negative #m0"):
        tool.handle(
            {"command": "insert", "path": "/memories/MEMORY.md", "insert_line": under_m0, "insert_text": text}
        )
    by_text = {e.text: e.layer for e in ws.memory().entries()}
    assert by_text["The demo moved to 3pm on Thursday."] != "M0", by_text
    assert by_text["Seojun's blood type is O negative"] == "M0", by_text


def test_memory_md_changes_through_the_write_policy(tool, ws):
    """With only the memory tool loaded, Claude edits MEMORY.md as a file: an insert is a
    `remember`, a str_replace of an entry's text an update that supersedes it, an emptied
    entry is forgotten; each is a giok commit with the policy's decision."""
    old = ws.remember("Seojun prefers tea.", layer="M90").entry
    out = tool.handle(
        {
            "command": "insert",
            "path": "/memories/MEMORY.md",
            "insert_line": 0,
            "insert_text": "- The launch moved to Friday.",
        }
    )
    assert out.startswith("The file /memories/MEMORY.md has been edited. giok's write policy: written m-")
    added = next(e for e in ws.memory().entries() if e.text == "The launch moved to Friday.")
    assert last_commit(ws).startswith(f"memory: remember {added.id}")

    out = tool.handle(
        {
            "command": "str_replace",
            "path": "/memories/MEMORY.md",
            "old_str": "prefers tea.",
            "new_str": "prefers oolong tea.",
        }
    )
    assert out.startswith("The memory file has been edited. giok's write policy:")
    new = next(e for e in ws.memory().entries() if e.text == "Seojun prefers oolong tea.")
    assert ws.get(old.id).fields["superseded_by"] == new.id
    assert new.layer == "M90"

    tool.handle(
        {
            "command": "str_replace",
            "path": "/memories/MEMORY.md",
            "old_str": "The launch moved to Friday.",
            "new_str": "",
        }
    )
    assert "The launch moved to Friday." not in ws.read_text("MEMORY.md")
    assert last_commit(ws).startswith("memory: forget")


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"command": "insert", "path": "/memories/MEMORY.md", "insert_line": 0, "insert_text": "- hello!"},
            "No change was made to MEMORY.md",
        ),
        (
            {
                "command": "str_replace",
                "path": "/memories/MEMORY.md",
                "old_str": "M90 : 90-day",
                "new_str": "x",
            },
            "only the text of one entry",
        ),
        (
            {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "expires:", "new_str": "x"},
            "only the text of one entry",
        ),
        ({"command": "create", "path": "/memories/MEMORY.md", "file_text": "- planted"}, "already exists"),
    ],
)
def test_memory_md_refusals_change_nothing(tool, ws, params, message):
    ws.remember("Seojun prefers tea.", layer="M90")
    before, head = (ws.root / "MEMORY.md").read_bytes(), head_sha(ws)
    with pytest.raises(InvalidInput, match=message):
        tool.handle(params)
    assert (ws.root / "MEMORY.md").read_bytes() == before
    if params["command"] != "insert":  # a refused remember is itself recorded (state/trace.jsonl)
        assert head_sha(ws) == head


def test_decisions_and_diaries_only_grow_at_the_end(tool, ws):
    ws.decide("Use SQLite for the index", "one file, no server")
    ws.diary("met Seojun about the launch")
    day = ws.diary_path()
    for rel in ("state/decisions.md", day):
        path, text = f"/memories/{rel}", (ws.root / rel).read_text()
        first = next(l for l in text.splitlines() if l.strip())
        with pytest.raises(InvalidInput, match="append-only"):
            tool.handle({"command": "str_replace", "path": path, "old_str": first, "new_str": "rewritten"})
        with pytest.raises(InvalidInput, match="append-only"):
            tool.handle(
                {"command": "insert", "path": path, "insert_line": 0, "insert_text": "- before everything"}
            )
        assert (ws.root / rel).read_text() == text
        end = len(text.splitlines())
        tool.handle(
            {"command": "insert", "path": path, "insert_line": end, "insert_text": "- appended by Claude"}
        )
        assert (ws.root / rel).read_text().startswith(text.rstrip("\n"))
        assert (ws.root / rel).read_text().rstrip().endswith("- appended by Claude")
    with pytest.raises(InvalidInput, match="append-only"):
        tool.handle({"command": "create", "path": "/memories/state/decisions.md", "file_text": "x"})


def test_secrets_are_redacted_before_they_reach_disk_or_git(tool, ws):
    key = "sk-ant-api03-" + "A" * 40
    tool.handle({"command": "create", "path": "/memories/notes/keys.md", "file_text": f"api key: {key}\n"})
    tool.handle(
        {
            "command": "str_replace",
            "path": "/memories/notes/keys.md",
            "old_str": "api key",
            "new_str": "password: hunter2hunter2",
        }
    )
    out = tool.handle(
        {
            "command": "insert",
            "path": "/memories/notes/keys.md",
            "insert_line": 0,
            "insert_text": "github ghp_" + "b" * 36,
        }
    )
    assert "redacted" in out
    text = (ws.root / "notes/keys.md").read_text()
    assert "[REDACTED:anthropic-key]" in text
    assert "[REDACTED:password]" in text
    assert "[REDACTED:github-token]" in text
    history = subprocess.run(
        ["git", "-C", str(ws.root), "log", "-p", "--all"], capture_output=True, text=True, check=True
    ).stdout
    assert key not in history
    assert "hunter2hunter2" not in history
    assert "ghp_bbbb" not in history


@pytest.mark.parametrize(
    "params",
    [
        {"command": "delete", "path": "/memories/memory/archive"},
        {"command": "delete", "path": "/memories/memory/archive/2026-01.md"},
        {
            "command": "str_replace",
            "path": "/memories/memory/archive/2026-01.md",
            "old_str": "Jenkins",
            "new_str": "x",
        },
        {
            "command": "insert",
            "path": "/memories/memory/archive/2026-01.md",
            "insert_line": 0,
            "insert_text": "x",
        },
        {"command": "create", "path": "/memories/memory/archive/2026-02.md", "file_text": "- planted"},
        {"command": "delete", "path": "/memories/memory/distilled.txt"},
        {
            "command": "str_replace",
            "path": "/memories/memory/distilled.txt",
            "old_str": "m-aaa111",
            "new_str": "x",
        },
        {
            "command": "rename",
            "old_path": "/memories/memory/distilled.txt",
            "new_path": "/memories/notes/d.txt",
        },
        {
            "command": "rename",
            "old_path": "/memories/notes/n.md",
            "new_path": "/memories/memory/archive/2026-03.md",
        },
        {"command": "rename", "old_path": "/memories/notes/n.md", "new_path": "/memories/state/trace.json"},
        {"command": "delete", "path": "/memories/state/trace.jsonl"},
    ],
)
def test_archive_ledger_and_trace_are_read_only(tool, ws, params):
    ws.edit(
        "memory/archive/2026-01.md",
        lambda old: ("- The old build ran on Jenkins. <!-- id: m-aaa111 -->\n", None),
        "a",
    )
    ws.edit("memory/distilled.txt", lambda old: ("m-aaa111 2026-01-01\n", None), "l")
    ws.edit("state/trace.jsonl", lambda old: ('{"id": "r-000001"}\n', None), "t")
    ws.edit("notes/n.md", lambda old: ("a note\n", None), "n")
    head = head_sha(ws)
    with pytest.raises(
        InvalidInput, match=r"kept by giok|cannot be deleted or renamed|cannot be moved there"
    ):
        tool.handle(params)
    assert head_sha(ws) == head
    assert (ws.root / "memory/archive/2026-01.md").exists()
    assert (ws.root / "memory/distilled.txt").exists()


def test_delete_and_rename_of_untracked_files_need_no_commit(tool, ws):
    (ws.root / "drafts").mkdir(exist_ok=True)
    (ws.root / "drafts/u.md").write_text("untracked\n")
    (ws.root / "drafts/v.md").write_text("untracked too\n")
    head = head_sha(ws)
    assert tool.tool_result(
        {"id": "t1", "input": {"command": "delete", "path": "/memories/drafts/u.md"}}
    ) == {"type": "tool_result", "tool_use_id": "t1", "content": "Successfully deleted /memories/drafts/u.md"}
    assert not (ws.root / "drafts/u.md").exists()
    assert head_sha(ws) == head
    tool.handle(
        {"command": "rename", "old_path": "/memories/drafts/v.md", "new_path": "/memories/drafts/w.md"}
    )
    assert (ws.root / "drafts/w.md").read_text() == "untracked too\n"
    assert last_commit(ws) == "memory-tool: rename drafts/v.md → drafts/w.md"


def test_a_failed_commit_leaves_deleted_and_renamed_files_in_place(tool, ws, monkeypatch):
    tool.handle({"command": "create", "path": "/memories/notes/keep.md", "file_text": "keep me\n"})
    (ws.root / "notes/loose.md").write_text("untracked\n")
    head = head_sha(ws)

    def broken(*args, **kwargs):
        raise GitError("git commit failed: disk full")

    monkeypatch.setattr(git, "commit", broken)
    for params in (
        {"command": "delete", "path": "/memories/notes/keep.md"},
        {"command": "delete", "path": "/memories/notes"},
        {"command": "rename", "old_path": "/memories/notes/keep.md", "new_path": "/memories/notes/k2.md"},
        {"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/old-notes"},
    ):
        result = tool.tool_result({"id": "t", "input": params})
        assert result.get("is_error")
        assert "disk full" in result["content"]
        assert (ws.root / "notes/keep.md").read_text() == "keep me\n"
        assert (ws.root / "notes/loose.md").read_text() == "untracked\n"
        assert not (ws.root / "notes/k2.md").exists()
        assert not (ws.root / "old-notes").exists()
    monkeypatch.undo()
    assert head_sha(ws) == head
    status = subprocess.run(
        ["git", "-C", str(ws.root), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert status.strip() == "?? notes/loose.md"


def test_without_a_git_identity_nothing_is_deleted(tool, ws):
    (ws.root / "drafts").mkdir(exist_ok=True)
    (ws.root / "drafts/u.md").write_text("untracked\n")
    tool.handle({"command": "create", "path": "/memories/notes/keep.md", "file_text": "keep me\n"})
    for key in ("user.name", "user.email"):
        subprocess.run(["git", "-C", str(ws.root), "config", "--unset", key], check=False)
    for path in ("/memories/drafts/u.md", "/memories/notes/keep.md"):
        result = tool.tool_result({"id": "t", "input": {"command": "delete", "path": path}})
        assert result.get("is_error")
        assert "no git identity" in result["content"]
    assert (ws.root / "drafts/u.md").exists()
    assert (ws.root / "notes/keep.md").exists()


def head_sha(ws) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"command": "view", "path": "/etc/passwd"}, InvalidInput, "must start with /memories"),
        ({"command": "view", "path": "/memories/../zeon2/MEMORY.md"}, InvalidInput, "escapes /memories"),
        ({"command": "view", "path": "/memories/.git/config"}, InvalidInput, "hidden"),
        (
            {"command": "view", "path": "/memories/nope.md"},
            NotFound,
            "The path /memories/nope.md does not exist. Please provide a valid path.",
        ),
        (
            {"command": "create", "path": "/memories/MEMORY.md", "file_text": "x"},
            InvalidInput,
            "File /memories/MEMORY.md already exists",
        ),
        (
            {"command": "create", "path": "/memories/run.sh", "file_text": "rm -rf /"},
            InvalidInput,
            "is not a text note",
        ),
        (
            {"command": "create", "path": "/memories/a.md", "file_text": " "},
            InvalidInput,
            "file_text is empty",
        ),
        (
            {
                "command": "str_replace",
                "path": "/memories/SOUL.md",
                "old_str": "no such text",
                "new_str": "x",
            },
            InvalidInput,
            "did not appear verbatim",
        ),
        (
            {"command": "insert", "path": "/memories/SOUL.md", "insert_line": 9999, "insert_text": "x"},
            InvalidInput,
            "Invalid `insert_line` parameter: 9999",
        ),
        ({"command": "delete", "path": "/memories/SOUL.md"}, InvalidInput, "cannot be deleted or renamed"),
        ({"command": "delete", "path": "/memories/state"}, InvalidInput, "cannot be deleted or renamed"),
        ({"command": "delete", "path": "/memories"}, InvalidInput, "cannot be deleted or renamed"),
        (
            {"command": "rename", "old_path": "/memories/AGENTS.md", "new_path": "/memories/x.md"},
            InvalidInput,
            "cannot be deleted",
        ),
        ({"command": "view"}, InvalidInput, "the view command needs `path`"),
        ({"command": "launch"}, InvalidInput, "unknown memory command 'launch'"),
    ],
)
def test_refusals(tool, ws, params, error, message):
    head = head_sha(ws)
    with pytest.raises(error) as info:
        tool.handle(params)
    assert message in str(info.value)
    assert head_sha(ws) == head  # nothing committed


def test_symlink_out_of_the_workspace_is_refused(tool, ws, tmp_path):
    (tmp_path / "secret.md").write_text("secret")
    (ws.root / "leak.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(InvalidInput, match="outside the workspace"):
        tool.handle({"command": "view", "path": "/memories/leak.md"})


def test_duplicate_old_str_is_refused_with_its_lines(tool, ws):
    tool.handle({"command": "create", "path": "/memories/dup.md", "file_text": "a\nsame\nb\nsame\n"})
    result = tool.tool_result(
        {
            "id": "toolu_1",
            "input": {
                "command": "str_replace",
                "path": "/memories/dup.md",
                "old_str": "same",
                "new_str": "x",
            },
        }
    )
    assert result["is_error"] is True
    assert result["tool_use_id"] == "toolu_1"
    assert result["content"] == (
        "Error: No replacement was performed. Multiple occurrences of old_str `same` "
        "in lines: 2, 4. Please ensure it is unique"
    )
    ok = tool.tool_result({"id": "toolu_2", "input": {"command": "view", "path": "/memories/dup.md"}})
    assert "is_error" not in ok
    assert ok["content"].startswith("Here's the content")
