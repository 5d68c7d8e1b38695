"""What a `giok serve` token may see (review finding: two high bugs). Over the JSON API and MCP
over HTTP, on a real uvicorn server:

- `workspaces=` takes only the home's workspace names that the token reaches: a path (a folder
  with a MEMORY.md outside the home), `../c` or a workspace the token does not reach is one clear
  4xx naming what is allowed, nothing is read and no index is left there;
- a token reads for one user (USER.md's for a token minted as before, or `--user`): naming
  another user (`user=alice`) is refused or shows nothing of hers, on every read route and tool;
  an owner token (`--owner`) reads as anyone."""

from __future__ import annotations

import shutil

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from giok.edges.server.tokens import Tokens
from giok.store.layout import REVIEW
from giok.store.reviewfile import Entry, Item, ReviewFile
from giok.workspace import Workspace
from serve_support import make_home, serving

ALICE = "Alice keeps her passport in the blue drawer"
SEOJUN = "Seojun parks on level B2 of the garage"
FOREIGN = "The vault combination outside the home is kept in a blue notebook"
HERS = "keeps her passport"  # in no query: a response that holds it shows Alice's entry
THERE = "kept in a blue notebook"  # the foreign folder's text, in no query


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve-trust")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_CONFIG_GLOBAL", str(root / "gitconfig"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        home, workspaces = make_home(root)
        zeon = workspaces["zeon"]
        alice = zeon.remember(ALICE, layer="M90", scope="user:Alice").entry
        queue = ReviewFile(
            items=[Item("R-001", "contradiction", raised="2026-12-01", entries=[Entry(alice.id, "", ALICE)])]
        )
        zeon.path(REVIEW).write_bytes(queue.render())  # a copy of her entry, as the night queues it
        zeon.remember(SEOJUN, layer="M90", scope="user:Seojun")
        foreign = root / "c"  # a whole workspace, taken out of the home: registered nowhere
        Workspace.init(foreign, name="c", user="Seojun", home=home)[0].remember(FOREIGN, layer="M90")
        home.unregister("c")
        shutil.rmtree(foreign / ".giok", ignore_errors=True)
        with serving(home, workspaces) as running:
            tokens = Tokens(home)
            running.tokens["seojun"] = tokens.create(["zeon"], "read", user="Seojun")[0]
            running.tokens["owner"] = tokens.create(["zeon"], "read", owner=True)[0]
            running.tokens["minji"] = tokens.create(["zeon"], "read", user="Minji")[0]
            running.alice_id = alice.id  # type: ignore[attr-defined]
            running.foreign = foreign  # type: ignore[attr-defined]
            yield running


def mcp_call(srv, token: str, tool: str, arguments: dict):
    async def main():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {srv.tokens[token]}"})
        async with (
            http,
            streamable_http_client(f"{srv.url}/mcp/zeon", http_client=http) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            return await s.call_tool(tool, arguments)

    return anyio.run(main)


# -- workspaces= ------------------------------------------------------------------------------
@pytest.mark.parametrize("token", ["zeon-read", "seojun"])
def test_a_path_in_workspaces_is_a_clear_4xx_and_reads_nothing_outside_the_home(srv, token):
    with srv.client(srv.tokens[token]) as c:
        for route in ("search", "recall"):
            for spec in (str(srv.foreign), "../c", "../../c", "/etc"):
                r = c.get(
                    f"/api/w/zeon/{route}", params={"q": "vault combination notebook", "workspaces": spec}
                )
                assert 400 <= r.status_code < 500, (route, spec, r.status_code, r.text)
                assert THERE not in r.text
                assert "zeon" in r.json()["error"]  # names what is allowed
    assert not (srv.foreign / ".giok").exists()  # no index left in the foreign folder


def test_a_workspace_the_token_does_not_reach_is_refused_in_workspaces(srv):
    with srv.client(srv.tokens["zeon-read"]) as c:
        r = c.get("/api/w/zeon/search", params={"q": "marketing calendar", "workspaces": "mira"})
    assert r.status_code == 403, r.text
    assert "marketing" not in r.text
    with srv.client(srv.tokens["both-write"]) as c:  # a token that reaches both still may
        r = c.get("/api/w/zeon/search", params={"q": "marketing calendar", "workspaces": "mira"})
    assert r.status_code == 200 and "marketing" in r.text


def test_a_path_in_workspaces_over_mcp_is_a_tool_error_naming_the_allowed(srv):
    for spec in (str(srv.foreign), "../c"):
        result = mcp_call(
            srv, "zeon-read", "memory_search", {"query": "vault combination", "workspaces": [spec]}
        )
        assert result.is_error, result.content[0].text
        assert THERE not in result.content[0].text and "zeon" in result.content[0].text
    assert not (srv.foreign / ".giok").exists()


# -- a token reads for its user -----------------------------------------------------------------
API_READS = [
    ("search", {"q": "passport drawer"}),
    ("recall", {"q": "where does Alice keep her passport?"}),
    ("boot", {}),
    ("show", {}),
]


@pytest.mark.parametrize("token", ["zeon-read", "zeon-write", "seojun"])
def test_a_token_for_seojun_reads_nothing_of_alices_over_the_api(srv, token):
    with srv.client(srv.tokens[token]) as c:
        for route, params in API_READS:
            for user in ("alice", "Alice", None):
                asked = {**params, **({"user": user} if user else {})}
                r = c.get(f"/api/w/zeon/{route}", params=asked)
                assert r.status_code in (200, 403), (route, asked, r.text)
                assert HERS not in r.text, (route, asked)
                if user:
                    assert r.status_code == 403 and "Seojun" in r.json()["error"]
        for path in (f"/api/w/zeon/entry/{srv.alice_id}", f"/api/w/zeon/entry/{srv.alice_id}?user=alice"):
            r = c.get(path)
            assert r.status_code in (403, 404) and HERS not in r.text
        commits = c.get("/api/w/zeon/log", params={"limit": "50"})
        assert commits.status_code == 403 and HERS not in commits.text  # the history: owner only
        # the token still sees its own user's entries and the workspace's
        found = c.get("/api/w/zeon/search", params={"q": "garage level", "user": "seojun"})
        assert found.status_code == 200 and "garage" in found.text


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_search", {"query": "passport drawer"}),
        ("memory_recall", {"query": "where does Alice keep her passport?"}),
        ("memory_boot", {}),
        ("memory_get", {"path": "MEMORY.md"}),
    ],
)
def test_a_token_for_seojun_reads_nothing_of_alices_over_mcp(srv, tool, arguments):
    for user in ("alice", None):
        result = mcp_call(srv, "seojun", tool, {**arguments, **({"user": user} if user else {})})
        assert HERS not in result.content[0].text, (tool, user)
        assert HERS not in str(result.structured_content)
        if user:
            assert result.is_error and "Seojun" in result.content[0].text


def test_the_review_queue_over_mcp_needs_an_owner_token(srv):
    for tool, arguments in [("memory_review", {"all": True}), ("memory_get", {"path": REVIEW})]:
        result = mcp_call(srv, "seojun", tool, arguments)
        assert result.is_error and "owner token" in result.content[0].text
        assert HERS not in result.content[0].text
        assert HERS in mcp_call(srv, "owner", tool, arguments).content[0].text


def test_a_write_token_neither_writes_into_nor_forgets_alices_entries(srv):
    memory = srv.workspaces["zeon"].path("MEMORY.md")
    before = memory.read_bytes()
    with srv.client(srv.tokens["zeon-write"]) as c:
        r = c.post(
            "/api/w/zeon/remember",
            json={"text": "Alice moved her passport to the safe", "scope": "user:Alice"},
        )
        assert r.status_code == 403, r.text
        r = c.post("/api/w/zeon/forget", json={"id": srv.alice_id, "reason": "not mine"})
        assert r.status_code == 404 and HERS not in r.text
    assert memory.read_bytes() == before


def test_a_token_for_minji_reads_for_minji_not_for_the_user_md_user(srv):
    with srv.client(srv.tokens["minji"]) as c:
        for params in ({"q": "garage level"}, {"q": "garage level", "user": "Minji"}):
            r = c.get("/api/w/zeon/search", params=params)
            assert r.status_code == 200 and "level B2" not in r.text  # Seojun's entry
        r = c.get("/api/w/zeon/search", params={"q": "garage level", "user": "Seojun"})
        assert r.status_code == 403 and "Minji" in r.json()["error"] and "level B2" not in r.text
        assert "level B2" not in c.get("/api/w/zeon/show").text
        assert "level B2" not in c.get("/api/w/zeon/boot").text
    with srv.client(srv.tokens["seojun"]) as c:
        assert "level B2" in c.get("/api/w/zeon/show").text


def test_the_owner_token_reads_as_anyone_and_sees_the_history(srv):
    with srv.client(srv.tokens["owner"]) as c:
        r = c.get("/api/w/zeon/search", params={"q": "passport drawer", "user": "alice"})
        assert r.status_code == 200 and HERS in r.text
        assert HERS in c.get("/api/w/zeon/show").text
        assert HERS in c.get(f"/api/w/zeon/entry/{srv.alice_id}").text
        assert c.get("/api/w/zeon/log").status_code == 200


def test_tokens_record_their_user(srv):
    listed = {t.user: t for t in Tokens(srv.home).list() if t.user or t.owner}
    assert listed["Seojun"].owner is False
    assert any(t.owner for t in Tokens(srv.home).list())
