"""The MCP server end to end: `python -m giok mcp` in a subprocess, driven by the official
`mcp` client over stdio. One server process serves the whole module."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("mcp")

from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from giok import Home, Workspace
from giok.edges.mcp import TOOLS
from giok.lifecycle import watchdog
from giok.lifecycle.crossview import Bus

EXPECTED = {
    "memory_boot",
    "memory_recall",
    "memory_search",
    "memory_get",
    "memory_remember",
    "memory_decide",
    "memory_lesson",
    "memory_task",
    "memory_state",
    "memory_heartbeat",
    "memory_forget",
    "memory_task_list",
    "memory_state_show",
    "memory_heartbeat_list",
    "crossview_send",
    "crossview_inbox",
    "crossview_ack",
    "memory_distill_plan",
    "memory_distill_apply",
    "memory_flush",
    "memory_review",
    "memory_review_resolve",
}
READ_ONLY = {
    "memory_boot",
    "memory_recall",
    "memory_search",
    "memory_get",
    "crossview_inbox",
    "memory_task_list",
    "memory_state_show",
    "memory_heartbeat_list",
    "memory_distill_plan",
    "memory_review",
}
DESTRUCTIVE = {
    "memory_forget",
    "memory_state",
    "memory_heartbeat",
    "memory_distill_apply",
    "memory_review_resolve",
}


@contextlib.asynccontextmanager
async def _session(params):
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


class Client:
    """Synchronous calls into one MCP session that runs in a portal thread."""

    def __init__(self, portal, session, env, ws):
        self.portal, self.session, self.env, self.ws = portal, session, env, ws

    def tools(self):
        return self.portal.call(self.session.list_tools).tools

    def call(self, name, **arguments):
        return self.portal.call(self.session.call_tool, name, arguments)

    def ok(self, name, **arguments):
        result = self.call(name, **arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content

    def error(self, name, **arguments) -> str:
        result = self.call(name, **arguments)
        assert result.is_error, result
        return result.content[0].text

    def cli(self, *args) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "giok", *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=60,
        )


def _wait_for_vectors(client, seconds: float = 300) -> None:
    """The server warms its index in the background and answers searches from keywords until
    the vectors are built (tests/test_mcp_warmup.py tests that); these tests are about full
    hybrid answers, so they start once the warm-up is done, however busy the machine is."""
    deadline = time.monotonic() + seconds
    while "index" in client.ok("memory_search", query="warm-up", k=1):
        assert time.monotonic() < deadline, "the MCP server's index warm-up did not finish"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp")
    env = {
        "GIOK_HOME": str(base / "home"),
        "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if os.environ.get(
        "PYTHONPATH"
    ):  # the SDK starts the server with a minimal environment: run this tree's giok
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # so the fixtures below write to the same home as the server
    try:
        home = Home(base / "home")
        ws, _ = Workspace.init(base / "zeon", name="zeon", user="Seojun", home=home)
        Workspace.init(base / "sion", name="sion", home=home)
        (base / "outside.md").write_text("secret outside the workspace\n")
        (ws.root / "memory" / "evil.md").symlink_to(base / "outside.md")
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "giok", "mcp", "-w", "zeon"], env=env, cwd=str(base)
        )
        with (
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(_session(params)) as session,
        ):
            client = Client(portal, session, env, ws)
            _wait_for_vectors(client)
            yield client
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


@pytest.fixture(autouse=True)
def giok_home(server):  # overrides conftest's per-test home: this module shares the server's
    return Home(server.env["GIOK_HOME"])


def test_lists_every_tool_with_schema_description_and_hints(server):
    tools = {t.name: t for t in server.tools()}
    assert set(tools) == EXPECTED
    for name, t in tools.items():
        assert len(t.description) > 60, name
        assert t.input_schema["type"] == "object"
        assert t.input_schema["additionalProperties"] is False
        assert set(t.input_schema.get("required", [])) <= set(t.input_schema["properties"])
        assert t.annotations.read_only_hint is (name in READ_ONLY), name
        assert t.annotations.destructive_hint is (name in DESTRUCTIVE), name
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_remember"].input_schema["properties"]["layer"]["enum"] == [
        "M0",
        "M365",
        "M90",
        "M30",
    ]


def test_remember_get_and_forget(server):
    result = server.ok(
        "memory_remember",
        text="Seojun prefers answers with the result first.",
        layer="M365",
        type="preference",
        scope="user:seojun",
    )
    entry = result["entry"]
    assert result["action"] == "written"
    assert entry["layer"] == "M365"
    assert entry["id"].startswith("m-")
    got = server.ok("memory_get", path="MEMORY.md")
    assert entry["id"] in got["text"]
    assert got["from"] == 1
    assert got["to"] == got["total_lines"]
    line = entry["line"]
    one = server.ok("memory_get", path="MEMORY.md", lines=1, **{"from": line})
    assert one["text"].startswith("- ")
    assert "result first" in one["text"]
    assert one["to"] == line
    assert server.ok("memory_forget", id=entry["id"], reason="user asked")["action"] == "removed"
    assert entry["id"] not in server.ok("memory_get", path="MEMORY.md")["text"]
    assert "memory: forget" in server.ws.log(1)[0]["message"]
    refused = server.ok(
        "memory_remember", text="안녕!"
    )  # the write policy's answer is a result, not an error
    assert refused["action"] == "refused"
    assert refused["entry"] is None
    assert refused["reason"]


def test_review_queue_lists_and_resolves(server):
    from giok.lifecycle.distill import distill

    old = server.ok("memory_remember", text="The nightly backup runs on the NAS")["entry"]["id"]
    new = server.ok("memory_remember", text="The nightly backup does not run on the NAS")["entry"]["id"]
    distill(server.ws)  # the night raises the pair once
    listed = server.ok("memory_review")
    (item,) = [i for i in listed["items"] if {e["id"] for e in i["entries"]} == {old, new}]
    old, new = (e["id"] for e in item["entries"])  # oldest first (one day: the order in MEMORY.md)
    assert item["kind"] == "contradiction"
    assert item["status"] == "open"
    assert "forget needs" in server.error("memory_review_resolve", id=item["id"], choice="forget")
    done = server.ok("memory_review_resolve", id=item["id"], choice="newer", reason="the NAS was retired")
    assert done["item"]["status"] == "resolved"
    assert done["item"]["outcome"].endswith(f"newer: {new} supersedes {old}")
    assert server.ws.memory().find(old).fields["superseded_by"] == new
    assert item["id"] not in [i["id"] for i in server.ok("memory_review")["items"]]
    again = server.ok("memory_review", all=True)["items"]
    assert [i["status"] for i in again if i["id"] == item["id"]] == ["resolved"]
    assert "already resolved" in server.error("memory_review_resolve", id=item["id"], choice="both")


def test_tool_errors_carry_the_cli_message(server):
    text = server.error("memory_forget", id="m-abcdef", reason="gone")
    cli = server.cli("-w", "zeon", "forget", "m-abcdef", "--reason", "gone")
    assert cli.returncode == 4
    assert text == cli.stderr.strip() == "Error: no memory with id m-abcdef in zeon"
    text = server.error("memory_remember", text="x y z", layer="M7")
    cli = server.cli("-w", "zeon", "remember", "x y z", "--layer", "M7")
    assert text == cli.stderr.strip() == "Error: invalid layer 'M7': choose one of M0, M365, M90, M30"
    assert server.error("memory_remember", text=" ") == "Error: memory text is empty"
    assert server.error("memory_search") == "Error: invalid arguments for memory_search: query is required"
    assert (
        server.error("memory_search", query=None)
        == "Error: invalid arguments for memory_search: query: null is not a string"
    )  # JSON's words, not Python's None
    assert "Additional properties" in server.error("memory_decide", text="a", why="b", bogus=1)
    assert server.error("memory_task", action="start") == "Error: id is required for action start"
    with pytest.raises(MCPError) as unknown:  # an unknown tool is a protocol error (JSON-RPC -32602)
        server.call("no_such_tool")
    assert unknown.value.code == -32602


def test_memory_get_stays_inside_the_memory_files(server):
    assert (
        server.error("memory_get", path="../sion/MEMORY.md")
        == "Error: path '../sion/MEMORY.md' escapes the workspace"
    )
    assert "must be relative" in server.error("memory_get", path="/etc/passwd")
    assert "leads outside the workspace" in server.error("memory_get", path="memory/evil.md")
    assert "is not a memory file" in server.error("memory_get", path=".git/config")
    assert "is not a memory file" in server.error("memory_get", path=".giok/refs.jsonl")
    assert (
        server.error("memory_get", path="memory/1999-01-01.md")
        == "Error: no file memory/1999-01-01.md in workspace zeon"
    )
    assert "past the end of SOUL.md" in server.error("memory_get", path="SOUL.md", **{"from": 100000})
    soul = server.ok("memory_get", path="SOUL.md")
    assert soul["text"] == (server.ws.root / "SOUL.md").read_text().rstrip("\n")


def test_decide_lesson_task_state_heartbeat(server):
    d1 = server.ok("memory_decide", text="Use SQLite for the index", why="no server needed")["id"]
    d2 = server.ok("memory_decide", text="Use SQLite with WAL", why="concurrent readers", supersedes=d1)["id"]
    assert d2 == f"D-{int(d1[2:]) + 1:03d}"
    assert server.error("memory_decide", text="x", why="y", supersedes="D-999").startswith(
        "Error: no decision D-999"
    )
    assert server.ok("memory_lesson", title="Commit at once", body="buffered writes were lost")[
        "heading"
    ].endswith("Commit at once")
    tid = server.ok("memory_task", action="add", text="draft the essay")["id"]
    assert server.ok("memory_task", action="start", id=tid)["status"] == "doing"
    assert server.ok("memory_task", action="block", id=tid, note="waiting for data")["status"] == "blocked"
    listed = server.ok("memory_task_list", status="blocked")["tasks"]
    assert [t["id"] for t in listed] == [tid]
    assert "waiting for data" in listed[0]["text"]
    state = server.ok("memory_state", action="set", section="next-step", text="Finish the draft")
    assert state["next-step"] == "Finish the draft" == server.ok("memory_state_show")["next-step"]
    assert "unknown state section" in server.error("memory_state", section="mood", text="x")
    server.ok("memory_heartbeat", action="add", text="QRT pool empty")
    items = server.ok("memory_heartbeat_list")["items"]
    assert items[-1] == "QRT pool empty"
    assert server.ok("memory_heartbeat", action="done", item=len(items))["removed"] == "QRT pool empty"
    assert (
        server.error("memory_heartbeat", action="done", item="nothing like this")
        == "Error: no open heartbeat item 'nothing like this'"
    )
    messages = [c["message"].splitlines()[0] for c in server.ws.log(12)]
    assert any(m.startswith("decision: D-") for m in messages)
    assert any(m.startswith("task: blocked") for m in messages)


def test_the_agent_links_a_change_the_policy_does_not_see(server):
    old = server.ok("memory_remember", text="Mina parks at the Elm Street garage", layer="M90")["entry"]["id"]
    new = server.ok(
        "memory_remember", text="Mina got a spot in the office basement", layer="M90", supersedes=old
    )
    assert new["action"] == "superseded" and new["reason"] == f"replaces {old}, as asked"
    again = server.error("memory_remember", text="Mina takes the bus", layer="M90", supersedes=old)
    assert (
        again == f"Error: {old} is already superseded by {new['entry']['id']}: name the entry that holds now"
    )


def test_the_agent_flushes_the_gist_it_wrote(server):
    """The host agent is the summariser: its gist is kept through the write policy, each item
    in one place, and completed by the conversation's own rules."""
    done = server.ok(
        "memory_flush",
        gist={"constraints": ["Never deploy on a Friday"], "pending": ["renew the TLS certificate"]},
        conversation="user: Always answer me in Korean.",
        session="mcp-flush",
    )
    assert done["action"] == "flushed" and done["summary_by"] == "agent"
    assert tuple(TOOLS["memory_flush"].properties["gist"]["properties"]) == watchdog.CATEGORIES
    kept = {m["text"]: m["action"] for m in done["memories"]}
    assert kept["constraint: Never deploy on a Friday"] == "written"
    assert any("Always answer me in Korean" in t for t in kept)  # added from the conversation
    assert "pending: renew the TLS certificate" in server.ws.read_text("state/memo.md")
    assert 'gist/facts: "x" is not a list' in server.error("memory_flush", gist={"facts": "x"}, session="s9")
    again = server.ok("memory_flush", gist={"facts": ["x y z"]}, session="mcp-flush")
    assert again["action"] == "skipped"


def test_reads_are_tools_of_their_own_that_never_ask_permission(server):
    tools = {t.name: t for t in server.tools()}
    for read in ("memory_task_list", "memory_state_show", "memory_heartbeat_list"):
        hints = tools[read].annotations
        assert hints.read_only_hint is True, read
        assert hints.destructive_hint is False, read
    for write, read in (("memory_task", "list"), ("memory_heartbeat", "list")):
        assert read not in tools[write].input_schema["properties"]["action"]["enum"], write
    assert "show" not in tools["memory_state"].input_schema["properties"]["action"]["enum"]


def test_what_search_returns_get_opens(server):
    root = server.ws.root
    (root / "IDENTITY.md").write_text("# IDENTITY\n\n- Name: Zeon, the quartermaster of the fleet\n")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "fleet.md").write_text(
        "# Fleet notes\n\nThe quartermaster counts the fleet's rations on Fridays.\n"
    )
    (root / "skills" / "rations").mkdir(parents=True, exist_ok=True)
    (root / "skills" / "rations" / "SKILL.md").write_text(
        "# Rations\n\nHow the quartermaster counts rations.\n"
    )
    hits = server.ok("memory_search", query="quartermaster fleet rations", k=10)["results"]
    assert {h["path"] for h in hits} & {"IDENTITY.md", "notes/fleet.md"}
    for hit in hits:
        got = server.ok(
            "memory_get",
            path=hit["path"],
            lines=hit["end_line"] - hit["start_line"] + 1,
            **{"from": hit["start_line"]},
        )
        assert got["path"] == hit["path"], hit
        assert got["text"].strip(), hit
    for path in ("IDENTITY.md", "notes/fleet.md", "skills/rations/SKILL.md"):
        assert "quartermaster" in server.ok("memory_get", path=path)["text"], path
    assert "is not a memory file" in server.error("memory_get", path="notes/fleet.txt")


def test_the_index_is_warm_before_the_first_call(tmp_path):
    """The server syncs the index in the background once the client has its `initialize` answer
    (tests/test_mcp_warmup.py): on a new workspace the first search used to build it (10-20 s,
    past an MCP client's request timeout)."""
    import sqlite3
    import time

    from giok.retrieval.index import _SKIP_FILES

    home = Home(tmp_path / "home")  # a home of its own: the module's siblings never see it
    ws, _ = Workspace.init(tmp_path / "fresh", name="fresh", home=home)
    ws.remember("The fresh workspace keeps its launch date in March.", layer="M30")
    md_files = {
        p.relative_to(ws.root).as_posix() for p in ws.root.rglob("*.md") if ".git" not in p.parts
    } - _SKIP_FILES
    proc = subprocess.Popen(
        [sys.executable, "-m", "giok", "mcp", "-w", "fresh"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "GIOK_HOME": str(tmp_path / "home")},
    )
    db = ws.root / ".giok" / "index.sqlite"
    indexed: set = set()
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ):
        proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    with contextlib.closing(sqlite3.connect(db, timeout=1)) as con:
                        indexed = {r[0] for r in con.execute("SELECT path FROM files")}
                except sqlite3.Error:
                    pass
                if md_files <= indexed:
                    break
            time.sleep(0.3)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert md_files <= indexed, (sorted(md_files - indexed), proc.stderr.read().decode()[-2000:])


def test_crossview_send_inbox_ack(server, giok_home):
    bus = Bus(giok_home)
    sent = server.ok("crossview_send", text="브리핑 초안 올림")
    assert sent["sender"] == "zeon"
    assert sent["recipients"] == ["sion"]
    [got] = bus.inbox("sion", unread=True)
    answer = bus.reply(got["id"], "확인했어", "sion")
    inbox = server.ok("crossview_inbox")["messages"]
    assert [m["id"] for m in inbox] == [answer["id"]]
    assert inbox[0]["rendered"].startswith("[단톡방 크로스뷰] sion ↩")
    assert "reply to a reply" in server.error("crossview_send", text="고마워", reply_to=answer["id"])
    assert "relay of a relay" in server.error("crossview_send", text=inbox[0]["rendered"])
    assert server.ok("crossview_ack")["acked"] == [answer["id"]]
    assert server.ok("crossview_inbox")["messages"] == []
    assert len(server.ok("crossview_inbox", unread=False)["messages"]) == 1


def test_server_without_the_sdk_says_how_to_install_it(tmp_path):
    code = (
        "import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
        "from giok.edges.cli import main; main(['mcp', '-w', 'zeon'])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "Error: the MCP server needs the mcp package: pip install 'giok[mcp]'"


def test_an_sdk_older_than_2_says_which_version_is_needed(tmp_path):
    code = (
        "import sys, importlib.metadata as md; sys.modules['mcp_types'] = None\n"  # as with mcp 1.x
        "real = md.version; md.version = lambda name: '1.26.0' if name == 'mcp' else real(name)\n"
        "from giok.edges.cli import main; main(['mcp', '-w', 'zeon'])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "Error: the MCP server needs mcp>=2.0, not mcp 1.26.0: pip install 'giok[mcp]' --upgrade"
    )


def test_core_modules_do_not_import_the_sdk():
    code = (
        "import sys, giok, giok.edges.cli, giok.lifecycle.crossview, giok.edges.mcp; "
        "print('mcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_search_then_get_the_hit(server):
    server.ok("memory_remember", text="Decided to use SQLite with FTS5 for the memory index.", layer="M90")
    server.ok(
        "memory_remember", text="서준은 결과부터 말하는 짧은 답을 좋아한다.", layer="M365", type="preference"
    )
    found = server.ok("memory_search", query="which database did we pick for the index?", k=3)
    top = found["results"][0]
    assert "SQLite" in top["text"]
    assert top["path"] == "MEMORY.md"
    assert top["score"] >= 0.35
    hit = server.ok(
        "memory_get",
        path=top["path"],
        lines=top["end_line"] - top["start_line"] + 1,
        **{"from": top["start_line"]},
    )
    assert "SQLite with FTS5" in hit["text"]
    ko = server.ok("memory_search", query="서준이 좋아하는 답변 스타일", k=3)["results"]
    assert ko
    assert "짧은 답" in ko[0]["text"]
    assert server.error("memory_search", query="x", k=0).startswith(
        "Error: invalid arguments for memory_search"
    )


def test_recall_decides_then_searches(server):
    skip = server.ok("memory_recall", query="안녕!")
    assert skip["decision"] == "skip"
    assert skip["attempts"] == []
    server.ok("memory_remember", text="The launch checklist lives in drafts/launch.md.", layer="M30")
    found = server.ok("memory_recall", query="where did we keep the launch checklist?")
    assert found["decision"] == "search"
    assert found["answer"] == "found"
    assert any("launch checklist" in r["text"] for r in found["results"])
    assert 1 <= len(found["attempts"]) <= 2


def test_search_a_sibling_when_the_home_allows_it(server, giok_home):
    sion = Workspace.open("sion", home=giok_home)
    sion.remember("시온의 다음 글감은 기억 증류에 관한 에세이다.", layer="M30")
    hits = server.ok("memory_search", query="시온 글감", workspaces=["sion"])["results"]
    assert hits
    assert hits[0]["workspace"] == "sion"
    assert "에세이" in hits[0]["text"]
    giok_home.update(lambda c: c["workspaces"]["sion"].update(private=True))
    try:
        text = server.error("memory_search", query="시온 글감", workspaces=["sion"])
        cli = server.cli("search", "시온 글감", "-w", "sion", "--as", "zeon")
        assert text == cli.stderr.strip()
        assert "may not read workspace 'sion'" in text
    finally:
        giok_home.update(lambda c: c["workspaces"]["sion"].pop("private"))


def test_boot_gives_the_session_context(server):
    server.ok("memory_remember", text="I am Zeon, the orchestrator of four agents.", layer="M0")
    result = server.call("memory_boot", budget=4000)
    assert not result.is_error, result.content[0].text
    boot = result.structured_content
    assert result.content[0].text == boot["text"]  # the model reads the context itself
    assert "orchestrator of four agents" in boot["text"]
    assert boot["budget"] == 4000
    assert boot["tokens"] <= 4000
    group = server.ok("memory_boot", context="group")
    assert "orchestrator of four agents" not in group["text"]
    assert (
        server.error("memory_boot", context="party") == "Error: invalid context 'party': use private or group"
    )


def test_get_hides_other_users_and_threads_entries(server):
    ws = server.ws
    ws.remember("Minji keeps her salary negotiation notes private.", layer="M90", scope="user:minji")
    ws.remember("Thread t-42 is about the merger rumour.", layer="M90", scope="thread:t-42")
    ws.remember("Seojun's dentist appointment moved to Thursday.", layer="M90", scope="user:Seojun")
    ws.remember("The staging server runs on port 8443.", layer="M90")
    archive = ws.root / "memory" / "archive" / "2026-01.md"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_text(
        "# Archive 2026-01\n\n## 📝 M30 : 30-day memory\n"
        "- Minji's old password hint was her cat. <!-- id: m-aaa111; scope: user:minji -->\n"
        "- The old build ran on Jenkins. <!-- id: m-bbb222 -->\n"
    )
    lines_on_disk = len((ws.root / "MEMORY.md").read_text().splitlines())

    got = server.ok("memory_get", path="MEMORY.md")
    assert "staging server" in got["text"]
    assert "dentist" in got["text"]  # workspace, and the server's user
    assert "Minji" not in got["text"]
    assert "merger" not in got["text"]
    assert got["total_lines"] == lines_on_disk  # hidden lines keep their place
    assert "(hidden" in got["text"]
    old = server.ok("memory_get", path="memory/archive/2026-01.md")["text"]
    assert "Jenkins" in old
    assert "password hint" not in old
    assert "m-aaa111" not in old

    in_thread = server.ok("memory_get", path="MEMORY.md", thread="t-42")["text"]
    assert "merger rumour" in in_thread
    assert "Minji" not in in_thread
    as_minji = server.ok("memory_get", path="MEMORY.md", user="minji")["text"]
    assert "salary negotiation" in as_minji
    assert "dentist" not in as_minji
    line = next(i for i, l in enumerate((ws.root / "MEMORY.md").read_text().splitlines(), 1) if "Minji" in l)
    one = server.ok("memory_get", path="MEMORY.md", lines=1, **{"from": line})
    assert "Minji" not in one["text"]
    assert one["to"] == line


def test_the_agent_judges_the_night_over_mcp(server):
    """Last in the module: it distills the shared workspace."""
    ws = server.ws
    ws.diary("Decided to ship the MCP distill tools this week")
    ws.diary("Seojun's favourite editor is Helix")
    ws.diary("hi")
    vim = ws.remember("Seojun writes his code in Vim", layer="M90").entry.id
    ws.diary("These days Seojun is all about Helix")
    plan = server.ok("memory_distill_plan")
    items = {i["text"]: i for i in plan["items"]}
    helix = items["These days Seojun is all about Helix"]
    assert vim in [e["id"] for e in helix["may_replace"]]  # the entries a kept line may replace
    assert {"Decided to ship the MCP distill tools this week", "hi"} <= set(items)
    assert items["hi"]["suggestion"]["decision"] == "drop"
    assert "decisions" in plan["instructions"]
    ship, editor = (
        items["Decided to ship the MCP distill tools this week"],
        items["Seojun's favourite editor is Helix"],
    )
    decisions = {
        ship["key"]: {"decision": "M365", "reason": "a milestone"},
        editor["key"]: "M7",  # not a choice: the offline judge decides it
        helix["key"]: {"decision": "M90", "reason": "his editor now", "replaces": vim},
    }
    stale = plan["plan"].split(".")[0] + ".00000000000000000000"
    assert "is stale" in server.error("memory_distill_apply", plan=stale, decisions=decisions)
    assert "is not a plan id" in server.error("memory_distill_apply", plan="soon", decisions={})
    assert "decisions is required" in server.error("memory_distill_apply", plan=plan["plan"])
    report = server.ok("memory_distill_apply", plan=plan["plan"], decisions=decisions)
    assert report["judges"] == ["agent"]
    assert report["commit"]
    assert editor["key"] in {f["key"] for f in report["fallback"]}
    layers = {e.text: e.layer for e in ws.memory().entries()}
    assert layers["Decided to ship the MCP distill tools this week"] == "M365"
    assert ws.memory().find(vim).superseded  # as the agent said
    assert vim in {s["id"] for s in report["superseded"]}
    assert "is stale" in server.error("memory_distill_apply", plan=plan["plan"], decisions=decisions)
