"""A watchdog flush carries every constraint, preference and decision of the flushed span
into memory (seed 001, failure test 3: "compaction 전후에 핵심 constraint와 pending state가
보존되는지 비교합니다")."""

import datetime as dt
import json

from flush_eval import evaluate
from giok.lifecycle.watchdog import Watchdog, extract, flush
from giok.store import git
from giok.store.memoryfile import MemoryFile
from llm_server import FakeLLM

SPAN = "\n".join(
    json.dumps(m, ensure_ascii=False)
    for m in [
        {"role": "user", "content": "오늘은 인덱스 작업을 이어서 하자."},
        {"role": "user", "content": "절대 main에 직접 푸시하지 마."},
        {"role": "assistant", "content": "알겠습니다. FTS5 트라이그램이 한국어에 잘 맞는다는 걸 발견했어요."},
        {"role": "user", "content": "I prefer Korean from now on."},
        {"role": "assistant", "content": "We decided to keep SQLite WAL for the index."},
        {"role": "user", "content": "Don't worry about the flaky test, it is known."},
    ]
)


def _live(ws) -> list:
    return [e for e in MemoryFile.parse(ws.path("MEMORY.md").read_bytes()).entries() if not e.superseded]


def test_cli_flush_keeps_constraint_preference_and_decision(ws, cli, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    monkeypatch.setenv("GIOK_WORKSPACE", str(ws.root))
    out = cli("flush", "--session", "s1", "--level", "hard", "--json", input=SPAN)
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    diary = ws.read_text("memory/2026-03-05.md")
    assert "context-flush: hard, session s1 — 1 constraint, 1 preference, 1 decision in MEMORY.md" in diary
    assert "절대" not in diary and "SQLite WAL" not in diary  # a pointer, not a second copy
    entries = {e.text: e for e in _live(ws)}
    rule, liking = (
        entries["constraint: 절대 main에 직접 푸시하지 마."],
        entries["preference: I prefer Korean from now on."],
    )
    decision = entries["decision: We decided to keep SQLite WAL for the index."]
    assert (rule.layer, liking.layer, decision.layer) == ("M90", "M90", "M90")
    assert (rule.type, liking.type, decision.type) == ("preference", "preference", "decision")
    assert rule.fields["source"] == "flush:s1"
    assert not any("flaky" in t or "worry" in t for t in entries)  # a reassurance is no rule
    assert {m["action"] for m in result["memories"]} == {"written"}
    # the write policy made the commits, with its trace
    messages = [c["message"] for c in git.log(ws.root, ["MEMORY.md"], 10)]
    assert sum(m.startswith("memory: remember") for m in messages) == 3


def test_repeated_flushes_write_each_memory_once(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, SPAN, "s1", level="soft")
    before = ws.path("MEMORY.md").read_bytes()
    again = flush(
        ws,
        SPAN + "\n" + json.dumps({"role": "user", "content": "Always run the tests before a push."}),
        "s2",
        level="hard",
    )
    assert {m["action"] for m in again.memories if "절대" in m["text"] or "Korean" in m["text"]} == {
        "duplicate"
    }
    texts = [e.text for e in _live(ws)]
    assert texts.count("constraint: 절대 main에 직접 푸시하지 마.") == 1
    assert texts.count("preference: I prefer Korean from now on.") == 1
    assert "constraint: Always run the tests before a push." in texts
    assert ws.path("MEMORY.md").read_bytes() != before
    diary = ws.read_text("memory/2026-03-05.md")
    assert "context-flush: hard, session s2 — 1 constraint in MEMORY.md" in diary
    assert "절대" not in diary


def test_watchdog_hard_crossing_flushes_the_rules(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    dog = Watchdog(ws, window=150_000, session="run-7")
    assert dog.update(10_000, conversation=SPAN).flush is None
    status = dog.update(140_000, conversation=lambda: SPAN)
    assert status.level == "hard"
    assert status.flush.action == "flushed"
    texts = [e.text for e in _live(ws)]
    assert "constraint: 절대 main에 직접 푸시하지 마." in texts
    assert "preference: I prefer Korean from now on." in texts


def test_agent_echoes_questions_and_guesses_are_not_rules():
    gist = extract(
        "\n".join(
            [
                "user: Should we never push to main?",
                "assistant: Noted: you must never push to main.",
                "user: maybe we should always squash, not sure",
                "zeon: I prefer to run the linter first.",
                "user: 커밋 전에 항상 린터를 돌려.",
            ]
        ),
        agent="zeon",
    )
    assert gist["constraints"] == ["커밋 전에 항상 린터를 돌려."]
    assert gist["preferences"] == []


def test_a_no_that_answers_is_no_ban():
    """ "no mushrooms" bans something; "no thats it", typed in haste to "anything else?", does not."""
    gist = extract(
        "user: can you plan my dinners this week\nassistant: Sure. Anything to avoid?\n"
        "user: no mushrooms.\nassistant: Done. Anything else?\nuser: no thats it.\n"
        "assistant: Great.\nuser: no i'm good, thanks"
    )
    assert gist["constraints"] == ["no mushrooms."]


def test_plain_text_speaker_labels_and_korean_pending():
    gist = extract(
        "사용자: 고객 이메일은 로그에 남기면 안 돼\n에이전트: 원인은 프록시였어요.\n내일 테스트를 더 해야 "
        "한다.",
        today=dt.date(2026, 3, 5),
    )
    assert gist["constraints"] == ["고객 이메일은 로그에 남기면 안 돼"]
    assert gist["pending"] == ["내일(2026-03-06) 테스트를 더 해야 한다."]


def test_labelled_set_recall_and_false_positives():
    """Measured on the held-out half of tests/data/flush_set.json (written before the rules)."""
    scores = evaluate("test")
    assert scores["labels"] >= 15
    assert scores["recall"] >= 0.9, scores["missed"]
    assert scores["false_positives"] <= 1, scores["wrong"]


def test_llm_summary_is_completed_with_the_rules_it_left_out(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    with FakeLLM() as server:
        ws.home.update(lambda c: c.update({"summarizer": server.spec("summary", provider="ollama")}))
        result = flush(ws, SPAN, "s1", level="soft")
    assert result.summary_by == "summary"
    assert "Use WAL mode for the index" in result.gist["decisions"]  # the model's own words
    assert "절대 main에 직접 푸시하지 마." in result.gist["constraints"]  # it left this out
    assert any("left out" in n for n in result.notes)
    texts = [e.text for e in _live(ws)]
    assert "constraint: 절대 main에 직접 푸시하지 마." in texts
    assert "preference: I prefer Korean from now on." in texts


def test_llm_constraints_are_not_doubled(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    span = json.dumps({"role": "user", "content": "Never push directly to main!"})
    with FakeLLM() as server:
        ws.home.update(lambda c: c.update({"summarizer": server.spec("summary-kept", provider="ollama")}))
        result = flush(ws, span, "s1", level="soft")
    assert result.gist["constraints"] == ["Never push directly to main."]
    assert [e.text for e in _live(ws)].count("constraint: Never push directly to main.") == 1


def test_the_nightly_distill_does_not_add_the_flushed_rules_twice(ws, monkeypatch):
    from giok.lifecycle.distill import distill

    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, SPAN, "s1", level="hard")
    kept = sorted(e.text for e in _live(ws))
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T23:00")
    report = distill(ws)
    seen = [str(x) for x in report.added + report.skipped + report.dropped]
    assert not any("절대" in t for t in seen)  # the diary holds a pointer, nothing to judge again
    texts = [e.text for e in _live(ws)]
    assert sum("main에 직접 푸시" in t for t in texts) == 1
    assert sum("prefer Korean" in t for t in texts) == 1
    assert set(kept) <= set(texts)
    monkeypatch.setenv("GIOK_NOW", "2026-03-06T09:00")  # the next day's boot carries the rule
    from giok.lifecycle import boot

    memory = next(s for s in boot.build(ws, record=False).sections if s.name == "M90")
    assert any("constraint: 절대 main에 직접 푸시하지 마." in line for line in memory.lines)


def test_a_standing_request_and_a_korean_decision_are_kept(ws):
    """ "앞으로 … 써줘" is a rule from now on; "…기로 했어" is a decision (the 90-day simulation
    found both dropped)."""
    from giok.lifecycle import watchdog

    report = watchdog.flush(
        ws,
        "user: 원고 3장은 다시 쓰기로 했어.\nuser: 앞으로 커밋 메시지는 한국어로 써줘.\n"
        "assistant: 알겠습니다. 내일 4장 초안을 검토해야 합니다.",
        session="s1",
    )
    assert report.gist["constraints"] == ["앞으로 커밋 메시지는 한국어로 써줘."]
    assert report.gist["decisions"] == ["원고 3장은 다시 쓰기로 했어."]
    memory = ws.read_text("MEMORY.md")
    assert "커밋 메시지는 한국어로" in memory
    assert "원고 3장은 다시 쓰기로" in memory
