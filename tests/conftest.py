"""Shared fixtures: every test gets its own giok home in a temp dir; workspaces are real
folders with real git repositories."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from giok import Home, Workspace
from giok.edges.cli import main
from giok.settings import Settings
from stand_in import FakeTelegram

# The write paths judge by the keyword rules (giok.write.judgement's fallback), as the index
# embeds with the fake provider: a test of files, git or search does not hang on the learned
# model's opinion of a placeholder sentence. Set for the whole session (module fixtures and
# subprocesses too); the model's own tests (marked judgement_model) run it, and bench/ measures it.
os.environ["GIOK_JUDGEMENT"] = "rules"


@pytest.fixture(autouse=True)
def giok_home(tmp_path, monkeypatch, request):
    home = tmp_path / "home"
    if request.node.get_closest_marker("judgement_model") is not None:
        monkeypatch.delenv("GIOK_JUDGEMENT")
    monkeypatch.setenv("GIOK_HOME", str(home))
    monkeypatch.delenv("GIOK_WORKSPACE", raising=False)
    monkeypatch.delenv("GIOK_NOW", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))  # no user identity leaks in
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return Home(home)


@pytest.fixture
def setenv(monkeypatch, giok_home):
    """Set an environment variable as if this process had started with it: for subprocesses,
    and in the home's settings (an entry point reads the environment once, into giok.settings)."""

    def set_(name: str, value: str) -> None:
        monkeypatch.setenv(name, value)
        giok_home.settings = Settings.from_env()

    return set_


@pytest.fixture
def telegram_api(monkeypatch):
    """A stand-in for Telegram's Bot API (tests/stand_in.py), its bot token in the environment."""
    with FakeTelegram() as api:
        monkeypatch.setenv(api.TOKEN_ENV, api.TOKEN)
        yield api


@pytest.fixture
def fake_embeddings(setenv):
    """The index's deterministic provider, through the real provider registry."""
    setenv("GIOK_EMBEDDINGS", "fake")


@pytest.fixture
def ws(tmp_path, giok_home) -> Workspace:
    workspace, _ = Workspace.init(tmp_path / "zeon", name="zeon", user="Seojun", home=giok_home)
    return workspace


@pytest.fixture
def cli():
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)

    return invoke


def run_giok(*args, cwd=None, env=None, input=None, timeout=60) -> subprocess.CompletedProcess:
    """Run the real `giok` entry point in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "giok", *map(str, args)],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def pg_dsn():
    """A real PostgreSQL with pgvector (tests/pg_support.py), one per session; skips with the
    reason when it cannot start."""
    import pg_support

    server, dsn, why = pg_support.start()
    if server is None:
        pytest.skip(why)
    yield dsn
    pg_support.stop(server)


def stocked_workspace(tmp_path_factory, entries, *, prefix: str, name: str, **init):
    """A generator for a module-scoped fixture: a workspace (own home, GIOK_HOME pointing at it
    meanwhile) whose MEMORY.md holds `entries`, appended by hand (ids `<prefix>-000000`, …)
    so that the write policy neither merges nor refuses any."""
    home = Home(tmp_path_factory.mktemp(f"{prefix}home"))
    old = os.environ.get("GIOK_HOME")
    os.environ["GIOK_HOME"] = str(home.path)
    ws, _ = Workspace.init(tmp_path_factory.mktemp(prefix) / name, name=name, home=home, **init)
    mem = ws.root / "MEMORY.md"
    lines = "".join(f"- {text} <!-- id: {prefix}-{i:06x} -->\n" for i, text in enumerate(entries))
    mem.write_text(mem.read_text(encoding="utf-8") + lines, encoding="utf-8")
    yield ws
    if old is None:
        os.environ.pop("GIOK_HOME", None)
    else:
        os.environ["GIOK_HOME"] = old


def killed_at(killer: str, ws, point: str, *args: str) -> subprocess.CompletedProcess:
    """Run `giok -w ws ARGS` through the script `killer`, which SIGKILLs itself at $KILL_AT=point;
    asserts that it died there."""
    proc = subprocess.run(
        [sys.executable, "-c", killer, "-w", str(ws.root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KILL_AT": point},
        timeout=60,
    )
    assert proc.returncode == -9, proc.stderr
    return proc


def reopen_index(ws):
    """ws's index opened afresh, as a new process would (every open index of this one closed)."""
    from giok.retrieval.index import Index

    for index in list(Index._open.values()):
        index.close()
    Index._open.clear()
    return Index.for_workspace(ws)


@pytest.fixture
def fake_corpus(ws, giok_home):
    """A few entries in English and Korean and a diary line, indexed with the fake embedder."""
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    ws.remember("Seojun drinks dark roast coffee every morning", layer="M90")
    ws.remember("The billing service uses PostgreSQL for JSONB", layer="M365")
    ws.remember("서준은 등산을 좋아하고 매달 북한산에 간다", layer="M90")
    ws.diary("오늘 기억 검색 시스템을 설계했다")
    return ws


def two_machines(tmp_path, monkeypatch, home_a: Home | None = None, home_b: Home | None = None):
    """Machine A created workspace zeon and pushed it to a bare remote; machine B cloned it and
    adopted the clone. Each has its own home. Returns (a, b, bare)."""
    from giok.store import remote

    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    monkeypatch.setenv("GIOK_NOW", "2026-03-01T09:00")
    home_a = home_a or Home(tmp_path / "home-a")
    home_b = home_b or Home(tmp_path / "home-b")
    a, _ = Workspace.init(tmp_path / "a" / "zeon", name="zeon", user="Seojun", home=home_a)
    remote.add(a, "origin", str(bare))
    remote.sync(a)
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "b" / "zeon")], check=True)
    b, _ = Workspace.init(tmp_path / "b" / "zeon", name="zeon", user="Seojun", home=home_b)
    remote.sync(b)
    return a, b, bare


def unlinked_store(path, home: Home, monkeypatch, dated: list[tuple[str, str]], now: str) -> Workspace:
    """A workspace whose MEMORY.md holds `dated` ((day, text), each remembered at M365 on its
    day) with nothing linked by a supersede; the clock then stands at `now` (a day)."""
    ws, _ = Workspace.init(path, name=path.name, user="Seojun", home=home)
    for day, text in sorted(dated):
        monkeypatch.setenv("GIOK_NOW", f"{day}T12:00:00")
        ws.remember(text, layer="M365")
    monkeypatch.setenv("GIOK_NOW", f"{now}T12:00:00")
    assert "superseded_by" not in ws.path("MEMORY.md").read_text("utf-8")  # both live: not linked
    return ws
