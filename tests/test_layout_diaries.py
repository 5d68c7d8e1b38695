"""The one place that lists a workspace's diaries (giok.store.layout.Layout.diaries)."""

from pathlib import Path

from giok.store.layout import Layout


def test_diaries_are_the_dated_files_of_memory_oldest_first(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    (folder / "archive").mkdir(parents=True)
    for name in ("2026-03-02.md", "2026-01-15.md", "notes.md", "2026-1-5.md", "2026-02-01.txt"):
        (folder / name).write_text("# x\n", encoding="utf-8")
    (folder / "archive" / "2025-12-31.md").write_text("# old\n", encoding="utf-8")

    assert Layout(tmp_path).diaries() == [
        ("memory/2026-01-15.md", "2026-01-15"),
        ("memory/2026-03-02.md", "2026-03-02"),
    ]


def test_a_workspace_without_a_diary_folder_has_no_diaries(tmp_path: Path) -> None:
    assert Layout(tmp_path).diaries() == []
