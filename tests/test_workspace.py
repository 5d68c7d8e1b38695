"""Workspace layout, adoption, and every write committed at once."""

import datetime as dt
import subprocess

import pytest

from giok import Workspace
from giok.errors import DirtyFileError, GitError, InvalidInput, NotFound, WorkspaceError

LAYOUT = [
    "SOUL.md",
    "USER.md",
    "AGENTS.md",
    "MEMORY.md",
    "HEARTBEAT.md",
    "TOOLS.md",
    "compound/lessons.md",
    "compound/context.md",
    "state/memo.md",
    "state/tasks.md",
    "state/decisions.md",
    "drafts",
    ".gitignore",
]


def git(ws, *args):
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def commits(ws):
    return git(ws, "log", "--format=%s").splitlines()


def test_init_creates_layout_and_commits(ws, monkeypatch):
    for rel in LAYOUT:
        assert (ws.root / rel).exists(), rel
    assert list((ws.root / "memory").glob("*.md"))
    assert "## TIER 1" in (ws.root / "AGENTS.md").read_text()
    assert "## TIER 2" in (ws.root / "AGENTS.md").read_text()
    assert ".giok/" in (ws.root / ".gitignore").read_text()
    assert commits(ws) == ["giok: init workspace zeon"]
    assert git(ws, "status", "--porcelain") == ""
    mf = ws.memory()
    assert [l.layer for l in mf.lines if type(l).__name__ == "Heading" and l.layer] == [
        "M0",
        "M365",
        "M90",
        "M30",
    ]


def test_korean_templates(tmp_path, giok_home):
    ws, _ = Workspace.init(tmp_path / "sion", name="sion", lang="ko", user="서준", home=giok_home)
    assert "코어 메모리" in (ws.root / "MEMORY.md").read_text()
    assert "서준" in (ws.root / "USER.md").read_text()
    assert "현재 단계" in (ws.root / "state/memo.md").read_text()


def test_adopting_an_existing_folder_changes_nothing_that_was_there(tmp_path, giok_home):
    root = tmp_path / "openclaw"
    (root / "memory").mkdir(parents=True)
    original = {
        "MEMORY.md": "my own memory\n- not in any layer\n",
        "memory/2026-03-04.md": "# old day\n",
        "SOUL.md": "I am someone else.\n",
    }
    for rel, text in original.items():
        (root / rel).write_text(text)
    _ws, created = Workspace.init(root, name="claw", home=giok_home)
    for rel, text in original.items():
        assert (root / rel).read_text() == text
    assert "MEMORY.md" not in created
    assert "SOUL.md" not in created
    assert not any(c.startswith("memory/") for c in created)
    assert "USER.md" in created
    assert "state/tasks.md" in created
    again = Workspace.init(root, name="claw", home=giok_home)[1]
    assert again == []


def test_remember_defaults_and_commit(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    result = ws.remember("Seojun likes systematic thinking", layer="M90", type="fact")
    entry = result.entry
    assert entry.id.startswith("m-")
    assert entry.expires == dt.date(2026, 6, 3)
    assert commits(ws)[0] == f"memory: remember {entry.id} (M90) Seojun likes systematic thinking"
    assert ws.get(entry.id).text == "Seojun likes systematic thinking"
    m0 = ws.remember("I am Zeon", layer="M0").entry
    assert m0.expires is None
    with pytest.raises(InvalidInput):
        ws.remember("bad", layer="M0", expires="2027-01-01")


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"text": ""}, "empty"),
        ({"text": "   \n\t "}, "empty"),
        ({"text": "x" * 9000}, "limit"),
        ({"text": "bin\x00ary"}, "binary"),
        ({"text": "ok", "layer": "M7"}, "invalid layer"),
        ({"text": "ok", "expires": "2026-02-30"}, "no such day"),
        ({"text": "ok", "expires": "tomorrow"}, "invalid date"),
        ({"text": "ok", "scope": "user:"}, "invalid scope"),
        ({"text": "ok", "confidence": 3}, "confidence"),
        ({"text": "ok", "type": "gossip"}, "invalid type"),
    ],
)
def test_remember_rejects_bad_input_and_writes_nothing(ws, kwargs, message):
    before = (ws.root / "MEMORY.md").read_bytes()
    with pytest.raises(InvalidInput, match=message):
        ws.remember(**kwargs)
    assert (ws.root / "MEMORY.md").read_bytes() == before
    assert len(commits(ws)) == 1


def test_forget_removes_entry_and_records_reason(ws):
    entry = ws.remember("A mistaken fact").entry
    ws.forget(entry.id, reason="it was wrong")
    assert entry.id not in ws.memory().ids()
    message = git(ws, "log", "-1", "--format=%B")
    assert f"forget {entry.id}" in message
    assert "Reason: it was wrong" in message
    with pytest.raises(NotFound):
        ws.forget(entry.id, reason="again")
    with pytest.raises(InvalidInput, match="malformed"):
        ws.forget("../../etc", reason="x")


def test_diary_is_append_only(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T09:30")
    ws.diary("Morning check-in")
    path = ws.root / "memory/2026-03-05.md"
    first = path.read_bytes()
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T21:30")
    ws.diary("Evening check-in")
    second = path.read_bytes()
    assert second.startswith(first)
    assert second.decode().splitlines()[-2:] == ["- 09:30 Morning check-in", "- 21:30 Evening check-in"]


def test_lesson_and_decisions(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05")
    ws.lesson("Parallel subagents", "spawn, then poll after 5 minutes\nnever rely on auto-announce")
    text = (ws.root / "compound/lessons.md").read_text()
    assert (
        "## [2026-03-05] Parallel subagents\n- spawn, then poll after 5 minutes\n- never rely on "
        "auto-announce" in text
    )
    assert ws.decide("Use SQLite", why="one file, no server") == "D-001"
    before = (ws.root / "state/decisions.md").read_text()
    assert ws.decide("Use PostgreSQL", why="team grew", supersedes="D-001") == "D-002"
    after = (ws.root / "state/decisions.md").read_text()
    assert after.startswith(before)  # earlier entries never edited
    decisions = ws.decisions()
    assert decisions[0]["superseded"]
    assert decisions[1]["supersedes"] == "D-001"
    with pytest.raises(NotFound):
        ws.decide("x", why="y", supersedes="D-099")


def test_tasks_state_heartbeat(ws):
    t1, t2 = ws.task_add("write tests"), ws.task_add("ship")
    assert (t1, t2) == ("T-001", "T-002")
    ws.task_move("T-001", "doing")
    ws.task_move("T-002", "blocked", note="waiting for review")
    assert {t["id"]: t["status"] for t in ws.tasks()} == {"T-001": "doing", "T-002": "blocked"}
    with pytest.raises(NotFound):
        ws.task_move("T-009", "done")
    ws.state_set("next-step", "run the benchmark")
    assert ws.state()["next-step"] == "run the benchmark"
    with pytest.raises(InvalidInput):
        ws.state_set("mood", "happy")
    ws.heartbeat_add("QRT pool empty: find new articles")
    ws.heartbeat_add("Two unanswered messages")
    assert ws.heartbeat_done("1") == "QRT pool empty: find new articles"
    assert ws.heartbeat() == ["Two unanswered messages"]


def test_hand_edit_between_read_and_write_is_refused(ws):
    path = ws.root / "MEMORY.md"

    def sneaky(old):
        path.write_text(old + "- hand edit\n")
        return old + "- giok edit\n", None

    with pytest.raises(DirtyFileError):
        ws.edit("MEMORY.md", sneaky, "x")
    assert path.read_text().endswith("- hand edit\n")


def test_workspace_without_git_identity_gets_clear_error(ws):
    git(ws, "config", "--unset", "user.name")
    with pytest.raises(GitError, match="no git identity"):
        ws.remember("something")


def test_workspace_that_is_not_a_repo(ws):
    import shutil

    shutil.rmtree(ws.root / ".git")
    with pytest.raises(GitError, match="not a git repository"):
        ws.remember("something")


def test_unknown_and_escaping_workspace_names(giok_home, tmp_path):
    with pytest.raises(WorkspaceError, match="unknown workspace"):
        Workspace.open("nobody", home=giok_home)
    with pytest.raises(WorkspaceError):
        Workspace.open("../../etc", home=giok_home)
    with pytest.raises(InvalidInput):
        Workspace.init(tmp_path / "x", name="../evil", home=giok_home)


def test_show_lists_expiring_soon(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01")
    soon = ws.remember("short lived", expires="2026-03-05").entry
    later = ws.remember("long lived").entry
    shown = ws.show()
    assert [e["id"] for e in shown["expiring_soon"]] == [soon.id]
    monkeypatch.setenv("GIOK_NOW", "2026-03-10")
    assert [e["id"] for e in ws.show()["expired"]] == [soon.id]
    assert later.id not in [e["id"] for e in ws.show()["expired"]]


def test_check_reports_unreadable_lines(ws):
    path = ws.root / "MEMORY.md"
    path.write_text(path.read_text() + "- [2026-99-01] broken date\n")
    problems = ws.check()
    assert any("bad date" in p["message"] for p in problems)
    assert "broken date" in path.read_text()  # kept verbatim


def test_secrets_never_reach_any_file_or_git(ws):
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    ws.diary(f"Deployed with key {key}")
    ws.decide(f"Rotate {key}", why="leaked")
    ws.task_add(f"revoke {key}")
    ws.heartbeat_add(f"check {key}")
    ws.state_set("next-step", f"replace {key}")
    ws.lesson("Keys", f"never paste {key}")
    for path in ws.root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert key not in path.read_text(errors="ignore"), path
    log = subprocess.run(["git", "-C", str(ws.root), "log", "-p"], capture_output=True, text=True).stdout
    assert key not in log
    assert "[REDACTED" in log


def test_a_write_never_commits_what_the_user_had_staged(ws):
    (ws.root / "drafts" / "essay.md").write_text("half-written essay\n")
    git(ws, "add", "drafts/essay.md")
    ws.remember("The essay is about memory and identity")
    assert "drafts/essay.md" not in git(ws, "show", "--name-only", "--format=", "HEAD")
    assert "A  drafts/essay.md" in git(ws, "status", "--porcelain")


def test_a_write_whose_commit_fails_is_undone(ws, monkeypatch):
    before = (ws.root / "MEMORY.md").read_bytes()
    monkeypatch.setattr(
        "giok.store.git.commit",
        lambda *a, **k: (_ for _ in ()).throw(GitError("git commit failed: disk full")),
    )
    with pytest.raises(GitError, match="disk full"):
        ws.remember("The staging server moved to port 8443")
    assert (ws.root / "MEMORY.md").read_bytes() == before
    with pytest.raises(GitError):
        ws.diary("A day that could not be committed")
    assert not (ws.root / ws.diary_path()).read_text().count("could not be committed")
    monkeypatch.undo()
    assert ws.remember("The staging server moved to port 8443").action == "written"


def test_missing_identity_writes_nothing(ws):
    git(ws, "config", "--unset", "user.name")
    before = (ws.root / "MEMORY.md").read_bytes()
    with pytest.raises(GitError, match="no git identity"):
        ws.remember("The staging server moved to port 8443")
    assert (ws.root / "MEMORY.md").read_bytes() == before
    assert git(ws, "status", "--porcelain") == ""
