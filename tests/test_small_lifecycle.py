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


# -- compound/context.md: the flush writes the session context, boot injects it -----------------
SPAN = "\n".join([
    "user: 절대 main에 직접 푸시하지 마.",
    "user: I prefer Korean from now on.",
    "assistant: Next step: add the arm64 fallback.",
])


def test_flush_writes_the_session_context_and_boot_injects_it(ws, monkeypatch):
    from giok import boot
    from giok.watchdog import flush
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, SPAN, "s1", level="soft")
    context = ws.read_text("compound/context.md")
    assert context.startswith("# context.md : session context\n")
    assert "- constraint: 절대 main에 직접 푸시하지 마." in context and "- pending: Next step: add the arm64 fallback." in context
    monkeypatch.setenv("GIOK_NOW", "2026-03-07T09:00")          # a new session, two days on
    booted = boot.build(ws)
    assert "## Session context (compound/context.md)" in booted.text
    assert "- constraint: 절대 main에 직접 푸시하지 마." in booted.text
    assert "context" in [s["name"] for s in booted.to_dict()["sections"]]
    assert "절대" not in boot.build(ws, context="group").text    # a group chat sees no private context


def test_a_later_flush_replaces_the_session_context(ws, monkeypatch):
    from giok.watchdog import flush
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, SPAN, "s1", level="soft")
    flush(ws, "user: We decided to ship on Monday.", "s2", level="soft")
    context = ws.read_text("compound/context.md")
    assert "ship on Monday" in context and "arm64" not in context and "session s2" in context
    assert len(git.log(ws.root, ["compound/context.md"], 5)) == 3   # init + two flushes: history keeps each


def test_boot_lists_the_session_context_it_could_not_fit(ws, monkeypatch):
    from giok import boot
    ws.edit("compound/context.md", lambda old: (old + "\n".join(f"- pending: item {i} " + "word " * 30
                                                                  for i in range(40)) + "\n", None), "hand edit")
    booted = boot.build(ws, budget=600)
    left = {d["section"]: d["count"] for d in booted.left_out}
    assert left.get("context", 0) > 0
    assert "lines of the session context" in booted.text
