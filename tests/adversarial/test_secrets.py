"""Secrets matrix: every write path × 17 kinds of secret → the secret's value is in no file of
the workspaces or the home, no git object (reachable or not, commit messages included), no row
of the search index and no row of the cross-view bus. Plus ordinary memories that must be
stored exactly as written (false positives stay rare)."""

from __future__ import annotations

import base64
import json
import random
import re
import sqlite3
import string
import subprocess

import pytest

from giok import Workspace
from giok.edges import mcp
from giok.edges.memory_tool import MemoryTool
from giok.retrieval.index import Index
from giok.write.policy import redact

ALNUM = string.ascii_letters + string.digits


def secret_kinds(rng: random.Random) -> dict[str, tuple[str, str]]:
    """kind → (a text holding the secret, the value that must never be stored). Realistic
    shapes, random fake values (seeded: the same run every time)."""

    def r(n, alphabet=ALNUM):
        return "".join(rng.choice(alphabet) for _ in range(n))

    def b64(data) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    out = {}
    v = "sk-" + r(48)
    out["openai"] = (f"the bot uses the openai key {v} in production", v)
    v = "sk-proj-" + r(40, ALNUM + "_-") + r(8)
    out["openai-proj"] = (f"set OPENAI_API_KEY={v} on the server", v)
    v = "sk-ant-api03-" + r(86, ALNUM + "_-") + "AA"
    out["anthropic"] = (f"claude runs with {v} for the agent", v)
    v = "AKIA" + r(16, string.ascii_uppercase + string.digits)
    out["aws-access-key"] = (f"aws access key id {v} for backups", v)
    v = r(40, ALNUM + "/+")
    out["aws-secret-key"] = (f"aws_secret_access_key = {v}", v)
    v = "ghp_" + r(36)
    out["github-ghp"] = (f"push to the mirror with {v} please", v)
    v = "github_pat_" + r(22) + "_" + r(59)
    out["github-pat"] = (f"the CI token is {v} for releases", v)
    v = f"xoxb-{r(12, string.digits)}-{r(13, string.digits)}-{r(24)}"
    out["slack"] = (f"the slack bot posts with {v} daily", v)
    v = "AIza" + r(35, ALNUM + "_-")
    out["google"] = (f"the maps widget key {v} is restricted", v)
    v = "sk_live_" + r(24)
    out["stripe"] = (f"stripe charges go through {v} now", v)
    sig = r(43, ALNUM + "_-")
    v = f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64({'sub': r(10), 'iat': 1767225600})}.{sig}"
    out["jwt"] = (f"the session cookie was {v} yesterday", sig)
    body = r(64, ALNUM + "+/")
    out["pem"] = (
        f"the deploy key -----BEGIN RSA PRIVATE KEY----- MIIEpAIBAAKCAQEA{body} -----END RSA PRIVATE "
        "KEY-----",
        body,
    )
    v = r(14, ALNUM + "!#%")
    out["password-line"] = (f"password: {v}", v)
    v = r(16)
    out["url-credentials"] = (f"the db is at postgres://admin:{v}@db.example.com:5432/app", v)
    v = r(12)
    out["korean-password"] = (f"서버 비밀번호는 {v} 입니다", v)
    v = r(40, ALNUM + "._-")
    out["bearer"] = (f"call it with Authorization: Bearer {v} header", v)
    v = r(43, ALNUM + "_-")
    out["generic-key"] = (f"rotate {v} tonight", v)
    return out


KINDS = secret_kinds(random.Random(20261203))


@pytest.fixture
def home(ws, tmp_path, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    mira, _ = Workspace.init(tmp_path / "mira", name="mira", user="Minji", home=giok_home)
    return ws, mira, giok_home


def _escape_some(value: str) -> str:
    """JSON with one character of the value \\u-escaped (`sk-\\u0070roj-…`)."""
    i = min(4, len(value) - 1)
    return json.dumps({"key": value[:i] + "\x00" + value[i + 1 :]}).replace(
        "\\u0000", f"\\u{ord(value[i]):04x}"
    )


def _escape_all(value: str) -> str:
    return '{"key": "' + "".join(f"\\u{ord(c):04x}" for c in value) + '"}'


def _ok(out):
    assert out.exit_code == 0, out.output
    return out


# Each path writes `text` (the i-th secret) once. `cli` is the in-process CLI runner.
def _cli(args, input=None):
    return lambda ws, cli, text, i: _ok(cli(*args(text, i), "-w", "zeon", input=input and input(text, i)))


def _tool(params):
    return lambda ws, cli, text, i: MemoryTool(ws).handle(params(ws, text, i))


def _note(ws, i, body="# Note\n\nline one\n"):
    rel = f"notes/n{i}.md"
    if not (ws.root / rel).exists():
        MemoryTool(ws).handle({"command": "create", "path": f"/memories/{rel}", "file_text": body})
    return f"/memories/{rel}"


def _mcp(name, args):
    return lambda ws, cli, text, i: mcp.call(ws, name, args(text, i))


WRITE_PATHS = {
    "cli remember text": _cli(lambda t, i: ("remember", t, "--force")),
    "cli remember source": _cli(
        lambda t, i: ("remember", f"Seojun watered garden bed number {i}", "--source", t)
    ),
    "cli diary": _cli(lambda t, i: ("diary", t)),
    "cli lesson title": _cli(lambda t, i: ("lesson", t, "--body", f"point {i}")),
    "cli lesson body": _cli(lambda t, i: ("lesson", f"lesson {i}", "--body", t)),
    "cli decide text": _cli(lambda t, i: ("decide", t, "--why", f"reason {i}")),
    "cli decide why": _cli(lambda t, i: ("decide", f"decision {i}", "--why", t)),
    "cli task add": _cli(lambda t, i: ("task", "add", t)),
    "cli state set": _cli(lambda t, i: ("state", "set", "next-step", t)),
    "cli heartbeat add": _cli(lambda t, i: ("heartbeat", "add", t)),
    "cli crossview send": _cli(lambda t, i: ("crossview", "send", t)),
    "cli flush": _cli(
        lambda t, i: ("flush", "--session", f"s{i}"),
        input=lambda t, i: json.dumps({"role": "user", "content": f"We decided: {t}."}) + "\n",
    ),
    "memory tool create": _tool(
        lambda ws, t, i: {
            "command": "create",
            "path": f"/memories/notes/c{i}.md",
            "file_text": f"# Note\n\n{t}\n",
        }
    ),
    "memory tool create json \\u (one char)": _tool(
        lambda ws, t, i: {
            "command": "create",
            "path": f"/memories/notes/j{i}.md",
            "file_text": _escape_some(t),
        }
    ),
    "memory tool create json \\u (all chars)": _tool(
        lambda ws, t, i: {
            "command": "create",
            "path": f"/memories/notes/k{i}.md",
            "file_text": _escape_all(t),
        }
    ),
    "memory tool str_replace": _tool(
        lambda ws, t, i: {"command": "str_replace", "path": _note(ws, i), "old_str": "line one", "new_str": t}
    ),
    "memory tool str_replace json \\u": _tool(
        lambda ws, t, i: {
            "command": "str_replace",
            "path": _note(ws, i),
            "old_str": "line one",
            "new_str": _escape_some(t),
        }
    ),
    "memory tool insert": _tool(
        lambda ws, t, i: {"command": "insert", "path": _note(ws, i), "insert_line": 1, "insert_text": t}
    ),
    "mcp remember text": _mcp("memory_remember", lambda t, i: {"text": f"{t} (fact {i})"}),
    "mcp remember source": _mcp(
        "memory_remember", lambda t, i: {"text": f"Seojun planted tree number {i}", "source": t}
    ),
    "mcp decide": _mcp("memory_decide", lambda t, i: {"text": t, "why": t}),
    "mcp lesson": _mcp("memory_lesson", lambda t, i: {"title": f"lesson {i}", "body": t}),
    "mcp task": _mcp("memory_task", lambda t, i: {"action": "add", "text": t}),
    "mcp state": _mcp("memory_state", lambda t, i: {"action": "set", "section": "phase", "text": t}),
    "mcp heartbeat": _mcp("memory_heartbeat", lambda t, i: {"action": "add", "text": t}),
    "mcp crossview send": _mcp("crossview_send", lambda t, i: {"text": t}),
}


def _unescaped(text: str) -> str:
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text).replace("\\/", "/")


def _stores(ws_list, home) -> dict[str, str]:
    """Everything giok keeps, as text: every file (raw, and with \\u escapes decoded), every git
    object (reachable or not), the search index's rows and the bus's rows."""
    out = {}
    for ws in ws_list:
        Index.for_workspace(ws).sync()
        for path in ws.root.rglob("*"):
            if path.is_file() and "/.git/objects/" not in path.as_posix():
                text = path.read_bytes().decode("utf-8", "replace")
                out[f"file {path}"] = text + "\n" + _unescaped(text)
        objects = subprocess.run(
            ["git", "-C", str(ws.root), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", "replace")
        out[f"git objects of {ws.name}"] = objects + "\n" + _unescaped(objects)
        with sqlite3.connect(ws.root / ".giok" / "index.sqlite") as db:
            out[f"index rows of {ws.name}"] = "\n".join(r[0] for r in db.execute("SELECT text FROM memories"))
    for path in home.path.rglob("*"):
        if path.is_file():
            out[f"file {path}"] = path.read_bytes().decode("utf-8", "replace")
    bus = home.path / "crossview.db"
    if bus.exists():
        with sqlite3.connect(bus) as db:
            rows = db.execute(
                "SELECT m.text, m.transports, COALESCE(d.diary, '') FROM messages m "
                "LEFT JOIN deliveries d ON d.message_id = m.id"
            ).fetchall()
        out["bus rows"] = "\n".join(" ".join(row) for row in rows)
    return out


@pytest.mark.parametrize("path", list(WRITE_PATHS))
def test_no_secret_reaches_any_store(home, cli, path):
    ws, mira, giok_home = home
    write = WRITE_PATHS[path]
    for i, (_kind, (text, _value)) in enumerate(KINDS.items()):
        write(ws, cli, text, i)
    stores = _stores([ws, mira], giok_home)
    leaks = sorted(
        {
            f"{kind} in {where}"
            for kind, (_, value) in KINDS.items()
            for where, blob in stores.items()
            if value in blob
        }
    )
    assert not leaks, f"{path}: {len(leaks)} leak(s):\n" + "\n".join(leaks[:20])


def test_the_matrix_is_wide_enough():
    assert len(KINDS) >= 14
    assert len(WRITE_PATHS) >= 20
    for kind, (text, value) in KINDS.items():  # each is a real catch of the redactor, not luck
        assert value in text, kind
        assert value not in redact(text)[0], kind


# -- false positives ----------------------------------------------------------------------------
ORDINARY = [
    "Seojun prefers m-7f3a2c over m-1b2c3d for the parser",
    "Released version 1.4.2 on 2026-03-05 at 14:30",
    "The fix landed in commit 3f9c2a1b4d5e6f708192a3b4c5d6e7f8091a2b3c",
    "Trace id 123e4567-e89b-12d3-a456-426614174000 belongs to the failed run",
    "The password policy requires twelve characters",
    "Password reset flow is finished",
    "서준은 아침마다 커피를 마신다",
    "비밀번호는 매달 바꾸기로 했다",
    "토큰은 한 시간 뒤에 만료된다",
    "AbstractSingletonProxyFactoryBean2026 is the class to refactor",
    "test_isolation_matrix_case_number_42_Alpha is the slow test",
    "See src/giok/memory_tool.py and https://github.com/anthropics/claude-code/issues/1234",
    "The API token lasts 3600 seconds",
    "Config: max_tokens=4096 and TOKEN_BUDGET=120000000000000",
    "Reset the password for the staging box tomorrow",
    "The router password was changed yesterday",
    "The wifi password is stored in 1Password",
    "Password was reset by IT on Monday",
    "Run pwd /home/minsu to check the folder",
    "PW 2025-01 release notes are in the wiki",
    "tokenizer: cl100k_base-2024 is used for counting",
    "비밀번호는 password manager에 저장",
]


@pytest.mark.parametrize(
    "text, value",
    [
        ("Backup password for the router: hunter2-Bx7q", "hunter2-Bx7q"),
        ("password for our wifi = s3cret-pass", "s3cret-pass"),
    ],
)
def test_a_password_named_for_something_is_redacted(ws, text, value):
    assert value not in redact(text)[0]
    ws.remember(text, force=True)
    assert value not in ws.read_text("MEMORY.md")


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_memories_are_stored_as_written(ws, text):
    assert redact(text) == (text, [])
    result = ws.remember(text, force=True)
    assert result.entry.text == text
    assert not result.notes
    ws.diary(text)
    assert text in ws.read_text(ws.diary_path())


@pytest.mark.parametrize(
    "text",
    [
        "a_" * 64000,
        "token_" * 20000,
        "key " * 30000,
        "aB3" * 40000,
        "\\u0041" * 20000,
        "password: " * 12000,
        "비밀번호는 " * 20000,
        "A" * 40 + "=" * 50000,
    ],
)
def test_redaction_stays_linear_on_hostile_input(text):
    import time

    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 3.0  # a nested quantifier took minutes on the first of these


def test_the_fast_check_finds_what_redact_finds():
    """`secrets_in` (giok check, boot) passes a line over without the patterns only when it
    cannot hold a secret: on every kind here, plain and escaped, and the ordinary texts, it
    finds what redact finds."""
    from giok.write.policy import secrets_in

    texts = [t for t, _ in KINDS.values()]
    texts += [_escape_some(v) for _, v in KINDS.values()] + [_escape_all(v) for _, v in KINDS.values()]
    texts += [f"- [2026-03-01] {t} <!-- id: m-5ec7e7 -->" for t in texts] + ORDINARY
    for text in texts:
        assert secrets_in(text) == redact(text)[1], text
    assert all(secrets_in(t) for t, _ in KINDS.values())
