"""Adopted files (issue 10): a MEMORY.md and daily notes written the way OpenClaw or a person
writes them (plain `- ` bullets, topic headings, no layer headings, no HH:MM). show, check,
boot, search and distill read one parse and give one answer."""

from __future__ import annotations

import pytest

from conftest import run_giok
from giok.lifecycle.distill import LEDGER, Ledger, distill
from giok.retrieval.chunks import chunk_file
from giok.store import git, refs

# As OpenClaw's MEMORY.md template reads once an agent has filled it in.
OPENCLAW_MEMORY = """# MEMORY.md — Long-Term Memory

## Key Facts
<!-- Who are you working with? What matters? -->
- Minji — product lead, prefers dark mode in every tool
- Deploys go out on Thursdays after the standup

## Preferences
<!-- How does your human like things done? -->
- Short answers first, details on request
"""
PLAIN_MEMORY = "- Minji prefers dark mode.\n- The deploy goes out on Fridays.\n"

# A daily note as an OpenClaw agent appends it: topic headings, bullets, no times.
OPENCLAW_DAY = """# 2026-03-04

## Morning standup
- Decided to move the release train to Thursdays
- Minji said she prefers short replies in reviews

## Search index
- Reviewed the tokenizer PR for the search index
  - Korean particles are still split badly
- Lesson: always rebuild the index after changing the tokenizer

Talked to Jisoo about the onboarding doc; she will send a draft on Friday.
"""


def _adopt(ws, text: str) -> None:
    (ws.root / "MEMORY.md").write_text(text)
    git.commit(ws.root, ["MEMORY.md"], "adopt MEMORY.md")


@pytest.mark.parametrize("text", [OPENCLAW_MEMORY, PLAIN_MEMORY])
def test_show_check_boot_and_search_agree_on_an_adopted_memory_file(ws, giok_home, text):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    _adopt(ws, text)
    bullets = [l[2:] for l in text.splitlines() if l.startswith("- ")]
    shown = ws.show()
    assert [e["text"] for e in shown["layers"]["M30"]["entries"]] == bullets
    assert shown["problems"] == 0
    out = run_giok("-w", ws.root, "show").stdout
    assert f"M30: {len(bullets)}" in out
    assert "unreadable" not in out
    problems = [p for p in ws.check() if p["path"] == "MEMORY.md"]
    assert problems
    assert all(p["severity"] == "info" and "M30" in p["message"] for p in problems)
    boot = run_giok("-w", ws.root, "boot").stdout
    assert all(b in boot for b in bullets)
    hits = ws.search("dark mode", k=3)
    assert hits
    assert hits[0].text == bullets[0]
    assert hits[0].layer == "M30"


def test_distill_treats_adopted_bullets_as_m30(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    _adopt(ws, PLAIN_MEMORY)
    hot = ws.memory().entries()[0].id
    for day in ("2026-03-02", "2026-03-06", "2026-03-10"):
        monkeypatch.setenv("GIOK_NOW", f"{day}T10:00")
        refs.record(ws, [hot], "search")
    monkeypatch.setenv("GIOK_NOW", "2026-03-10T23:00")
    report = distill(ws)
    assert [(p["id"], p["from"], p["to"]) for p in report.promoted] == [(hot, "M30", "M90")]
    shown = ws.show()["layers"]
    assert [e["id"] for e in shown["M90"]["entries"]] == [hot]
    assert [e["text"] for e in shown["M30"]["entries"]] == ["The deploy goes out on Fridays."]


def test_openclaw_daily_notes_are_distilled(ws, monkeypatch):
    (ws.root / "memory" / "2026-03-04.md").write_text(OPENCLAW_DAY)
    git.commit(ws.root, ["memory/2026-03-04.md"], "adopt daily note")
    monkeypatch.setenv("GIOK_NOW", "2026-03-04T23:00")
    report = distill(ws)
    assert report.days == [{"day": "2026-03-04", "items": 5}]
    assert report.judged == 5
    judged = (
        {d["text"] for d in report.dropped}
        | {a["text"] for a in report.added}
        | {l["text"] for l in report.lessons}
    )
    assert "Decided to move the release train to Thursdays" in judged
    assert any("always rebuild the index" in t for t in judged)
    assert "Decided to move the release train to Thursdays" in [e.text for e in ws.memory().entries()]
    assert Ledger.parse(ws.read_text(LEDGER)).days["2026-03-04"] == 6  # and the report line
    again = distill(ws)
    assert again.judged == 0
    assert not again.days


def test_search_chunks_and_distill_read_the_same_items(ws, monkeypatch):
    chunks = chunk_file("memory/2026-03-04.md", OPENCLAW_DAY)
    (ws.root / "memory" / "2026-03-04.md").write_text(OPENCLAW_DAY)
    monkeypatch.setenv("GIOK_NOW", "2026-03-04T23:00")
    report = distill(ws, dry_run=True)
    assert report.judged == len(chunks) == 5
    sub = next(c for c in chunks if "tokenizer PR" in c.text)
    assert "Korean particles" in sub.text
    assert (sub.start_line, sub.end_line) == (8, 9)
    assert "Search index" in sub.embed_text  # the topic heading is context for the embedding


def test_timed_giok_diary_lines_are_still_read_as_before(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    ws.diary("Decided to use SQLite WAL for the index")
    (ws.root / "memory" / "2026-03-05.md").open("a").write("- plain bullet written by hand about the WAL\n")
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T23:00")
    report = distill(ws)
    assert report.judged == 2
    assert Ledger.parse(ws.read_text(LEDGER)).days["2026-03-05"] == 3  # the report line counts too
