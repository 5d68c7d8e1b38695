"""Judges: the offline rules, the HTTP judges against a local server (good, malformed, slow,
failing answers), the panel with its synthesizer, and degradation to the offline judge."""

import pytest

from giok.errors import InvalidInput, ProviderError
from giok.lifecycle import distill as distill_mod
from giok.providers import llm
from giok.write import judges
from giok.write.judges import Item, LLMJudge, OfflineJudge, Panel
from llm_server import FakeLLM


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    with FakeLLM(slow_seconds=1.5) as fake:
        yield fake


def _items():
    return [
        Item("d1", "diary", "Decided to use SQLite for the index", day="2026-03-01"),
        Item("d2", "diary", "hi", day="2026-03-01"),
        Item("d3", "diary", "Met Minsu to discuss the essay draft outline", day="2026-03-01"),
    ]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("hi", "drop"),
        ("what time is the meeting tomorrow?", "drop"),
        ("Had coffee and a sandwich for lunch", "drop"),
        ("Lesson: never deploy on Friday, the release broke", "lesson"),
        ("Seojun launched the VibeDojo v2 beta", "M365"),
        ("Decided to refactor VibeDojo v2 first", "M90"),
        ("Seojun prefers short answers in the morning", "M90"),
        ("First draft of the memory essay is done, 3,200 words", "M30"),
        ("서준은 아침에 짧은 답을 선호한다", "M90"),
        ("오늘 메모리 에세이 초안을 완성했다", "M30"),
        ("I am Zeon, Seojun's first agent #core", "M0"),
    ],
)
def test_offline_judge_diary_rules(text, expected):
    verdict = OfflineJudge().one(Item("k", "diary", text))
    assert verdict.decision == expected, verdict.reason
    assert verdict.reason
    assert verdict.judge == "offline"


def test_offline_judge_promotion_rules_weigh_refs_links_and_role():
    judge = OfflineJudge()
    assert judge.one(Item("e", "entry", "x", layer="M30", refs_14d=3)).decision == "M90"
    assert judge.one(Item("e", "entry", "x", layer="M30", refs_14d=2)).decision == "keep"
    assert judge.one(Item("e", "entry", "x", layer="M30", refs_14d=2, links=2)).decision == "M90"
    assert judge.one(Item("e", "entry", "x", layer="M30", refs_14d=2, role=0.5)).decision == "M90"
    assert judge.one(Item("e", "entry", "x", layer="M90", refs_30d=6, ref_days_30=4)).decision == "M365"
    assert judge.one(Item("e", "entry", "x", layer="M90", refs_30d=9, ref_days_30=1)).decision == "keep"
    # the offline judge never decides M0 for an existing entry
    assert judge.one(Item("e", "entry", "x", layer="M365", refs_30d=50, ref_days_30=30)).decision == "keep"


def test_openai_compatible_judge_good_answer(server):
    judge = LLMJudge(llm.client(server.spec("good-M90")))
    verdicts = judge.decide(_items(), {"workspace": "zeon", "today": "2026-03-01"})
    assert {k: v.decision for k, v in verdicts.items()} == {"d1": "M90", "d2": "M90", "d3": "M90"}
    request = server.requests[-1]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer test-openai-key"
    assert request["body"]["messages"][0]["role"] == "system"
    assert "Decided to use SQLite" in request["body"]["messages"][1]["content"]


def test_anthropic_judge_uses_messages_api(server):
    judge = LLMJudge(llm.client(server.spec("good-drop", provider="anthropic")))
    verdicts = judge.decide(_items(), {})
    assert all(v.decision == "drop" for v in verdicts.values())
    request = server.requests[-1]
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == "test-anthropic-key"
    assert request["headers"]["anthropic-version"] == llm.ANTHROPIC_VERSION
    assert "system" in request["body"]
    assert request["body"]["messages"][0]["role"] == "user"


@pytest.mark.parametrize(
    "model,message",
    [
        ("garbage", "nonsense|decisions list"),
        ("empty", "no text"),
        ("error", "HTTP 500"),
        ("slow", "no answer within"),
    ],
)
def test_http_judge_failures_are_provider_errors(server, model, message):
    judge = LLMJudge(llm.client(server.spec(model, timeout=0.3)))
    with pytest.raises(ProviderError, match=message):
        judge.decide(_items(), {})


def test_unreachable_endpoint_and_missing_key(monkeypatch):
    judge = LLMJudge(
        llm.client({"provider": "ollama", "model": "m", "base_url": "http://127.0.0.1:9/v1", "timeout": 2})
    )
    with pytest.raises(ProviderError, match="cannot reach"):
        judge.decide(_items(), {})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY is not set"):
        LLMJudge(llm.client({"provider": "openai", "model": "gpt"})).decide(_items(), {})


def test_bad_specs_are_invalid_input():
    with pytest.raises(InvalidInput, match="unknown LLM provider"):
        llm.client({"provider": "nope", "model": "m"})
    with pytest.raises(InvalidInput, match="needs a model"):
        llm.client({"provider": "openai"})


def test_partial_answer_keeps_valid_items_only():
    items = _items()
    verdicts = judges.parse_answer(
        '{"decisions": [{"item": 1, "decision": "m90", "reason": "ok"}, '
        '{"item": 2, "decision": "M7"}, {"item": 9, "decision": "drop"}]}',
        items,
        "j",
    )
    assert list(verdicts) == ["d1"]
    assert verdicts["d1"].decision == "M90"
    entry = Item("e", "entry", "x", layer="M90")
    with pytest.raises(ProviderError):
        judges.parse_answer('[{"item": 1, "decision": "M30"}]', [entry], "j")  # no demotion through a judge


def test_panel_synthesizer_decides_and_bad_judges_are_left_out(server):
    panel = Panel(
        [
            LLMJudge(llm.client(server.spec("good-M30"))),
            LLMJudge(llm.client(server.spec("slow", timeout=0.3))),
            LLMJudge(llm.client(server.spec("garbage"))),
        ],
        synthesizer=LLMJudge(llm.client(server.spec("good-M365", provider="anthropic"))),
    )
    result = panel.decide(_items(), {"workspace": "zeon"})
    assert {v.decision for v in result.verdicts.values()} == {"M365"}
    assert any("left out slow" in n and "no answer within" in n for n in result.notes)
    assert any("left out garbage" in n for n in result.notes)
    synth_prompt = server.requests[-1]["body"]["messages"][-1]["content"]
    assert "good-M30 says M30" in synth_prompt
    assert "final judge" in synth_prompt


def test_panel_votes_when_synthesizer_fails(server):
    panel = Panel(
        [
            LLMJudge(llm.client(server.spec("good-M90", name="a"))),
            LLMJudge(llm.client(server.spec("good-M90", name="b"))),
            LLMJudge(llm.client(server.spec("good-drop", name="c"))),
        ],
        synthesizer=LLMJudge(llm.client(server.spec("error"))),
    )
    result = panel.decide(_items(), {})
    assert {v.decision for v in result.verdicts.values()} == {"M90"}
    assert all(v.judge == "panel" and "2/3" in v.reason for v in result.verdicts.values())
    assert any("synthesizer failed" in n for n in result.notes)


def test_panel_degrades_to_offline_when_every_judge_fails(server):
    panel = Panel([LLMJudge(llm.client(server.spec("error"))), LLMJudge(llm.client(server.spec("garbage")))])
    result = panel.decide(_items(), {})
    assert {k: v.decision for k, v in result.verdicts.items()} == {"d1": "M90", "d2": "drop", "d3": "M30"}
    assert all(v.judge == "offline" for v in result.verdicts.values())
    assert any("offline judge decided" in n for n in result.notes)


def test_partial_panel_answer_fills_the_rest_offline(server):
    panel = Panel([LLMJudge(llm.client(server.spec("partial")))])
    result = panel.decide(_items(), {})
    assert result.verdicts["d1"].decision == "M90"
    assert result.verdicts["d1"].judge == "panel"
    assert result.verdicts["d2"].judge == "offline"


def test_panel_from_home_config(ws, server, monkeypatch):
    assert judges.from_config(ws).judges == []  # nothing configured: offline alone
    ws.home.update(
        lambda c: c.update(
            {
                "judges": {
                    "panel": [server.spec("good-M30"), {"provider": "nope", "model": "x"}],
                    "synthesizer": server.spec("good-M90", provider="anthropic"),
                    "timeout": 5,
                    "batch": 2,
                }
            }
        )
    )
    panel = judges.from_config(ws)
    assert [j.name for j in panel.judges] == ["good-M30"]
    assert panel.batch == 2
    assert panel.synthesizer.client.timeout == 5
    assert any("unknown LLM provider" in n for n in panel.setup_notes)


def test_distill_with_panel_against_local_server(ws, server, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T10:00")
    ws.diary("Decided to use SQLite for the index")
    ws.diary("Seojun is the founder of the studio and my only user")
    ws.home.update(
        lambda c: c.update(
            {
                "judges": {
                    "panel": [
                        server.spec("good-M90", name="gpt"),
                        server.spec("slow", name="grok", timeout=0.3),
                    ],
                    "synthesizer": server.spec("good-M0", provider="anthropic", name="opus"),
                }
            }
        )
    )
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T23:00")
    report = distill_mod.distill(ws)
    assert report.judges == ["gpt", "grok", "opus (synthesizer)"]
    assert [a["layer"] for a in report.added] == ["M0", "M0"]
    assert all(a["judge"] == "opus" for a in report.added)
    assert any("left out grok" in n for n in report.notes)
    m0 = ws.memory().entries("M0")
    assert {e.text for e in m0} >= {"Decided to use SQLite for the index"}
    assert all(e.expires is None for e in m0)


def test_only_an_llm_judge_can_raise_an_entry_to_m0(ws, server, monkeypatch):
    from giok.store import refs

    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    core = ws.remember("Seojun is the person I work for and my first user", layer="M365").entry.id
    for day in range(2, 12):
        monkeypatch.setenv("GIOK_NOW", f"2026-03-{day:02d}T09:00")
        refs.record(ws, [core], "recall")  # used, not only shown at boot (which counts nothing)
    monkeypatch.setenv("GIOK_NOW", "2026-03-11T23:00")
    offline = distill_mod.distill(ws, dry_run=True)
    assert offline.promoted == []
    panel = Panel([LLMJudge(llm.client(server.spec("good-M0", name="gpt")))])
    report = distill_mod.distill(ws, panel=panel)
    assert report.promoted[0]["to"] == "M0"
    assert report.promoted[0]["judge"] == "panel"
    entry = ws.memory().find(core)
    assert entry.layer == "M0"
    assert entry.expires is None
    assert entry.refs == 10
