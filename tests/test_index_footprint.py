"""The index's bytes on disk: a big sync leaves no WAL as large as the database beside it."""

from __future__ import annotations

from giok.retrieval import index as index_mod


def test_a_big_sync_leaves_no_big_wal(ws, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 384}))
    day = ws.root / "memory"
    day.mkdir(exist_ok=True)
    for f in range(30):
        lines = [f"# 2026-01-{f + 1:02d}", ""] + [
            f"- 10:{i % 60:02d} note {f} {i} about topic{i % 97}" for i in range(60)
        ]
        (day / f"2026-01-{f + 1:02d}.md").write_text("\n".join(lines) + "\n", "utf-8")
    stats = index_mod.sync(ws)
    assert stats["changed"] >= 30
    status = index_mod.status(ws)
    assert status["chunks"] >= 1800
    db = ws.data_dir / index_mod.FILENAME
    wal = db.with_name(db.name + "-wal")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    assert wal_bytes < db.stat().st_size / 10, (wal_bytes, db.stat().st_size)
    assert status["bytes"] / status["chunks"] < 3 * 384 * 4  # under 3x the raw float32 vector
