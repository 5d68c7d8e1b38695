"""Time travel over 62 simulated days ($GIOK_NOW): show/boot/search --at read the files as git
held them then, `giok diff` names what was added, superseded, promoted, expired and
forgotten, and a forget with --rewrite-history leaves no past state holding the entry."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import run_giok
from giok import Home, Workspace
from giok.lifecycle.distill import distill
from giok.retrieval import index
from giok.store import history, refs

START = dt.date(2026, 3, 1)
DAYS = 62


def day(n: int) -> dt.date:
    return START + dt.timedelta(days=n)


def iso(n: int) -> str:
    return day(n).isoformat()


@dataclass
class Timeline:
    home: Path
    root: Path
    ids: dict[str, str]  # role → entry id
    gitconfig: Path


def _at(mp: pytest.MonkeyPatch, n: int, time: str = "10:00") -> None:
    mp.setenv("GIOK_NOW", f"{iso(n)}T{time}")


@pytest.fixture(scope="module")
def timeline(tmp_path_factory) -> Timeline:
    """One workspace lived through 62 days: remembered, superseded, promoted by use and a
    nightly distill, expired, forgotten; a diary line every other day."""
    base = tmp_path_factory.mktemp("timeline")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIOK_HOME", str(base / "home"))
        mp.setenv("GIT_CONFIG_GLOBAL", str(base / "gitconfig"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        mp.delenv("GIOK_WORKSPACE", raising=False)
        home = Home(base / "home")
        home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 1024}))
        _at(mp, 0, "09:00")
        ws, _ = Workspace.init(base / "zeon", name="zeon", user="Seojun", home=home)
        ids: dict[str, str] = {}

        def remember(role: str, text: str, **kw) -> None:
            kw.setdefault("layer", "M30")  # the timeline counts on the 30-day expiry
            result = ws.remember(text, **kw)
            assert result.entry is not None, result
            ids[role] = result.entry.id

        for n in range(DAYS):
            _at(mp, n)
            if n == 0:
                remember("tea", "Seojun prefers tea", user="Seojun")
                remember("harbor", "The harbor demo is planned for the second week of March")
                remember("locker", "The locker code is 4417 for the gym", layer="M90")
            elif n == 3:
                remember("staging", "The staging server lives at stage.example.org")
            elif n in (4, 6, 8):
                assert ws.search("staging server")[0].source == ids["staging"]
            elif n == 10:
                remember("coffee", "Seojun now prefers coffee", user="Seojun")
            elif n == 12:
                remember("wedding", "Minsu's wedding is on April 18 in Busan")
            elif n == 20:
                ws.forget(ids["wedding"], reason="Minsu asked to keep it private")
            elif n == 40:
                remember("nabi", "Project Nabi launches in June", layer="M90")
            if n % 2 == 0:
                _at(mp, n, "18:00")
                ws.diary(f"Harbor log {n}: reviewed the tide tables")
            if n in (8, 31, 45, 59):
                _at(mp, n, "23:00")
                distill(ws)
    return Timeline(base / "home", ws.root, ids, base / "gitconfig")


@pytest.fixture
def lived(timeline, monkeypatch) -> Workspace:
    """The timeline's workspace, opened on its home, the clock at the start of day 62."""
    monkeypatch.setenv("GIOK_HOME", str(timeline.home))
    _at(monkeypatch, DAYS, "08:00")
    return Workspace.open("zeon", home=Home(timeline.home))


def ids_at(ws: Workspace, n: int) -> dict[str, str]:
    return {e.id: e.layer or "" for e in history.memory_at(ws, day(n)).entries()}


# -- show --at --------------------------------------------------------------------------------
def test_each_day_shows_what_memory_held_at_its_end(timeline, lived, cli):
    t = timeline.ids
    held = [ids_at(lived, n) for n in range(DAYS)]
    assert [n for n in range(DAYS) if t["wedding"] in held[n]] == list(range(12, 20))
    assert [n for n in range(DAYS) if t["staging"] in held[n]] == list(range(3, DAYS))
    assert {held[n][t["staging"]] for n in range(3, 8)} == {"M30"}
    assert {held[n][t["staging"]] for n in range(8, DAYS)} == {"M90"}  # promoted the night of day 8
    assert [n for n in range(DAYS) if t["harbor"] in held[n]] == list(range(31))  # archived night 31

    day11 = json.loads(cli("-w", "zeon", "show", "--at", iso(11), "--json").stdout)
    entries = {e["id"]: e for info in day11["layers"].values() for e in info["entries"]}
    assert entries[t["tea"]]["superseded_by"] == t["coffee"]
    assert day11["today"] == iso(11) and day11["at"]["commit"] == history.commit_at(lived, day(11))
    assert t["nabi"] not in entries and t["wedding"] not in entries
    day29 = json.loads(cli("-w", "zeon", "show", "--at", iso(29), "--json").stdout)
    assert t["harbor"] in {e["id"] for e in day29["expiring_soon"]}  # then's "this week"
    text = cli("-w", "zeon", "show", "--at", iso(15)).output
    assert text.startswith(f"as of {iso(15)} 23:59:59") and "Minsu's wedding" in text
    assert "Minsu's wedding" not in cli("-w", "zeon", "show", "--at", iso(25)).output
    assert "Minsu's wedding" not in cli("-w", "zeon", "show").output


def test_a_moment_within_a_day_reads_the_state_then(timeline, lived, cli):
    morning = json.loads(cli("-w", "zeon", "show", "--at", f"{iso(10)}T09:00", "--json").stdout)
    ids = {e["id"] for info in morning["layers"].values() for e in info["entries"]}
    assert timeline.ids["tea"] in ids and timeline.ids["coffee"] not in ids
    assert history.commit_at(lived, dt.datetime(2026, 2, 28, 23, 0)) is None


# -- boot --at --------------------------------------------------------------------------------
def test_boot_at_a_day_is_that_days_boot_and_records_nothing(timeline, lived, cli):
    before = refs.counts(lived)
    live_log = sorted(p.name for p in lived.data_dir.iterdir())
    data = json.loads(cli("-w", "zeon", "boot", "--at", iso(14), "--json").stdout)
    text = data["text"]
    assert "Harbor log 14:" in text and "Harbor log 12:" not in text  # today's and yesterday's diary
    assert "Harbor log 16:" not in text  # two days later
    assert "Minsu's wedding is on April 18" in text and "Project Nabi" not in text
    assert data["at"]["commit"] == history.commit_at(lived, day(14))
    later = run_giok("-w", "zeon", "boot", "--at", iso(41), env={"GIOK_HOME": str(timeline.home)})
    assert later.returncode == 0, later.stderr
    assert "Project Nabi launches in June" in later.stdout and "Minsu's wedding" not in later.stdout
    assert "harbor demo" not in later.stdout
    assert refs.counts(lived) == before  # nothing counted as a reference, live or past
    assert sorted(p.name for p in lived.data_dir.iterdir()) == sorted({*live_log, "history"})


# -- search --at ------------------------------------------------------------------------------
def test_search_at_uses_an_index_of_the_files_then_cached_by_commit(timeline, lived, cli):
    query = "Minsu wedding Busan"
    hit = json.loads(cli("-w", "zeon", "search", "--at", iso(15), query, "--json").stdout)
    assert [r["source"] for r in hit["results"]][:1] == [timeline.ids["wedding"]]
    commit = history.commit_at(lived, day(15))
    snap = lived.data_dir / "history" / commit
    db = snap / ".giok" / index.FILENAME
    assert db.is_file()
    first = db.stat()
    again = json.loads(cli("-w", "zeon", "search", "--at", iso(15), query, "--json").stdout)
    assert again["results"] == hit["results"] and db.stat().st_ino == first.st_ino  # served from the cache
    gone = json.loads(cli("-w", "zeon", "search", "--at", iso(25), query, "--json").stdout)
    assert timeline.ids["wedding"] not in [r["source"] for r in gone["results"]]
    now = json.loads(cli("-w", "zeon", "search", query, "--json").stdout)
    assert timeline.ids["wedding"] not in [r["source"] for r in now["results"]]


def test_search_at_leaves_the_live_index_alone(timeline, lived, cli):
    live_db = lived.data_dir / index.FILENAME
    stamp = (live_db.stat().st_mtime_ns, live_db.stat().st_size)
    out = cli("-w", "zeon", "search", "--at", iso(5), "staging server", "--json")
    assert json.loads(out.output)["results"][0]["source"] == timeline.ids["staging"]
    assert (live_db.stat().st_mtime_ns, live_db.stat().st_size) == stamp


def test_a_first_search_at_a_new_date_embeds_only_what_the_live_index_lacks(
    timeline, lived, cli, monkeypatch
):
    """A past state's new index starts from the live index's vectors: its first search embeds
    the texts that left the live tree since (archived, forgotten, edited), not the whole tree."""
    from giok.providers import embeddings

    embedded: list[str] = []
    real = embeddings.Fake.embed_batch

    def counting(self, texts, kind):
        if kind == "passage":
            embedded.extend(texts)
        return real(self, texts, kind)

    index.sync(lived)  # the live index, as any earlier search leaves it
    monkeypatch.setattr(embeddings.Fake, "embed_batch", counting)
    point = history.point_at(lived, iso(33))
    assert not (lived.data_dir / "history" / point.commit).exists()  # a date no test searched yet
    out = json.loads(cli("-w", "zeon", "search", "--at", iso(33), "staging server", "--json").stdout)
    assert out["results"][0]["source"] == timeline.ids["staging"]
    db = lived.data_dir / "history" / point.commit / ".giok" / index.FILENAME
    with closing(sqlite3.connect(db)) as con:
        chunks = con.execute("SELECT count(*) FROM memories").fetchone()[0]
    assert chunks > 20
    assert len(embedded) <= chunks // 4, f"{len(embedded)} of {chunks} chunks embedded again"


# -- diff -------------------------------------------------------------------------------------
def _ids(rows: list[dict]) -> list[str]:
    return [r["id"] for r in rows]


def test_diff_over_the_two_months(timeline, lived, cli):
    t = timeline.ids
    d = json.loads(cli("-w", "zeon", "diff", iso(0), iso(DAYS - 1), "--json").stdout)
    assert {t["staging"], t["coffee"], t["nabi"]} <= set(_ids(d["added"]))
    assert t["wedding"] not in _ids(d["added"])  # added and forgotten in between: only forgotten
    assert [(r["id"], r["superseded_by"]) for r in d["superseded"]] == [(t["tea"], t["coffee"])]
    promoted = {r["id"]: (r["from"], r["to"]) for r in d["promoted"]}
    assert promoted[t["staging"]] == ("M30", "M90")
    expired = {r["id"]: r for r in d["expired"]}
    assert expired[t["harbor"]]["archived"] is True and expired[t["tea"]]["archived"] is True
    assert t["locker"] not in expired
    assert [(r["id"], r["reason"]) for r in d["forgotten"]] == [
        (t["wedding"], "Minsu asked to keep it private")
    ]
    assert "Minsu's wedding" not in json.dumps(d)  # a forgotten entry is named, never quoted
    assert d["removed"] == [] and d["demoted"] == []


def test_diff_between_two_close_days_names_only_what_changed(timeline, lived, cli):
    t = timeline.ids
    d = json.loads(cli("-w", "zeon", "diff", iso(9), iso(11), "--json").stdout)
    assert _ids(d["added"]) == [t["coffee"]] and d["added"][0]["supersedes"] == t["tea"]
    assert _ids(d["superseded"]) == [t["tea"]]
    assert sum(d["counts"].values()) == 2
    text = cli("-w", "zeon", "diff", iso(19), iso(21)).output
    assert f"forgotten: 1\n  {t['wedding']} (M30)  reason: Minsu asked to keep it private" in text
    assert "Minsu's wedding" not in text
    quiet = cli("-w", "zeon", "diff", iso(21), iso(22)).output
    assert "no memory changed" in quiet


def test_dates_outside_the_history_are_one_clear_error(timeline, lived):
    env = {"GIOK_HOME": str(timeline.home)}
    early = run_giok("-w", "zeon", "show", "--at", "2026-02-27", env=env)
    assert early.returncode == 4
    assert early.stderr.strip() == (
        f"Error: workspace zeon has no history before {iso(0)} 09:00:00 (its first commit); "
        "2026-02-27 is earlier"
    )
    future = run_giok("-w", "zeon", "search", "--at", iso(DAYS + 5), "tea", env=env)
    assert future.returncode == 2 and "is in the future" in future.stderr
    backwards = run_giok("-w", "zeon", "diff", iso(20), iso(10), env=env)
    assert backwards.returncode == 2 and "give the earlier date first" in backwards.stderr
    bad = run_giok("-w", "zeon", "boot", "--at", "2026-13-01", env=env)
    assert bad.returncode == 2 and "no such day" in bad.stderr


# -- forget --rewrite-history -----------------------------------------------------------------
def test_rewrite_history_removes_the_entry_from_every_past_state(timeline, tmp_path, monkeypatch, cli):
    root = tmp_path / "copy"
    shutil.copytree(timeline.root, root, symlinks=True)
    monkeypatch.setenv("GIOK_HOME", str(timeline.home))
    _at(monkeypatch, DAYS, "08:00")
    ws = Workspace(root, home=Home(timeline.home))
    locker = timeline.ids["locker"]
    query = "locker code 4417 gym"

    def search_at(n: int) -> list[str]:
        out = cli("-w", str(root), "search", "--at", iso(n), query, "--json").stdout
        return [r["source"] for r in json.loads(out)["results"]]

    assert search_at(15)[:1] == [locker]
    old_commit = history.commit_at(ws, day(15))
    old_snapshot = ws.data_dir / "history" / old_commit
    kept = tmp_path / "kept-snapshot"
    shutil.copytree(old_snapshot, kept)

    out = cli("-w", str(root), "forget", locker, "--reason", "a code is not a memory", "--rewrite-history")
    assert out.exit_code == 0, out.output
    assert not old_snapshot.exists()
    shutil.copytree(kept, old_snapshot)  # a snapshot of a commit the rewrite replaced, left behind

    for n in range(DAYS + 1):
        assert locker not in ids_at(ws, n), n
        assert b"4417" not in (history.read_at(ws, "MEMORY.md", day(n)) or b""), n
    assert history.commit_at(ws, day(15)) != old_commit
    assert locker not in search_at(15)
    assert not old_snapshot.exists()  # the stale snapshot was deleted, not served
    assert "4417" not in cli("-w", str(root), "show", "--at", iso(15)).output
    assert "4417" not in cli("-w", str(root), "boot", "--at", iso(15)).output
    d = json.loads(cli("-w", str(root), "diff", iso(0), iso(DAYS), "--json").stdout)
    assert locker in _ids(d["forgotten"]) and "4417" not in json.dumps(d)


def test_an_entry_forgotten_by_match_is_listed_as_forgotten_without_its_text(
    tmp_path, giok_home, monkeypatch, cli
):
    _at(monkeypatch, 0)
    ws, _ = Workspace.init(tmp_path / "mina", name="mina", home=giok_home)
    keep = ws.remember("Mina plays the cello on Sundays").entry.id
    gone = ws.remember("Mina's bank PIN is 8812 for the shared card").entry.id
    _at(monkeypatch, 1)
    ws.forget(match="bank PIN is 8812", reason="a PIN is not a memory")
    _at(monkeypatch, 2)
    out = cli("-w", "mina", "diff", iso(0), iso(1), "--json")
    d = json.loads(out.stdout)
    assert [(r["id"], r["reason"]) for r in d["forgotten"]] == [(gone, "a PIN is not a memory")]
    assert d["removed"] == [] and "8812" not in out.stdout
    assert keep not in json.dumps(d["forgotten"])


def test_diff_lists_an_entry_edited_in_place_with_its_text_before(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    ws, _ = Workspace.init(tmp_path / "zeon", name="zeon", user="Seojun")
    eid = ws.remember("The demo is in room 4").entry.id
    monkeypatch.setenv("GIOK_NOW", "2026-03-03T10:00")
    ws.edit_entry(eid, "The demo moved to the main hall")
    d = json.loads(cli("-w", "zeon", "diff", "2026-03-02", "--json").stdout)
    assert [(r["id"], r["text"], r["before"]) for r in d["edited"]] == [
        (eid, "The demo moved to the main hall", "The demo is in room 4")
    ]
    assert sum(d["counts"].values()) == 1
    text = cli("-w", "zeon", "diff", "2026-03-02").output
    assert "edited: 1" in text and "(was: The demo is in room 4)" in text
