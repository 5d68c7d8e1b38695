"""One near-duplicate rule (giok.text.likeness) for `remember` and the nightly review."""

from __future__ import annotations

import pytest

from giok.lifecycle.distill import distill


def _same(a: str, b: str) -> bool:
    from giok.text import likeness

    return likeness.same(a, b)


@pytest.mark.parametrize(
    "a,b",
    [
        ("The deploy script runs on Mondays at noon", "The deploy script runs on Monday at noon"),
        ("Seojun prefers green tea in the morning", "Seojun prefers green tea in the morning."),
        ("서준은 주말마다 북한산에 등산을 간다", "서준은 주말마다 북한산으로 등산을 간다"),
    ],
)
def test_rewordings_are_near_duplicates(a, b):
    assert _same(a, b)


@pytest.mark.parametrize(
    "a,b",
    [
        ("Seojun likes spicy food very much", "Seojun does not like spicy food very much"),
        ("서준은 매운 음식을 아주 좋아한다", "서준은 매운 음식을 아주 좋아하지 않는다"),
        (
            "Minsu told Seojun about the billing release plan",
            "Seojun told Minsu about the billing release plan",
        ),
        ("서준이 민수에게 배포 일정을 알려줬다", "민수가 서준에게 배포 일정을 알려줬다"),
        ("The staging cluster has 3 worker nodes now", "The staging cluster has 4 worker nodes now"),
        ("Project alpha ships every friday morning", "Project gamma ships every friday morning"),
    ],
)
def test_opposites_other_subjects_and_other_values_are_not(a, b):
    assert not _same(a, b)


def test_features_are_computed_once_per_text():
    from giok.text import likeness

    assert likeness.features("Seojun likes tea a lot") is likeness.features("Seojun likes tea a lot")


def test_remember_keeps_a_sentence_about_another_person(ws):
    ws.remember("Minsu told Seojun about the billing release plan")
    second = ws.remember("Seojun told Minsu about the billing release plan")
    assert second.action == "written"
    assert len(ws.memory().entries()) == 2


def _hand_written(ws, *texts: str) -> None:
    line = "- [2026-03-01] {t} <!-- expires: 2026-05-30; id: m-ccccc{i} -->\n"
    lines = "".join(line.format(t=t, i=i) for i, t in enumerate(texts, 1))
    body = ws.read_text("MEMORY.md").replace(
        "## 📚 M90 : 90-day memory\n", "## 📚 M90 : 90-day memory\n" + lines
    )
    ws.edit("MEMORY.md", lambda old: (body, None), "hand edit")


def test_review_keeps_a_sentence_about_another_person(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    _hand_written(
        ws,
        "Minsu told Seojun about the billing release plan for the spring",
        "Seojun told Minsu about the billing release plan for the spring",
    )
    report = distill(ws)
    assert report.merged == []


def test_review_merges_what_remember_folds(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    _hand_written(ws, "The deploy script runs on Mondays at noon", "The deploy script runs on Monday at noon")
    report = distill(ws)
    assert [m["id"] for m in report.merged] == ["m-ccccc2"]
