"""The core's one-of-each concepts: the transaction every writer uses, the layout object,
the parse cache of MEMORY.md, and the small fixes that came with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from giok.edges.memory_tool import MemoryTool
from giok.errors import GiokError, GitError
from giok.store import git
from giok.write import forget as forget_mod


def _commits(ws) -> int:
    return int(git.run(ws.root, "rev-list", "--count", "HEAD").stdout)


def test_history_filter_script_closes_every_file(tmp_path):
    """forget --rewrite-history runs its tree filter in every commit: it must not leave the
    files it reads and writes open (a ResourceWarning each, and on Windows a locked file)."""
    (tmp_path / "MEMORY.md").write_text("- keep this line\n- the secret words here\n", "utf-8")
    needles = tmp_path / "needles.json"
    needles.write_text(json.dumps(["secret words"]), "utf-8")
    script = tmp_path / "tree.py"
    script.write_text(forget_mod._TREE_FILTER, "utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-W",
            "always::ResourceWarning",
            str(script),
            str(needles),
            forget_mod.SCOPE_RE.pattern,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (tmp_path / "MEMORY.md").read_text("utf-8") == "- keep this line\n"
    assert "ResourceWarning" not in proc.stderr, proc.stderr


def test_memory_tool_replace_in_memory_md_is_one_commit(ws):
    """A str_replace of an entry's text in MEMORY.md writes the superseding entry and marks
    the old one in one commit, even when the policy would not call it an update by itself."""
    old = ws.remember("The staging server runs on port 8080.", layer="M90").entry
    before = _commits(ws)
    MemoryTool(ws).handle(
        {
            "command": "str_replace",
            "path": "/memories/MEMORY.md",
            "old_str": "The staging server runs on port 8080.",
            "new_str": "Weekly reviews happen every Thursday afternoon.",
        }
    )
    new = next(e for e in ws.memory().entries() if e.text.startswith("Weekly reviews"))
    assert ws.get(old.id).fields["superseded_by"] == new.id
    assert new.fields["supersedes"] == old.id
    assert _commits(ws) == before + 1


def test_memory_tool_delete_and_rename_roll_back_when_the_commit_fails(ws, monkeypatch):
    tool = MemoryTool(ws)
    tool.handle({"command": "create", "path": "/memories/notes/a.md", "file_text": "alpha notes\n"})
    real_commit = git.commit

    def failing(*args, **kwargs):
        raise GitError("commit refused")

    monkeypatch.setattr(git, "commit", failing)
    for params in (
        {"command": "delete", "path": "/memories/notes/a.md"},
        {"command": "rename", "old_path": "/memories/notes/a.md", "new_path": "/memories/notes/b.md"},
    ):
        with pytest.raises(GiokError):
            tool.handle(params)
        assert (ws.root / "notes" / "a.md").read_text("utf-8") == "alpha notes\n"
        assert not (ws.root / "notes" / "b.md").exists()
    monkeypatch.setattr(git, "commit", real_commit)
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()


def test_lesson_says_whether_it_added_appended_or_changed_nothing(ws):
    assert ws.lesson("Pin versions", "Pin every dependency.").action == "added"
    assert ws.lesson("Pin versions", "Review upgrades weekly.").action == "appended"
    same = ws.lesson("Pin versions", "Review upgrades weekly.")
    assert same.action == "unchanged"
    assert same.heading.endswith("Pin versions")


def test_memory_parse_is_kept_until_the_file_changes(ws):
    ws.remember("Seojun prefers green tea in the morning.")
    first = ws.memory()
    first.entries()[0].text = "changed in memory only"
    assert ws.memory().entries()[0].text == "Seojun prefers green tea in the morning."
    path = ws.root / "MEMORY.md"
    text = path.read_text("utf-8").replace("green tea", "black tea")
    path.write_text(text, "utf-8")  # a hand edit: same size, new mtime
    assert ws.memory().entries()[0].text == "Seojun prefers black tea in the morning."
    ws.remember("The build runs nightly at two.")
    assert len(ws.memory().entries()) == 2


def test_old_claude_code_prompt_files_are_cleaned(ws):
    folder = ws.root / ".giok" / "claude-code"
    old, fresh = folder / "old-session.prompt", folder / "new-session.prompt"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text("an old prompt", "utf-8")
    fresh.write_text("a new prompt", "utf-8")
    week_ago = time.time() - 7 * 24 * 3600
    os.utime(old, (week_ago, week_ago))
    env = {**os.environ, "GIOK_WORKSPACE": str(ws.root)}
    hook = {"session_id": "third", "prompt": "what did we decide about the release?", "cwd": str(ws.root)}
    subprocess.run(
        [sys.executable, "-m", "giok", "hook", "UserPromptSubmit"],
        input=json.dumps(hook),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not old.exists()
    assert fresh.exists()
