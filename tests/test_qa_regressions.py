"""Regressions found by using giok as a user would: each test is one bug that was fixed."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from conftest import run_giok
from giok import Workspace
from giok.errors import InvalidInput
from giok.lifecycle.boot import build
from giok.text import token_count as tokens


def tracked(root) -> set[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_adopting_a_folder_commits_the_memory_files_that_were_there(tmp_path, giok_home):
    root = tmp_path / "claw"
    (root / "memory" / "archive").mkdir(parents=True)
    (root / "MEMORY.md").write_text("## 📝 M30 : 30-day memory\n- [2026-03-01] hand entry\n")
    (root / "SOUL.md").write_text("I am claw.\n")
    (root / "memory" / "2026-03-01.md").write_text("- 10:00 something\n")
    (root / "memory" / "archive" / "2026-02.md").write_text("# Archive\n")
    (root / "notes.txt").write_text("not giok's\n")
    Workspace.init(root, name="claw", home=giok_home)
    files = tracked(root)
    assert {"MEMORY.md", "SOUL.md", "memory/2026-03-01.md", "memory/archive/2026-02.md"} <= files
    assert "notes.txt" not in files  # only giok's own files are adopted
    assert (root / "MEMORY.md").read_text() == "## 📝 M30 : 30-day memory\n- [2026-03-01] hand entry\n"


def test_adopting_respects_the_folders_gitignore(tmp_path, giok_home):
    root = tmp_path / "claw"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("SOUL.md\n")
    (root / "SOUL.md").write_text("private\n")
    Workspace.init(root, name="claw", home=giok_home)
    assert "SOUL.md" not in tracked(root)


def test_init_with_a_taken_name_leaves_no_folder_behind(tmp_path, ws):
    result = run_giok("init", tmp_path / "other", "--name", "zeon")
    assert result.returncode != 0
    assert result.stderr.startswith("Error: ")
    assert "taken" in result.stderr
    assert not (tmp_path / "other").exists()


def test_init_where_no_folder_can_be_made_is_one_error_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run_giok("init", blocker / "sub", "--name", "sub")
    assert result.returncode != 0
    assert result.stderr.startswith("Error: ")
    assert "Traceback" not in result.stderr


def test_invalid_utf8_in_a_hand_edited_memory_file_does_not_crash(ws):
    with open(ws.root / "MEMORY.md", "ab") as handle:
        handle.write("- [2026-03-01] bad bytes \xff\xfe here\n".encode("latin-1"))
    ws.check()  # raised UnicodeEncodeError before
    result = ws.remember("Seojun likes jazz on Fridays", layer="M90")
    assert result.action == "written"
    assert b"bad bytes \xff\xfe here" in (ws.root / "MEMORY.md").read_bytes()  # kept byte for byte
    boot = build(ws, record=False)
    assert "bad bytes" in boot.text
    assert "Seojun likes jazz" in boot.text


def test_token_estimate_counts_lone_surrogates():
    assert tokens.estimate("ok \udcff\udcfe") >= 2


def test_a_fresh_init_adopts_nothing(tmp_path, giok_home):
    ws, created = Workspace.init(tmp_path / "fresh", name="fresh", home=giok_home)
    message = subprocess.run(
        ["git", "-C", str(ws.root), "log", "-1", "--format=%B"], capture_output=True, text=True, check=True
    ).stdout
    assert "Adopted" not in message
    assert set(created) == tracked(ws.root)


def test_new_files_follow_the_umask_not_mkstemps_0600(tmp_path, giok_home):
    old = os.umask(0o022)
    try:
        ws, _ = Workspace.init(tmp_path / "perm", name="perm", home=giok_home)
        ws.remember("Seojun keeps the spare keys in the drawer", layer="M90")
    finally:
        os.umask(old)
    for rel in ("MEMORY.md", "SOUL.md", "state/tasks.md"):
        assert stat.S_IMODE((ws.root / rel).stat().st_mode) == 0o644, rel


def test_a_comment_marker_in_the_text_cannot_eat_the_entrys_fields(ws):
    entry = ws.remember("Mina's note --> <!-- id: m-000000; expires: 2099-01-01", layer="M30").entry
    again = Workspace.open(str(ws.root)).get(entry.id)
    assert again.expires == entry.expires
    assert again.type == entry.type
    assert again.id == entry.id
    assert "m-000000" not in {e.id for e in ws.memory().entries()}


def test_show_marks_a_superseded_entry(ws, cli):
    ws.remember("Seojun prefers short answers", type="preference")
    new = ws.remember("Seojun now prefers long answers", type="preference")
    assert new.action == "superseded"
    out = cli("-w", "zeon", "show").output
    line = next(line for line in out.splitlines() if "short answers" in line)
    assert f"superseded by {new.entry.id}" in line


def test_routines_only_run_giok_commands(ws):
    import click

    from giok.edges.cli import main
    from giok.lifecycle import routines

    with pytest.raises(InvalidInput, match="not a giok command"):
        routines.Routine("bad", "0 * * * *", ["rm", "-rf", "/"]).check()
    ctx = click.Context(main)
    for name in routines.ROUTINE_COMMANDS:
        assert main.get_command(ctx, name) is not None, name


def test_flush_refuses_binary_input(ws):
    from giok.lifecycle.watchdog import flush

    with pytest.raises(InvalidInput, match="binary"):
        flush(ws, "hello \x00\x01\x02 world", level="hard")


def test_scope_names_cannot_hold_paths(ws):
    for scope in ("user:../x", "user:a/b", "thread:..", "user:"):
        with pytest.raises(InvalidInput, match="invalid scope"):
            ws.remember("Seojun's cat is called Nabi", scope=scope, type="fact")
    assert ws.remember("Seojun's cat is called Nabi", scope="user:서준", type="fact").action == "written"


def test_invalid_utf8_from_the_command_line_is_refused(ws):
    r = run_giok("-w", "zeon", "diary", b"ok \xff".decode("utf-8", "surrogateescape"))
    assert r.returncode == 2
    assert "invalid UTF-8" in r.stderr


def test_changing_a_preference_back_supersedes_the_current_value(ws):
    ws.remember("Seojun prefers tea in the morning")
    coffee = ws.remember("Seojun now prefers coffee in the morning").entry
    back = ws.remember("Seojun prefers tea in the morning")
    assert back.action == "superseded"
    assert back.entry.fields["supersedes"] == coffee.id
    live = [e.text for e in ws.memory().entries() if not e.superseded]
    assert live == ["Seojun prefers tea in the morning"]
    assert build(ws).text.count("coffee") == 0


def test_search_ids_match_show_for_lines_with_invalid_utf8(ws):
    path = ws.root / "MEMORY.md"
    path.write_bytes(path.read_bytes() + b"- [2026-12-01] giraffe budget numbers \xff\xfe here\n")
    shown = [e["id"] for e in ws.show()["layers"]["M30"]["entries"]]
    hits = ws.search("giraffe budget numbers", k=3)
    assert hits
    assert hits[0].id == shown[-1]


def test_queries_with_control_characters_are_refused(ws):
    with pytest.raises(InvalidInput, match="control characters"):
        ws.search("abc\x01def")


def test_a_similar_sentence_about_another_thing_is_not_a_duplicate(ws):
    alpha = ws.remember("Server alpha IP address is 10.0.0.1").entry
    gamma = ws.remember("Server gamma IP address is 10.0.0.1")
    assert gamma.action == "written"
    assert not ws.get(alpha.id).superseded
    reworded = ws.remember("Server alpha's IP address is 10.0.0.1")
    assert reworded.action in ("superseded", "duplicate")


def test_forget_reaches_the_cross_view_bus(ws, giok_home, tmp_path):
    from giok.lifecycle.crossview import Bus

    Workspace.init(tmp_path / "sion", name="sion", home=giok_home)
    Bus(giok_home).send("The vault combination is velvet-otter-93", sender="sion", to=["zeon"])
    Bus(giok_home).send("Lunch at noon", sender="sion", to=["zeon"])
    assert "velvet-otter-93" in ws.read_text(ws.diary_path())
    done = ws.forget(match="velvet-otter-93", reason="a secret")
    assert any("crossview.db: 1 message" in n for n in done.notes)
    data = b"".join(p.read_bytes() for p in giok_home.path.glob("crossview.db*"))
    assert b"velvet-otter-93" not in data
    assert b"Lunch at noon" in data
    assert "velvet-otter-93" not in ws.read_text(ws.diary_path())
    assert [m["text"] for m in Bus(giok_home).inbox("zeon")][-2:] in (
        ["[forgotten]", "Lunch at noon"],
        ["Lunch at noon", "[forgotten]"],
    )
