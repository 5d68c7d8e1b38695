"""The SQLite index: chunking by file structure, incremental sync, deletion, purge, model
identity, corrupt and deleted index files. Uses the deterministic fake embedder."""

import os
import sqlite3
from pathlib import Path

import pytest

from giok.errors import IndexError_
from giok.retrieval import index
from giok.retrieval.chunks import MAX_CHARS, chunk_file


@pytest.fixture
def fake(giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))


def rows(
    ws,
    sql="SELECT path, start_line, end_line, layer, source, scope, superseded, text FROM memories ORDER BY id",
):
    db = sqlite3.connect(ws.data_dir / index.FILENAME)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


MEMORY = """# MEMORY.md

## 🔮 M0 : core memory (permanent)
- I am Zeon. <!-- id: m-aaaaaa -->
## 📝 M30 : 30-day memory
- [2026-03-01] Prefers tea <!-- expires: 2026-04-01; id: m-bbbbbb; scope: user:minji; superseded_by: m-cccccc -->
"""  # noqa: E501 - a MEMORY.md line is one line; the test reads it as written


def test_chunks_follow_each_files_structure():
    mem = chunk_file("MEMORY.md", MEMORY)
    assert [(c.source, c.layer, c.start_line, c.scope, c.superseded) for c in mem] == [
        ("m-aaaaaa", "M0", 4, "workspace", False),
        ("m-bbbbbb", "M30", 6, "user:minji", True),
    ]
    diary = chunk_file(
        "memory/2026-03-02.md",
        "# 2026-03-02\n\n- 09:00 first\n- 10:00 second\n  continued\n\npara one\npara two\n",
    )
    assert [(c.start_line, c.end_line, c.date, c.layer) for c in diary] == [
        (3, 3, "2026-03-02", "diary"),
        (4, 5, "2026-03-02", "diary"),
        (7, 8, "2026-03-02", "diary"),
    ]
    assert diary[1].text == "10:00 second\ncontinued"
    lessons = chunk_file("compound/lessons.md", "# lessons\n\n## [2026-03-01] Check locks\n- always\n")
    assert [(c.layer, c.date, c.start_line, c.end_line) for c in lessons] == [("lesson", "2026-03-01", 3, 4)]
    dec = chunk_file(
        "state/decisions.md",
        "# log\n\n## D-001 [2026-01-01] Use A\n- why: x\n\n## D-002 [2026-02-01] Use B\n- why: y\n- "
        "supersedes: D-001\n",
    )
    assert [(c.source, c.superseded) for c in dec] == [("D-001", True), ("D-002", False)]
    arch = chunk_file("memory/archive/2025.md", "- [2025-01-01] old thing <!-- id: m-dddddd -->\n")
    assert arch[0].layer == "archive"
    assert arch[0].source == "m-dddddd"
    other = chunk_file("drafts/plan.md", "# Plan\n\n## Goals\nship it\n\n## Empty\n")
    assert [c.text for c in other] == ["Goals\nship it"]


def test_over_long_text_is_split():
    body = "\n".join(f"line {i} " + "x" * 90 for i in range(40))
    parts = chunk_file("notes.md", "## Big\n" + body)
    assert len(parts) > 1
    assert all(len(p.text) <= MAX_CHARS for p in parts)
    assert parts[0].start_line == 1
    assert parts[-1].end_line <= 41
    huge = chunk_file("memory/2026-01-01.md", "- " + "y" * (3 * MAX_CHARS))
    assert len(huge) == 3
    assert all(len(p.text) <= MAX_CHARS for p in huge)


def test_sync_indexes_the_workspace_and_skips_derived_folders(ws, fake):
    ws.remember("제온은 서준의 첫 에이전트", layer="M0")
    (ws.root / ".giok" / "junk.md").write_text("- secret derived\n")
    (ws.root / "drafts").mkdir(exist_ok=True)
    (ws.root / "drafts" / "essay.md").write_text("## Draft\nmemory essay\n")
    stats = index.sync(ws)
    assert stats["changed"] >= 5
    assert stats["embedded"] > 0
    paths = {r[0] for r in rows(ws)}
    assert {"MEMORY.md", "drafts/essay.md", "SOUL.md"} <= paths
    assert not any(p.startswith((".giok", ".git")) for p in paths)
    again = index.sync(ws)
    assert again["changed"] == 0
    assert again["embedded"] == 0


def test_only_new_chunks_are_embedded_and_removed_ones_leave(ws, fake):
    ws.diary("first line")
    index.sync(ws)
    ws.diary("second line")
    stats = index.sync(ws)
    assert stats["changed"] == 1
    assert stats["embedded"] == 1
    rel = ws.diary_path()
    (ws.root / rel).unlink()
    stats = index.sync(ws)
    assert stats["removed"] == 1
    assert not [r for r in rows(ws) if r[0] == rel]
    left = rows(ws, "SELECT count(*) FROM embedding_cache WHERE hash NOT IN (SELECT hash FROM memories)")
    assert left == [(0,)]


def test_purge_leaves_no_byte_of_the_text(ws, fake):
    secret = "the vault code is 7261-ZEBRA-secretword"
    r = ws.remember(secret, layer="M90")
    ws.remember("harmless entry", layer="M90")
    index.sync(ws)
    # the entry leaves the file first (as forget does), then the index is purged
    text = (ws.root / "MEMORY.md").read_text()
    (ws.root / "MEMORY.md").write_text("\n".join(l for l in text.split("\n") if secret not in l))
    assert index.purge(ws, [secret], [r.entry.id]) == 1
    db = ws.data_dir / index.FILENAME
    blob = b"".join(Path(str(db) + s).read_bytes() for s in ("", "-wal") if os.path.exists(str(db) + s))
    for needle in ("7261", "zebra", "ZEBRA", "secretword"):
        assert needle.encode() not in blob
    index.sync(ws)
    assert not [r for r in rows(ws) if secret in r[-1]]
    assert [r for r in rows(ws) if "harmless" in r[-1]]


def test_purge_by_id_and_on_a_missing_index(ws, fake):
    assert index.purge(ws, ["anything"]) == 0
    r = ws.remember("remove me by id", layer="M30")
    index.sync(ws)
    assert index.purge(ws, [], [r.entry.id]) == 1


def test_another_model_is_refused_until_rebuild(ws, fake, giok_home):
    index.sync(ws)
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 16}))
    with pytest.raises(IndexError_, match="giok index --rebuild"):
        index.sync(ws)
    assert "error" in index.status(ws)
    stats = index.rebuild(ws)
    assert stats["embedded"] > 0
    assert index.status(ws)["model"] == "fake:16"
    assert rows(ws, "SELECT DISTINCT model FROM embedding_cache") == [("fake:16",)]


def test_corrupt_index_is_rebuilt_and_says_so(ws, fake):
    index.sync(ws)
    db = ws.data_dir / index.FILENAME
    index.Index._open.clear()
    for s in ("-wal", "-shm"):
        if os.path.exists(str(db) + s):
            os.unlink(str(db) + s)
    db.write_bytes(b"this is not a database" * 100)
    ix = index.Index.for_workspace(ws)
    assert any("unreadable" in n for n in ix.notes)
    assert ix.sync()["changed"] > 0


def test_deleted_index_is_recreated(ws, fake):
    index.sync(ws)
    db = ws.data_dir / index.FILENAME
    for s in ("", "-wal", "-shm"):
        if os.path.exists(str(db) + s):
            os.unlink(str(db) + s)
    assert index.sync(ws)["changed"] > 0
    assert rows(ws, "SELECT count(*) FROM memories")[0][0] > 0


def test_binary_md_file_is_skipped(ws, fake):
    (ws.root / "blob.md").write_bytes(b"\x00\x01\x02 binary")
    index.sync(ws)
    assert not [r for r in rows(ws) if r[0] == "blob.md"]
