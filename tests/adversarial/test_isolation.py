"""Isolation matrix (seed 001's first failure test): every read path × (own user, other user,
thread, workspace) → exactly what is seen. Without --user/--thread a read is on behalf of the
workspace's user (USER.md) in no thread; other users' and threads' entries stay hidden unless
the caller names them (or asks for everything with --all-scopes / all_scopes=True)."""

from __future__ import annotations

import json

import pytest

from conftest import run_giok
from giok import Workspace
from giok.edges import mcp
from giok.edges.memory_tool import MemoryTool
from giok.lifecycle import boot
from giok.lifecycle.crossview import Bus
from giok.retrieval import search as searchlib

# Each text shares the rare words "zephyr" and "locker" so every search finds all four.
TEXTS = {
    "own": "Seojun keeps the zephyr locker key in the blue drawer",
    "other": "Minji keeps the zephyr locker key in the red drawer",
    "thread": "Thread t7 moves the zephyr locker key to the green drawer",
    "workspace": "The office zephyr locker key hangs by the door",
}
SCOPES = {"own": "user:seojun", "other": "user:minji", "thread": "thread:t7", "workspace": "workspace"}
QUERY = "zephyr locker key"
RECALL = "do you remember the zephyr locker key?"
DEFAULT = {"own", "workspace"}  # no --user, no --thread: USER.md's user (Seojun)
AS_MINJI = {"other", "workspace"}
IN_T7 = {"own", "thread", "workspace"}
EVERYTHING = set(TEXTS)


@pytest.fixture
def fake(giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))


def _fill(ws: Workspace) -> dict[str, str]:
    """kind → entry id, written through the library (USER.md of ws says Seojun)."""
    return {kind: ws.remember(TEXTS[kind], layer="M90", scope=SCOPES[kind]).entry.id for kind in TEXTS}


@pytest.fixture
def scoped(ws, fake):
    return ws, _fill(ws)


def seen(ids: dict[str, str], found) -> set[str]:
    """Which of the four kinds a collection of ids / texts contains."""
    found = set(found)
    return {kind for kind, i in ids.items() if i in found}


def in_text(ids: dict[str, str], text: str) -> set[str]:
    return {kind for kind, i in ids.items() if i in text or TEXTS[kind] in text}


# -- library --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "opts, expected",
    [
        ({}, DEFAULT),
        ({"user": "Minji"}, AS_MINJI),
        ({"thread": "t7"}, IN_T7),
        ({"user": "seojun", "thread": "t7"}, IN_T7),
        ({"all_scopes": True}, EVERYTHING),
    ],
)
def test_library_search_and_recall(scoped, opts, expected):
    ws, ids = scoped
    assert seen(ids, (r.source for r in ws.search(QUERY, k=10, **opts))) == expected
    assert seen(ids, (r.source for r in searchlib.search(ws, QUERY, k=10, **opts))) == expected
    assert seen(ids, (r.source for r in searchlib.search_full(ws, QUERY, k=10, **opts).results)) == expected
    assert seen(ids, (r.source for r in ws.recall(RECALL, k=10, **opts).results)) == expected


def test_all_scopes_cannot_be_combined_with_a_user_or_thread(scoped):
    from giok.errors import InvalidInput

    ws, _ = scoped
    with pytest.raises(InvalidInput, match="all_scopes"):
        ws.search(QUERY, all_scopes=True, user="minji")


def test_no_user_in_user_md_hides_every_user_scoped_entry(scoped):
    ws, ids = scoped
    ws.edit("USER.md", lambda t: ("# USER.md\n\nNobody named here.\n", None), "user: anonymous")
    assert seen(ids, (r.source for r in ws.search(QUERY, k=10))) == {"workspace"}


# -- CLI --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "flags, expected",
    [
        ((), DEFAULT),
        (("--user", "minji"), AS_MINJI),
        (("--thread", "t7"), IN_T7),
        (("--all-scopes",), EVERYTHING),
    ],
)
def test_cli_search_and_recall(scoped, cli, flags, expected):
    _ws, ids = scoped
    out = cli("search", QUERY, "-k", 10, "-w", "zeon", "--json", *flags)
    assert out.exit_code == 0, out.output
    assert seen(ids, (r["source"] for r in json.loads(out.output)["results"])) == expected
    out = cli("recall", RECALL, "-k", 10, "-w", "zeon", "--json", *flags)
    assert out.exit_code == 0, out.output
    assert seen(ids, (r["source"] for r in json.loads(out.output)["results"])) == expected


def test_cli_search_in_a_real_process(scoped):
    _ws, ids = scoped
    done = run_giok("search", QUERY, "-k", 10, "-w", "zeon", "--json")
    assert done.returncode == 0, done.stderr
    assert seen(ids, (r["source"] for r in json.loads(done.stdout)["results"])) == DEFAULT
    done = run_giok("search", QUERY, "-w", "zeon", "--all-scopes", "--user", "minji")
    assert done.returncode != 0
    assert "--all-scopes" in done.stderr
    assert "Traceback" not in done.stderr


# -- MCP ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, expected", [({}, DEFAULT), ({"user": "Minji"}, AS_MINJI), ({"thread": "t7"}, IN_T7)]
)
def test_mcp_search_recall_get(scoped, args, expected):
    ws, ids = scoped
    data, _ = mcp.call(ws, "memory_search", {"query": QUERY, "k": 10, **args})
    assert seen(ids, (r["source"] for r in data["results"])) == expected
    data, _ = mcp.call(ws, "memory_recall", {"query": RECALL, "k": 10, **args})
    assert seen(ids, (r["source"] for r in data["results"])) == expected
    data, _ = mcp.call(ws, "memory_get", {"path": "MEMORY.md", **args})
    assert in_text(ids, data["text"]) == expected


# -- memory tool (Claude's memory_20250818) ---------------------------------------------------------
def _archive(ws: Workspace) -> str:
    """Copy the four entries into an archive file (as distill would) and commit it."""
    lines = [l for l in ws.read_text("MEMORY.md").splitlines() if "zephyr" in l]
    body = "# Archive 2026-01\n\n## M90\n\n" + "\n".join(lines) + "\n"
    ws.edit("memory/archive/2026-01.md", lambda old: (body, None), "archive: test")
    return "memory/archive/2026-01.md"


@pytest.mark.parametrize(
    "who, expected", [({}, DEFAULT), ({"user": "minji"}, AS_MINJI), ({"thread": "t7"}, IN_T7)]
)
def test_memory_tool_views_of_memory_and_archive(scoped, who, expected):
    ws, ids = scoped
    rel = _archive(ws)
    tool = MemoryTool(ws, **who)
    for path in ("/memories/MEMORY.md", f"/memories/{rel}"):
        text = tool.handle({"command": "view", "path": path})
        assert in_text(ids, text) == expected, path
    # the hidden entries keep their line numbers: a view range still lines up with the file
    total = len(ws.read_text("MEMORY.md").splitlines())
    assert text
    assert len(tool.handle({"command": "view", "path": "/memories/MEMORY.md"}).splitlines()) == total + 1


# -- boot -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "opts, expected", [({}, DEFAULT), ({"user": "minji"}, AS_MINJI), ({"thread": "t7"}, IN_T7)]
)
def test_boot(scoped, cli, opts, expected):
    ws, ids = scoped
    assert in_text(ids, boot.build(ws, record=False, **opts).text) == expected
    flags = [x for k, v in opts.items() for x in (f"--{k}", v)]
    out = cli("boot", "-w", "zeon", "--no-record", *flags)
    assert out.exit_code == 0
    assert in_text(ids, out.output) == expected


# -- other workspaces: cross-workspace search and cross-view -----------------------------------------
def test_cross_workspace_search_reads_on_behalf_of_the_asker(scoped, tmp_path, cli):
    ws, _ = scoped
    mira, _ = Workspace.init(tmp_path / "mira", name="mira", user="Minji")
    ids = _fill(mira)  # mira's USER.md says Minji, but zeon (Seojun) asks
    got = lambda **o: seen(ids, (r.source for r in ws.search(QUERY, k=20, workspaces=["zeon", "mira"], **o)))  # noqa: E731
    assert got() == DEFAULT
    assert got(user="minji") == AS_MINJI
    assert got(thread="t7") == IN_T7
    out = cli("search", QUERY, "-k", 20, "-w", "zeon", "-w", "mira", "--json")
    assert (
        seen(ids, (r["source"] for r in json.loads(out.output)["results"] if r["workspace"] == "mira"))
        == DEFAULT
    )
    data, _ = mcp.call(ws, "memory_search", {"query": QUERY, "k": 20, "workspaces": ["mira"]})
    assert seen(ids, (r["source"] for r in data["results"])) == DEFAULT


def test_crossview_inbox_shows_only_what_was_sent_to_it(scoped, tmp_path, giok_home):
    _ws, _ = scoped
    Workspace.init(tmp_path / "mira", name="mira", user="Minji")
    Workspace.init(tmp_path / "juno", name="juno", user="Juno")
    bus = Bus(giok_home)
    private = bus.send("the zephyr locker moved to room 4", "zeon", to=["mira"])
    assert [m["id"] for m in bus.inbox("mira")] == [private["id"]]
    assert bus.inbox("juno") == []
    assert bus.inbox("zeon") == []
    assert "zephyr" not in Workspace.open("juno", home=giok_home).read_text(
        Workspace.open("juno", home=giok_home).diary_path()
    )
