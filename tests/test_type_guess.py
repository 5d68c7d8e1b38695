"""One list of type keywords: remember (policy.classify) and distilled diary items
(judges.guess_type) give a text the same type."""

from __future__ import annotations

import pytest

from giok.write import judges, policy


@pytest.mark.parametrize(
    "text,kind",
    [
        ("Root cause of the outage was a stale cache", "lesson"),
        ("We should have pinned the API version", "lesson"),
        ("We will use Redis for the job queue", "decision"),
        ("서버 이전은 다음 달에 하기로 정했다", "decision"),
        ("The nightly build failed on the arm runner", "episode"),
        ("Seojun enjoys long walks by the river", "preference"),
        ("Waiting for the design review before merging", "workflow"),
        ("Launched the beta to the first ten customers", "episode"),
        ("The staging database is Postgres 16", "fact"),
    ],
)
def test_remember_and_distill_guess_the_same_type(text, kind):
    assert policy.classify(text) == kind
    assert judges.guess_type(text) == kind
