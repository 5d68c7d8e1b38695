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


def test_an_idle_index_sync_looks_for_pending_purges_once(ws, fake_embeddings, monkeypatch):
    """A search on an index that is up to date looks at .giok/index-pending once, not two or
    three times (each look is a directory listing on every search)."""
    from giok.retrieval import index

    ws.remember("The deploy key rotates every quarter.")
    idx = index.Index.for_workspace(ws)
    idx.sync()
    looks = []
    real = index.Index._pending

    def counted(self):
        looks.append(1)
        return real(self)

    monkeypatch.setattr(index.Index, "_pending", counted)
    idx.sync()
    assert len(looks) == 1


def test_boot_after_a_hand_edit_shows_the_edit_not_the_kept_lines(ws):
    from giok.lifecycle import boot

    ws.remember("Seojun's standup is at nine thirty.", layer="M90")
    assert "nine thirty" in boot.build(ws, record=False).text
    assert "nine thirty" in boot.build(ws, record=False).text  # from the kept lines
    path = ws.root / "MEMORY.md"
    path.write_text(path.read_text("utf-8").replace("nine thirty", "ten fifteen"), "utf-8")
    text = boot.build(ws, record=False).text
    assert "ten fifteen" in text
    assert "nine thirty" not in text


def test_forget_leaves_no_copy_in_the_boot_cache(ws):
    from giok.lifecycle import boot

    entry = ws.remember("The garage door code is four digits long.", layer="M90").entry
    boot.build(ws, record=False)
    ws.forget(entry.id, reason="not needed")
    kept = [p for p in (ws.root / ".giok").rglob("*") if p.is_file() and p.suffix == ".json"]
    assert all("garage door" not in p.read_text("utf-8", errors="replace") for p in kept)
    assert "garage door" not in boot.build(ws, record=False).text


def test_settings_come_from_the_environment_the_entry_point_read(tmp_path):
    from giok.settings import Settings

    s = Settings.from_env(
        {
            "GIOK_HOME": str(tmp_path / "h"),
            "GIOK_WORKSPACE": "zeon",
            "GIOK_INDEX_BUSY_TIMEOUT": "2.5",
            "GIOK_SESSION": "s-1",
        }
    )
    assert s == Settings(
        home=(tmp_path / "h").resolve(), workspace="zeon", index_busy_timeout=2.5, session="s-1"
    )
    assert (
        Settings.from_env(
            {"GIOK_INDEX_BUSY_TIMEOUT": "soon", "XDG_DATA_HOME": str(tmp_path)}
        ).index_busy_timeout
        == 30.0
    )
    assert Settings.from_env({"XDG_DATA_HOME": str(tmp_path)}).home == tmp_path.resolve() / "giok"


def test_a_workspace_opened_with_settings_uses_them(ws, tmp_path):
    from giok import Workspace
    from giok.settings import Settings

    settings = Settings.from_env({"GIOK_HOME": str(ws.home.path), "GIOK_WORKSPACE": str(ws.root)})
    opened = Workspace.open(settings=settings, cwd=tmp_path)
    assert opened.root == ws.root
    assert opened.settings is settings


def test_boot_keeps_lines_with_invalid_utf8_across_runs(ws):
    """A hand-edited MEMORY.md with bytes that are not UTF-8 boots, and boots again from the
    kept lines, showing the same text."""
    from giok.lifecycle import boot

    ws.remember("Seojun likes jazz on Fridays", layer="M90")
    with open(ws.root / "MEMORY.md", "ab") as handle:
        handle.write("- [2026-03-01] bad bytes \xff\xfe here\n".encode("latin-1"))
    first = boot.build(ws, record=False).text
    assert "bad bytes" in first
    assert boot.build(ws, record=False).text == first
