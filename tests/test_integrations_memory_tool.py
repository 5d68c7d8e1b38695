"""Claude's memory tool (memory_20250818) served from a giok workspace: every command, each
write committed to git, traversal and the workspace's own files guarded."""

from __future__ import annotations

import subprocess

import pytest

from giok.errors import InvalidInput, NotFound
from giok.memory_tool import MemoryTool


@pytest.fixture
def tool(ws):
    return MemoryTool(ws)


def last_commit(ws) -> str:
    return subprocess.run(["git", "-C", str(ws.root), "log", "-1", "--format=%s"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_create_view_edit_insert_rename_delete(tool, ws):
    assert tool.handle({"command": "create", "path": "/memories/notes/progress.md",
                        "file_text": "# Progress\n- parser done\n- index todo\n"}) == \
        "File created successfully at: /memories/notes/progress.md"
    assert (ws.root / "notes/progress.md").read_text() == "# Progress\n- parser done\n- index todo\n"
    assert last_commit(ws) == "memory-tool: create notes/progress.md"

    view = tool.handle({"command": "view", "path": "/memories/notes/progress.md"})
    assert view.splitlines() == ["Here's the content of /memories/notes/progress.md with line numbers:",
                                 "     1\t# Progress", "     2\t- parser done", "     3\t- index todo"]
    assert tool.handle({"command": "view", "path": "/memories/notes/progress.md", "view_range": [2, -1]}).splitlines()[1:] \
        == ["     2\t- parser done", "     3\t- index todo"]

    assert tool.handle({"command": "str_replace", "path": "/memories/notes/progress.md",
                        "old_str": "- index todo", "new_str": "- index done"}) == "The memory file has been edited."
    assert tool.handle({"command": "insert", "path": "/memories/notes/progress.md", "insert_line": 1,
                        "insert_text": "(updated by Claude)"}) == "The file /memories/notes/progress.md has been edited."
    assert (ws.root / "notes/progress.md").read_text() == "# Progress\n(updated by Claude)\n- parser done\n- index done\n"
    assert last_commit(ws) == "memory-tool: insert into notes/progress.md"

    assert tool.handle({"command": "rename", "old_path": "/memories/notes/progress.md",
                        "new_path": "/memories/notes/2026-progress.md"}) == \
        "Successfully renamed /memories/notes/progress.md to /memories/notes/2026-progress.md"
    assert (ws.root / "notes/2026-progress.md").exists() and not (ws.root / "notes/progress.md").exists()
    assert tool.handle({"command": "delete", "path": "/memories/notes"}) == "Successfully deleted /memories/notes"
    assert not (ws.root / "notes").exists()
    assert last_commit(ws) == "memory-tool: delete notes"
    assert not [p for p in ws.check() if p["severity"] == "error"]


def test_view_root_lists_two_levels_without_hidden_items(tool, ws):
    listing = tool.handle({"command": "view", "path": "/memories"}).splitlines()
    assert listing[0].startswith("Here're the files and directories up to 2 levels deep in /memories")
    shown = [row.split("\t")[1] for row in listing[1:]]
    assert "/memories" in shown and "/memories/MEMORY.md" in shown and "/memories/state/tasks.md" in shown
    assert not any("/." in s for s in shown)


def test_the_memory_file_stays_readable_by_giok(tool, ws):
    ws.remember("Seojun prefers tea.", layer="M90")
    tool.handle({"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "Seojun prefers tea.",
                 "new_str": "Seojun prefers oolong tea."})
    [entry] = [e for e in ws.memory().entries() if "oolong" in e.text]
    assert entry.layer == "M90"


def head_sha(ws) -> str:
    return subprocess.run(["git", "-C", str(ws.root), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


@pytest.mark.parametrize("params, error, message", [
    ({"command": "view", "path": "/etc/passwd"}, InvalidInput, "must start with /memories"),
    ({"command": "view", "path": "/memories/../zeon2/MEMORY.md"}, InvalidInput, "escapes /memories"),
    ({"command": "view", "path": "/memories/.git/config"}, InvalidInput, "hidden"),
    ({"command": "view", "path": "/memories/nope.md"}, NotFound,
     "The path /memories/nope.md does not exist. Please provide a valid path."),
    ({"command": "create", "path": "/memories/MEMORY.md", "file_text": "x"}, InvalidInput, "File /memories/MEMORY.md already exists"),
    ({"command": "create", "path": "/memories/run.sh", "file_text": "rm -rf /"}, InvalidInput, "is not a text note"),
    ({"command": "create", "path": "/memories/a.md", "file_text": " "}, InvalidInput, "file_text is empty"),
    ({"command": "str_replace", "path": "/memories/SOUL.md", "old_str": "no such text", "new_str": "x"}, InvalidInput,
     "did not appear verbatim"),
    ({"command": "insert", "path": "/memories/SOUL.md", "insert_line": 9999, "insert_text": "x"}, InvalidInput,
     "Invalid `insert_line` parameter: 9999"),
    ({"command": "delete", "path": "/memories/SOUL.md"}, InvalidInput, "cannot be deleted or renamed"),
    ({"command": "delete", "path": "/memories/state"}, InvalidInput, "cannot be deleted or renamed"),
    ({"command": "delete", "path": "/memories"}, InvalidInput, "cannot be deleted or renamed"),
    ({"command": "rename", "old_path": "/memories/AGENTS.md", "new_path": "/memories/x.md"}, InvalidInput, "cannot be deleted"),
    ({"command": "view"}, InvalidInput, "the view command needs `path`"),
    ({"command": "launch"}, InvalidInput, "unknown memory command 'launch'"),
])
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
    result = tool.tool_result({"id": "toolu_1", "input": {"command": "str_replace", "path": "/memories/dup.md",
                                                          "old_str": "same", "new_str": "x"}})
    assert result["is_error"] is True and result["tool_use_id"] == "toolu_1"
    assert result["content"] == ("Error: No replacement was performed. Multiple occurrences of old_str `same` "
                                 "in lines: 2, 4. Please ensure it is unique")
    ok = tool.tool_result({"id": "toolu_2", "input": {"command": "view", "path": "/memories/dup.md"}})
    assert "is_error" not in ok and ok["content"].startswith("Here's the content")
