"""Nightly distillation over real workspaces, real git, simulated days ($GIOK_NOW)."""

import json

import pytest

import giok.store.transaction as workspace_mod
from giok.errors import InvalidInput
from giok.lifecycle import distill as distill_mod
from giok.lifecycle.distill import LEDGER, Ledger, distill
from giok.store import git, refs
from giok.store.memoryfile import MemoryFile


def at(monkeypatch, stamp):
    monkeypatch.setenv("GIOK_NOW", stamp)


HEADINGS = {"M90": "## 📚 M90 : 90-day memory\n", "M30": "## 📝 M30 : 30-day memory\n"}
ENTRY = "- [2026-03-01] {t} <!-- expires: {e}; id: {i} -->\n"


def hand_add(ws, **layers: list[str]) -> None:
    """Entry lines written by hand under their layer's heading (not through the write policy),
    in one commit."""

    def add(old: str) -> tuple[str, None]:
        for layer, lines in layers.items():
            old = old.replace(HEADINGS[layer], HEADINGS[layer] + "".join(lines))
        return old, None

    ws.edit("MEMORY.md", add, "hand edit")


def a_week_to_distill(ws, monkeypatch) -> None:
    """March 1st: a note that expires the next day and two diary items; now the night of the 5th."""
    at(monkeypatch, "2026-03-01T09:00")
    ws.remember("Old note that will expire soon", layer="M30", expires="2026-03-02")
    ws.diary("Lesson: write the decision down before the session ends")
    ws.diary("Decided to keep the archive per month")
    at(monkeypatch, "2026-03-05T23:00")


def distill_commits(ws):
    return [c for c in git.log(ws.root, ["."], 200) if c["message"].startswith("nightly-distill:")]


def test_judges_new_diary_items_and_commits_once(ws, monkeypatch):
    at(monkeypatch, "2026-03-05T10:00")
    ws.diary("Decided to use SQLite WAL for the index")
    ws.diary("hi")
    ws.diary("Lesson: never deploy on Friday evening, the release broke twice")
    ws.diary("First draft of the memory essay is done, 3,200 words")
    at(monkeypatch, "2026-03-05T23:00")
    report = distill(ws)
    assert report.changed
    assert report.commit
    assert report.decisions == {"M90": 1, "drop": 1, "lesson": 1, "M30": 1}
    mf = ws.memory()
    (m90,) = mf.entries("M90")
    assert m90.text == "Decided to use SQLite WAL for the index"
    assert str(m90.date) == "2026-03-05"
    assert str(m90.expires) == "2026-06-03"
    assert m90.fields["source"] == "diary:2026-03-05"
    assert m90.type == "decision"
    (m30,) = mf.entries("M30")
    assert str(m30.expires) == "2026-04-04"
    assert "never deploy on Friday" in ws.read_text("compound/lessons.md")
    diary = ws.read_text("memory/2026-03-05.md")
    assert (
        diary.rstrip()
        .splitlines()[-1]
        .startswith("- 23:00 [giok] nightly-distill: 1 day(s), 4 item(s) judged")
    )
    (commit,) = distill_commits(ws)
    assert commit["message"].startswith("nightly-distill: 2026-03-05")
    assert set(commit["files"]) == {"MEMORY.md", "compound/lessons.md", "memory/2026-03-05.md", LEDGER}
    assert Ledger.parse(ws.read_text(LEDGER)).days == {"2026-03-05": 5}


def test_second_run_changes_nothing(ws, monkeypatch):
    at(monkeypatch, "2026-03-05T10:00")
    ws.diary("Decided to use SQLite WAL for the index")
    ws.remember("Seojun reads the news at 7", layer="M30")
    refs.record(ws, [ws.memory().entries("M30")[0].id], "search")
    at(monkeypatch, "2026-03-05T23:00")
    first = distill(ws)
    before = {p: (ws.root / p).read_bytes() for p in ("MEMORY.md", LEDGER, "memory/2026-03-05.md")}
    second = distill(ws)
    assert first.changed
    assert not second.changed
    assert second.commit is None
    assert {p: (ws.root / p).read_bytes() for p in before} == before
    assert len(distill_commits(ws)) == 1
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()


def test_missed_nights_are_caught_up_and_late_items_judged(ws, monkeypatch):
    for day in ("2026-03-01", "2026-03-02", "2026-03-03"):
        at(monkeypatch, f"{day}T12:00")
        ws.diary(f"Decided the plan for {day}: ship the parser")
    at(monkeypatch, "2026-03-03T23:00")
    report = distill(ws)
    assert [d["day"] for d in report.days] == ["2026-03-01", "2026-03-02", "2026-03-03"]
    assert len(ws.memory().entries("M90")) == 3
    at(monkeypatch, "2026-03-03T23:30")
    ws.diary("Seojun launched the parser beta tonight")  # after the run: judged the next night
    at(monkeypatch, "2026-03-04T23:00")
    report = distill(ws)
    assert report.days == [{"day": "2026-03-03", "items": 1}]
    assert [e.text for e in ws.memory().entries("M365")] == ["Seojun launched the parser beta tonight"]


def test_m30_referenced_three_times_in_14_days_moves_to_m90(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    hot = ws.remember("The staging server lives at stage.local", layer="M30").entry.id
    cold = ws.remember("Minsu's birthday is in May", layer="M30").entry.id
    for day in ("2026-03-02", "2026-03-06", "2026-03-10"):
        at(monkeypatch, f"{day}T10:00")
        refs.record(ws, [hot], "search")
    refs.record(ws, [cold], "get")
    at(monkeypatch, "2026-03-10T23:00")
    report = distill(ws)
    mf = ws.memory()
    assert mf.find(hot).layer == "M90"
    assert str(mf.find(hot).expires) == "2026-06-08"
    assert mf.find(cold).layer == "M30"
    assert mf.find(hot).refs == 3
    assert mf.find(cold).refs == 1  # totals written back into the file
    assert report.promoted == [
        {
            "id": hot,
            "from": "M30",
            "to": "M90",
            "text": mf.find(hot).text,
            "reason": "referenced 3 times in 14 days",
            "judge": "offline",
        }
    ]


def test_references_older_than_14_days_do_not_promote(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    entry = ws.remember("The staging server lives at stage.local", layer="M30").entry.id
    for day in ("2026-03-02", "2026-03-03", "2026-03-20"):
        at(monkeypatch, f"{day}T10:00")
        refs.record(ws, [entry], "search")
    at(monkeypatch, "2026-03-25T23:00")
    distill(ws)
    assert ws.memory().find(entry).layer == "M30"
    assert ws.memory().find(entry).refs == 3


def test_expired_entries_move_to_the_archive(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    old = ws.remember(
        "Temporary wifi password rotation happens Mondays", layer="M30", expires="2026-03-10"
    ).entry
    keep = ws.remember("Seojun likes tea", layer="M90").entry
    at(monkeypatch, "2026-03-11T23:00")
    report = distill(ws)
    assert ws.memory().find(old.id) is None
    assert ws.memory().find(keep.id) is not None
    assert report.expired[0]["id"] == old.id
    assert report.expired[0]["archive"] == "memory/archive/2026-03.md"
    archive = MemoryFile.parse((ws.root / "memory/archive/2026-03.md").read_bytes())
    archived = archive.find(old.id)
    assert archived.text == old.text
    assert archived.layer == "M30"
    assert str(archived.expires) == "2026-03-10"
    assert archived.fields["status"] == "expired"
    assert archived.fields["archived"] == "2026-03-11"
    assert not archive.problems
    assert "memory/archive/2026-03.md" in distill_commits(ws)[0]["files"]


def test_a_korean_workspaces_archive_is_headed_in_korean(tmp_path, giok_home, monkeypatch):
    from giok import Workspace

    ko = Workspace.init(tmp_path / "nuri", name="nuri", lang="ko", home=giok_home)[0]
    at(monkeypatch, "2026-03-01T09:00")
    ko.remember("와이파이 비밀번호는 월요일마다 바뀐다", layer="M30", expires="2026-03-10")
    at(monkeypatch, "2026-03-11T23:00")
    distill(ko)
    first = (ko.root / "memory/archive/2026-03.md").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# 보관 2026-03") and "Archive" not in first


def test_a_korean_workspaces_distill_report_speaks_korean(tmp_path, giok_home, monkeypatch):
    """The summary line in the diary, the commit and `giok distill`'s output follow the
    workspace's language; the English workspace's line is unchanged."""
    from click.testing import CliRunner

    from giok import Workspace
    from giok.edges.cli import main

    ko = Workspace.init(tmp_path / "nuri", name="nuri", lang="ko", home=giok_home)[0]
    at(monkeypatch, "2026-03-01T09:00")
    ko.remember("와이파이 비밀번호는 월요일마다 바뀐다", layer="M30", expires="2026-03-10")
    at(monkeypatch, "2026-03-11T23:00")
    report = distill(ko)
    assert report.summary().startswith("nightly-distill: ") and "만료 1" in report.summary()
    assert "expired" not in report.summary() and "judged" not in report.summary()
    diary = (ko.root / "memory/2026-03-11.md").read_text(encoding="utf-8")
    assert "만료 1" in diary and "day(s)" not in diary
    assert "만료 1" in distill_commits(ko)[0]["message"]
    at(monkeypatch, "2026-03-12T23:00")
    out = CliRunner().invoke(main, ["-w", str(ko.root), "distill", "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "시험 실행" in out.output and "dry run" not in out.output


def test_review_merges_duplicates_and_flags_contradictions(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    hand_add(
        ws,
        M90=[
            ENTRY.format(t="The deploy script runs on Fridays at 6pm", e="2026-05-30", i="m-aaaaa1"),
            ENTRY.format(t="The deploy script does not run on Fridays at 6pm", e="2026-05-30", i="m-aaaaa2"),
        ],
        M30=[ENTRY.format(t="The deploy script runs on Fridays at 6pm.", e="2026-03-31", i="m-aaaaa3")],
    )
    report = distill(ws)
    assert report.merged == [
        {"id": "m-aaaaa3", "into": "m-aaaaa1", "text": "The deploy script runs on Fridays at 6pm."}
    ]
    merged = MemoryFile.parse((ws.root / "memory/archive/2026-03.md").read_bytes()).find("m-aaaaa3")
    assert merged.fields["status"] == "merged"
    assert merged.fields["merged_into"] == "m-aaaaa1"
    assert any(
        f["kind"] == "contradiction" and set(f["ids"]) == {"m-aaaaa1", "m-aaaaa2"} for f in report.flagged
    )
    mf = ws.memory()
    assert mf.find("m-aaaaa1")
    assert mf.find("m-aaaaa2")  # flagged, not touched


def test_diary_item_already_in_memory_is_not_added_twice(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.remember("Decided to use SQLite WAL for the index", layer="M90")
    ws.diary("Decided to use SQLite WAL for the index")
    report = distill(ws)
    assert len(ws.memory().entries("M90")) == 1
    assert report.skipped[0]["duplicate_of"]


def test_crash_halfway_leaves_memory_valid_and_rerun_finishes(ws, monkeypatch):
    a_week_to_distill(ws, monkeypatch)
    real_write = workspace_mod.atomic_write
    writes = []

    def crash_after_memory(path, data, expected_checksum=None):
        real_write(path, data, expected_checksum)
        writes.append(path.name)
        if path.name == "MEMORY.md":
            raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(workspace_mod, "atomic_write", crash_after_memory)
    with pytest.raises(KeyboardInterrupt):
        distill(ws)
    assert writes == ["2026-03.md", "lessons.md", "MEMORY.md"]
    mf = ws.memory()
    assert not mf.problems
    assert MemoryFile.parse(mf.render()).render() == mf.render()
    monkeypatch.setattr(workspace_mod, "atomic_write", real_write)
    distill(ws)
    assert distill(ws).changed is False
    assert ws.read_text("compound/lessons.md").count("- Lesson: write the decision down") == 1
    assert [e.text for e in ws.memory().entries("M90")] == ["Decided to keep the archive per month"]
    assert ws.read_text("memory/archive/2026-03.md").count("Old note that will expire soon") == 1
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()


def test_crash_before_any_write_changes_nothing(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    before = (ws.root / "MEMORY.md").read_bytes()

    def fail(path, data, expected_checksum=None):
        raise OSError("disk full")

    monkeypatch.setattr(workspace_mod, "atomic_write", fail)
    with pytest.raises(OSError):
        distill(ws)
    assert (ws.root / "MEMORY.md").read_bytes() == before


def test_dry_run_writes_nothing(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    head = git.run(ws.root, "rev-parse", "HEAD").stdout
    report = distill(ws, dry_run=True)
    assert report.dry_run
    assert report.changed
    assert report.added
    assert git.run(ws.root, "rev-parse", "HEAD").stdout == head
    assert not (ws.root / LEDGER).exists()


def test_bad_dates_are_refused(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    with pytest.raises(InvalidInput, match="future"):
        distill(ws, "2026-03-02")
    with pytest.raises(InvalidInput, match="invalid date"):
        distill(ws, "2026-13-01")


def test_distill_for_a_past_date_leaves_later_days(ws, monkeypatch):
    for day in ("2026-03-01", "2026-03-02"):
        at(monkeypatch, f"{day}T12:00")
        ws.diary(f"Decided the plan for {day}: ship the parser")
    report = distill(ws, "2026-03-01")
    assert [d["day"] for d in report.days] == ["2026-03-01"]
    assert distill(ws).days == [{"day": "2026-03-02", "items": 1}]


def test_cli_distill_json_and_errors(ws, cli, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    result = cli("distill", "-w", "zeon", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["changed"]
    assert data["added"][0]["layer"] == "M90"
    assert data["summary"].startswith("nightly-distill")
    again = cli("distill", "-w", "zeon")
    assert again.exit_code == 0
    assert "nothing new to distill" in again.output
    bad = cli("distill", "-w", "zeon", "--date", "2027-01-01")
    assert bad.exit_code != 0
    assert "Error: cannot distill 2027-01-01" in bad.output


def test_crash_before_the_commit_is_rolled_back_and_redone_by_the_next_run(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    real_commit = git.commit
    monkeypatch.setattr(git, "commit", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        distill(ws)
    monkeypatch.setattr(git, "commit", real_commit)
    at(monkeypatch, "2026-03-01T09:30")
    report = distill(ws)  # the interrupted run was rolled back (giok.store.journal): this one does it all
    assert report.changed
    assert report.commit
    assert len(distill_commits(ws)) == 1
    assert len(ws.memory().entries("M90")) == 1
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()


def test_links_and_role_weigh_in_and_sustained_m90_goes_to_m365(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    linked = ws.remember("The parser release needs the lexer tests green", layer="M30").entry.id
    ws.remember("The parser release is planned for the lexer freeze week", layer="M30")
    ws.remember("Lexer tests for the parser release run nightly", layer="M30")
    lonely = ws.remember("Minsu's cat is called Mango", layer="M30").entry.id
    steady = ws.remember("Seojun reviews pull requests every morning", layer="M90").entry.id
    for day in range(2, 12):
        at(monkeypatch, f"2026-03-{day:02d}T10:00")
        refs.record(ws, [steady], "recall")
        if day in (3, 9):
            refs.record(ws, [linked, lonely], "search")
    at(monkeypatch, "2026-03-11T23:00")
    report = distill(ws)
    mf = ws.memory()
    assert mf.find(linked).layer == "M90"
    assert mf.find(lonely).layer == "M30"
    assert mf.find(steady).layer == "M365"
    assert str(mf.find(steady).expires) == "2027-03-11"
    reasons = {p["id"]: p["reason"] for p in report.promoted}
    assert "links" in reasons[linked]
    assert reasons[steady].startswith("sustained")


def test_a_write_during_judging_is_not_lost(ws, monkeypatch):
    from giok.write.judges import Judge, OfflineJudge, Panel

    class Sneaky(Judge):
        name = "sneaky"
        calls = 0

        def decide(self, items, context):
            Sneaky.calls += 1
            if Sneaky.calls == 1:
                ws.diary("Decided to write during the night as well")  # another writer, mid-run
            return OfflineJudge().decide(items, context)

    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    report = distill(ws, panel=Panel([Sneaky()]))
    assert Sneaky.calls == 2
    assert {e.text for e in ws.memory().entries("M90")} == {
        "Decided to keep the archive per month",
        "Decided to write during the night as well",
    }
    assert report.judged == 2
    assert Ledger.parse(ws.read_text(LEDGER)).days["2026-03-01"] == 3


def test_a_reversed_decision_is_not_a_duplicate(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided we must ship the billing service every friday morning")
    ws.diary("Decided we must not ship the billing service every friday morning")
    ws.diary("Decided we must ship the billing service every friday morning.")  # a real duplicate
    report = distill(ws)
    texts = [e.text for e in ws.memory().entries()]
    assert "Decided we must not ship the billing service every friday morning" in texts
    assert [s["text"] for s in report.skipped] == [
        "Decided we must ship the billing service every friday morning."
    ]
    assert "→ 2 kept" in report.summary()  # the skipped duplicate is not counted as kept


def test_review_never_merges_an_entry_into_its_negation(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    wish = "Seojun {} the weekly report emailed every monday morning early"
    hand_add(
        ws,
        M90=[
            ENTRY.format(t=wish.format("wants"), e="2026-05-30", i="m-bbbbb1"),
            ENTRY.format(t=wish.format("never wants"), e="2026-05-30", i="m-bbbbb2"),
        ],
    )
    report = distill(ws)
    assert report.merged == []
    assert ws.memory().find("m-bbbbb1")
    assert ws.memory().find("m-bbbbb2")


def test_crash_between_memory_and_ledger_does_not_count_references_twice(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    entry = ws.remember("The staging server lives at stage.local", layer="M90").entry.id
    ws.diary("Decided to keep the archive per month")
    refs.record(ws, [entry], "search")
    refs.record(ws, [entry], "get")
    at(monkeypatch, "2026-03-01T23:00")
    real_write = workspace_mod.atomic_write

    def crash_after_memory(path, data, expected_checksum=None):
        real_write(path, data, expected_checksum)
        if path.name == "MEMORY.md":
            raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(workspace_mod, "atomic_write", crash_after_memory)
    with pytest.raises(KeyboardInterrupt):
        distill(ws)
    assert ws.memory().find(entry).refs == 0  # all or nothing: the half-done run was rolled back
    monkeypatch.setattr(workspace_mod, "atomic_write", real_write)
    at(monkeypatch, "2026-03-01T23:05")
    distill(ws)
    assert ws.memory().find(entry).refs == 2
    refs.record(ws, [entry], "search")
    at(monkeypatch, "2026-03-02T23:00")
    distill(ws)
    assert ws.memory().find(entry).refs == 3
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()


def test_failed_commit_restores_every_file(ws, monkeypatch):
    from giok.errors import GitError

    a_week_to_distill(ws, monkeypatch)
    paths = [
        "MEMORY.md",
        "compound/lessons.md",
        "memory/2026-03-01.md",
        "memory/2026-03-05.md",
        LEDGER,
        "memory/archive/2026-03.md",
    ]
    before = {p: (ws.root / p).read_bytes() if (ws.root / p).exists() else None for p in paths}

    def refuse(*args, **kwargs):
        raise GitError("git commit failed: disk quota exceeded")

    monkeypatch.setattr(git, "commit", refuse)
    with pytest.raises(GitError, match="quota"):
        distill(ws)
    assert {p: (ws.root / p).read_bytes() if (ws.root / p).exists() else None for p in paths} == before
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()


def test_no_git_identity_writes_nothing(ws, monkeypatch):
    from giok.errors import GitError

    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    git.run(ws.root, "config", "--unset", "user.name")
    before = {p: (ws.root / p).read_bytes() for p in ("MEMORY.md", "memory/2026-03-01.md")}
    with pytest.raises(GitError, match="identity"):
        distill(ws)
    assert {p: (ws.root / p).read_bytes() for p in before} == before
    assert not (ws.root / LEDGER).exists()


def test_a_busy_workspace_is_distilled_on_the_last_try_under_the_lock(ws, monkeypatch):
    """Writers that keep changing the files between planning and writing make the last try
    plan under the workspace lock: the night is distilled and every concurrent line is kept."""
    at(monkeypatch, "2026-03-01T09:00")
    ws.diary("Decided to keep the archive per month")
    at(monkeypatch, "2026-03-01T23:00")
    real_plan = distill_mod._Run.plan
    made = []

    def busy_plan(run):
        planned = real_plan(run)
        made.append(1)
        if len(made) <= 3:  # somebody writes right after each unlocked plan read the files
            path = ws.root / "MEMORY.md"
            path.write_text(path.read_text() + f"- hand-written note {len(made)}\n")
        return planned

    monkeypatch.setattr(distill_mod._Run, "plan", busy_plan)
    report = distill(ws)
    assert report.commit
    assert len(made) == 4
    text = (ws.root / "MEMORY.md").read_text()
    assert all(f"hand-written note {i}" in text for i in (1, 2, 3))
    assert any("archive per month" in e.text for e in ws.memory().entries())
