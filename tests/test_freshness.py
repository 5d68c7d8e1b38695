"""What a search sees without stat-ing every file (giok.retrieval.index.Freshness): every giok
write at once, whichever process made it; a file added, removed or replaced by hand or by git at
once; a file rewritten in place by hand in the next process, and in this one once `rescan`
seconds have passed since its last full scan. Uses the deterministic fake embedder."""

from __future__ import annotations

import os
import time

import pytest

from conftest import run_giok
from giok.retrieval.index import Index
from giok.store import git

HOUR_NS = 3600 * 10**9


@pytest.fixture
def fake(giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))


def texts(ws, query: str) -> list[str]:
    return [r.text for r in ws.search(query, k=10, mode="keyword", record=None)]


def folders(ws) -> list[str]:
    found = [str(ws.root)]
    for base, dirs, _ in os.walk(ws.root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [os.path.join(base, d) for d in dirs]
    return found


def settle(ws) -> Index:
    """Every folder's mtime an hour back (as if nothing had been added for an hour), then one
    search: its full scan records a state the cheap check trusts (no folder changed recently),
    so what the next search sees comes from the cheap check alone."""
    for folder in folders(ws):
        then = os.stat(folder).st_mtime_ns - HOUR_NS
        os.utime(folder, ns=(then, then))
    index = Index.for_workspace(ws)
    index.rescan = 3600.0
    texts(ws, "settle")
    return index


class Listings:
    """Counts os.scandir calls on the workspace's folders (a full scan lists every folder)."""

    def __init__(self, monkeypatch, ws):
        self.calls: list[str] = []
        real = os.scandir
        root = str(ws.root)

        def counting(path="."):
            if str(path).startswith(root):
                self.calls.append(str(path))
            return real(path)

        monkeypatch.setattr(os, "scandir", counting)


def test_a_search_after_a_search_lists_no_folder_and_stats_no_file(ws, fake, monkeypatch):
    for n in range(5):
        ws.remember(f"The spare key number {n} hangs by the door", layer="M90")
    index = settle(ws)
    listed = Listings(monkeypatch, ws)
    assert texts(ws, "spare key")
    assert listed.calls == []  # no folder listed, so no file stat-ed
    assert index.sync()["changed"] == 0


def test_a_giok_write_is_seen_at_once_from_this_process_or_another(ws, fake):
    ws.diary("The kettle descaling is due on Friday.")
    settle(ws)
    # an append in place (the diary's own path: same file, same folder mtime)
    ws.diary("The printer toner is in the blue cabinet.")
    assert any("toner" in t for t in texts(ws, "printer toner"))
    # a search while a writer holds the lock, then its write: seen once the lock is let go
    settle(ws)
    with ws.lock():
        assert not any("umbrella" in t for t in texts(ws, "umbrella stand"))
        ws.diary("The umbrella stand is by the lift.")
    assert any("umbrella" in t for t in texts(ws, "umbrella stand"))
    # a write by another giok process
    out = run_giok("-w", ws.name, "remember", "The bike lock code is kept by Minji", "--layer", "M90")
    assert out.returncode == 0, out.stderr
    assert any("bike lock" in t for t in texts(ws, "bike lock code"))
    # an entry forgotten by another process leaves the results at once
    out = run_giok("-w", ws.name, "forget", "--match", "bike lock code", "--reason", "moved")
    assert out.returncode == 0, out.stderr
    assert not any("bike lock" in t for t in texts(ws, "bike lock code"))


def test_files_added_removed_or_replaced_by_hand_or_by_git_are_seen_at_once(ws, fake):
    notes = ws.root / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nThe tomatoes need water every morning.\n")
    settle(ws)
    assert any("tomatoes" in t for t in texts(ws, "tomatoes water"))

    (notes / "boat.md").write_text("# Boat\n\nThe sailing club meets on Sundays.\n")  # a new file
    assert any("sailing" in t for t in texts(ws, "sailing club"))

    settle(ws)
    temp = notes / ".garden.md.swp"  # an editor's safe save: a new file renamed over the old
    temp.write_text("# Garden\n\nThe cucumbers need water every evening.\n")
    os.replace(temp, notes / "garden.md")
    assert any("cucumbers" in t for t in texts(ws, "cucumbers water"))
    assert not any("tomatoes" in t for t in texts(ws, "tomatoes water"))

    git.commit(ws.root, ["notes/garden.md", "notes/boat.md"], "notes")
    (notes / "garden.md").write_text("# Garden\n\nThe beans need water at noon.\n")
    git.commit(ws.root, ["notes/garden.md"], "beans")
    settle(ws)
    git.run(ws.root, "checkout", "-q", "HEAD~1", "--", "notes/garden.md")  # git rewrites it
    assert any("cucumbers" in t for t in texts(ws, "cucumbers water"))

    settle(ws)
    (notes / "boat.md").unlink()
    assert not any("sailing" in t for t in texts(ws, "sailing club"))


def test_a_file_rewritten_in_place_by_hand_is_seen_by_the_next_process_and_after_the_window(ws, fake):
    path = ws.root / "notes.md"
    path.write_text("# Notes\n\nThe boiler was serviced in March.\n")
    index = settle(ws)
    with open(path, "r+") as f:  # in place: same file, its folder untouched (an editor that writes in place)
        f.write("# Notes\n\nThe chimney was swept in April, both flues.\n")  # longer: its size tells
    out = run_giok("-w", ws.name, "search", "chimney swept", "--json")
    assert out.returncode == 0, out.stderr
    assert "chimney" in out.stdout  # a new process scans every file at its first search

    index.rescan = 0.2
    began = index._fresh.began if index._fresh else 0.0
    while time.monotonic() - began < index.rescan:  # the window this process trusts its last scan
        time.sleep(0.05)
    assert any("chimney" in t for t in texts(ws, "chimney swept"))

    index.rescan = 0.0  # GIOK_INDEX_RESCAN=0: every search scans every file
    with open(path, "r+") as f:
        f.write("# Notes\n\nThe gutter was cleared in May, the whole length of it.\n")
    assert any("gutter" in t for t in texts(ws, "gutter cleared"))


def test_the_window_comes_from_the_environment(setenv, giok_home, tmp_path, fake):
    from giok import Workspace

    setenv("GIOK_INDEX_RESCAN", "0")
    ws, _ = Workspace.init(tmp_path / "w0", name="w0", user="Seojun", home=giok_home)
    assert Index.for_workspace(ws).rescan == 0.0
    setenv("GIOK_INDEX_RESCAN", "7.5")
    ws, _ = Workspace.init(tmp_path / "w1", name="w1", user="Seojun", home=giok_home)
    assert Index.for_workspace(ws).rescan == 7.5
