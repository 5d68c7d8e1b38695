"""The review queue over `giok serve`'s JSON API: GET /api/w/WS/review lists the open items, POST
resolves one with a write token, over a real uvicorn server on loopback."""

from __future__ import annotations

from giok.lifecycle.distill import distill
from giok.store import git
from serve_support import serve_fixture

srv = serve_fixture("review")


def _raised(srv) -> tuple[str, str, str]:
    zeon = srv.workspaces["zeon"]
    old = zeon.remember("Deploys happen on Friday").entry.id
    new = zeon.remember("Deploys do not happen on Friday").entry.id
    distill(zeon)
    return old, new, "R-001"


def test_list_then_resolve_through_the_api(srv):
    old, new, item = _raised(srv)
    with srv.client(srv.tokens["zeon-owner"]) as c:
        listed = c.get("/api/w/zeon/review").json()
        assert listed["open"] == 1
        assert [(i["id"], {e["id"] for e in i["entries"]}) for i in listed["items"]] == [(item, {old, new})]
    with srv.client(srv.tokens["zeon-read"]) as c:  # the queue shows every user's entries
        assert c.get("/api/w/zeon/review").status_code == 403
        head = git.head_id(srv.workspaces["zeon"].root)
        refused = c.post("/api/w/zeon/review", json={"id": item, "choice": "both"})
        assert refused.status_code == 403
        assert "read-only" in refused.json()["error"]
        assert git.head_id(srv.workspaces["zeon"].root) == head
    with srv.client(srv.tokens["mira-write"]) as c:
        assert c.post("/api/w/zeon/review", json={"id": item, "choice": "both"}).status_code == 403
    with srv.client(srv.tokens["zeon-owner"]) as c:
        bad = c.post("/api/w/zeon/review", json={"id": item, "choice": "later"})
        assert bad.status_code == 400, bad.text
        assert c.post("/api/w/zeon/review", json={"id": "R-042", "choice": "both"}).status_code == 404
        done = c.post("/api/w/zeon/review", json={"id": item, "choice": "forget", "entry": old})
        assert done.status_code == 200, done.text
        assert done.json()["item"]["status"] == "resolved"
        assert c.get("/api/w/zeon/review").json()["items"] == []
        everything = c.get("/api/w/zeon/review", params={"all": "true"}).json()["items"]
        assert [(i["id"], i["status"]) for i in everything] == [(item, "resolved")]
        again = c.post("/api/w/zeon/review", json={"id": item, "choice": "newer"})
        assert again.status_code == 400
    memory = srv.workspaces["zeon"].memory()
    assert memory.find(old) is None
    assert memory.find(new) is not None
