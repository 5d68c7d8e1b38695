"""Symlinks: a workspace file that is a link leading outside the workspace is refused, with
its name, by every reader and writer (boot skips it, with a warning naming it, and boots the
rest); links that stay inside may be read but never written through; the search index and the
memory tool do not follow links out."""

from __future__ import annotations

import os
import subprocess

import pytest

from conftest import run_giok
from giok.edges.memory_tool import MemoryTool
from giok.errors import InvalidInput

SECRET = "outside-file-zebra-marker"


@pytest.fixture
def outside(tmp_path):
    target = tmp_path / "elsewhere" / "notes.md"
    target.parent.mkdir()
    target.write_text(f"- 2026-01-01 {SECRET}\n")
    return target


def head(ws) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout


def link(ws, rel: str, target) -> None:
    path = ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.symlink(target, path)


@pytest.mark.parametrize(
    "rel, args",
    [
        ("MEMORY.md", ("remember", "Project eta runs on the basil cobalt cluster")),
        ("MEMORY.md", ("show",)),
        ("state/tasks.md", ("task", "add", "check the links")),
        ("state/decisions.md", ("decide", "links stay inside", "--why", "safety")),
        ("HEARTBEAT.md", ("heartbeat", "add", "look at links")),
        ("memory/{today}.md", ("diary", "a line for today")),
        ("memory/{today}.md", ("distill",)),
    ],
)
def test_a_symlink_out_of_the_workspace_is_refused_by_name(ws, outside, rel, args):
    rel = rel.format(today=ws.diary_path()[len("memory/") : -3])
    if rel.startswith("memory/"):
        ws.diary("an earlier line")
    link(ws, rel, outside)
    before, outside_bytes = head(ws), outside.read_bytes()
    done = run_giok("-w", ws.root, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert rel in done.stderr, done.stderr
    assert "symlink" in done.stderr, done.stderr
    assert "outside" in done.stderr, done.stderr
    assert SECRET not in done.stdout
    assert head(ws) == before
    assert outside.read_bytes() == outside_bytes
    assert (ws.root / rel).is_symlink()


@pytest.mark.parametrize("rel", ["MEMORY.md", "SOUL.md", "memory/{today}.md"])
def test_boot_skips_a_symlinked_file_by_name_and_boots_the_rest(ws, outside, rel):
    """Boot follows no link (a sync can bring one) and does not fail whole: the linked file
    reads as empty, a warning names it (tests/adversarial/test_sync_survives.py)."""
    rel = rel.format(today=ws.diary_path()[len("memory/") : -3])
    ws.remember("Project eta runs on the basil cobalt cluster")
    link(ws, rel, outside)
    done = run_giok("-w", ws.root, "boot")
    assert done.returncode == 0, done.stderr
    assert f"{rel} is a symlink (to {outside}): boot skipped it" in done.stderr
    assert SECRET not in done.stdout
    assert ("basil cobalt" in done.stdout) is (rel != "MEMORY.md")


def test_a_symlinked_folder_out_of_the_workspace_is_refused(ws, tmp_path):
    (tmp_path / "away").mkdir()
    (tmp_path / "away" / "tasks.md").write_text("# Tasks\n")
    for child in (ws.root / "state").iterdir():
        child.unlink()
    (ws.root / "state").rmdir()
    os.symlink(tmp_path / "away", ws.root / "state")
    done = run_giok("-w", ws.root, "task", "add", "x")
    assert done.returncode == 2, done.stderr
    assert "state/tasks.md" in done.stderr, done.stderr
    assert (tmp_path / "away" / "tasks.md").read_text() == "# Tasks\n"


def test_links_inside_the_workspace_are_read_but_not_written_through(ws):
    (ws.root / "notes").mkdir()
    (ws.root / "notes" / "real.md").write_text("the real note\n")
    link(ws, "notes/alias.md", "real.md")
    tool = MemoryTool(ws)
    assert "the real note" in tool.handle({"command": "view", "path": "/memories/notes/alias.md"})
    link(ws, "HEARTBEAT.md", "notes/real.md")
    done = run_giok("-w", ws.root, "heartbeat", "add", "through the link")
    assert done.returncode == 2
    assert "HEARTBEAT.md" in done.stderr
    assert "through a symlink" in done.stderr
    assert (ws.root / "notes" / "real.md").read_text() == "the real note\n"


def test_the_memory_tool_refuses_links_out(ws, outside):
    link(ws, "notes/out.md", outside)
    tool = MemoryTool(ws)
    for params in (
        {"command": "view", "path": "/memories/notes/out.md"},
        {"command": "str_replace", "path": "/memories/notes/out.md", "old_str": "zebra", "new_str": "x"},
        {"command": "delete", "path": "/memories/notes/out.md"},
    ):
        with pytest.raises(InvalidInput, match="outside the workspace"):
            tool.handle(params)
    assert SECRET in outside.read_text()


def test_the_search_index_does_not_follow_links_out(ws, outside):
    link(ws, "memory/2026-01-01.md", outside)
    done = run_giok("-w", ws.root, "search", "zebra marker", "--json")
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout
