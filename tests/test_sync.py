"""Two machines, one workspace, a bare git remote: writes made at the same time on both merge
by id through giok's merge driver (real git, real `python -m giok merge-driver`)."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import run_giok, two_machines
from giok import Home, Workspace
from giok.errors import ConflictError, NotFound
from giok.retrieval import index
from giok.store import merge, remote
from giok.store.memoryfile import MemoryFile


def git(root, *args) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def machines(tmp_path, monkeypatch):
    """Machine A created the workspace and pushed it; machine B cloned it."""
    a, b, bare = two_machines(tmp_path, monkeypatch)
    return a, b, bare


def at(monkeypatch, when: str) -> None:
    monkeypatch.setenv("GIOK_NOW", f"2026-03-02T{when}")


def shared_entry(a, b, monkeypatch, text: str) -> str:
    """At 08:00 machine a remembers `text` and both sync: the id of the entry both now hold."""
    at(monkeypatch, "08:00")
    entry_id = a.remember(text).entry.id
    remote.sync(a)
    remote.sync(b)
    return entry_id


def texts(ws) -> list[str]:
    return [e.text for e in ws.memory().entries()]


def test_writes_on_two_machines_at_once_all_arrive_once(machines, monkeypatch):
    a, b, _ = machines
    shared = shared_entry(a, b, monkeypatch, "The office wifi is called harbor-5g")
    assert shared in b.memory().ids()

    at(monkeypatch, "09:30")
    b.remember("Seojun's sister Mina lives in Daegu")
    b_decision = b.decide("Use SQLite for the index", "one file, no server")
    b_task = b.task_add("Fix the CI cache")
    b.diary("B: reviewed the index schema")
    b.heartbeat_add("check the backup job")
    at(monkeypatch, "10:00")
    a.remember("The release train leaves on Fridays")
    a_decision = a.decide("Use Postgres for the team index", "many machines")
    a_task = a.task_add("Write the teams guide")
    a.diary("A: wrote the remote setup")
    a.forget(shared, reason="the wifi changed")
    assert (a_decision, a_task) == (b_decision, b_task) == ("D-001", "T-001")  # both chose the same ids

    first = remote.sync(a)
    assert first.pushed >= 5 and first.merge is None
    second = remote.sync(b)
    assert second.fetched >= 5 and second.merge not in (None, "fast-forward")
    kinds = sorted(r["kind"] for r in second.reports)
    assert kinds == ["renumbered", "renumbered"]
    third = remote.sync(a)
    assert third.merge == "fast-forward"
    assert git(a.root, "rev-parse", "HEAD") == git(b.root, "rev-parse", "HEAD")

    for ws in (a, b):
        memory = texts(ws)
        for text in ("Seojun's sister Mina lives in Daegu", "The release train leaves on Fridays"):
            assert memory.count(text) == 1, (ws, memory)
        assert "The office wifi is called harbor-5g" not in memory  # the forget held
        assert MemoryFile.parse((ws.root / "MEMORY.md").read_bytes()).unreadable == []
        decisions = {d["id"]: d["text"] for d in ws.decisions()}
        assert sorted(decisions.values()) == ["Use Postgres for the team index", "Use SQLite for the index"]
        assert sorted(decisions) == ["D-001", "D-002"]
        tasks = {t["id"]: t["text"] for t in ws.tasks()}
        assert sorted(tasks.values()) == ["Fix the CI cache", "Write the teams guide"]
        assert sorted(tasks) == ["T-001", "T-002"]
        diary = (ws.root / ws.diary_path()).read_text()
        assert diary.index("09:30 B: reviewed") < diary.index("10:00 A: wrote")  # time order
        assert diary.count("B: reviewed the index schema") == 1
        assert ws.heartbeat() == ["check the backup job"]
        assert [p for p in ws.check() if p["severity"] == "error"] == []
    merge_message = git(b.root, "log", "-1", "--format=%B", second.merge)
    assert merge_message.count("Merge-Report: ") == 2 and "is now D-002" in merge_message


def test_one_entry_edited_on_both_machines_keeps_the_later_write(machines, monkeypatch):
    a, b, _ = machines
    eid = shared_entry(a, b, monkeypatch, "The demo is in room 4")
    at(monkeypatch, "09:00")
    a.edit_entry(eid, "The demo is in room 7")
    at(monkeypatch, "11:00")
    b.edit_entry(eid, "The demo moved to the main hall")
    remote.sync(a)
    report = remote.sync(b)
    remote.sync(a)
    for ws in (a, b):
        assert ws.get(eid).text == "The demo moved to the main hall"
    [clash] = report.reports
    assert (
        clash["kind"] == "both-edited"
        and clash["id"] == eid
        and "this machine's later write" in clash["detail"]
    )
    assert "room 7" in git(
        a.root, "log", "-p", "--full-history", "--", "MEMORY.md"
    )  # the other kept in history

    at(monkeypatch, "12:00")
    b.edit_entry(eid, "The demo is in the lab")
    at(monkeypatch, "13:00")
    a.edit_entry(eid, "The demo is in the garden")
    remote.sync(b)
    remote.sync(a)  # a's write is later: kept although b pushed first
    remote.sync(b)
    assert a.get(eid).text == b.get(eid).text == "The demo is in the garden"


def test_a_forget_is_not_undone_by_the_other_machines_edit(machines, monkeypatch):
    a, b, _ = machines
    eid = shared_entry(a, b, monkeypatch, "The gate code is 7731 for the lab")
    b.home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 256}))
    assert b.search("gate code for the lab")[0].source == eid  # b's index holds it
    at(monkeypatch, "09:00")
    b.edit_entry(eid, "The gate code is 7731 for the lab and the garage")
    at(monkeypatch, "09:05")
    a.forget(eid, reason="codes do not belong in memory")
    remote.sync(b)
    report = remote.sync(a)
    out = run_giok("-w", b.root, "sync", "--json", env={"GIOK_HOME": str(b.home.path)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["forgets"] == 1 and "7731" not in out.stdout
    for ws in (a, b):
        assert eid not in ws.memory().ids()
        assert "7731" not in (ws.root / "MEMORY.md").read_text()
    assert [r["kind"] for r in report.reports] == ["deleted-while-edited"]
    for db in b.data_dir.glob(index.FILENAME + "*"):  # purged on b by its sync, WAL included
        assert b"7731" not in db.read_bytes(), db
    assert not b.search("gate code for the lab")


def test_refs_counted_on_both_machines_add_up():
    base = b"## M30\n- [2026-03-01] Tea <!-- id: m-aaaaaa; refs: 2 -->\n"
    ours = b"## M30\n- [2026-03-01] Tea <!-- id: m-aaaaaa; refs: 5 -->\n"
    theirs = b"## M90\n- [2026-03-01] Tea <!-- id: m-aaaaaa; refs: 3 -->\n"
    out = MemoryFile.parse(merge.merge_file("MEMORY.md", base, ours, theirs))
    [entry] = out.entries()
    assert (entry.refs, entry.layer) == (6, "M90")


def test_cli_remote_add_and_sync(tmp_path, monkeypatch):
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    env = {"GIOK_NOW": "2026-03-01T09:00"}
    assert run_giok("init", tmp_path / "zeon", "--name", "zeon", env=env).returncode == 0
    added = run_giok("-w", "zeon", "remote", "add", "origin", bare, env=env)
    assert added.returncode == 0, added.stderr
    assert "merge=giok" in (tmp_path / "zeon" / ".gitattributes").read_text()
    assert "merge-driver" in git(tmp_path / "zeon", "config", "merge.giok.driver")
    run_giok("-w", "zeon", "remember", "The team index lives on the shared server", env=env)
    out = run_giok("-w", "zeon", "sync", "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pushed"] >= 2
    assert "shared server" in git(bare, "show", "main:MEMORY.md")
    again = run_giok("-w", "zeon", "remote", "add", "origin", bare, env=env)
    assert again.returncode == 2 and "already has a remote" in again.stderr
    bad = run_giok("-w", "zeon", "sync", "--remote", "nowhere", env=env)
    assert bad.returncode == 4 and "no remote 'nowhere'" in bad.stderr


def test_sync_refuses_uncommitted_changes_and_changes_nothing(machines):
    a, _, _ = machines
    (a.root / "SOUL.md").write_text("edited by hand\n")
    head = git(a.root, "rev-parse", "HEAD")
    with pytest.raises(ConflictError, match="uncommitted changes"):
        remote.sync(a)
    assert git(a.root, "rev-parse", "HEAD") == head and (a.root / "SOUL.md").read_text() == "edited by hand\n"
    with pytest.raises(NotFound):
        remote.sync(a, "elsewhere")


def test_both_machines_distill_the_same_night_and_sync(machines, monkeypatch):
    from giok.lifecycle.distill import distill

    a, b, _ = machines
    at(monkeypatch, "09:00")
    a.diary("A: the harbor release checklist is now in the wiki")
    a.diary("A: Seojun wants the release notes in Korean and English")
    b.diary("B: Mina switched the staging database to Postgres 16")
    at(monkeypatch, "23:00")
    distill(a)
    distill(b)
    counts = [_judged(ws) for ws in (a, b)]
    assert counts[0] != counts[1]
    remote.sync(a)
    report = remote.sync(b)  # diaries, MEMORY.md and the ledger changed on both: no conflict
    remote.sync(a)
    assert report.merge not in (None, "fast-forward")
    for ws in (a, b):
        diary = (ws.root / ws.diary_path()).read_text()
        assert "A: the harbor release" in diary and "B: Mina switched" in diary
        assert _judged(ws) == min(counts)  # judged again at worst, never skipped
    assert (a.root / "MEMORY.md").read_bytes() == (b.root / "MEMORY.md").read_bytes()


def _judged(ws) -> int:
    ledger = (ws.root / "memory" / "distilled.txt").read_text()
    [count] = [line.split()[1] for line in ledger.splitlines() if line.startswith("2026-03-02 ")]
    return int(count)


def test_sync_runs_as_a_routine(machines, monkeypatch):
    from giok.lifecycle import routines

    a, _, bare = machines
    at(monkeypatch, "10:00")
    a.remember("The backup job runs at midnight")
    result = routines.run_routine(a, routines.Routine("sync", "*/30 * * * *", ["sync"]))
    assert "backup job runs at midnight" in git(bare, "show", "main:MEMORY.md"), result


def test_a_clone_that_started_its_own_branch_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    a, _ = Workspace.init(tmp_path / "a", name="zeon", home=Home(tmp_path / "ha"))
    remote.add(a, "origin", str(bare))
    remote.sync(a)  # pushes main
    b, _ = Workspace.init(tmp_path / "b", name="zeon", home=Home(tmp_path / "hb"))
    git(b.root, "branch", "-m", "other")
    remote.add(b, "origin", str(bare))
    with pytest.raises(ConflictError, match="has no branch 'other' but has main"):
        remote.sync(b)
    assert git(bare, "branch", "--list").split() == ["main"]  # nothing pushed


def test_a_heading_and_a_note_written_by_hand_on_one_machine_are_kept():
    base = b"# Memory\n\n## M30\n- [2026-03-01] Tea <!-- id: m-aaaaaa -->\n"
    ours = base + b"- [2026-03-02] Coffee <!-- id: m-bbbbbb -->\n"
    theirs = base + b"\n## Notes by Seojun\nCall Mina back about the lease.\n"
    ctx = merge.Context("MEMORY.md")
    out = merge.merge_file("MEMORY.md", base, ours, theirs, ctx).decode()
    assert "## Notes by Seojun\n" in out and "Call Mina back about the lease." in out
    assert out.index("## Notes by Seojun") < out.index("Call Mina back")
    assert [e.id for e in MemoryFile.parse(out.encode()).entries()][:2] == ["m-aaaaaa", "m-bbbbbb"]
    assert [r["kind"] for r in ctx.reports] == ["kept-line", "kept-line"]


def test_a_plain_git_pull_uses_the_driver_and_reports_to_the_workspace(machines, monkeypatch):
    a, b, _ = machines
    eid = shared_entry(a, b, monkeypatch, "The review meeting is on Monday")
    at(monkeypatch, "09:00")
    a.edit_entry(eid, "The review meeting is on Tuesday")
    a.remember("The office closes at seven")
    b.edit_entry(eid, "The review meeting moved to Wednesday")
    b.remember("Lunch is at noon on Fridays")
    remote.sync(a)
    pulled = subprocess.run(
        ["git", "-C", str(b.root), "pull", "--no-rebase", "--no-edit", "-q", "origin", "main"],
        capture_output=True,
        text=True,
    )
    assert pulled.returncode == 0, pulled.stderr
    memory = texts(b)
    assert "The office closes at seven" in memory and "Lunch is at noon on Fridays" in memory
    assert b.get(eid).text == "The review meeting moved to Wednesday"  # no later write known: this machine's
    [reported] = [json.loads(x) for x in (b.data_dir / "merge-reports.jsonl").read_text().splitlines()]
    assert reported["id"] == eid and reported["kind"] == "both-edited"


def test_a_conflict_outside_the_memory_files_aborts_and_changes_nothing(machines, monkeypatch):
    a, b, _ = machines
    at(monkeypatch, "08:00")
    for ws, line in ((a, "I answer in Korean."), (b, "I answer in English.")):
        (ws.root / "SOUL.md").write_text(line + "\n")
        git(ws.root, "commit", "-qam", "soul: edited by hand")
    b.remember("The printer is on the second floor")
    remote.sync(a)
    head = git(b.root, "rev-parse", "HEAD")
    with pytest.raises(ConflictError, match=r"conflicts in SOUL\.md \(files giok does not merge\)"):
        remote.sync(b)
    assert git(b.root, "rev-parse", "HEAD") == head
    assert git(b.root, "status", "--porcelain", "--untracked-files=no") == ""
    assert (b.root / "SOUL.md").read_text() == "I answer in English.\n"
    assert "The printer is on the second floor" in texts(b)
