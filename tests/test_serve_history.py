"""giok serve: time travel through the JSON API (show, boot, search with at=DATE, and diff),
from git history (giok.store.history)."""

from __future__ import annotations

import datetime as dt
import time

from serve_support import serve_fixture

srv = serve_fixture("serve-history")


def test_show_and_search_as_of_a_past_moment(srv):
    with srv.client(srv.tokens["zeon-write"]) as c:
        assert c.get("/api/workspaces").json()["features"] == {"history": True}
        wrote = c.post(
            "/api/w/zeon/remember", json={"text": "The old VPN gateway is vpn1.example.org"}
        ).json()
        then = dt.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
        time.sleep(1.2)  # git commit times have whole seconds
        entry_id = wrote["entry"]["id"]
        assert c.post("/api/w/zeon/forget", json={"id": entry_id, "reason": "replaced"}).status_code == 200
        now_ids = [e["id"] for e in c.get("/api/w/zeon/show").json()["layers"]["M30"]["entries"]]
        past = c.get("/api/w/zeon/show", params={"at": then}).json()
        hits = c.get("/api/w/zeon/search", params={"q": "VPN gateway", "at": then}).json()
        live_hits = c.get("/api/w/zeon/search", params={"q": "VPN gateway"}).json()
    assert entry_id not in now_ids
    assert entry_id in [e["id"] for e in past["layers"]["M30"]["entries"]]
    assert past["at"]["asked"].startswith(then[:10]) and len(past["at"]["commit"]) >= 7
    assert any("vpn1" in r["text"] for r in hits["results"])
    assert not any("vpn1" in r["text"] for r in live_hits["results"])
