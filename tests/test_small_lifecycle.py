"""Small lifecycle defects (issue 10): a lesson given twice, compound/context.md, the nightly
distill report over the configured transport."""

import json

import pytest

from giok import git
from giok.errors import InvalidInput


# -- lessons: the same title twice appends, never replaces --------------------------------------
def test_lesson_with_the_same_title_appends(ws, cli, monkeypatch):
    monkeypatch.setenv("GIOK_WORKSPACE", str(ws.root))
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    first = cli("lesson", "Check the lockfile", "--body", "Run uv lock before committing.")
    assert first.exit_code == 0 and "added" in first.output
    monkeypatch.setenv("GIOK_NOW", "2026-03-09T10:00")
    second = cli("lesson", "check the lockfile ", "--body", "CI fails when uv.lock is stale.", "--json")
    assert second.exit_code == 0
    assert json.loads(second.output) == {"heading": "## [2026-03-05] Check the lockfile", "action": "appended"}
    text = ws.read_text("compound/lessons.md")
    assert text.count("Check the lockfile") == 1
    assert "- Run uv lock before committing.\n- [2026-03-09] CI fails when uv.lock is stale.\n" in text
    commits = [c["message"] for c in git.log(ws.root, ["compound/lessons.md"], 5)]
    assert commits[0].startswith("lesson: append to Check the lockfile")


def test_lesson_repeated_body_changes_nothing(ws):
    ws.lesson("Pin versions", "Pin every dependency.\nReview upgrades weekly.")
    commits = len(git.log(ws.root, ["."], 100))
    ws.lesson("Pin versions", "Pin every dependency.")
    assert ws.read_text("compound/lessons.md").count("Pin every dependency.") == 1
    assert len(git.log(ws.root, ["."], 100)) == commits


def test_lesson_appends_inside_its_own_section(ws):
    ws.lesson("First", "one")
    ws.lesson("Second", "two")
    ws.lesson("First", "three")
    text = ws.read_text("compound/lessons.md")
    assert text.index("three") < text.index("Second")
    with pytest.raises(InvalidInput):
        ws.lesson("First", "   ")
