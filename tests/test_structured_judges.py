"""LLM judges ask for structured output — OpenAI's `response_format` json_schema, Anthropic's
forced tool — and read it; a server that refuses it is asked again in plain text, whose parser
stays the fallback. The real HTTP client against the local stand-in server (tests/llm_server.py)."""

import json

import pytest

from giok.lifecycle import distill as distill_mod
from giok.providers import llm
from giok.store import git
from giok.write import judges
from giok.write.judges import Item, LLMJudge
from llm_server import FakeLLM


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    with FakeLLM(slow_seconds=1.0) as fake:
        yield fake


ITEMS = [
    Item("d1", "diary", "Decided to use SQLite for the index", day="2026-03-01"),
    Item("e1", "entry", "The staging server runs on port 8443", day="2026-02-01", layer="M90"),
]


def _decisions_schema(schema: dict) -> dict:
    assert schema["required"] == ["decisions"]
    assert schema["additionalProperties"] is False
    return schema["properties"]["decisions"]["items"]


def test_openai_judge_requests_a_json_schema_and_reads_the_answer(server):
    verdicts = LLMJudge(llm.client(server.spec("good-M365"))).decide(ITEMS, {})
    assert {k: v.decision for k, v in verdicts.items()} == {"d1": "M365", "e1": "M365"}
    body = server.requests[-1]["body"]
    form = body["response_format"]
    assert form["type"] == "json_schema"
    assert form["json_schema"]["name"] == "record_decisions"
    assert form["json_schema"]["strict"] is True
    row = _decisions_schema(form["json_schema"]["schema"])
    assert row["required"] == ["item", "decision", "reason", "replaces"]  # strict: every field, null allowed
    assert row["additionalProperties"] is False
    assert row["properties"]["item"]["type"] == "integer"
    assert row["properties"]["decision"]["enum"] == ["drop", "keep", "M30", "lesson", "M90", "M365", "M0"]


def test_anthropic_judge_forces_a_tool_and_reads_its_input(server):
    verdicts = LLMJudge(llm.client(server.spec("good-drop", provider="anthropic"))).decide(ITEMS, {})
    assert {k: v.decision for k, v in verdicts.items()} == {"d1": "drop", "e1": "keep"}
    body = server.requests[-1]["body"]
    (tool,) = body["tools"]
    assert tool["name"] == "record_decisions"
    assert body["tool_choice"] == {"type": "tool", "name": "record_decisions"}
    _decisions_schema(tool["input_schema"])


def test_llm_client_returns_a_tool_answer_as_json_text(server):
    schema = llm.Schema("answer", "the answer", {"type": "object", "properties": {}})
    text = llm.client(server.spec("summary", provider="anthropic")).complete("s", "p", schema=schema)
    assert text.startswith("{") and '"pending": ["Benchmark on arm64"]' in text


def test_a_server_without_structured_output_is_asked_in_text_once_refused(server):
    judge = LLMJudge(llm.client(server.spec("no-schema-good-M30")))
    verdicts = judge.decide(ITEMS[:1], {})
    assert verdicts["d1"].decision == "M30"
    first, second = server.bodies()[-2:]
    assert "response_format" in first
    assert "response_format" not in second  # the text parser read the fenced JSON
    judge.decide(ITEMS[:1], {})
    assert "response_format" not in server.bodies()[-1]  # the client stopped asking
    assert len(server.requests) == 3


def test_other_http_errors_are_not_retried_without_the_schema(server):
    with pytest.raises(judges.ProviderError, match="HTTP 500"):
        LLMJudge(llm.client(server.spec("error", retries=0))).decide(ITEMS, {})
    assert len(server.requests) == 1


def test_the_night_applies_the_models_recorded_answers(ws, server, monkeypatch):
    server.recorded.update(
        {
            "SQLite": "M365",
            "lunch": "drop",
            "born": "M0",
            "never deploy": "lesson",
        }
    )
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    for line in (
        "Decided to use SQLite for the index",
        "Had a sandwich with the team for lunch near the office",
        "Seojun's daughter Haneul was born today",
        "Learned to never deploy on Friday evenings",
    ):
        ws.diary(line)
    ws.home.update(
        lambda c: c.update(
            {
                "judges": {
                    "panel": [server.spec("recorded", name="gpt")],
                    "synthesizer": server.spec("recorded", provider="anthropic", name="opus"),
                }
            }
        )
    )
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T23:00")
    report = distill_mod.distill(ws)
    assert {e.text: e.layer for e in ws.memory().entries()} == {
        "Decided to use SQLite for the index": "M365",
        "Seojun's daughter Haneul was born today": "M0",
    }
    assert "never deploy on Friday" in ws.read_text("compound/lessons.md")
    assert report.decisions == {"M365": 1, "drop": 1, "M0": 1, "lesson": 1}
    assert all(a["judge"] == "opus" and a["reason"].startswith("recorded: ") for a in report.added)
    assert report.notes == []
    openai, anthropic = server.requests
    assert openai["body"]["response_format"]["type"] == "json_schema"
    assert anthropic["body"]["tool_choice"]["name"] == "record_decisions"
    assert "gpt says M0" in anthropic["body"]["messages"][-1]["content"]


def test_a_model_says_what_a_kept_line_replaces_among_the_entries_it_is_shown(ws, server, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    car = ws.remember("Mina commutes by car", layer="M90").entry.id
    busan = ws.remember("Mina lives in Busan", layer="M365").entry.id
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    ws.diary("Mina has been cycling to work ever since she sold her car")  # no change to the write policy
    ws.diary("Mina moved to Seoul last week")  # a move to the rules; the model knows it is a summer away
    server.recorded.update({"cycling": "M90|replaces:commutes by car", "moved to Seoul": "M90|replaces:"})
    ws.home.update(lambda c: c.update({"judges": {"panel": [server.spec("recorded", name="gpt")]}}))
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T23:00")
    report = distill_mod.distill(ws)
    entries = {e.text: e for e in ws.memory().entries()}
    cycling = entries["Mina has been cycling to work ever since she sold her car"]
    assert entries["Mina commutes by car"].fields.get("superseded_by") == cycling.id  # as the model said
    assert not entries["Mina lives in Busan"].superseded  # the model said it replaces nothing
    assert entries["Mina moved to Seoul last week"].layer == "M90"
    assert [(s["id"], s["by"]) for s in report.superseded] == [(car, cycling.id)]
    assert "said by the panel" in report.superseded[0]["why"]
    prompt = server.requests[-1]["body"]["messages"][-1]["content"]
    assert f'may replace: {car} (M90) "Mina commutes by car"' in prompt
    assert f'{busan} (M365) "Mina lives in Busan"' in prompt
    row = _decisions_schema(server.requests[-1]["body"]["response_format"]["json_schema"]["schema"])
    assert "replaces" in row["required"]
    assert row["properties"]["replaces"]["type"] == ["string", "null"]


def test_an_id_the_model_was_not_shown_leaves_the_change_to_the_write_policy():
    item = Item(
        "d1",
        "diary",
        "Mina moved to Seoul",
        day="2026-03-05",
        rivals=(("m-aaaaaa", "M365", "Mina lives in Busan"),),
    )
    answer = '{"decisions": [{"item": 1, "decision": "M90", "reason": "r", "replaces": "m-bbbbbb"}]}'
    assert judges.parse_answer(answer, [item], "gpt")["d1"].replaces is None  # not shown: the policy decides
    answer = answer.replace("m-bbbbbb", "m-aaaaaa")
    assert judges.parse_answer(answer, [item], "gpt")["d1"].replaces == "m-aaaaaa"
    answer = answer.replace('"m-aaaaaa"', "null")
    assert judges.parse_answer(answer, [item], "gpt")["d1"].replaces == ""  # none
    bare = Item("d2", "diary", "Mina moved to Seoul", day="2026-03-05")  # shown no entry
    assert judges.parse_answer(answer.replace('"d1"', '"d2"'), [bare], "gpt")["d2"].replaces is None


def test_remember_asks_the_configured_panel_what_a_text_replaces(ws, server, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    car = ws.remember("Mina commutes by car", layer="M90").entry.id
    busan = ws.remember("Mina lives in Busan", layer="M365").entry.id
    server.recorded.update({"cycling": "M90|replaces:commutes by car", "moved to Seoul": "M90|replaces:"})
    ws.home.update(lambda c: c.update({"judges": {"panel": [server.spec("recorded", name="gpt")]}}))
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    cycling = ws.remember(
        "Mina has been cycling to work ever since she sold her car"
    )  # no change to the policy
    assert cycling.action == "superseded"
    assert cycling.entry.fields["supersedes"] == car
    assert ws.memory().find(car).fields["superseded_by"] == cycling.entry.id
    assert "said by the panel" in cycling.reason
    assert (
        f'may replace: {car} (M90) "Mina commutes by car"'
        in server.requests[-1]["body"]["messages"][-1]["content"]
    )
    moved = ws.remember(
        "Mina moved to Seoul last week"
    )  # a move to the rules; the model says it replaces nothing
    assert moved.action == "written"
    assert not ws.memory().find(busan).superseded
    assert "said it replaces nothing" in moved.reason
    log = git.log(ws.root, ["MEMORY.md"], 5)
    assert f"Supersedes: {car}" in next(c["message"] for c in log if "cycling" in c["message"])


def test_remember_without_an_answering_panel_is_the_write_policys(ws, server, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    busan = ws.remember("Mina lives in Busan", layer="M365").entry.id
    ws.home.update(lambda c: c.update({"judges": {"panel": [server.spec("error", name="gpt")]}}))
    moved = ws.remember("Mina moved to Seoul last week")
    assert moved.action == "superseded"  # the rules' reading of "moved", as without a panel
    assert moved.entry.fields["supersedes"] == busan
    assert server.requests  # it was asked


def test_remember_takes_no_replacement_from_a_panel_that_would_not_keep_the_text_beyond_a_day(
    ws, server, monkeypatch
):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    car = ws.remember("Mina commutes by car", layer="M90").entry.id
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    path = ws.root / "MEMORY.md"  # a line written by hand, past the write path's redaction
    path.write_text(
        path.read_text().replace("Mina commutes by car", f"Mina commutes by car; car key {secret}")
    )
    server.recorded.update({"cycling": "M30|replaces:commutes by car"})  # a fact of the day
    ws.home.update(lambda c: c.update({"judges": {"panel": [server.spec("recorded", name="gpt")]}}))
    done = ws.remember("Mina has been cycling to work ever since she sold her car")
    assert done.action == "written"  # a fact of the day replaces nothing
    assert not ws.memory().find(car).superseded
    asked = server.requests[-1]["body"]["messages"][-1]["content"]
    assert f"may replace: {car} (M90)" in asked
    assert secret not in json.dumps(server.requests)  # the entry's secret never went to the model


def test_a_panels_none_refuses_trivia_kept_only_as_a_change_and_leaves_a_near_duplicate_alone():
    from giok.store.memoryfile import MemoryEntry
    from giok.write import policy, remember

    old = MemoryEntry(text="Coffee with oat milk", layer="M90", fields={"id": "m-aaaaaa"})
    none = judges.Verdict("M90", "both hold", "panel", replaces="")
    trivial = policy.Decision("supersede", "replaces m-aaaaaa (the same slot)", target=old, trivial=True)
    assert remember._as_said(trivial, none, None).action == "refuse"
    changed = policy.Decision("supersede", "replaces m-aaaaaa (the same slot)", target=old)
    assert remember._as_said(changed, none, None).action == "write"
    near = policy.Decision("supersede", "near-duplicate of m-aaaaaa (similarity 0.91)", target=old)
    assert remember._as_said(near, none, None) is near


def test_an_item_number_no_integer_can_hold_is_skipped():
    answer = (
        '{"decisions": [{"item": 1e400, "decision": "M90"}, {"item": 1, "decision": "M30", "reason": "r"}]}'
    )
    assert judges.parse_answer(answer, ITEMS[:1], "gpt")["d1"].decision == "M30"
