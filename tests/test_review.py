"""The review queue (giok.lifecycle.review, state/review.md) over real workspaces, real git and
simulated nights ($GIOK_NOW): readings are no contradictions, a contradiction is raised once and
stays until resolved, and resolving does what it says."""

from __future__ import annotations

import json

import pytest

from giok.errors import InvalidInput, NotFound
from giok.lifecycle import review
from giok.lifecycle.distill import distill
from giok.store import git
from giok.store.layout import REVIEW
from giok.store.reviewfile import ReviewFile
from giok.write import judgement

DEPLOY = ("We deploy on Fridays", "We do not deploy on Fridays")


@pytest.fixture(autouse=True)
def rules(monkeypatch):
    """The lexical evidence alone (the learned pair head, where it ships, is put in by the tests
    that need an answer from it)."""
    monkeypatch.setenv("GIOK_JUDGEMENT", "rules")


def at(monkeypatch, stamp: str) -> None:
    monkeypatch.setenv("GIOK_NOW", stamp)


def queue(ws) -> ReviewFile:
    path = ws.root / REVIEW
    return ReviewFile.parse(path.read_text("utf-8") if path.exists() else "")


def contradiction(ws, monkeypatch) -> tuple[str, str]:
    """Two live entries that contradict each other, written on March 1st (the write policy keeps
    both: a negation with no word of a change), and that night's distill."""
    at(monkeypatch, "2026-03-01T09:00")
    old = ws.remember(DEPLOY[0]).entry.id
    at(monkeypatch, "2026-03-01T10:00")
    new = ws.remember(DEPLOY[1]).entry.id
    at(monkeypatch, "2026-03-01T23:00")
    distill(ws)
    return old, new


# -- what is a contradiction ------------------------------------------------------------------
@pytest.mark.parametrize(
    "old,new",
    [
        ("Phone battery is at 37%", "Phone battery is at 30%"),
        ("Walked 8,200 steps today", "Walked 10,400 steps today"),
        ("몸무게는 72.5kg이다", "몸무게는 71.8kg이다"),
        ("The office is at 23C", "The office is at 21.5C"),
        ("Resting heart rate is 62 bpm", "Resting heart rate is 58 bpm"),
        ("Standup is at 10:00 every weekday", "Standup is at 09:30 every weekday"),
    ],
)
def test_a_number_that_changes_by_nature_is_a_reading(old, new):
    assert judgement.volatile(new, old)
    assert review.classify(old, new) == ("reading", review._WHY["reading"])


@pytest.mark.parametrize(
    "old,new",
    [
        ("PR #123 merged", "PR #124 merged"),  # two events, not two readings
        ("Released v1 of the CLI", "Released v2 of the CLI"),
        ("Harbor log 4: reviewed the tide tables", "Harbor log 6: reviewed the tide tables"),  # labels
        ("Battery at 37%", "Battery is now at 30%"),  # more than a number differs
        ("Seojun has 2 dogs", "Seojun has 3 cats"),
        ("Standing fact number 3 about the parser", "Standing fact number 12 about the parser"),  # names
        ("Room 301 is booked for Monday", "Room 302 is booked for Monday"),
        ("We deploy on Fridays", "We do not deploy on Fridays"),
    ],
)
def test_not_a_reading(old, new):
    assert not judgement.volatile(new, old)


def test_lines_that_differ_only_in_a_label_raise_nothing():
    assert review.classify("Sync notes for the crawler (#12-3)", "Sync notes for the crawler (#40-5)") is None
    assert (
        review.classify("Harbor log 4: reviewed the tide tables", "Harbor log 6: reviewed the tide tables")
        is None
    )
    # a date is no label: a new date of one slot is for the rules (alone, they only raise it)
    assert (
        review.classify("The passport expiry date is 2026-07-14", "The passport expiry date is 2036-05-20")[0]
        == "unsure-change"
    )


def test_the_opposite_claim_is_a_contradiction_in_both_languages():
    assert review.classify(*DEPLOY)[0] == "contradiction"
    assert review.classify("배포는 금요일에 한다", "배포는 금요일에 하지 않는다")[0] == "contradiction"
    assert review.classify("Seojun likes tea", "Seojun drinks tea at 4pm") is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("지우는 주말에는 절대 일하지 않는다", "지우는 주말에도 일한다"),
        ("지우는 회를 전혀 먹지 않는다", "지우는 회를 먹는다"),
        ("Jiwoo never works on weekends", "Jiwoo works on weekends"),
    ],
)
def test_never_in_either_language_only_strengthens_the_negation(older, newer):
    # "절대" / "전혀" say "never", as "never" does in English: not a word of the claim
    assert review.classify(older, newer)[0] == "contradiction"


def test_the_judgement_decides_a_change_it_can_answer(monkeypatch):
    pair = ("Seojun lives in Busan", "Seojun moved to Seoul")
    assert review.classify(*pair)[0] == "unsure-change"  # the rules alone never replace at night
    for verdict, kind in (("unsure", "unsure-change"), ("change", "change"), ("none", None)):
        monkeypatch.setattr(judgement, "change_score", lambda n, o, v=verdict: judgement.Change(0.5, v))
        found = review.classify(*pair)
        assert (found[0] if found else None) == kind, verdict
        assert review.classify("Seojun likes tea", "Seojun drinks tea at 4pm") is None  # no rule: nothing


@pytest.mark.parametrize(
    "old,new,kind",
    [
        ("하윤은 매일 아침 녹차를 마신다", "하윤이 차를 테슬라로 바꿨다", None),  # tea, not the car
        ("Seojun is allergic to peanuts", "Seojun switched to a standing desk", None),
        ("Seojun uses a sitting desk", "Seojun switched to a standing desk", "change"),
        ("Seojun lives in Busan", "Seojun moved to Seoul", "change"),
    ],
)
def test_a_change_at_night_needs_the_same_slot(monkeypatch, old, new, kind):
    """The rules and the pair head both read a change into any pair of one person with a change
    word; the shipped model's slot likeness keeps the night from retiring another attribute."""
    monkeypatch.delenv("GIOK_JUDGEMENT")
    assert judgement.available()
    found = review.classify(old, new)
    assert (found[0] if found else None) == kind


def test_a_change_that_names_its_old_value_at_night_replaces_only_an_entry_holding_it(monkeypatch):
    # as remember reads it (policy._slot): however near in meaning, the tea is not the car 아반떼
    monkeypatch.setattr(judgement, "change_score", lambda n, o: judgement.Change(0.9, "change"))
    monkeypatch.setattr(judgement, "slot_likeness", lambda n, olds: [0.9] * len(olds))
    new = "지우가 차를 아반떼에서 테슬라로 바꿨다"
    assert review.classify("지우는 요즘 보리차를 마신다", new) is None
    assert review.classify("지우의 차는 흰색 아반떼다", new)[0] == "change"


# -- nights ------------------------------------------------------------------------------------
def test_a_battery_reading_every_night_raises_nothing_over_ten_nights(ws, monkeypatch):
    for night in range(1, 11):
        at(monkeypatch, f"2026-03-{night:02d}T20:00")
        ws.diary(f"Phone battery is at {40 - night}% after the evening run")
        at(monkeypatch, f"2026-03-{night:02d}T23:00")
        report = distill(ws)
        assert not report.flagged, report.flagged
        assert report.review["raised"] == []
    assert not (ws.root / REVIEW).exists()
    live = [e for e in ws.memory().entries() if "battery" in e.text and not e.superseded]
    assert [e.text for e in live] == ["Phone battery is at 30% after the evening run"]
    chain = [e for e in ws.memory().entries() if "battery" in e.text and e.superseded]
    assert len(chain) == 9  # the older readings: superseded, kept for history


def test_a_real_contradiction_is_raised_once_across_five_nights(ws, monkeypatch, cli):
    old, new = contradiction(ws, monkeypatch)
    (item,) = queue(ws).items
    assert (item.id, item.kind, item.status, item.ids) == ("R-001", "contradiction", "open", [old, new])
    assert [e.text for e in item.entries] == list(DEPLOY)
    for night in range(2, 6):
        at(monkeypatch, f"2026-03-{night:02d}T20:00")
        ws.diary(f"Reviewed the release checklist, round {night}")
        at(monkeypatch, f"2026-03-{night:02d}T23:00")
        report = distill(ws)
        assert report.changed
        assert not [f for f in report.flagged if f["kind"] == "contradiction"]
        assert report.review["open"] == 1
        assert "review: 0 new, 1 open" in report.summary()
    assert len(queue(ws).items) == 1
    listed = json.loads(cli("-w", ws.root, "review", "--json").output)
    assert listed["open"] == 1
    assert [(i["id"], [e["id"] for e in i["entries"]]) for i in listed["items"]] == [("R-001", [old, new])]
    text = cli("-w", ws.root, "review").output
    assert "R-001 contradiction (open)" in text
    assert DEPLOY[1] in text


def test_the_night_it_is_raised_the_report_flags_it(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    a = ws.remember(DEPLOY[0]).entry.id
    b = ws.remember(DEPLOY[1]).entry.id
    at(monkeypatch, "2026-03-01T23:00")
    report = distill(ws)
    (flag,) = report.flagged
    assert (flag["kind"], flag["ids"], flag["item"]) == ("contradiction", [a, b], "R-001")
    assert report.review["open"] == 1
    commit = git.log(ws.root, ["."], 1)[0]
    assert commit["message"].startswith("nightly-distill: 2026-03-01")
    assert REVIEW in commit["files"]


def test_resolve_newer_supersedes_the_older_and_stays_closed(ws, monkeypatch, cli):
    old, new = contradiction(ws, monkeypatch)
    at(monkeypatch, "2026-03-02T09:00")
    out = cli("-w", ws.root, "review", "resolve", "R-001", "--newer", "--json")
    assert out.exit_code == 0, out.output
    done = json.loads(out.output)
    assert done["item"]["status"] == "resolved"
    assert done["item"]["outcome"] == f"2026-03-02 newer: {new} supersedes {old}"
    mf = ws.memory()
    assert mf.find(old).fields["superseded_by"] == new
    assert mf.find(new).fields["supersedes"] == old
    assert git.log(ws.root, ["."], 1)[0]["message"].startswith("review: resolved R-001 newer")
    at(monkeypatch, "2026-03-02T23:00")
    ws.diary("Another day of work")
    assert not distill(ws).flagged
    assert queue(ws).get("R-001").status == "resolved"
    with pytest.raises(InvalidInput, match="already resolved"):
        review.resolve(ws, "R-001", "both")


def test_resolve_both_keeps_both_and_never_raises_the_pair_again(ws, monkeypatch):
    old, new = contradiction(ws, monkeypatch)
    done = review.resolve(ws, "r-001", "both", reason="two teams, two rules")
    assert done.item.status == "resolved"
    assert "both kept" in done.item.outcome
    assert "Reason: two teams, two rules" in git.log(ws.root, ["."], 1)[0]["message"]
    for night in range(2, 5):
        at(monkeypatch, f"2026-03-{night:02d}T20:00")
        ws.diary(f"Shipped small fix number {night}")
        at(monkeypatch, f"2026-03-{night:02d}T23:00")
        assert not distill(ws).flagged
    mf = ws.memory()
    assert not mf.find(old).superseded and not mf.find(new).superseded
    assert len(queue(ws).items) == 1
    assert review.listing(ws)["items"] == []
    assert review.listing(ws, everything=True)["items"][0]["status"] == "resolved"


def test_resolve_forget_forgets_the_entry_everywhere(ws, monkeypatch, cli):
    old, new = contradiction(ws, monkeypatch)
    out = cli("-w", ws.root, "review", "resolve", "R-001", "--forget", old, "--reason", "outdated rule")
    assert out.exit_code == 0, out.output
    assert "R-001 resolved" in out.output
    assert ws.memory().find(old) is None
    assert ws.memory().find(new) is not None
    text = (ws.root / REVIEW).read_text("utf-8")
    assert DEPLOY[0] + "\n" not in text  # its text left the queue with it
    assert f"forget: {old} forgotten" in text
    item = queue(ws).get("R-001")
    assert (item.status, item.ids) == ("resolved", [new])
    at(monkeypatch, "2026-03-02T23:00")
    ws.diary("A quiet day")
    assert not distill(ws).flagged
    assert queue(ws).get("R-001").status == "resolved"


def test_resolve_refuses_what_it_cannot_do(ws, monkeypatch, cli):
    contradiction(ws, monkeypatch)
    with pytest.raises(NotFound, match="no review item R-009"):
        review.resolve(ws, "R-009", "newer")
    with pytest.raises(InvalidInput, match="not an entry of R-001"):
        review.resolve(ws, "R-001", "forget", entry="m-abcdef")
    with pytest.raises(InvalidInput, match="invalid choice"):
        review.resolve(ws, "R-001", "later")
    out = cli("-w", ws.root, "review", "resolve", "R-001", "--newer", "--both")
    assert out.exit_code != 0
    assert queue(ws).get("R-001").status == "open"


def test_an_item_whose_entry_is_gone_closes_itself(ws, monkeypatch):
    old, new = contradiction(ws, monkeypatch)
    ws.forget(new, "said by mistake")
    assert review.listing(ws)["items"] == []  # shown closed at once
    at(monkeypatch, "2026-03-02T23:00")
    ws.diary("Another ordinary day at work")
    report = distill(ws)
    assert [i["id"] for i in report.review["closed"]] == ["R-001"]
    item = queue(ws).get("R-001")
    assert item.status == "closed"
    assert item.ids == [old]  # the forgotten entry's line left with it
    with pytest.raises(InvalidInput, match="already closed"):
        review.resolve(ws, "R-001", "both")


def test_an_unsure_change_is_raised_once(ws, monkeypatch):
    monkeypatch.setattr(judgement, "change_score", lambda n, o: judgement.Change(0.55, "unsure"))
    at(monkeypatch, "2026-03-01T09:00")
    old = ws.remember("Seojun lives in Busan").entry.id
    ws.diary("Seojun moved to Seoul")
    at(monkeypatch, "2026-03-01T23:00")
    report = distill(ws)
    live = [e for e in ws.memory().entries() if "Seojun" in e.text]
    (flag,) = [f for f in report.flagged if f["kind"] == "unsure-change"]
    assert old in flag["ids"]
    assert all(not e.superseded for e in live)
    at(monkeypatch, "2026-03-02T23:00")
    ws.diary("Nothing new about Seojun today, only code review")
    assert not distill(ws).flagged


def test_a_change_both_judgements_agree_on_supersedes_and_keeps_the_deeper_layer(ws, monkeypatch):
    monkeypatch.setattr(judgement, "change_score", lambda n, o: judgement.Change(0.9, "change"))
    at(monkeypatch, "2026-03-01T09:00")
    old = ws.remember("Seojun lives in Busan", layer="M0").entry.id
    ws.diary("Seojun moved to Seoul")
    at(monkeypatch, "2026-03-01T23:00")
    report = distill(ws)
    assert not report.flagged
    # the write policy finds the change as the line is kept (as remember would), so the review
    # pass has nothing left to settle
    ((done),) = report.superseded
    assert done["id"] == old and not report.review["superseded"]
    new = ws.memory().find(done["by"])
    assert new.text == "Seojun moved to Seoul"
    assert (new.layer, new.expires) == ("M0", None)  # the new value does not expire before the old
    assert ws.memory().find(old).fields["superseded_by"] == new.id


def test_the_queue_file_reads_back_the_same_and_keeps_hand_lines():
    text = (
        "# Review queue\n\nintro line\n\n"
        "## R-001 contradiction (open)\n- raised: 2026-03-05\n"
        "- entry: m-aaaaa1 [2026-03-01] We deploy on Fridays\n"
        "- entry: m-aaaaa2 [2026-03-04] We do not deploy on Fridays\n"
        "- why: opposite\n- note by hand: ask Seojun\n\n"
        "## R-002 unsure-change (resolved)\n- raised: 2026-03-05\n"
        "- entry: m-bbbbb1 Something\n- entry: m-bbbbb2 Other\n- why: unsure\n"
        "- resolved: 2026-03-06 both: both kept\n"
    )
    parsed = ReviewFile.parse(text)
    assert parsed.render().decode() == text
    assert parsed.next_id() == "R-003"
    assert parsed.has_pair("m-aaaaa2", "m-aaaaa1")
    assert [i.id for i in parsed.open()] == ["R-001"]


def test_resolving_an_item_whose_entry_is_gone_closes_it(ws, monkeypatch):
    old, new = contradiction(ws, monkeypatch)
    ws.forget(old, "wrong")
    with pytest.raises(NotFound, match="R-001 is closed"):
        review.resolve(ws, "R-001", "newer")
    assert queue(ws).get("R-001").status == "closed"
    assert ws.memory().find(new).fields.get("supersedes") is None


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("The launch is on Friday.", "The launch is on Monday.", "contradiction"),
        ("서준이 혈액형 A형", "서준이 혈액형 O형", "contradiction"),
        ("Seojun is Mina's older brother.", "Seojun is Mina's younger brother.", "contradiction"),
        ("사무실 3층이에요", "사무실 7층으로 옮겼어요", "change"),  # the newer says it changed
        ("Priya's phone battery was at 94%", "Priya's phone battery at 85%", "reading"),
        ("Priya's phone battery at 6%", "Priya's watch battery at 6%", None),  # two things
        (  # two events of a day in one frame
            "Priya asked when the parcel with printer ink would arrive",
            "Priya asked when the parcel with two novels would arrive",
            None,
        ),
    ],
)
def test_the_same_words_around_another_value_at_night(monkeypatch, old, new, kind):
    monkeypatch.delenv("GIOK_JUDGEMENT")  # the attribute head and the judgement decide
    found = review.classify(old, new)
    assert (found[0] if found else None) == kind, found
