"""The context watchdog: thresholds, one flush per crossing, append-only gist, CLI."""

import json

import pytest

from giok.errors import InvalidInput
from giok.lifecycle.watchdog import Thresholds, Watchdog, extract, flush, level, messages, watch
from giok.store import git
from llm_server import FakeLLM

CONVERSATION = "\n".join(
    json.dumps(m)
    for m in [
        {"role": "system", "content": "You are Zeon. We decided nothing here."},
        {
            "role": "user",
            "content": "Let's go with SQLite WAL for the index. My api_key = sk-abcdefghijklmnopqrstuvwx",
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "I found that FTS5 trigram handles Korean well. "
                    "The build failed on arm64 because of AVX2. "
                    "Next step: add a fallback for arm64.",
                }
            ],
        },
        {"role": "tool", "content": "error: 5000 lines of logs that must not be summarised"},
    ]
)


@pytest.mark.parametrize(
    "used,expected",
    [
        (0, "ok"),
        (104_999, "ok"),
        (105_000, "soft"),
        (129_749, "soft"),
        (129_750, "hard"),
        (150_000, "hard"),
        (165_000, "hard"),
    ],
)
def test_seed_thresholds_for_a_150k_window(used, expected):
    assert level(used, 150_000) == expected


def test_thresholds_are_exact_and_configurable(ws):
    assert Thresholds().tokens(150_000) == (105_000, 129_750)
    assert Thresholds().tokens(200_000) == (140_000, 173_000)
    ws.home.update(lambda c: c.update({"watchdog": {"soft": 0.5, "hard": 0.8}}))
    status = watch(ws, 50_000, 100_000, "s")
    assert status.level == "soft"
    assert (status.soft_tokens, status.hard_tokens) == (50_000, 80_000)
    with pytest.raises(InvalidInput, match="0 < soft < hard"):
        Thresholds(0.9, 0.8)
    with pytest.raises(InvalidInput, match="window"):
        watch(ws, 10, 0)
    with pytest.raises(InvalidInput, match="used tokens"):
        watch(ws, -1, 100)
    with pytest.raises(InvalidInput, match="session id"):
        watch(ws, 1, 100, "bad session\n")


def test_one_flush_per_crossing(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    status = watch(ws, 105_000, 150_000, "s1")
    assert status.level == "soft"
    assert status.flush_due
    assert "giok flush --session s1" in status.action
    first = flush(ws, CONVERSATION, "s1")
    assert first.action == "flushed"
    assert first.level == "soft"
    assert first.commit
    commits = len(git.log(ws.root, ["."], 100))
    assert flush(ws, CONVERSATION, "s1").action == "skipped"
    again = watch(ws, 110_000, 150_000, "s1")
    assert again.level == "soft"
    assert not again.flush_due
    assert again.action.startswith("none")
    assert len(git.log(ws.root, ["."], 100)) == commits  # nothing written the second time
    hard = watch(ws, 129_750, 150_000, "s1")
    assert hard.flush_due
    assert hard.action.startswith("hard")
    assert (
        flush(
            ws,
            CONVERSATION + "\n" + json.dumps({"role": "user", "content": "We decided to ship on Monday."}),
            "s1",
        ).level
        == "hard"
    )
    assert flush(ws, CONVERSATION, "s1").action == "skipped"
    assert flush(ws, CONVERSATION, "s2").action == "flushed"  # a new session flushes again


def test_flush_is_append_only_to_diary_and_memo(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    ws.diary("Morning check-in done")
    ws.state_set("next-step", "Write the parser tests")
    diary_before, memo_before = ws.read_text("memory/2026-03-05.md"), ws.read_text("state/memo.md")
    result = flush(ws, CONVERSATION, "s1", level="soft")
    diary, memo = ws.read_text("memory/2026-03-05.md"), ws.read_text("state/memo.md")
    assert diary.startswith(diary_before)
    # the diary points to where the gist went; the text lives in one file only
    (line,) = diary[len(diary_before) :].splitlines()
    decision = result.memories[0]["id"]
    assert line == (
        f"- 14:00 [giok] context-flush: soft, session s1 — 1 decision in MEMORY.md ({decision}); "
        "1 found, 1 pending, 1 failure in the state memo"
    )
    assert "decision: Let's go with SQLite WAL for the index." in ws.read_text("MEMORY.md")
    assert "SQLite WAL" not in memo  # a decision's home is MEMORY.md
    assert "found: I found that FTS5 trigram handles Korean well." in memo
    assert "failure: The build failed on arm64 because of AVX2." in memo
    assert "pending: Next step: add a fallback for arm64." in memo
    assert "sk-abcdefghijklmnopqrstuvwx" not in diary + memo + ws.read_text("MEMORY.md")
    assert "5000 lines" not in diary + memo
    assert "Write the parser tests" in memo
    assert memo.count("\n") > memo_before.count("\n")
    state = ws.state()
    assert "fallback for arm64" in state["next-step"]
    assert "Write the parser tests" in state["next-step"]
    assert "AVX2" in state["failure-modes"]
    assert "FTS5 trigram" in state["last-done"]
    (commit,) = [c for c in git.log(ws.root, ["."], 5) if c["message"].startswith("watchdog:")]
    assert set(commit["files"]) == {"memory/2026-03-05.md", "state/memo.md", "compound/context.md"}
    assert result.summary_by == "extractive"


def test_conversation_formats():
    claude_code = json.dumps(
        {"type": "user", "message": {"role": "user", "content": "We decided to use tabs."}}
    )
    assert messages(claude_code) == [("user", "We decided to use tabs.")]
    assert messages('[{"role": "assistant", "content": "I found the bug."}]') == [
        ("assistant", "I found the bug.")
    ]
    assert messages("plain line one\n\nWe decided X") == [
        ("text", "plain line one"),
        ("text", "We decided X"),
    ]
    gist = extract(
        "오늘 회의에서 배포는 월요일에 하기로 결정했다.\n빌드가 arm64에서 실패했다.\n내일 테스트를 더 해야 "
        "한다."
    )
    assert gist["decisions"]
    assert gist["failures"]
    assert gist["pending"]


def test_empty_or_huge_conversation_is_refused(ws):
    with pytest.raises(InvalidInput, match="empty"):
        flush(ws, "  \n", "s")
    with pytest.raises(InvalidInput, match="soft or hard"):
        flush(ws, "x", "s", level="medium")


def test_llm_summary_and_fallback(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    with FakeLLM() as server:
        ws.home.update(lambda c: c.update({"summarizer": server.spec("summary", provider="ollama")}))
        result = flush(ws, CONVERSATION, "llm")
        assert result.summary_by == "summary"
        assert result.gist["failures"] == ["Build broke on old glibc"]
        ws.home.update(lambda c: c.update({"summarizer": server.spec("garbage", provider="ollama")}))
        fallback = flush(ws, CONVERSATION, "llm2")
    assert fallback.summary_by == "extractive"
    assert "LLM summary failed" in fallback.notes[0]


def test_python_api_for_agent_loops(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    dog = Watchdog(ws, window=150_000, session="loop")
    asked = []

    def transcript():
        asked.append(1)
        return CONVERSATION

    assert dog.update(50_000, transcript).level == "ok"
    assert not asked
    soft = dog.update(105_000, transcript)
    assert soft.flush.action == "flushed"
    assert not soft.flush_due
    assert asked == [1]
    assert dog.update(106_000, transcript).flush is None
    assert asked == [1]
    assert dog.update(140_000, transcript).flush.level == "hard"


def test_cli_watch_and_flush(ws, cli, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    ok = cli("watch", "--used", "104999", "--window", "150000", "--session", "c", "-w", "zeon", "--json")
    assert ok.exit_code == 0
    assert json.loads(ok.output)["level"] == "ok"
    assert json.loads(ok.output)["flushed"] is None  # nothing flushed yet (it said "ok")
    soft = cli("watch", "--used", "105000", "--window", "150000", "--session", "c", "-w", "zeon")
    assert soft.exit_code == 0
    assert soft.output.startswith("soft 70.0%")
    soft = cli(
        "watch", "--used", "105000", "--window", "150000", "--session", "c", "-w", "zeon", "--exit-code"
    )
    assert soft.exit_code == 10
    done = cli("flush", "--session", "c", "-w", "zeon", "--json", input=CONVERSATION)
    assert done.exit_code == 0
    assert json.loads(done.output)["action"] == "flushed"
    again = cli(
        "watch", "--used", "105001", "--window", "150000", "--session", "c", "-w", "zeon", "--exit-code"
    )
    assert again.exit_code == 0
    assert "already flushed" in again.output
    hard = cli(
        "watch",
        "--used",
        "129750",
        "--window",
        "150000",
        "--session",
        "c",
        "-w",
        "zeon",
        "--json",
        "--exit-code",
    )
    assert hard.exit_code == 11
    assert json.loads(hard.output)["level"] == "hard"
    assert json.loads(hard.output)["flushed"] == "soft"
    bad = cli("watch", "--used", "5", "--window", "0", "-w", "zeon")
    assert bad.exit_code != 0
    assert "Error: window" in bad.output


def test_cli_flush_keeps_the_gist_the_agent_wrote(ws, cli, monkeypatch, tmp_path):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    told = cli("flush", "--instructions", "--json")
    assert told.exit_code == 0
    assert "constraints" in json.loads(told.output)["lists"]
    gist = tmp_path / "gist.json"
    gist.write_text(json.dumps({"facts": ["Dana's dog Pickle arrives on Saturday"], "decisions": []}))
    done = cli("flush", "--gist", str(gist), "--session", "g", "-w", "zeon", "--json", input="")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["summary_by"] == "agent"
    assert "Dana's dog Pickle arrives on Saturday (2026-03-07)" in ws.read_text("MEMORY.md")
    head = ws.log(1)[0]["commit"]
    for bad, message in (
        ({"notes": ["x"]}, "unknown gist list(s): notes"),
        ({"facts": "x"}, "must be a list of strings"),
        ("not json", "the gist is not JSON"),
    ):
        gist.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        refused = cli("flush", "--gist", str(gist), "--session", "h", "-w", "zeon", input="")
        assert refused.exit_code != 0 and message in refused.output, refused.output
    assert ws.log(1)[0]["commit"] == head  # nothing written, and session h is not marked flushed
    later = cli("flush", "--session", "h", "-w", "zeon", "--json", input=CONVERSATION)
    assert json.loads(later.output)["action"] == "flushed"


def test_flush_survives_a_writer_that_gets_the_lock_first(ws, monkeypatch):
    # another writer takes the workspace lock between the flush's planning and its write
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    ws.diary("Morning check-in done")
    real_lock, raced = ws.lock, []

    def lock(*args, **kwargs):
        if not raced:
            raced.append(True)
            ws.diary("Written by another process meanwhile")
        return real_lock(*args, **kwargs)

    monkeypatch.setattr(ws, "lock", lock)
    result = flush(ws, CONVERSATION, "s1", level="soft")
    assert raced
    assert result.action == "flushed"
    diary = ws.read_text("memory/2026-03-05.md")
    assert "Written by another process meanwhile" in diary
    assert "context-flush: soft, session s1 — 1 decision in MEMORY.md" in diary
    assert "found: I found that FTS5 trigram handles Korean well." in ws.read_text("state/memo.md")
    assert not git.run(ws.root, "status", "--porcelain").stdout.strip()
