"""The seed's five failure tests (001 · 06 FAILURE TEST), with real workspaces, git and SQLite:
check first that memory does not remember wrongly."""

import json
import sqlite3
import subprocess

from giok.lifecycle import boot
from giok.store import trace
from giok.workspace import Workspace


def _search(ws, query, **opts):
    from giok.retrieval import search

    return search.search(ws, query, k=10, min_score=0.0, gap=None, **opts)


def test_1_one_users_memory_is_never_returned_to_another_user(ws, fake_embeddings):
    seojun = ws.remember("Seojun's bank is Kakao Bank", user="Seojun").entry
    mina = ws.remember("Mina's bank is Toss Bank", user="Mina").entry
    for_mina = boot.build(ws, user="Mina").text
    assert mina.id in for_mina
    assert seojun.id not in for_mina
    assert "Kakao" not in for_mina
    found = [r.text for r in _search(ws, "which bank", user="Mina")]
    assert any("Toss" in t for t in found)
    assert not any("Kakao" in t for t in found)
    group = boot.build(ws, context="group").text
    assert "Kakao" not in group
    assert "Toss" not in group
    by_default = [r.text for r in _search(ws, "which bank")]  # no user named: USER.md's (Seojun)
    assert any("Kakao" in t for t in by_default)
    assert not any("Toss" in t for t in by_default)


def test_2_after_a_preference_changes_the_old_value_is_never_injected_again(ws, fake_embeddings):
    old = ws.remember("Seojun prefers tea in the morning", user="Seojun", layer="M365").entry
    new = ws.remember("Seojun now prefers coffee in the morning", user="Seojun", layer="M30").entry
    assert ws.get(old.id).superseded
    for budget in (None, 700, 100_000):
        text = boot.build(ws, budget=budget).text
        assert "prefers tea" not in text
        assert old.id not in text
        assert new.id in text
    found = [r.text for r in _search(ws, "what does Seojun drink in the morning", user="Seojun")]
    assert found
    assert not any("prefers tea" in t for t in found)


def test_3_constraints_and_pending_state_survive_a_flush(ws, giok_home):
    ws.state_set("next-step", "Resume the v2 migration at step 4")
    ws.state_set("failure-modes", "Never run the migration twice")
    tid = ws.task_add("Finish the v2 migration")
    ws.task_move(tid, "doing")
    before = boot.build(ws).text
    # a context flush / compaction: the conversation is gone; a new session opens the workspace afresh
    from giok.lifecycle.watchdog import flush

    flush(ws, "We talked about the migration; step 3 is done.")
    fresh = Workspace.open("zeon", home=giok_home)
    after = boot.build(fresh, budget=700).text
    for needle in (
        "Resume the v2 migration at step 4",
        "Never run the migration twice",
        f"{tid} [doing] Finish the v2 migration",
        "Write decisions, discoveries and failures",
    ):
        assert needle in before
        assert needle in after


def test_4_after_a_delete_the_entry_is_gone_from_file_index_vectors_and_cache(ws, fake_embeddings):
    from giok.retrieval import index

    secret = "Seojun's old address is 12 Hanok-gil Jongno"
    entry = ws.remember(secret, layer="M90").entry
    ws.diary(f"Noted: {secret}")
    keep = ws.remember("The office is in Pangyo").entry
    index.sync(ws)
    assert any("Hanok" in r.text for r in _search(ws, "old address Hanok"))
    boot.build(ws)
    result = ws.forget(entry.id, reason="user asked to delete the address")
    assert result.action == "removed"
    assert "Hanok" not in (ws.root / "MEMORY.md").read_text()
    assert keep.id in ws.memory().ids()
    assert not any("Hanok" in p.read_text() for p in (ws.root / "memory").glob("*.md"))
    assert not any("Hanok" in r.text for r in _search(ws, "old address Hanok"))
    db = ws.data_dir / "index.sqlite"
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM memories WHERE text LIKE '%Hanok%'").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM memories").fetchone()[0] > 0
    con.close()
    for path in ws.data_dir.rglob("*"):
        if path.is_file():
            assert b"Hanok" not in path.read_bytes(), path
            assert entry.id.encode() not in path.read_bytes(), path
    message = subprocess.run(
        ["git", "-C", str(ws.root), "log", "-1", "--format=%B"], capture_output=True, text=True
    ).stdout
    assert "user asked to delete the address" in message
    assert "Hanok" not in message


def test_5_a_wrongly_stored_fact_is_traced_to_its_source_and_write_decision(ws, cli):
    wrong = ws.remember("Seojun is allergic to peanuts", source="telegram:msg-8812", via="mcp").entry
    out = json.loads(cli("-w", "zeon", "trace", wrong.id, "--json").output)
    created = next(e for e in out["events"] if e.get("created"))
    assert created["source"] == "telegram:msg-8812"
    assert created["via"] == "mcp"
    assert created["decision"] == "written"
    assert created["reason"] == "worth keeping"
    assert created["type"] == "fact"
    assert created["scope"] == "workspace"
    ws.forget(wrong.id, reason="it was wrong: the allergy is to shellfish")
    events = trace.lookup(ws, wrong.id)["events"]
    assert any(e["message"].startswith(f"memory: forget {wrong.id}") for e in events if e["kind"] == "commit")
