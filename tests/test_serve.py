"""giok serve: tokens (every refusal, nothing written) and the JSON API, over a real uvicorn
server on loopback (one per module), real git workspaces and the real token file."""

from __future__ import annotations

import json
import stat

import pytest

from conftest import run_giok
from giok.edges.server.tokens import Tokens
from giok.store import git
from serve_support import serve_fixture

srv = serve_fixture("serve")


def _snapshot(srv):
    return {n: (ws.path("MEMORY.md").read_bytes(), git.head_id(ws.root)) for n, ws in srv.workspaces.items()}


def _one_line_error(r, status):
    assert r.status_code == status, r.text
    assert "\n" not in r.text.strip()
    body = r.json()
    assert isinstance(body.get("error") or body.get("error_description"), str)
    return body


# -- tokens ---------------------------------------------------------------------------------
def test_token_file_keeps_only_a_hash_with_mode_0600(srv):
    path = Tokens(srv.home).path
    text = path.read_text()
    for secret in srv.tokens.values():
        assert secret not in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert all(len(r["sha256"]) == 64 for r in json.loads(text)["tokens"])


@pytest.mark.parametrize(
    ("token", "status"),
    [(None, 401), ("giok_0000_not-a-real-token", 401), ("zeon-read", 403), ("mira-write", 403)],
)
def test_a_refused_write_writes_nothing(srv, token, status):
    before = _snapshot(srv)
    secret = srv.tokens.get(token, token) if token else None
    with srv.client(secret) as c:
        for path, body in [
            ("/api/w/zeon/remember", {"text": "Seojun moved to Busan in 2026"}),
            ("/api/w/zeon/forget", {"id": "m-000000", "reason": "wrong"}),
            ("/api/w/zeon/task", {"action": "add", "text": "a task"}),
            ("/api/w/zeon/diary", {"text": "a diary line"}),
        ]:
            _one_line_error(c.post(path, json=body), status)
    assert _snapshot(srv) == before


def test_reads_need_a_token_for_that_workspace(srv):
    with srv.client() as c:
        assert "missing" in _one_line_error(c.get("/api/w/zeon/show"), 401)["error"]
    with srv.client("giok_0000_wrong") as c:
        _one_line_error(c.get("/api/w/zeon/show"), 401)
        _one_line_error(c.get("/api/workspaces"), 401)
    with srv.client(srv.tokens["mira-write"]) as c:
        assert (
            "does not reach"
            in _one_line_error(c.get("/api/w/zeon/search", params={"q": "coffee"}), 403)["error"]
        )
    with srv.client(srv.tokens["zeon-read"]) as c:
        assert c.get("/api/w/zeon/show").status_code == 200
        assert [w["name"] for w in c.get("/api/workspaces").json()["workspaces"]] == ["zeon"]


def test_mcp_endpoint_refuses_before_the_transport(srv):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    with srv.client() as c:
        _one_line_error(c.post("/mcp/zeon", json=init, headers=headers), 401)
    with srv.client("giok_0000_wrong") as c:
        _one_line_error(c.post("/mcp/zeon", json=init, headers=headers), 401)
    with srv.client(srv.tokens["mira-write"]) as c:
        _one_line_error(c.post("/mcp/zeon", json=init, headers=headers), 403)


def test_revoked_and_expired_tokens_are_refused(srv):
    tokens = Tokens(srv.home)
    secret, record = tokens.create(["zeon"], "read", name="short-lived")
    with srv.client(secret) as c:
        assert c.get("/api/w/zeon/show").status_code == 200
        tokens.revoke(record.id)
        _one_line_error(c.get("/api/w/zeon/show"), 401)
    import datetime as dt

    old, _ = tokens.create(["zeon"], "read", ttl=dt.timedelta(seconds=1))
    data = json.loads(tokens.path.read_text())
    data["tokens"][-1]["expires"] = "2000-01-01T00:00:00+00:00"
    tokens.path.write_text(json.dumps(data))
    with srv.client(old) as c:
        _one_line_error(c.get("/api/w/zeon/show"), 401)


def test_token_cli_prints_once_lists_and_revokes(tmp_path, ws):
    r = run_giok("token", "create", "--workspace", "zeon", "--scope", "write", "--name", "laptop")
    assert r.returncode == 0, r.stderr
    secret = r.stdout.strip()
    assert secret.startswith("giok_") and "shown once" in r.stderr
    listed = run_giok("token", "list")
    assert "laptop" in listed.stdout and "write" in listed.stdout and secret not in listed.stdout
    assert Tokens(ws.home).verify(secret) is not None
    bound = run_giok("token", "create", "--workspace", "zeon", "--user", "Minji", "--name", "minji")
    owner = run_giok("token", "create", "--workspace", "zeon", "--owner", "--name", "mine")
    assert "for Minji" in bound.stderr and "owner" in owner.stderr
    assert Tokens(ws.home).verify(bound.stdout.strip()).user == "Minji"
    assert Tokens(ws.home).verify(owner.stdout.strip()).owner is True
    listed = run_giok("token", "list").stdout
    assert "user Minji" in listed and "owner" in listed
    assert run_giok("token", "revoke", "laptop").returncode == 0
    assert Tokens(ws.home).verify(secret) is None
    bad = run_giok("token", "create", "--workspace", "nobody", "--scope", "read")
    assert bad.returncode != 0 and "unknown workspace" in bad.stderr
    assert run_giok("token", "revoke", "laptop").returncode != 0


# -- the JSON API ---------------------------------------------------------------------------
def test_show_has_layers_ages_and_expiry(srv):
    with srv.client(srv.tokens["zeon-read"]) as c:
        data = c.get("/api/w/zeon/show").json()
    m90 = data["layers"]["M90"]["entries"]
    coffee = next(e for e in m90 if "dark roast" in e["text"])
    assert coffee["age_days"] == 0 and coffee["expires_in_days"] == 90
    assert any("금요일" in e["text"] for e in data["layers"]["M365"]["entries"])


def test_search_returns_scored_hits_and_cut_counts(srv):
    with srv.client(srv.tokens["zeon-read"]) as c:
        data = c.get("/api/w/zeon/search", params={"q": "staging server port", "k": "3"}).json()
        korean = c.get("/api/w/zeon/search", params={"q": "금요일 배포"}).json()
        bad_k = c.get("/api/w/zeon/search", params={"q": "x", "k": "many"})
    assert "8443" in data["results"][0]["text"] and data["results"][0]["score"] > 0
    assert set(data["cut"]) >= {"noise", "gap"}
    assert any("금요일" in r["text"] for r in korean["results"])
    _one_line_error(bad_k, 400)


def test_remember_then_forget_through_the_api(srv):
    with srv.client(srv.tokens["zeon-write"]) as c:
        r = c.post("/api/w/zeon/remember", json={"text": "The release train leaves every second Tuesday"})
        assert r.status_code == 200, r.text
        entry_id = r.json()["entry"]["id"]
        assert entry_id in srv.workspaces["zeon"].path("MEMORY.md").read_text()
        got = c.get(f"/api/w/zeon/entry/{entry_id}").json()
        assert got["entry"]["layer"] == "M30" and got["chain"][0]["id"] == entry_id
        _one_line_error(c.post("/api/w/zeon/forget", json={"id": entry_id}), 400)  # no reason
        r = c.post("/api/w/zeon/forget", json={"id": entry_id, "reason": "test entry"})
        assert r.status_code == 200, r.text
        assert entry_id not in srv.workspaces["zeon"].path("MEMORY.md").read_text()
        _one_line_error(c.get(f"/api/w/zeon/entry/{entry_id}"), 404)


def test_supersede_chain(srv):
    ws = srv.workspaces["zeon"]
    first = ws.remember("The team standup is at 09:30", layer="M90")
    with srv.client(srv.tokens["zeon-write"]) as c:
        r = c.post("/api/w/zeon/remember", json={"text": "The team standup is at 10:00 now"})
        assert r.status_code == 200, r.text
        new_id = r.json()["entry"]["id"]
        chain = c.get(f"/api/w/zeon/entry/{new_id}").json()["chain"]
    assert r.json()["action"] == "superseded"
    assert [e["id"] for e in chain] == [first.entry.id, new_id]


def test_tasks_state_heartbeat_decisions_diary(srv):
    with srv.client(srv.tokens["zeon-write"]) as c:
        tasks = c.get("/api/w/zeon/tasks").json()["tasks"]
        task = next(t for t in tasks if "release notes" in t["text"])
        assert c.post("/api/w/zeon/task", json={"action": "done", "id": task["id"]}).status_code == 200
        assert (
            next(t for t in c.get("/api/w/zeon/tasks").json()["tasks"] if t["id"] == task["id"])["status"]
            == "done"
        )
        assert c.post("/api/w/zeon/state", json={"section": "phase", "text": "beta 준비"}).status_code == 200
        assert "beta 준비" in c.get("/api/w/zeon/state").json()["phase"]
        assert (
            c.post("/api/w/zeon/heartbeat", json={"action": "add", "text": "check the backups"}).status_code
            == 200
        )
        assert "check the backups" in c.get("/api/w/zeon/heartbeat").json()["items"]
        r = c.post("/api/w/zeon/decide", json={"text": "Ship on Fridays", "why": "quiet weekends"})
        assert r.json()["id"].startswith("D-")
        assert any(d["text"] == "Ship on Fridays" for d in c.get("/api/w/zeon/decisions").json()["decisions"])
        assert c.post("/api/w/zeon/diary", json={"text": "오늘 배포 리허설을 했다"}).status_code == 200
        day = c.get("/api/w/zeon/diary").json()["days"][0]
        items = c.get(f"/api/w/zeon/diary/{day}").json()["items"]
        assert any("배포 리허설" in i["text"] for i in items)
        _one_line_error(c.get("/api/w/zeon/diary/not-a-day"), 400)
        _one_line_error(c.post("/api/w/zeon/task", content=b"{not json"), 400)


def test_log_with_diffs_boot_and_distills(srv):
    with srv.client(srv.tokens["zeon-read"]) as c:  # the history names every user's entries
        assert "owner token" in _one_line_error(c.get("/api/w/zeon/log"), 403)["error"]
        _one_line_error(c.get("/api/w/zeon/distills"), 403)
    with srv.client(srv.tokens["zeon-owner"]) as c:
        commits = c.get("/api/w/zeon/log", params={"limit": "5"}).json()["commits"]
        assert commits and all("message" in x for x in commits)
        diff = c.get(f"/api/w/zeon/log/{commits[-1]['commit']}").json()["diff"]
        assert diff.startswith("diff --git")
        _one_line_error(c.get("/api/w/zeon/log/zzzz"), 400)
        boot = c.get("/api/w/zeon/boot", params={"budget": "300"}).json()
        assert boot["budget"] == 300 and boot["left_out"]  # a small budget leaves layers out, listed
        assert c.get("/api/w/zeon/distills").json() == {"reports": []}


def test_cross_workspace_reads_follow_the_allow_list(srv):
    with srv.client(srv.tokens["both-write"]) as c:  # a token that reaches both
        hits = c.get("/api/w/zeon/search", params={"q": "marketing calendar", "workspaces": "mira"}).json()
        assert any(r["workspace"] == "mira" for r in hits["results"])
        srv.home.update(lambda cfg: cfg["workspaces"]["mira"].update({"private": True}))
        try:
            r = c.get("/api/w/zeon/search", params={"q": "marketing calendar", "workspaces": "mira"})
            assert "may not read" in _one_line_error(r, 403)["error"]
        finally:
            srv.home.update(lambda cfg: cfg["workspaces"]["mira"].pop("private"))


def test_crossview_between_workspaces(srv):
    with srv.client(srv.tokens["both-write"]) as c:
        sent = c.post("/api/w/zeon/crossview", json={"text": "배포 끝났어요", "to": ["mira"]}).json()
        inbox = c.get("/api/w/mira/crossview", params={"unread": "true"}).json()["messages"]
    assert any(m["id"] == sent["id"] for m in inbox)


def test_giok_web_prints_a_signed_in_url_and_serves(ws, tmp_path):
    import os
    import re
    import subprocess
    import sys

    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "giok", "web", "--no-open", "--port", "0"],
        env={**os.environ, "GIOK_EMBEDDINGS": "fake"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        found = re.match(r"giok web: http://127\.0\.0\.1:(\d+)/#token=(giok_\S+)$", line.strip())
        assert found, line
        port, secret = found.groups()
        # printed once the socket listens: no retry
        r = httpx.get(
            f"http://127.0.0.1:{port}/api/workspaces",
            headers={"Authorization": f"Bearer {secret}"},
            timeout=60,
        )
        assert r.status_code == 200 and r.json()["token"]["scope"] == "write"
        assert [w["name"] for w in r.json()["workspaces"]] == ["zeon"]
        page = httpx.get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and "charset=utf-8" in page.headers["content-type"]
        record = next(t for t in Tokens(ws.home).list() if t.name == "web")
        assert record.expires  # the page's token is short-lived
    finally:
        proc.terminate()
        proc.wait(10)
