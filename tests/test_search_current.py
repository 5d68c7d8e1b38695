"""Two live memories of one slot written months apart (`search._by_date`): a question about the
value now finds the newer first, a question about the value before the older, even when the write
policy did not link them (everyday phrasing, no change word)."""

from __future__ import annotations

import pytest

from conftest import unlinked_store
from giok import Workspace

OLD = "Priya lives in a flat in Leeds."
NEW = "Priya's new place is a house in York."
OTHER = [
    ("2026-02-01", "Priya is allergic to shellfish."),
    ("2026-03-14", "Seojun's daughter Eun-ji was born on 3 March 2024."),
    ("2026-04-02", "The staging server runs on port 8443."),
]


@pytest.fixture
def moved(tmp_path, giok_home, monkeypatch) -> Workspace:
    return unlinked_store(
        tmp_path / "cv",
        giok_home,
        monkeypatch,
        [("2026-01-10", OLD), ("2026-05-02", NEW), *OTHER],
        "2026-06-25",
    )


def test_the_value_now_is_the_newer_memory_of_the_slot(moved):
    found = moved.search("Where does Priya live?")
    assert found[0].text == NEW
    assert OLD in [r.text for r in found]  # the older one is still there, below


def test_the_value_before_is_the_older_memory_of_the_slot(moved):
    assert moved.search("Where did Priya live before?")[0].text == OLD


def test_a_memory_of_another_slot_keeps_its_place(moved):
    assert moved.search("What is Priya allergic to?")[0].text == OTHER[0][1]
