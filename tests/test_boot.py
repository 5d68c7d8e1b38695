"""Boot context: sections, budget, scopes, precedence, the Claude Code hook; the token counter."""

import json

import pytest

from conftest import run_giok
from giok import Workspace
from giok.errors import InvalidInput
from giok.lifecycle import boot
from giok.store import refs
from giok.text import token_count as tokens


def test_boot_has_precedence_first_then_tier_memo_tasks_memory_diary(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T10:00")
    ws.remember("I am Zeon, Seojun's first agent", layer="M0")
    ws.remember("Decided to refactor VibeDojo v2", layer="M90")
    ws.state_set("next-step", "Wire the boot hook")
    ws.task_add("Write the boot docs")
    monkeypatch.setenv("GIOK_NOW", "2026-03-04T21:00")
    ws.diary("Yesterday's line")
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T11:00")
    ws.diary("Today's line")
    text = boot.build(ws).text
    lines = text.splitlines()
    assert lines[0].startswith("# Boot context: zeon")
    assert lines[1].startswith("Precedence")
    assert "state memo > strategy" in lines[1]
    order = [
        "Rules (AGENTS.md TIER 1)",
        "Who I am",
        "Who I work for",
        "State memo",
        "Wire the boot hook",
        "T-001 [todo] Write the boot docs",
        "I am Zeon",
        "VibeDojo",
        "Diary 2026-03-04",
        "Yesterday's line",
        "Diary 2026-03-05",
        "Today's line",
    ]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)
    assert "Not included" not in text


def test_budget_leaves_out_lowest_layers_and_says_so(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05")
    keep = ws.remember("Core identity line", layer="M0").entry
    many = [
        ws.remember(f"Project note number {i} about module {i * 37}", layer="M30").entry for i in range(30)
    ]
    result = boot.build(ws, budget=500)
    data = result.to_dict()
    assert keep.id in result.text
    left = {d["section"]: d for d in data["left_out"]}
    assert "M30" in left
    assert left["M30"]["count"] > 0
    assert left["M30"]["tokens"] > 0
    shown = [e.id for e in many if e.id in result.text]
    assert len(shown) + left["M30"]["count"] == 30
    assert set(left["M30"]["ids"]) == {e.id for e in many} - set(shown)
    assert result.text.rstrip().splitlines()[-1].startswith("_Not included for lack of budget (500 tokens)")
    assert all(s["tokens"] > 0 for s in data["sections"])
    assert data["tokens"] == tokens.count(result.text)


def test_newest_and_most_referenced_first(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-01-01")
    old = ws.remember("An old note from January", layer="M365").entry
    monkeypatch.setenv("GIOK_NOW", "2026-03-01")
    new = ws.remember("A new note from March", layer="M365").entry
    text = boot.build(ws).text
    assert text.index(new.id) < text.index(old.id)


def test_superseded_and_expired_entries_are_never_injected(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-01")
    short = ws.remember("Short-lived reminder", expires="2026-03-03").entry
    old = ws.remember("Seojun prefers tea").entry
    new = ws.remember("Seojun now prefers coffee").entry
    monkeypatch.setenv("GIOK_NOW", "2026-03-10")
    text = boot.build(ws).text
    assert new.id in text
    assert old.id not in text
    assert "tea" not in text
    assert short.id not in text


def test_group_context_leaves_memory_out(ws):
    entry = ws.remember("Seojun's private phone habit", layer="M0").entry
    ws.diary("Group-safe diary line")
    result = boot.build(ws, context="group")
    assert entry.id not in result.text
    assert "Group-safe diary line" in result.text
    assert not any(s["name"].startswith("M") for s in result.to_dict()["sections"])
    with pytest.raises(InvalidInput):
        boot.build(ws, context="public")


def test_user_thread_and_task_scopes(ws):
    mine = ws.remember("Prefers window seats", user="Seojun").entry
    other = ws.remember("Prefers aisle seats", user="Mina").entry
    thread = ws.remember("Reply draft is half done", thread="t-1").entry
    tid = ws.task_add("Ship the release")
    task = ws.remember("Release notes live in drafts/notes.md", task=tid).entry
    default = boot.build(ws).text  # USER.md names Seojun
    assert mine.id in default
    assert other.id not in default
    assert thread.id not in default
    assert task.id in default
    mina = boot.build(ws, user="Mina", thread="t-1").text
    assert other.id in mina
    assert mine.id not in mina
    assert thread.id in mina
    ws.task_move(tid, "done")
    assert task.id not in boot.build(ws).text


def test_injected_entries_are_logged_but_count_for_nothing(ws):
    entry = ws.remember("Referenced at boot", layer="M90").entry
    boot.build(ws)
    boot.build(ws, record=False)
    assert refs.counts(ws)[entry.id] == 0  # shown is not used (docs/distill.md)
    assert [(e["kind"], e["w"]) for e in refs.events(ws)] == [("boot", 0)]


def test_bad_budget(ws):
    for bad in (0, 50, "lots"):
        with pytest.raises(InvalidInput):
            boot.build(ws, budget=bad)
    r = run_giok("-w", "zeon", "boot", "--budget", "10")
    assert r.returncode != 0
    assert r.stderr.startswith("Error: ")
    assert "too small" in r.stderr


def test_budget_setting_from_home(ws, giok_home):
    giok_home.update(lambda c: c.update(boot_budget=777))
    assert boot.build(ws).budget == 777


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_always_injected_tier_of_default_templates_is_under_1000_tokens(tmp_path, giok_home, lang):
    ws, _ = Workspace.init(tmp_path / lang, name=f"t{lang}", lang=lang, user="Seojun", home=giok_home)
    result = boot.build(ws)
    assert 100 < result.always_tokens <= 1000
    assert not result.warnings
    if lang == "ko":
        assert "상태 메모 > 전략 문서" in result.text
        assert "규칙 (AGENTS.md TIER 1)" in result.text


def test_oversized_tier_and_too_many_rules_warn(ws):
    agents = ws.root / "AGENTS.md"
    rules = "".join(f"- Rule number {i}\n" for i in range(9))
    agents.write_text(agents.read_text().replace("## TIER 1\n", "## TIER 1\n" + rules))
    (ws.root / "SOUL.md").write_text("# SOUL\n\n" + "I am a very verbose agent. " * 400)
    warnings = boot.build(ws).warnings
    assert any("always-injected tier" in w for w in warnings)
    assert any("TIER 1 has 14 rules" in w for w in warnings)
    assert any("TIER 1 has 14 rules" in p["message"] for p in ws.check())


def test_cli_boot_json_text_and_claude_hook(ws, cli):
    ws.remember("Boot CLI fact", layer="M0")
    data = json.loads(cli("-w", "zeon", "boot", "--json").output)
    assert {"sections", "left_out", "tokens", "always_tier", "counter", "text"} <= set(data)
    text = cli("-w", "zeon", "boot").output
    assert text.startswith("# Boot context: zeon")
    assert "Boot CLI fact" in text
    r = run_giok("-w", "zeon", "boot", "--format", "claude-hook")
    assert r.returncode == 0, r.stderr
    hook = json.loads(r.stdout)
    assert hook["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Boot CLI fact" in hook["hookSpecificOutput"]["additionalContext"]


def test_token_counter_is_conservative_and_never_downloads(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    tokens.reset()
    try:
        assert tokens.counter() == "estimate"
        assert not (tmp_path / "empty-cache").exists()
        assert tokens.count("") == 0
        # cl100k_base counts (measured offline): 11 tokens and 17 tokens
        assert tokens.count("Seojun prefers short answers with the result first.") >= 11
        assert tokens.count("서준은 체계적인 사고를 좋아한다") >= 17
        assert tokens.count("a" * 400) >= 100
    finally:
        tokens.reset()


@pytest.mark.parametrize("budget", [600, 900, 2000])
def test_text_never_exceeds_a_budget_that_covers_the_fixed_parts(ws, budget):
    for i in range(60):
        ws.remember(
            f"Budget note {i} about module {i * 13} and owner number {i * 7}",
            layer=("M365", "M90", "M30")[i % 3],
        )
    ws.diary("A diary line for the budget test")
    result = boot.build(ws, budget=budget)
    assert result.to_dict()["left_out"]
    assert not result.warnings
    assert tokens.count(result.text) <= budget
