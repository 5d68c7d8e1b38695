"""giok serve answers searches of one workspace side by side: a search held inside the
embedding model does not hold up another search of the same workspace (the JSON API and MCP
over HTTP share `WarmUp.run`), and a write made while it is held is seen by the next search.
The hold is an event the test sets, never a sleep."""

from __future__ import annotations

import threading
import time

import pytest

from giok.providers import embeddings
from serve_support import make_home, serving

BOUND = 60.0  # seconds: only how long a failing run waits before it reports


@pytest.fixture
def srv(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    home, workspaces = make_home(tmp_path)
    with serving(home, workspaces) as running:
        yield running


@pytest.fixture
def held(monkeypatch):
    """The query "hold …" stops inside the model's call until `release` is set."""
    entered, release = threading.Event(), threading.Event()
    real = embeddings.Fake.embed_batch

    def embed_batch(self, texts, kind):
        if kind == "query" and any(t.startswith("hold") for t in texts):
            entered.set()
            release.wait(BOUND)
        return real(self, texts, kind)

    monkeypatch.setattr(embeddings.Fake, "embed_batch", embed_batch)
    yield entered, release
    release.set()


def test_a_search_held_in_the_model_does_not_hold_up_another(srv, held):
    entered, release = held
    token = srv.tokens["zeon-write"]
    with srv.client(token) as c:  # the warm-up is done before anything is held
        deadline = time.monotonic() + BOUND
        while "index" in (first := c.get("/api/w/zeon/search", params={"q": "coffee"})).json():
            assert time.monotonic() < deadline, "the warm-up never finished"  # answered from keywords
        assert first.status_code == 200
    answers: dict[str, object] = {}
    done = {name: threading.Event() for name in ("held", "other", "mcp")}

    def search(name: str, query: str) -> None:
        try:
            with srv.client(token) as c:
                r = c.get("/api/w/zeon/search", params={"q": query})
                answers[name] = (r.status_code, [h["text"] for h in r.json().get("results", [])])
        finally:
            done[name].set()

    threading.Thread(target=search, args=("held", "hold coffee roast"), daemon=True).start()
    assert entered.wait(BOUND), "the held search never reached the model"
    try:
        threading.Thread(target=search, args=("other", "staging server port"), daemon=True).start()
        assert done["other"].wait(BOUND), "a second search of the workspace waited for the held one"
        assert not done["held"].is_set()
        status, texts = answers["other"]
        assert status == 200
        assert any("8443" in t for t in texts)
        with srv.client(token) as c:  # a write while a search is held, then a search that sees it
            r = c.post("/api/w/zeon/remember", json={"text": "The badge printer is on floor 3"})
            assert r.status_code == 200, r.text
            r = c.get("/api/w/zeon/search", params={"q": "badge printer floor"})
            assert any("badge printer" in h["text"] for h in r.json()["results"])
    finally:
        release.set()
    assert done["held"].wait(BOUND)
    status, texts = answers["held"]
    assert status == 200
    assert any("coffee" in t for t in texts)
