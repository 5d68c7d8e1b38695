"""Small lifecycle defects (issue 10): a lesson given twice, compound/context.md, the nightly
distill report over the configured transport."""

import json

import pytest

from giok.errors import InvalidInput
from giok.store import git


# -- lessons: the same title twice appends, never replaces --------------------------------------
def test_lesson_with_the_same_title_appends(ws, cli, monkeypatch):
    monkeypatch.setenv("GIOK_WORKSPACE", str(ws.root))
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    first = cli("lesson", "Check the lockfile", "--body", "Run uv lock before committing.")
    assert first.exit_code == 0
    assert "added" in first.output
    monkeypatch.setenv("GIOK_NOW", "2026-03-09T10:00")
    second = cli("lesson", "check the lockfile ", "--body", "CI fails when uv.lock is stale.", "--json")
    assert second.exit_code == 0
    assert json.loads(second.output) == {
        "heading": "## [2026-03-05] Check the lockfile",
        "action": "appended",
    }
    text = ws.read_text("compound/lessons.md")
    assert text.count("Check the lockfile") == 1
    assert "- Run uv lock before committing.\n- [2026-03-09] CI fails when uv.lock is stale.\n" in text
    commits = [c["message"] for c in git.log(ws.root, ["compound/lessons.md"], 5)]
    assert commits[0].startswith("lesson: append to Check the lockfile")


def test_lesson_keeps_every_body_given_in_order(ws, cli, monkeypatch):
    monkeypatch.setenv("GIOK_WORKSPACE", str(ws.root))
    done = cli("lesson", "Deploys", "--body", "Tag the release first.", "--body", "Then run the migration.")
    assert done.exit_code == 0, done.output
    text = ws.read_text("compound/lessons.md")
    assert text.index("Tag the release first.") < text.index("Then run the migration.")
    twice = cli("lesson", "Deploys", "--body", "-", "--body", "-", input="x")
    assert twice.exit_code != 0 and "stdin once" in twice.output


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
SPAN = "\n".join(
    [
        "user: 절대 main에 직접 푸시하지 마.",
        "user: I prefer Korean from now on.",
        "assistant: Next step: add the arm64 fallback.",
    ]
)


def test_flush_writes_the_session_context_and_boot_injects_it(ws, monkeypatch):
    """The session context says where the flushed gist went; the items themselves are injected
    from their one home (MEMORY.md, the state memo), once each."""
    from giok.lifecycle import boot
    from giok.lifecycle.watchdog import flush

    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, SPAN, "s1", level="soft")
    context = ws.read_text("compound/context.md")
    assert context.startswith("# context.md : session context\n")
    assert "1 constraint, 1 preference in MEMORY.md (m-" in context
    assert "1 pending in the state memo" in context
    assert "절대" not in context and "arm64" not in context
    monkeypatch.setenv("GIOK_NOW", "2026-03-07T09:00")  # a new session, two days on
    booted = boot.build(ws)
    assert "## Session context (compound/context.md)" in booted.text
    assert booted.text.count("constraint: 절대 main에 직접 푸시하지 마.") == 1
    assert booted.text.count("pending: Next step: add the arm64 fallback.") == 1
    assert "context" in [s["name"] for s in booted.to_dict()["sections"]]
    assert "절대" not in boot.build(ws, context="group").text  # a group chat sees no private context


def test_a_later_flush_replaces_the_session_context(ws, monkeypatch):
    from giok.lifecycle.watchdog import flush

    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, SPAN, "s1", level="soft")
    flush(ws, "user: We decided to ship on Monday.", "s2", level="soft")
    context = ws.read_text("compound/context.md")
    assert "1 decision in MEMORY.md" in context
    assert "constraint" not in context and "pending" not in context
    assert "session s2" in context
    assert len(git.log(ws.root, ["compound/context.md"], 5)) == 3  # init + two flushes: history keeps each


def test_boot_lists_the_session_context_it_could_not_fit(ws, monkeypatch):
    from giok.lifecycle import boot

    ws.edit(
        "compound/context.md",
        lambda old: (old + "\n".join(f"- pending: item {i} " + "word " * 30 for i in range(40)) + "\n", None),
        "hand edit",
    )
    booted = boot.build(ws, budget=600)
    left = {d["section"]: d["count"] for d in booted.left_out}
    assert left.get("context", 0) > 0
    assert "lines of the session context" in booted.text


# -- the nightly distill report goes out over the configured transport ---------------------------
@pytest.fixture
def telegram(giok_home, telegram_api):
    # the bot and server come from the cross-view settings; the report names the user's chat
    giok_home.update(
        lambda c: c.update(
            crossview={"telegram": telegram_api.bot()},
            distill_report={"transports": ["telegram"], "telegram": {"chat_id": "4242"}},
        )
    )
    return telegram_api


def _night(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T22:00")
    ws.diary("Decided to use SQLite WAL for the index")
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T23:00")


def test_distill_report_is_sent_to_the_users_telegram_chat(ws, telegram, cli, monkeypatch):
    _night(ws, monkeypatch)
    monkeypatch.setenv("GIOK_WORKSPACE", str(ws.root))
    out = cli("distill", "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    [call] = telegram.requests
    assert call["path"] == "/bot123:SECRET/sendMessage"
    assert call["body"]["chat_id"] == "4242"
    text = call["body"]["text"]
    assert text.startswith("zeon nightly-distill: 1 day(s), 1 item(s) judged")
    assert "SQLite WAL" in text
    assert "크로스뷰" not in text  # a DM, not a relayed group post
    assert "report sent over telegram" in report["notes"]
    assert cli("distill").exit_code == 0
    assert len(telegram.requests) == 1  # nothing new: nothing sent


def test_failed_delivery_is_a_note_not_a_failed_distill(ws, telegram, monkeypatch):
    from giok.lifecycle.distill import distill

    telegram.fail = (403, "Forbidden: bot was blocked")
    _night(ws, monkeypatch)
    report = distill(ws)
    assert report.commit
    assert report.decisions["M90"] == 1
    [note] = [n for n in report.notes if n.startswith("report not sent over telegram")]
    assert "bot was blocked" in note
    assert "SECRET" not in note
    assert "nightly-distill" in git.log(ws.root, ["MEMORY.md"], 1)[0]["message"]


def test_unreachable_transport_and_bad_config_are_notes(ws, giok_home, monkeypatch):
    from giok.lifecycle.distill import distill

    monkeypatch.setenv("TG_TOKEN", "123:SECRET")
    giok_home.update(
        lambda c: c.update(
            distill_report={
                "transports": ["telegram", "pigeon"],
                "telegram": {
                    "chat_id": "1",
                    "token_env": "TG_TOKEN",
                    "base_url": "http://127.0.0.1:9",
                    "timeout": 2,
                },
            }
        )
    )
    _night(ws, monkeypatch)
    report = distill(ws)
    assert report.commit
    assert any(n.startswith("report not sent over telegram: telegram: no answer") for n in report.notes)
    assert any(
        n.startswith("report not sent over pigeon: unknown cross-view transport") for n in report.notes
    )


def test_report_to_a_local_inbox_from_the_workspace_config(ws, giok_home, tmp_path, monkeypatch):
    from giok.lifecycle.crossview import Bus
    from giok.lifecycle.distill import distill
    from giok.workspace import Workspace

    Workspace.init(tmp_path / "simon", name="simon", home=giok_home)
    giok_home.update(
        lambda c: (
            c.update(crossview={"diary": False})
            or c["workspaces"]["zeon"].update(
                distill_report={"transports": ["local"], "local": {"to": ["simon"]}}
            )
        )
    )
    _night(ws, monkeypatch)
    report = distill(ws)
    [message] = Bus(giok_home).inbox("simon")
    assert message["sender"] == "zeon"
    assert "SQLite WAL" in message["text"]
    assert "report sent over local" in report.notes


def test_no_report_transport_by_default(ws, giok_home, monkeypatch):
    from giok.lifecycle.crossview import Bus
    from giok.lifecycle.distill import distill

    _night(ws, monkeypatch)
    report = distill(ws)
    assert report.commit
    assert not any("report" in n for n in report.notes)
    assert not Bus(giok_home).path.exists()
