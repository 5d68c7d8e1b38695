"""Memory over weeks of simulated days ($GIOK_NOW): what counts as a reference, a superseding
entry keeps its layer, giok's own diary lines never answer a question, the event date."""

import datetime as dt
import json

import pytest

from conftest import run_giok
from giok.errors import InvalidInput
from giok.lifecycle import boot
from giok.lifecycle.distill import distill
from giok.store import refs
from giok.store.memoryfile import MemoryFile

START = dt.date(2026, 3, 1)


def at(monkeypatch, day: dt.date, time: str = "10:00"):
    monkeypatch.setenv("GIOK_NOW", f"{day.isoformat()}T{time}")


@pytest.fixture
def fake(giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 1024}))  # few collisions


def archived(ws) -> list:
    folder = ws.root / "memory" / "archive"
    return [e for p in sorted(folder.glob("*.md")) for e in MemoryFile.parse(p.read_bytes()).entries()]


# -- 1. what counts as a reference ------------------------------------------------------------
def test_daily_boots_promote_nothing_and_trivial_lines_expire_on_schedule(ws, monkeypatch):
    promoted = []
    for n in range(27):
        day = START + dt.timedelta(days=n)
        at(monkeypatch, day, "09:00")
        boot.build(ws)
        ws.diary(f"일상 작업 로그 {n + 10}: 리뷰 코멘트 정리 완료")
        at(monkeypatch, day, "23:00")
        promoted += distill(ws).promoted
    assert promoted == []
    entries = ws.memory().entries()
    assert len(entries) == 27
    assert {e.layer for e in entries} == {"M30"}
    assert all(e.expires == e.date + dt.timedelta(days=30) for e in entries)
    assert all(e.refs == 0 for e in entries)  # boot injections are not references
    # an entry lives through its expiry day: 32 days on, the first two days' lines are gone
    day = START + dt.timedelta(days=32)
    at(monkeypatch, day, "09:00")
    boot.build(ws)
    at(monkeypatch, day, "23:00")
    report = distill(ws)
    assert report.promoted == []
    assert sorted(x["text"] for x in report.expired) == [
        "일상 작업 로그 10: 리뷰 코멘트 정리 완료",
        "일상 작업 로그 11: 리뷰 코멘트 정리 완료",
    ]
    assert len(ws.memory().entries()) == 25
    assert len(archived(ws)) == 2


def test_an_entry_returned_by_three_searches_in_14_days_moves_to_m90(ws, fake, monkeypatch):
    at(monkeypatch, START)
    used = ws.remember("The staging server lives at stage.example.org", layer="M30").entry.id
    shown = ws.remember("Minsu's birthday party is in May", layer="M30").entry.id
    for n in (1, 5, 9):
        day = START + dt.timedelta(days=n)
        at(monkeypatch, day)
        boot.build(ws)
        hits = ws.search("staging server")
        assert hits
        assert hits[0].source == used
    at(monkeypatch, START + dt.timedelta(days=9), "23:00")
    report = distill(ws)
    mf = ws.memory()
    assert mf.find(used).layer == "M90"
    assert mf.find(used).refs == 3
    assert mf.find(shown).layer == "M30"
    assert mf.find(shown).refs == 0
    assert [p["id"] for p in report.promoted] == [used]


def test_only_the_top_hits_and_a_few_cited_entries_count(ws, monkeypatch):
    at(monkeypatch, START)
    ids = [f"m-00000{n}" for n in range(8)]
    refs.record(ws, ids, "search")  # a wide search: only its top 3 count
    refs.record(ws, ids, "get")  # reading the whole file is not citing
    refs.record(ws, ids[7:], "get")  # reading one entry is
    refs.record(ws, ids, "boot")
    counted = refs.counts(ws)
    assert counted == {ids[0]: 1, ids[1]: 1, ids[2]: 1, ids[7]: 1}
    assert len(refs.events(ws)) == 8 * 4 - 7  # everything is logged, for the record


def test_boot_can_never_promote_on_its_own(ws, monkeypatch):
    at(monkeypatch, START)
    entry = ws.remember("Seojun reviews pull requests every morning", layer="M90").entry.id
    for n in range(1, 30):
        at(monkeypatch, START + dt.timedelta(days=n))
        for _ in range(5):
            boot.build(ws)
    at(monkeypatch, START + dt.timedelta(days=29), "23:00")
    assert distill(ws).promoted == []
    assert ws.memory().find(entry).layer == "M90"


# -- 2. a superseding entry keeps the layer of what it replaces -------------------------------
def test_supersede_keeps_the_layer_and_boot_still_knows_35_days_later(ws, cli, monkeypatch):
    at(monkeypatch, START)
    old = cli("remember", "Seojun lives in Busan", "--layer", "M0", "--json", "-w", "zeon")
    old_id = json.loads(old.output)["entry"]["id"]
    new = json.loads(cli("remember", "Seojun moved to Seoul", "--json", "-w", "zeon").output)
    assert new["action"] == "superseded"
    assert new["entry"]["layer"] == "M0"
    assert new["entry"]["expires"] is None
    assert f"kept layer M0 of {old_id}" in " ".join(new["notes"])
    for n in (1, 20, 35):
        at(monkeypatch, START + dt.timedelta(days=n), "23:00")
        distill(ws)
    at(monkeypatch, START + dt.timedelta(days=35), "23:30")
    text = boot.build(ws).text
    assert "Seojun moved to Seoul" in text
    assert "Busan" not in text


def test_supersede_takes_the_higher_layer_but_an_explicit_layer_wins(ws, monkeypatch):
    at(monkeypatch, START)
    ws.remember("Seojun prefers tea in the afternoon", layer="M365")
    kept = ws.remember("Seojun now prefers coffee in the afternoon")
    assert kept.action == "superseded"
    assert kept.entry.layer == "M365"
    assert kept.entry.expires == START + dt.timedelta(days=365)
    told = ws.remember("Seojun now prefers water in the afternoon", layer="M30")
    assert told.action == "superseded"
    assert told.entry.layer == "M30"
    assert not any("kept layer" in n for n in told.notes)
    higher = ws.remember("Seojun now prefers juice in the afternoon", layer="M90")
    assert higher.entry.layer == "M90"  # an M30 target does not pull an explicit M90 down


# -- 3. giok's own diary lines ----------------------------------------------------------------
def _nights_with_reports(ws, monkeypatch, nights=5):
    for n in range(nights):
        day = START + dt.timedelta(days=n)
        at(monkeypatch, day, "09:00")
        ws.diary(f"Reviewed the design notes for chapter {n}")
        at(monkeypatch, day, "23:00")
        distill(ws)
    at(monkeypatch, START + dt.timedelta(days=nights - 1), "23:30")


def test_distill_reports_do_not_answer_questions(ws, fake, monkeypatch):
    _nights_with_reports(ws, monkeypatch)
    assert ws.read_text(ws.diary_path()).count("nightly-distill:") == 1
    question = "what did we note about items judged, kept and dropped?"  # a personal cue: recall searches
    got = ws.recall(question)
    assert got.decision == "search"
    assert got.answer == "no memory", [r.text for r in got.results]
    assert ws.search("items judged kept dropped promoted expired") == []
    wanted = ws.search("items judged kept dropped promoted expired", include_system=True)
    assert wanted
    assert all("nightly-distill:" in r.text for r in wanted)
    assert all(r.layer == "system" for r in wanted)
    assert ws.recall("what did I review in the design notes?").answer == "found"


def test_flush_markers_and_crossview_notes_are_system_lines(ws, fake, monkeypatch):
    from giok.lifecycle import watchdog
    from giok.lifecycle.crossview import Bus

    at(monkeypatch, START)
    watchdog.flush(ws, "user: We decided to ship the parser on Monday\nassistant: noted", session="s1")
    Workspace = type(ws)
    Workspace.init(ws.root.parent / "sion", name="sion", user="Seojun", home=ws.home)
    Bus(ws.home).send("sion의 아침 체크인: 커피 원두 주문 완료", "sion", to=["zeon"])
    diary = ws.read_text(ws.diary_path())
    assert "context-flush:" in diary
    assert "sion의 아침 체크인" in diary
    assert ws.search("context flush session") == []
    assert ws.search("아침 체크인 커피 원두 주문") == []
    assert ws.search("아침 체크인 커피 원두 주문", include_system=True)
    assert ws.search("ship the parser on Monday")  # what the flush kept is still memory
    at(monkeypatch, START, "23:00")
    report = distill(ws)
    judged = [a["text"] for a in report.added] + [d["text"] for d in report.dropped]
    assert not any("context-flush" in t or "체크인" in t for t in judged), judged


def test_a_user_line_that_merely_starts_like_a_giok_word_is_judged(ws, monkeypatch):
    at(monkeypatch, START)
    ws.diary("Decided: routine maintenance of the build server happens on Sundays")
    ws.diary("routine checks of the backups moved to Sunday night, decided by Seojun")
    at(monkeypatch, START, "23:00")
    report = distill(ws)
    assert report.judged == 2


def test_cli_search_include_system(ws, fake, monkeypatch):
    _nights_with_reports(ws, monkeypatch, nights=2)
    env = {"GIOK_NOW": f"{(START + dt.timedelta(days=1)).isoformat()}T23:30"}
    plain = run_giok("search", "items judged kept dropped", "--json", "-w", "zeon", env=env)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["results"] == []
    wide = run_giok(
        "search", "items judged kept dropped", "--include-system", "--json", "-w", "zeon", env=env
    )
    assert wide.returncode == 0, wide.stderr
    assert json.loads(wide.stdout)["results"]


# -- 4. the date of the event -----------------------------------------------------------------
def test_remember_takes_the_date_of_the_event(ws, cli, monkeypatch):
    at(monkeypatch, START + dt.timedelta(days=10))
    out = json.loads(
        cli(
            "remember", "Seojun ran the Busan half marathon", "--date", "2026-03-02", "--json", "-w", "zeon"
        ).output
    )
    entry = out["entry"]
    assert entry["date"] == "2026-03-02"
    assert entry["expires"] == (START + dt.timedelta(days=40)).isoformat()  # counted from today
    line = next(l for l in ws.read_text("MEMORY.md").splitlines() if "marathon" in l)
    assert line.startswith("- [2026-03-02] Seojun ran")
    assert line.count("2026-03-02") == 1
    lib = ws.remember("Minsu visited the Jeju office", date="2026-02-27")
    assert lib.entry.date == dt.date(2026, 2, 27)


def test_remember_refuses_a_future_or_impossible_date(ws, monkeypatch):
    at(monkeypatch, START)
    before = ws.read_text("MEMORY.md")
    for bad, why in (("2026-03-02", "future"), ("2026-02-30", "no such day"), ("yesterday", "YYYY-MM-DD")):
        with pytest.raises(InvalidInput, match=why):
            ws.remember("Seojun ran the Busan half marathon", date=bad)
    assert ws.read_text("MEMORY.md") == before
    done = run_giok(
        "remember",
        "Seojun ran the Busan half marathon",
        "--date",
        "2026-03-09",
        "-w",
        "zeon",
        env={"GIOK_NOW": "2026-03-01T10:00"},
    )
    assert done.returncode != 0
    assert "future" in done.stderr


def test_mcp_remember_takes_the_event_date_and_keeps_the_layer(ws, monkeypatch):
    from giok.edges.mcp import TOOLS

    at(monkeypatch, START + dt.timedelta(days=3))
    remember = TOOLS["memory_remember"].handler
    assert "date" in TOOLS["memory_remember"].properties
    first = remember(ws, {"text": "Seojun lives in Busan", "layer": "M0", "date": "2026-03-01"})
    assert first["entry"]["date"] == "2026-03-01"
    assert first["entry"]["layer"] == "M0"
    moved = remember(ws, {"text": "Seojun moved to Seoul"})
    assert moved["action"] == "superseded"
    assert moved["entry"]["layer"] == "M0"


def test_lines_written_before_the_mark_are_recognised(ws, fake, monkeypatch):
    at(monkeypatch, START)
    old = (
        "nightly-distill: 2 day(s), 7 item(s) judged → 3 kept, 0 lesson(s), 4 dropped; promoted 0, expired 0"
    )
    ws.diary(old)  # as giok wrote it before the mark
    ws.diary("context-flush: soft, session s9 — 1 decision")
    ws.diary("Seojun judged the photo contest: 3 kept, 4 dropped")
    assert [r.text for r in ws.search("judged kept dropped")] == [
        "10:00 Seojun judged the photo contest: 3 kept, 4 dropped"
    ]
    at(monkeypatch, START, "23:00")
    assert distill(ws).judged == 1
    assert "[giok] nightly-distill: 1 day(s), 1 item(s) judged" in ws.read_text(ws.diary_path())


def test_a_memory_that_cites_another_by_id_is_a_reference(ws, monkeypatch):
    at(monkeypatch, START)
    target = ws.remember("The release checklist lives in drafts/release.md", layer="M30").entry.id
    ws.remember(f"Step 4 of the release checklist ({target}) now needs two reviewers")
    assert refs.counts(ws) == {target: 1}
