"""Shared by the test_serve*.py files: a small home (two workspaces, fake embeddings) and a
real uvicorn server over it on a free loopback port, in a thread, one per test module."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import uvicorn

from giok.edges.server.app import build_app
from giok.edges.server.tokens import Tokens
from giok.store.home import Home
from giok.workspace import Workspace


@dataclass
class Running:
    home: Home
    url: str
    workspaces: dict[str, Workspace]
    tokens: dict[str, str] = field(default_factory=dict)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def make_home(root: Path) -> tuple[Home, dict[str, Workspace]]:
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    home = Home(root / "home")
    home.update(lambda c: c.update({"embeddings": "fake"}))
    zeon, _ = Workspace.init(root / "zeon", name="zeon", user="Seojun", home=home)
    mira, _ = Workspace.init(root / "mira", name="mira", user="Seojun", home=home)
    zeon.remember("Seojun prefers dark roast coffee in the morning", layer="M90")
    zeon.remember("서준은 매주 금요일에 배포한다", layer="M365")
    zeon.remember("The staging server runs on port 8443", layer="M30")
    zeon.task_add("Write the release notes")
    mira.remember("Mira tracks the marketing calendar", layer="M90")
    return home, {"zeon": zeon, "mira": mira}


@contextlib.contextmanager
def serving(home: Home, workspaces: dict[str, Workspace]) -> Iterator[Running]:
    config = uvicorn.Config(build_app(home), host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="giok-serve-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    running = Running(home, f"http://127.0.0.1:{port}", workspaces)
    tokens = Tokens(home)
    running.tokens = {
        "zeon-read": tokens.create(["zeon"], "read")[0],
        "zeon-write": tokens.create(["zeon"], "write")[0],
        "mira-write": tokens.create(["mira"], "write")[0],
        "both-write": tokens.create(["zeon", "mira"], "write")[0],
        "zeon-owner": tokens.create(["zeon"], "write", owner=True)[0],  # the git history, review
    }
    try:
        yield running
    finally:
        server.should_exit = True
        thread.join(10)


def serve_fixture(name: str):
    """A module-scoped `srv` fixture: a home of two workspaces served on loopback."""
    import pytest

    @pytest.fixture(scope="module")
    def srv(tmp_path_factory):
        root = tmp_path_factory.mktemp(name)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GIT_CONFIG_GLOBAL", str(root / "gitconfig"))
            mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
            home, workspaces = make_home(root)
            with serving(home, workspaces) as running:
                yield running

    return srv
