"""Two live MEMORY.md entries of one slot written months apart (`giok.lifecycle.slots`): boot
shows the newer as current and the older only as its history, even when the write policy did
not link them; entries of other slots keep their own lines; without an index boot is unchanged."""

from __future__ import annotations

import pytest

from conftest import unlinked_store
from giok import Workspace
from giok.lifecycle import boot
from giok.retrieval import index

OLD = "Priya drinks an oat flat white every morning."
NEW = "Priya has a matcha latte every morning these days."
OTHERS = [
    ("2026-02-01", "Priya is allergic to shellfish."),
    ("2026-03-14", "Priya works as a nurse at Leeds General."),  # the same person, another attribute
    ("2026-04-02", "The staging server runs on port 8443."),
]


@pytest.fixture
def changed(tmp_path, giok_home, monkeypatch) -> Workspace:
    return unlinked_store(
        tmp_path / "w",
        giok_home,
        monkeypatch,
        [("2026-01-10", OLD), ("2026-05-02", NEW), *OTHERS],
        "2026-06-25",
    )


def _line(text: str, entry: str) -> str:
    return next(line for line in text.splitlines() if entry in line)


def test_boot_shows_the_newer_value_of_a_slot_as_current(changed):
    index.sync(changed)
    text = boot.build(changed, record=False).text
    assert f"- [2026-01-10] {OLD}" not in text  # the older is no live line of its own any more
    assert OLD not in boot.without_history(text)
    line = _line(text, NEW)
    assert line.startswith("- [2026-05-02] ")
    assert f"(earlier, 2026-01-10: {OLD}" in line  # the older value, as history of the newer


def test_entries_of_other_slots_keep_their_own_lines(changed):
    index.sync(changed)
    text = boot.build(changed, record=False).text
    for day, other in OTHERS:
        line = _line(text, other)
        assert line.startswith(f"- [{day}] {other} (m-")  # its own line, shown as current
        assert "(earlier" not in line and line.count("(m-") == 1


def test_without_an_index_boot_lists_both_and_folds_once_the_index_has_the_vectors(changed):
    assert not (changed.data_dir / index.FILENAME).exists()
    before = boot.build(changed, record=False).text
    assert OLD in boot.without_history(before) and NEW in before  # nothing to compare: unchanged
    index.sync(changed)  # the index now holds the vectors: boot's kept lines are not reused
    after = boot.build(changed, record=False).text
    assert OLD not in boot.without_history(after)
