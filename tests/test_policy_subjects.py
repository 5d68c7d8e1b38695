"""Write-policy defects: a preference about another aspect, and a use in another place, are
new facts, not replacements."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "old,new",
    [
        ("I prefer short answers", "I prefer Korean from now on"),
        ("Seojun prefers bullet lists", "Seojun now prefers a formal tone"),
        ("짧은 답변을 선호한다", "이제 한국어 답변을 선호한다"),
        ("회사에서 맥북을 쓴다", "이제 집에서 윈도우를 쓴다"),
        ("회사에서 맥북을 쓴다", "요즘 집에서 윈도우를 쓴다"),
    ],
)
def test_another_aspect_or_place_is_a_new_fact(ws, old, new):
    ws.remember(old)
    assert ws.remember(new).action == "written"
    assert len([e for e in ws.memory().entries() if not e.superseded]) == 2


@pytest.mark.parametrize(
    "old,new",
    [
        ("Seojun prefers short answers", "Seojun now prefers long answers"),
        ("회사에서 맥북을 쓴다", "이제 회사에서 윈도우를 쓴다"),
        ("I prefer tea", "I now prefer coffee"),
    ],
)
def test_the_same_aspect_or_place_still_replaces(ws, old, new):
    ws.remember(old)
    assert ws.remember(new).action == "superseded"


def test_a_changed_preference_replaces_every_older_one_of_the_same_subject(ws):
    tea = ws.remember("Seojun prefers tea in the morning").entry
    green = ws.remember("Seojun likes green tea after lunch").entry
    coffee = ws.remember("Seojun now prefers coffee").entry
    live = [e.id for e in ws.memory().entries() if not e.superseded]
    assert live == [coffee.id]
    assert ws.memory().find(tea.id).fields["superseded_by"] == coffee.id
    assert ws.memory().find(green.id).fields["superseded_by"] == coffee.id


def test_a_change_leaves_other_subjects_alone(ws):
    minsu = ws.remember("Minsu prefers tea in the morning").entry
    ws.remember("Seojun likes green tea after lunch")
    ws.remember("Seojun now prefers coffee")
    assert not ws.memory().find(minsu.id).superseded
