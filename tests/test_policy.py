"""The write policy: should_write, type and scope, normalize, dedup and supersede, redaction,
and the trace of every decision — through the real Workspace, files and git."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import run_giok
from giok.errors import InvalidInput, NotFound
from giok.store import refs, trace
from giok.write import policy

DATA = Path(__file__).parent / "data" / "policy_set.json"


def git(ws, *args):
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_policy_set_refuses_small_talk_and_guesses_and_keeps_facts(ws):
    cases = json.loads(DATA.read_text("utf-8"))
    refused = [t for t in cases["refuse"] if ws.remember(t).action == "refused"]
    kept = [t for t in cases["keep"] if ws.remember(t).action == "written"]
    assert len(refused) == 50, set(cases["refuse"]) - set(refused)
    assert len(kept) == 50, set(cases["keep"]) - set(kept)
    texts = {e.text for e in ws.memory().entries()}
    assert not texts & set(cases["refuse"])
    assert len(trace.events(ws)) == 50
    assert all(e["action"] == "refused" for e in trace.events(ws))


def test_refusal_is_committed_with_its_reason_and_traceable(ws, cli):
    result = ws.remember("I think the build broke because of the cache")
    assert result.action == "refused"
    assert "speculation" in result.reason
    assert result.entry is None
    rid = next(n.split()[3] for n in result.notes if n.startswith("decision recorded"))
    assert git(ws, "log", "-1", "--format=%s").startswith(f"memory: refused {rid}")
    out = cli("-w", "zeon", "trace", rid, "--json")
    found = json.loads(out.output)
    event = found["events"][0]
    assert event["reason"].startswith("speculation")
    assert event["length"] == len("I think the build broke because of the cache")
    assert "text" not in event
    assert event["kind"] == "decision"
    assert event["category"] == "speculation"
    assert len(event["hash"]) >= 16
    shown = cli("-w", "zeon", "trace", rid)
    assert shown.exit_code == 0
    assert f"{rid}  refused: speculation" in shown.output


def test_refused_text_never_reaches_git(ws):
    text = "maybe Seojun is secretly job hunting"
    result = ws.remember(text)
    assert result.action == "refused"
    assert "job hunting" not in (ws.root / "state/trace.jsonl").read_text()
    assert "job hunting" not in git(ws, "log", "--all", "-p", "--format=%B")
    assert "secretly" not in git(ws, "log", "-1", "--format=%s")
    again = ws.remember(text)
    first, second = trace.events(ws)
    assert first["hash"] == second["hash"]
    assert first["id"] != second["id"]
    assert again.action == "refused"
    assert ws.remember("maybe Mina is secretly job hunting").action == "refused"
    assert trace.events(ws)[2]["hash"] != first["hash"]


def test_speculation_kept_only_when_marked_with_type_and_low_confidence(ws):
    assert ws.remember("Maybe Seojun moves to Busan", type="fact").action == "refused"
    assert ws.remember("Maybe Seojun moves to Busan", type="fact", confidence=0.9).action == "refused"
    result = ws.remember("Maybe Seojun moves to Busan", type="fact", confidence=0.3)
    assert result.action == "written"
    assert result.entry.fields["confidence"] == "0.3"
    forced = ws.remember("hello there", force=True)
    assert forced.action == "written"
    assert "Forced: yes" in git(ws, "log", "-1", "--format=%B")


@pytest.mark.parametrize(
    "text,kind",
    [
        ("Seojun prefers tea in the morning", "preference"),
        ("Decided to use SQLite for the index", "decision"),
        ("Lesson learned: poll sub-agents after 5 minutes", "lesson"),
        ("Waiting for approval on the pricing page", "workflow"),
        ("Finished the essay draft yesterday", "episode"),
        ("The staging database is Postgres 16", "fact"),
        ("서준은 녹차를 좋아한다", "preference"),
        ("VibeDojo v2 리팩터링을 결정했다", "decision"),
    ],
)
def test_type_is_classified(text, kind):
    assert policy.classify(text) == kind


def test_scope_from_user_and_thread_and_visibility(ws):
    a = ws.remember("Seojun prefers tea", user="Seojun").entry
    b = ws.remember("Draft reply is half done", thread="t-42").entry
    assert a.scope == "user:Seojun"
    assert b.scope == "thread:t-42"
    assert policy.visible("user:Seojun", user="seojun")
    assert not policy.visible("user:Seojun", user="Mina")
    assert not policy.visible("user:Seojun")
    assert not policy.visible("thread:t-42", thread="t-7")
    assert policy.visible("task:T-001", tasks={"T-001"})
    assert not policy.visible("task:T-002", tasks={"T-001"})
    with pytest.raises(InvalidInput, match="invalid scope"):
        ws.remember("x y z", user="bad/name")  # a space is fine now (user:bad-name); a slash is not


def test_normalize_whitespace_and_dates():
    assert (
        policy.normalize("met  on 2026.3.5 and\t2026년 3월 6일, due 2026–03–07")
        == "met on 2026-03-05 and 2026-03-06, due 2026-03-07"
    )


def test_exact_duplicate_is_not_written_again_and_gains_a_reference(ws):
    first = ws.remember("The deploy target is fly.io").entry
    again = ws.remember("the deploy target is  fly.io.")
    assert again.action == "duplicate"
    assert again.entry.id == first.id
    assert len(ws.memory().entries()) == 1
    assert refs.counts(ws)[first.id] == 1


def test_duplicate_in_another_scope_is_a_separate_memory(ws):
    ws.remember("Likes green tea", user="Seojun")
    assert ws.remember("Likes green tea", user="Mina").action == "written"


def test_contradiction_supersedes_and_history_shows_the_chain(ws, cli):
    old = ws.remember("Seojun prefers tea", user="Seojun").entry
    new = ws.remember("Seojun now prefers coffee", user="Seojun")
    assert new.action == "superseded"
    assert new.entry.fields["supersedes"] == old.id
    assert ws.get(old.id).fields["superseded_by"] == new.entry.id
    third = ws.remember(
        "서준은 이제 홍차를 선호한다", user="Seojun"
    )  # another subject spelling: not the same
    assert third.action == "written"
    out = cli("-w", "zeon", "history", old.id, "--json")
    chain = json.loads(out.output)["chain"]
    assert [r["id"] for r in chain] == [old.id, new.entry.id]
    assert [r["status"] for r in chain] == ["superseded", "current"]
    assert "Supersedes: " + old.id in git(ws, "log", "-1", "--format=%B", new.commit)


def test_the_caller_says_what_a_memory_replaces(ws, cli):
    """Where the policy sees no change, the agent can: --supersedes links the two; an id that
    names nothing, or an entry already replaced, is one clear error and writes nothing."""
    old = ws.remember("Dana keeps her bike in the office garage").entry
    new = ws.remember("The bike lives in the shed at home now", supersedes=old.id)
    assert new.action == "superseded" and new.reason == f"replaces {old.id}, as asked"
    assert ws.get(old.id).fields["superseded_by"] == new.entry.id
    head = ws.log(1)[0]["commit"]
    with pytest.raises(InvalidInput, match=f"{old.id} is already superseded by {new.entry.id}"):
        ws.remember("The bike is in the hallway", supersedes=old.id)
    with pytest.raises(NotFound, match="no memory with id m-000000"):
        ws.remember("The bike is in the hallway", supersedes="m-000000")
    assert ws.log(1)[0]["commit"] == head and "hallway" not in ws.read_text("MEMORY.md")
    out = cli(
        "-w", "zeon", "remember", "The bike went to the repair shop", "--supersedes", new.entry.id, "--json"
    )
    assert out.exit_code == 0 and json.loads(out.output)["action"] == "superseded"
    bad = cli("-w", "zeon", "remember", "The bike is back", "--supersedes", "m-000000")
    assert bad.exit_code != 0 and "no memory with id m-000000" in bad.output


def test_unrelated_likes_do_not_supersede_each_other(ws):
    ws.remember("Seojun likes jazz")
    assert ws.remember("Seojun likes tea").action == "written"
    assert ws.remember("Seojun dislikes jazz").action == "superseded"


def test_near_duplicate_supersedes_but_numbers_keep_versions_apart(ws):
    a = ws.remember("The weekly review is on Monday at ten in room B").entry
    b = ws.remember("The weekly review is on Mondays at ten in room B")
    assert b.action == "superseded"
    assert b.entry.fields["supersedes"] == a.id
    ws.remember("Released version 1.2.0 of giok to PyPI")
    assert ws.remember("Released version 1.3.0 of giok to PyPI").action == "written"


@pytest.mark.parametrize(
    "secret,kind",
    [
        ("sk-proj-" + "a1B2c3D4" * 5, "openai-key"),
        ("sk-ant-api03-" + "x" * 40, "anthropic-key"),
        ("ghp_" + "A" * 36, "github-token"),
        ("AKIA" + "ABCDEFGHIJKLMNOP", "aws-access-key"),
        ("xoxb-1234567890-abcdefghij", "slack-token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlLXNpZw", "jwt"),
    ],
)
def test_secrets_are_redacted_before_file_and_git(ws, secret, kind):
    result = ws.remember(f"The production credential is {secret} for the deploy bot")
    assert result.action == "written"
    assert f"[REDACTED:{kind}]" in result.entry.text
    assert any("redacted" in n for n in result.notes)
    assert secret not in (ws.root / "MEMORY.md").read_text()
    assert secret not in git(ws, "log", "--all", "-p", "--format=%B")


def test_password_and_private_key_redacted_keeping_the_context():
    text, _kinds = policy.redact("wifi password: hunter2hunter and 비밀번호는 abcd1234!")
    assert "hunter2hunter" not in text
    assert "abcd1234" not in text
    assert text.startswith("wifi password: [REDACTED:password]")
    key = "-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEA -----END RSA PRIVATE KEY-----"
    assert policy.redact(f"deploy key {key}")[0] == "deploy key [REDACTED:private-key]"


def test_refused_secret_is_redacted_in_the_trace_too(ws):
    secret = "sk-" + "Z9" * 20
    result = ws.remember(f"maybe the key is {secret}")
    assert result.action == "refused"
    assert secret not in (ws.root / "state/trace.jsonl").read_text()
    assert secret not in git(ws, "log", "--all", "-p", "--format=%B")


def test_trace_of_written_entry_shows_decision_and_source(ws, cli):
    entry = ws.remember("Seojun's timezone is Asia/Seoul", source="telegram:4411").entry
    found = trace.lookup(ws, entry.id)
    created = next(e for e in found["events"] if e.get("created"))
    assert created["decision"] == "written"
    assert created["source"] == "telegram:4411"
    assert created["via"] == "api"
    out = cli("-w", "zeon", "trace", entry.id)
    assert "telegram:4411" in out.output
    assert "decision: written" in out.output


def test_trace_of_hand_written_entry_finds_the_commit(ws):
    path = ws.root / "MEMORY.md"
    path.write_text(
        path.read_text().replace(
            "## 📝 M30 : 30-day memory", "## 📝 M30 : 30-day memory\n- Hand fact about the moon"
        )
    )
    git(ws, "commit", "-qam", "edited by hand")
    entry = next(e for e in ws.memory().entries() if e.text == "Hand fact about the moon")
    events = trace.lookup(ws, entry.id)["events"]
    assert events[0]["decision"] == "unrecorded"
    assert events[0]["message"] == "edited by hand"


def test_trace_and_history_errors(ws):
    with pytest.raises(InvalidInput):
        trace.lookup(ws, "../x")
    with pytest.raises(NotFound):
        trace.lookup(ws, "r-000000")
    with pytest.raises(NotFound):
        trace.history(ws, "m-000000")
    r = run_giok("-w", "zeon", "trace", "m-zz")
    assert r.returncode != 0
    assert r.stderr.startswith("Error: ")


def test_cli_remember_refused_and_user_option(ws, cli):
    out = cli("-w", "zeon", "remember", "thanks!")
    assert out.exit_code == 0
    assert out.output.startswith("refused: greeting")
    out = cli("-w", "zeon", "remember", "Prefers window seats", "--user", "Seojun", "--json")
    assert json.loads(out.output)["entry"]["scope"] == "user:Seojun"


def test_a_layer_tag_and_a_pasted_list_marker_stay_out_of_the_entry(ws):
    """The tag chose the layer; neither it nor a "1. " pasted from a list is part of the memory
    (boot and search would show them in every session). A tag inside a sentence stays."""
    texts = {
        "My blood type is O negative #m0": ("My blood type is O negative", "M0"),
        "1. Minji prefers tea over coffee": ("Minji prefers tea over coffee", None),
        "[M365] Mina and Seojun married on 2026-05-09": ("Mina and Seojun married on 2026-05-09", "M365"),
        "Write #m0 only for lasting truths #m90": ("Write #m0 only for lasting truths", "M90"),
    }
    for text, (kept, layer) in texts.items():
        done = ws.remember(text)
        assert done.action == "written", (text, done.reason)
        entry = ws.memory().find(done.entry.id)
        assert entry.text == kept, text
        assert layer is None or entry.layer == layer, (text, entry.layer)
