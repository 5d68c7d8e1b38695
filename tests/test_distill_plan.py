"""The host agent as the night's judge: `distill --plan` lists what the night would judge and
writes nothing; `distill --apply` runs the same night with the agent's decisions, the offline
judge deciding what the answer left out or got wrong; a stale plan and a bad answer are refused
with one clear error."""

import json
import re

import pytest

from conftest import run_giok
from giok.errors import ConflictError, InvalidInput
from giok.lifecycle import distill as distill_mod
from giok.lifecycle import distill_plan
from giok.store import git, refs

DAY = "2026-03-05"


def at(monkeypatch, stamp):
    monkeypatch.setenv("GIOK_NOW", stamp)


@pytest.fixture
def night(ws, monkeypatch):
    """A day of diary lines and an M30 entry the references put near a promotion; now 23:00."""
    at(monkeypatch, "2026-03-01T09:00")
    used = ws.remember("The staging server runs on port 8443", layer="M30").entry.id
    for day in (2, 3, 4):
        at(monkeypatch, f"2026-03-0{day}T09:00")
        refs.record(ws, [used], "recall")
    at(monkeypatch, f"{DAY}T10:00")
    ws.diary("Decided to use SQLite WAL for the index")
    ws.diary("hi")
    ws.diary("Seojun's daughter Haneul was born today")
    ws.diary("Lesson: write the decision down before the session ends")
    at(monkeypatch, f"{DAY}T23:00")
    ws.used = used
    return ws


def keys(plan: dict) -> dict[str, dict]:
    return {i["text"]: i for i in plan["items"]}


def commits(ws):
    return [c["message"].splitlines()[0] for c in git.log(ws.root, ["."], 50)]


def test_plan_lists_the_nights_items_and_writes_nothing(night):
    before = (night.root / "MEMORY.md").read_bytes(), commits(night)
    plan = distill_mod.plan(night)
    assert ((night.root / "MEMORY.md").read_bytes(), commits(night)) == before
    assert not (night.root / "memory" / "distilled.txt").exists()
    assert plan["plan"].startswith(f"{DAY}.")
    assert plan["date"] == DAY
    assert plan["workspace"] == "zeon"
    items = keys(plan)
    assert set(items) == {
        "Decided to use SQLite WAL for the index",
        "hi",
        "Seojun's daughter Haneul was born today",
        "Lesson: write the decision down before the session ends",
        "The staging server runs on port 8443",
    }
    diary = items["Decided to use SQLite WAL for the index"]
    assert re.fullmatch(rf"diary:{DAY}#0@[0-9a-f]{{6}}", diary["key"])  # its place, then its text
    assert diary["kind"] == "diary"
    assert diary["day"] == DAY
    assert diary["choices"] == ["drop", "M30", "M90", "M365", "M0", "lesson"]
    assert diary["suggestion"] == {
        "decision": "M90",
        "reason": "a decision: keep it for 90 days",
        "replaces": None,
    }
    # the one entry there is: it shares no word with the line, but the search finds it at some score
    assert [e["text"] for e in diary["may_replace"]] == ["The staging server runs on port 8443"]
    assert items["hi"]["suggestion"]["decision"] == "drop"
    entry = items["The staging server runs on port 8443"]
    assert entry["key"] == f"entry:{night.used}"
    assert entry["kind"] == "entry"
    assert entry["layer"] == "M30"
    assert entry["choices"] == ["keep", "M90", "M365", "M0"]
    assert entry["evidence"]["refs_14d"] == 3
    assert entry["evidence"]["ref_days_30"] == 3
    assert entry["suggestion"]["decision"] == "M90"
    assert '"decisions"' in plan["instructions"]
    assert "M365" in plan["layers"]
    jsonschema = pytest.importorskip("jsonschema")
    answer = _answer(plan, AGENT_SAYS)
    answer["decisions"][items["hi"]["key"]] = "drop"  # a bare decision
    jsonschema.validate(answer, plan["answer_schema"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"plan": plan["plan"], "decisions": {"x": "M7"}}, plan["answer_schema"])
    assert distill_mod.plan(night)["plan"] == plan["plan"]  # the same state, the same id


def _answer(plan: dict, chosen: dict[str, str]) -> dict:
    by_text = keys(plan)
    return {
        "plan": plan["plan"],
        "decisions": {by_text[t]["key"]: {"decision": d, "reason": f"agent: {d}"} for t, d in chosen.items()},
    }


AGENT_SAYS = {
    "Decided to use SQLite WAL for the index": "M365",
    "hi": "drop",
    "Seojun's daughter Haneul was born today": "M0",
    "Lesson: write the decision down before the session ends": "lesson",
    "The staging server runs on port 8443": "M365",
}


def _layers(ws) -> dict[str, str]:
    return {e.text: e.layer for e in ws.memory().entries()}


def test_plan_then_apply_through_the_cli_gives_what_the_agent_decided(night, cli):
    out = cli("-w", "zeon", "distill", "--plan")
    assert out.exit_code == 0, out.output
    plan = json.loads(out.output)
    answer = _answer(plan, AGENT_SAYS)
    assert {i["suggestion"]["decision"] for i in plan["items"]} != set(AGENT_SAYS.values())
    done = cli("-w", "zeon", "distill", "--apply", "-", "--json", input=json.dumps(answer))
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["judges"] == ["agent"]
    assert report["fallback"] == []
    assert report["commit"]
    assert _layers(night) == {
        "Decided to use SQLite WAL for the index": "M365",
        "Seojun's daughter Haneul was born today": "M0",
        "The staging server runs on port 8443": "M365",
    }
    assert "write the decision down" in night.read_text("compound/lessons.md")
    assert all(a["judge"] == "agent" and a["reason"].startswith("agent: ") for a in report["added"])
    assert report["promoted"][0]["judge"] == "agent"
    assert commits(night)[0] == f"nightly-distill: {DAY}"
    assert night.memory().find(night.used).expires.isoformat() == "2027-03-05"  # restarted for M365


def test_plan_then_apply_in_real_processes(night, tmp_path):
    env = {"GIOK_NOW": f"{DAY}T23:00"}
    planned = run_giok("-w", night.root, "distill", "--plan", env=env)
    assert planned.returncode == 0, planned.stderr
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(_answer(json.loads(planned.stdout), AGENT_SAYS)))
    applied = run_giok("-w", night.root, "distill", "--apply", answer, env=env)
    assert applied.returncode == 0, applied.stderr
    assert "nightly-distill: 1 day(s), 4 item(s) judged" in applied.stdout
    assert _layers(night)["Seojun's daughter Haneul was born today"] == "M0"
    again = run_giok("-w", night.root, "distill", "--apply", answer, env=env)
    assert again.returncode == 5
    assert again.stderr.count("\n") == 1
    assert again.stderr.startswith("Error: plan 2026-03-05.") and "is stale" in again.stderr


def test_a_stale_plan_is_refused_and_nothing_is_written(night, cli):
    plan = distill_mod.plan(night)
    night.remember("Seojun moved the standup to 10:00", layer="M30")
    before = (night.root / "MEMORY.md").read_bytes(), commits(night)
    with pytest.raises(ConflictError, match=r"plan 2026-03-05\.\w+ is stale: MEMORY.md"):
        distill_mod.apply(night, _answer(plan, AGENT_SAYS))
    out = cli("-w", "zeon", "distill", "--apply", "-", input=json.dumps(_answer(plan, AGENT_SAYS)))
    assert out.exit_code == 5
    assert out.output.count("Error:") == 1 and "make a new plan" in out.output
    assert ((night.root / "MEMORY.md").read_bytes(), commits(night)) == before


def test_a_partial_answer_falls_back_to_the_offline_judge_for_the_rest(night):
    plan = distill_mod.plan(night)
    by_text = keys(plan)
    answer = _answer(plan, {"Seojun's daughter Haneul was born today": "M365"})
    answer["decisions"][by_text["hi"]["key"]] = "M7"  # not a choice: the offline judge decides
    answer["decisions"][by_text["The staging server runs on port 8443"]["key"]] = {"decision": "M30"}
    answer["decisions"]["diary:2026-03-05#99"] = "M90"  # not an item of the night
    lesson = by_text["Lesson: write the decision down before the session ends"]["key"]
    answer["decisions"][lesson] = {"reason": "forgot the decision"}
    report = distill_mod.apply(night, json.dumps(answer))
    fallback = {f["text"]: f for f in report.fallback}
    assert set(fallback) == set(AGENT_SAYS) - {"Seojun's daughter Haneul was born today"}
    assert fallback["Decided to use SQLite WAL for the index"]["why"] == "left out"
    assert fallback["Lesson: write the decision down before the session ends"]["why"] == (
        "invalid: no decision given"
    )
    assert fallback["hi"]["why"].startswith("invalid: 'M7' is not one of drop, M30")
    assert fallback["The staging server runs on port 8443"]["why"].startswith("invalid: 'M30'")  # a demotion
    assert _layers(night) == {
        "Decided to use SQLite WAL for the index": "M90",  # the offline judge's choices
        "Seojun's daughter Haneul was born today": "M365",  # the agent's
        "The staging server runs on port 8443": "M90",
    }
    assert any("the agent decided 1 item(s)" in n for n in report.notes)
    assert any("offline judge decided 4 item(s)" in n for n in report.notes)
    assert any("diary:2026-03-05#99" in n and "not in tonight's plan" in n for n in report.notes)


def test_a_diary_line_written_after_the_plan_is_judged_offline_not_refused(night, monkeypatch):
    plan = distill_mod.plan(night)
    at(monkeypatch, f"{DAY}T23:10")
    night.diary("Seojun prefers short answers in the morning")
    report = distill_mod.apply(night, _answer(plan, AGENT_SAYS))
    assert [f["text"] for f in report.fallback] == ["Seojun prefers short answers in the morning"]
    assert _layers(night)["Seojun prefers short answers in the morning"] == "M90"
    assert _layers(night)["Seojun's daughter Haneul was born today"] == "M0"


def test_an_answer_never_lands_on_another_line_when_the_diary_was_edited(night):
    plan = distill_mod.plan(night)
    diary = night.root / night.diary_path()
    text = diary.read_text()
    diary.write_text(text.replace("- 10:00 hi\n", "- 10:00 hi\n- 10:00 Seojun sold the old car\n"))
    report = distill_mod.apply(night, _answer(plan, AGENT_SAYS))
    fallback = {f["text"]: f["why"] for f in report.fallback}
    changed = "the diary changed at this place since the plan"
    assert fallback == {
        "Seojun sold the old car": changed,  # where the plan had the daughter's line
        "Seojun's daughter Haneul was born today": changed,  # where it had the lesson
        "Lesson: write the decision down before the session ends": "left out",  # a place it never saw
    }
    layers = _layers(night)
    assert layers["Decided to use SQLite WAL for the index"] == "M365"  # before the edit: the agent's
    assert layers["Seojun's daughter Haneul was born today"] == "M30"  # the offline judge's, not M0
    assert "Seojun sold the old car" in layers


def test_a_dry_run_apply_writes_nothing(night):
    plan = distill_mod.plan(night)
    before = (night.root / "MEMORY.md").read_bytes(), commits(night)
    report = distill_mod.apply(night, _answer(plan, AGENT_SAYS), dry_run=True)
    assert report.dry_run and report.commit is None
    assert [a["layer"] for a in report.added] == ["M365", "M0"]
    assert ((night.root / "MEMORY.md").read_bytes(), commits(night)) == before


@pytest.mark.parametrize(
    "answer,message",
    [
        (
            "{not json",
            "the answer is not valid JSON: Expecting property name enclosed in double quotes at line 1",
        ),
        ("[1, 2]", "the answer must be a JSON object"),
        ('{"decisions": {}}', "the answer has no plan id"),
        ('{"plan": "tomorrow", "decisions": {}}', "'tomorrow' is not a plan id"),
        ('{"plan": "PLAN", "decisions": 3}', "the answer has no `decisions` object"),
        (b"\xff\xfe{", "the answer is not UTF-8 text"),
    ],
)
def test_a_bad_answer_is_one_clear_error(night, cli, answer, message):
    pid = distill_mod.plan(night)["plan"]
    raw = answer.replace("PLAN", pid) if isinstance(answer, str) else answer
    with pytest.raises(InvalidInput) as caught:
        distill_mod.apply(night, raw)
    assert str(caught.value).startswith(message)
    out = cli("-w", "zeon", "distill", "--apply", "-", input=raw)
    assert out.exit_code == 2
    assert out.output == f"Error: {caught.value}\n"
    assert not (night.root / "memory" / "distilled.txt").exists()


def test_plan_and_apply_are_two_steps(night, cli, tmp_path):
    answer = tmp_path / "a.json"
    answer.write_text("{}")
    out = cli("-w", "zeon", "distill", "--plan", "--apply", answer)
    assert out.exit_code == 2
    assert "two steps" in out.output
    assert cli("-w", "zeon", "distill", "--apply", tmp_path / "missing.json").exit_code == 2
    future = cli("-w", "zeon", "distill", "--plan", "--date", "2026-03-06")
    assert future.exit_code == 2
    assert "in the future" in future.output


def test_nothing_to_judge_gives_an_empty_plan_that_still_runs_the_night(ws, monkeypatch):
    at(monkeypatch, "2026-03-01T09:00")
    ws.remember("Old note that will expire soon", layer="M30", expires="2026-03-02")
    at(monkeypatch, "2026-03-05T23:00")
    plan = distill_mod.plan(ws)
    assert plan["items"] == []
    report = distill_mod.apply(ws, {"plan": plan["plan"], "decisions": {}})
    assert [e["text"] for e in report.expired] == ["Old note that will expire soon"]
    assert report.fallback == []


def test_the_plan_id_covers_memory_and_the_ledger():
    day = distill_mod.today()
    base = distill_plan.plan_id(day, b"memory", b"ledger")
    assert base != distill_plan.plan_id(day, b"memory!", b"ledger")
    assert base != distill_plan.plan_id(day, b"memory", b"ledger!")
    assert base != distill_plan.plan_id(day, b"memoryl", b"edger")  # parts are length-prefixed
    assert distill_plan.day_of(base) == day


@pytest.fixture
def moves(ws, monkeypatch):
    """Kept facts, and a day whose diary changes one in words the write policy reads as no change
    (cycling since she sold her car, against commuting by car) and one it reads as a change that
    the agent knows is not (she is in Seoul for the summer: the rules read "moved")."""
    at(monkeypatch, "2026-03-01T09:00")
    ws.busan = ws.remember("Mina lives in Busan", layer="M365").entry.id
    ws.car = ws.remember("Mina commutes by car", layer="M90").entry.id
    ws.cat = ws.remember("Mina's cat is called Nabi", layer="M365").entry.id
    at(monkeypatch, f"{DAY}T10:00")
    ws.diary("Mina has been cycling to work ever since she sold her car")
    ws.diary("Mina moved to Seoul last week")
    at(monkeypatch, f"{DAY}T23:00")
    return ws


def _state(ws) -> dict[str, tuple[str, str | None]]:
    return {e.text: (e.layer, e.fields.get("superseded_by")) for e in ws.memory().entries()}


CYCLING = "Mina has been cycling to work ever since she sold her car"
SUMMER = "Mina moved to Seoul last week"


def test_the_plan_shows_what_a_line_may_replace_and_the_agents_word_on_it_is_applied(moves):
    plan = distill_mod.plan(moves)
    items = keys(plan)
    cycling, summer = items[CYCLING], items[SUMMER]
    assert {"id": moves.car, "layer": "M90", "text": "Mina commutes by car"} == cycling["may_replace"][0]
    assert cycling["suggestion"]["replaces"] is None  # the write policy sees no change here
    assert moves.busan in [e["id"] for e in summer["may_replace"]]  # shares "Mina"
    assert summer["suggestion"]["replaces"] == moves.busan  # and a change here ("moved")
    assert '"replaces"' in plan["instructions"]
    answer = {
        "plan": plan["plan"],
        "decisions": {
            cycling["key"]: {"decision": "M90", "reason": "a new commute", "replaces": moves.car},
            summer["key"]: {"decision": "M90", "reason": "only there until August", "replaces": None},
        },
    }
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(answer, plan["answer_schema"])
    report = distill_mod.apply(moves, json.dumps(answer))
    assert report.fallback == []
    state = _state(moves)
    new = next(e.id for e in moves.memory().entries() if e.text == CYCLING)
    assert state["Mina commutes by car"] == ("M90", new)  # replaced, as the agent said
    assert state["Mina lives in Busan"] == ("M365", None)  # kept, as the agent said
    assert state["Mina's cat is called Nabi"] == ("M365", None)
    assert state[SUMMER] == ("M90", None)
    assert [(s["id"], s["by"]) for s in report.superseded] == [(moves.car, new)]
    assert "said by the agent: a new commute" in report.superseded[0]["why"]


def test_an_answer_that_names_no_live_entry_leaves_the_change_to_the_write_policy(moves):
    plan = distill_mod.plan(moves)
    items = keys(plan)
    answer = {
        "plan": plan["plan"],
        "decisions": {
            items[CYCLING]["key"]: {"decision": "M90", "replaces": 42},
            items[SUMMER]["key"]: {"decision": "M90", "replaces": "m-00000000"},
        },
    }
    report = distill_mod.apply(moves, answer)
    assert report.fallback == []  # the decisions themselves stand
    state = _state(moves)
    assert state[CYCLING] == ("M90", None)
    assert state["Mina commutes by car"][1] is None  # the write policy saw no change
    assert state["Mina lives in Busan"][1] is not None  # it saw one here
    assert any("replaces 42 is no entry id" in n for n in report.notes)
    assert any("'m-00000000' is no live entry of MEMORY.md" in n for n in report.notes)


def test_a_fact_of_the_day_replaces_nothing_whatever_the_answer_says(moves):
    plan = distill_mod.plan(moves)
    cycling = keys(plan)[CYCLING]
    answer = {"plan": plan["plan"], "decisions": {cycling["key"]: {"decision": "M30", "replaces": moves.car}}}
    report = distill_mod.apply(moves, answer)
    assert moves.car not in {s["id"] for s in report.superseded}
    state = _state(moves)
    assert state[CYCLING] == ("M30", None)
    assert state["Mina commutes by car"] == ("M90", None)  # not promoted into a year by a day's fact
