"""What one machine forgot stays forgotten on every machine, whatever the order of syncs.

Two machines (two homes, two clones) and a bare remote, real git and the real `giok sync`
command (its index purge and cache scrub included). Machine A forgets an entry both hold, with
and without `--rewrite-history`; then A and B sync in every order. Counted after every step:
the forgotten text in either MEMORY.md, in any file of either workspace (.giok/ included), in
the remote's branch (tip and history) and, after a rewrite, in any object of either clone's
.git. A clone the remote rewrote away from is refused, changes nothing, and `giok sync
--adopt-remote` takes the remote while keeping what that machine wrote since its last sync."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import two_machines
from giok import Workspace
from giok.edges.cli import main
from giok.lifecycle.distill import distill
from giok.store import history, remote
from giok.store.memoryfile import MemoryFile

SECRET = "The safe in the office opens with 31-7-22"
NEEDLE = b"31-7-22"
TOMBSTONES = "state/tombstones.txt"  # docs/formats.md
ORDERS = sorted(set(itertools.permutations("AABB")))  # each machine syncs twice, in every order


def git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def machines(tmp_path, monkeypatch):
    """A created the workspace and pushed it; B cloned it. Both search with the fake embedder,
    so each index holds what it read."""
    a, b, bare = two_machines(tmp_path, monkeypatch)
    for ws in (a, b):
        ws.home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 64}))
    return {"A": a, "B": b}, bare


def sync(ws: Workspace, *extra: str):
    """`giok -w ROOT sync --json` as this machine runs it (its own home)."""
    return CliRunner().invoke(
        main, ["-w", str(ws.root), "sync", "--json", *extra], env={"GIOK_HOME": str(ws.home.path)}
    )


def at(monkeypatch, when: str) -> None:
    monkeypatch.setenv("GIOK_NOW", when)


def secret_everywhere(machines: dict, bare: Path) -> str:
    """A remembers SECRET (and notes it in the diary); both sync; both search for it: it is in
    both MEMORY.md, diaries and indexes. Returns its id."""
    a, b = machines["A"], machines["B"]
    entry_id = a.remember(SECRET).entry.id
    a.diary(f"Told the team: {SECRET}")
    remote.sync(a)
    remote.sync(b)
    for ws in (a, b):
        assert ws.search("safe in the office")[0].source == entry_id
    assert NEEDLE in (b.root / "MEMORY.md").read_bytes()
    return entry_id


def files_holding(root: Path, needle: bytes = NEEDLE) -> list[str]:
    """Files of the workspace (work tree and .giok/, not .git) whose bytes hold needle."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1] and needle in p.read_bytes()
    )


def objects_holding(repo: Path, needle: bytes = NEEDLE) -> int:
    """How many objects of a repository (reachable or not) hold needle."""
    listed = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    return listed.count(needle)


def remote_holds(bare: Path, needle: str = "31-7-22") -> list[str]:
    """Where the remote's branch holds needle: its tip's files, its history's diffs and messages."""
    found = []
    if (
        subprocess.run(["git", "-C", str(bare), "grep", "-q", needle, "main"], capture_output=True).returncode
        == 0
    ):
        found.append("tip")
    if git(bare, "log", "main", f"-S{needle}", "--oneline").strip():
        found.append("history")
    if git(bare, "log", "main", f"--grep={needle}", "--oneline").strip():
        found.append("messages")
    return found


def texts(ws: Workspace) -> list[str]:
    return [e.text for e in ws.memory().entries()]


@pytest.mark.parametrize("order", ORDERS, ids="".join)
def test_forgotten_with_rewrite_history_never_comes_back_in_any_order(machines, monkeypatch, order):
    """Before: A's sync merged the old history back (or, after a force-push, B's did), and the
    entry was in both MEMORY.md files and on the remote again."""
    ms, bare = machines
    at(monkeypatch, "2026-03-02T08:00")
    _rewrite_then(order, ms, bare, secret_everywhere(ms, bare), monkeypatch)


def _rewrite_then(order: tuple[str, ...], ms: dict, bare: Path, eid: str, monkeypatch) -> None:
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T09:00")
    written = {"A": [], "B": []}
    written["B"].append(
        b.remember(f"B wrote this before the forget arrived, order {''.join(order)}").entry.text
    )
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    assert files_holding(a.root) == [] and objects_holding(a.root) == 0
    written["A"].append(a.remember(f"A wrote this after the forget, order {''.join(order)}").entry.text)
    refused = False
    for step, name in enumerate(order):
        ws = ms[name]
        at(monkeypatch, f"2026-03-02T1{step}:00")
        written[name].append(
            ws.remember(f"{name} wrote this before sync {step}, order {''.join(order)}").entry.text
        )
        head = git(ws.root, "rev-parse", "HEAD")
        before = (ws.root / "MEMORY.md").read_bytes()
        out = sync(ws)
        if out.exit_code != 0:  # only B, only while the remote holds the rewritten history and B the old one
            assert name == "B" and out.exit_code == 5, out.output
            assert "was rewritten" in out.output and "sync --adopt-remote" in out.output and eid in out.output
            assert "31-7-22" not in out.output
            assert git(b.root, "rev-parse", "HEAD") == head and (b.root / "MEMORY.md").read_bytes() == before
            refused = True
        else:
            assert "31-7-22" not in out.output
        if "A" in order[: step + 1]:  # A pushed its rewritten history: the remote never holds it again
            assert remote_holds(bare) == [], (order, step)
        assert files_holding(a.root) == [], (order, step)
        assert SECRET not in texts(a)
    assert refused == ("B" in order[order.index("A") :]), order  # B never merged the rewritten history
    out = sync(b, "--adopt-remote")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["rewritten"] == "adopted"
    for name in ("A", "B", "A"):
        out = sync(ms[name])
        assert out.exit_code == 0, out.output
    assert git(a.root, "rev-parse", "HEAD") == git(b.root, "rev-parse", "HEAD")
    for ws in (a, b):
        assert files_holding(ws.root) == [], (order, ws.root)
        assert objects_holding(ws.root) == 0, (order, ws.root)
        assert all(r.source != eid for r in ws.search("safe in the office"))
        memory = texts(ws)
        assert SECRET not in memory
        for text in written["A"] + written["B"]:  # every write of both machines, once
            assert memory.count(text) == 1, (order, text)
    assert remote_holds(bare) == []
    stones = (a.root / TOMBSTONES).read_bytes()
    assert eid.encode() in stones and NEEDLE not in stones  # the id and a digest, never the text


@pytest.mark.parametrize("order", ORDERS, ids="".join)
def test_forgotten_without_rewrite_stays_out_of_the_archive_in_any_order(machines, monkeypatch, order):
    """A forgets the entry the same night B's distillation moves it, expired, into the archive.
    Before: the archive file (new on B's side only) brought the text back on both machines."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-01T08:00")
    eid = a.remember(SECRET, layer="M30", expires="2026-03-10").entry.id
    remote.sync(a)
    remote.sync(b)
    assert b.search("safe in the office")[0].source == eid
    at(monkeypatch, "2026-03-11T23:00")
    a.forget(eid, reason="codes do not belong in memory")
    assert distill(b).expired[0]["id"] == eid  # B archives it meanwhile
    assert NEEDLE in (b.root / "memory/archive/2026-03.md").read_bytes()
    for step, name in enumerate(order):
        out = sync(ms[name])
        assert out.exit_code == 0, out.output
        assert files_holding(a.root) == [], step
        if "A" in order[:step] and "B" in order[order.index("A") : step + 1]:  # the forget reached B
            assert files_holding(b.root) == [], step
        if "A" in order[: step + 1]:  # the forget reached the remote
            assert "tip" not in remote_holds(bare), step
    for ws in (b, a):  # then both sync once more: the forget reaches B whatever the order was
        assert sync(ws).exit_code == 0
    for ws in (a, b):
        assert all(
            eid not in MemoryFile.parse(p.read_bytes()).ids() for p in ws.root.glob("memory/archive/*.md")
        )
        assert eid not in ws.memory().ids()


def test_a_backup_restored_on_a_clone_does_not_bring_the_entry_back(machines, monkeypatch):
    """B restores MEMORY.md from a copy taken before the forget and commits it; its sync and A's
    fast-forward both keep the entry out. Before: it was back on both and on the remote."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    eid = secret_everywhere(ms, bare)
    backup = (b.root / "MEMORY.md").read_bytes()
    at(monkeypatch, "2026-03-02T09:00")
    a.forget(eid, reason="a code is not a memory")
    assert sync(a).exit_code == 0 and sync(b).exit_code == 0
    assert eid not in b.memory().ids()
    (b.root / "MEMORY.md").write_bytes(backup)
    git(b.root, "commit", "-qam", "restore MEMORY.md from the backup")
    for ws in (b, a, b):
        out = sync(ws)
        assert out.exit_code == 0, out.output
    for ws in (a, b):
        assert eid not in ws.memory().ids() and SECRET not in texts(ws)
        assert "MEMORY.md" not in files_holding(ws.root)
    assert "tip" not in remote_holds(bare)
    subjects = git(a.root, "log", "-3", "--format=%s")
    assert f"memory: forget {eid} (tombstoned)" in subjects


def test_a_plain_git_pull_of_a_rewritten_remote_is_caught_before_the_push(machines, monkeypatch):
    """B pulls the rewritten history with plain git: the driver keeps the entry out of MEMORY.md,
    and B's next `giok sync` refuses to push the old commits back. Before: the pull brought the
    entry back and the sync pushed it, and the old history, to the remote."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    eid = secret_everywhere(ms, bare)
    at(monkeypatch, "2026-03-02T09:00")
    mine = b.remember("Mina moved the standup to ten").entry.text
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    a.remember("The review moved to Thursday")  # MEMORY.md changed on both sides: git runs the driver
    assert sync(a).exit_code == 0 and remote_holds(bare) == []
    pulled = subprocess.run(
        ["git", "-C", str(b.root), "pull", "--no-rebase", "--no-edit", "-q", "origin", "main"],
        capture_output=True,
        text=True,
    )
    assert pulled.returncode == 0, pulled.stderr
    assert eid not in b.memory().ids()  # the driver read A's tombstone from the commit it merged
    out = sync(b)
    assert out.exit_code == 5 and "sync --adopt-remote" in out.output
    assert remote_holds(bare) == []
    assert sync(b, "--adopt-remote").exit_code == 0 and sync(a).exit_code == 0
    for ws in (a, b):
        assert files_holding(ws.root) == [] and objects_holding(ws.root) == 0
        assert mine in texts(ws) and "The review moved to Thursday" in texts(ws)
    assert remote_holds(bare) == []


def test_the_machine_that_rewrote_and_then_pulled_the_old_history_does_not_push_it(machines, monkeypatch):
    """A forgets with --rewrite-history, then merges the remote's old history back in with a
    plain `git pull`; its `giok sync` refuses (changing nothing) and names the commit to reset
    to; after that reset the sync publishes the rewritten history. Before: the sync took the
    merge for "published already", dropped its record and pushed: the remote kept the old
    history, the original remember commit with the secret in it, for good."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    eid = secret_everywhere(ms, bare)
    at(monkeypatch, "2026-03-02T09:00")
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    pulled = subprocess.run(
        ["git", "-C", str(a.root), "pull", "--no-rebase", "--no-edit", "-q", "origin", "main"],
        capture_output=True,
        text=True,
    )
    assert pulled.returncode == 0, pulled.stderr
    head = git(a.root, "rev-parse", "HEAD")
    out = sync(a)
    assert out.exit_code == 5, out.output
    assert "merged the old history" in out.output and "31-7-22" not in out.output
    assert git(a.root, "rev-parse", "HEAD") == head
    assert git(bare, "rev-parse", "main") == git(a.root, "rev-parse", "origin/main")  # nothing pushed
    found = re.search(r"reset --keep ([0-9a-f]{10})", out.output)
    assert found, out.output
    git(a.root, "reset", "-q", "--keep", found.group(1))
    out = sync(a)
    assert out.exit_code == 0 and json.loads(out.output)["rewritten"] == "published", out.output
    assert remote_holds(bare) == []
    assert sync(b, "--adopt-remote").exit_code == 0
    for ws in (a, b):
        assert files_holding(ws.root) == [] and objects_holding(ws.root) == 0
    assert remote_holds(bare) == []


def test_adopt_keeps_this_machines_writes_and_a_forget_wins_over_an_edit(machines, monkeypatch):
    """B edited the entry A forgets with --rewrite-history, and wrote others, after its last sync;
    --adopt-remote removes the edited entry (a forget wins over an edit, as in every merge) and
    keeps the others, its diary line and its decision."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    eid = secret_everywhere(ms, bare)
    at(monkeypatch, "2026-03-02T09:00")
    b.edit_entry(eid, SECRET + " and the back door with 31-7-23")
    kept = b.remember("The printer on the second floor needs toner").entry.id
    b.diary("B: ordered toner for the second floor")
    decision = b.decide("Keep codes out of memory", "they belong in the password manager")
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    assert sync(a).exit_code == 0
    head = git(b.root, "rev-parse", "HEAD")
    refused = sync(b)
    assert refused.exit_code == 5 and git(b.root, "rev-parse", "HEAD") == head
    assert "carries over what this machine wrote since" in refused.output
    out = sync(b, "--adopt-remote")
    assert out.exit_code == 0, out.output
    assert sync(a).exit_code == 0
    for ws in (a, b):
        assert eid not in ws.memory().ids() and kept in ws.memory().ids()
        assert "B: ordered toner" in (ws.root / ws.diary_path()).read_text()
        assert [d["id"] for d in ws.decisions()] == [decision]
        assert files_holding(ws.root) == [] and files_holding(ws.root, b"31-7-23") == []
    assert remote_holds(bare) == [] and remote_holds(bare, "31-7-23") == []


def test_a_forget_from_another_machine_reaches_the_derived_data_of_the_one_that_publishes(
    machines, monkeypatch
):
    """B forgets an entry (plain forget) and syncs while A holds a rewritten history not yet
    pushed; A's sync carries B's forget onto it and A's index and .giok/ caches lose the entry
    too. Before: the publishing sync returned before the incoming forgets were looked at, so
    A's past-state snapshots still held the entry B forgot."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    wifi = "The guest network in the lobby is named kumquat-orbit-77"
    other = a.remember(wifi).entry.id
    eid = secret_everywhere(ms, bare)  # syncs both: B holds the wifi entry too
    assert a.search("guest network lobby")[0].source == other
    at(monkeypatch, "2026-03-02T09:00")
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    history.snapshot(a, git(a.root, "rev-parse", "HEAD").strip())  # a past state, as `giok history` extracts
    assert files_holding(a.root, b"kumquat-orbit-77") != []
    b.forget(other, reason="it changes every week")
    assert sync(b).exit_code == 0
    out = sync(a)
    assert out.exit_code == 0 and json.loads(out.output)["rewritten"] == "published", out.output
    assert other not in a.memory().ids()
    assert all(r.source != other for r in a.search("guest network lobby"))
    assert files_holding(a.root, b"kumquat-orbit-77") == []


def test_adopt_remote_keeps_every_stash(machines, monkeypatch):
    """B stashed three unfinished edits before A's rewrite reached it; `sync --adopt-remote`
    drops the old history but keeps all three stashes. Before: every reflog was expired, so
    only the newest stash was left (and gc pruned what the others held)."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    eid = secret_everywhere(ms, bare)
    for n in range(3):
        with (b.root / "MEMORY.md").open("a") as f:
            f.write(f"unfinished edit {n}\n")
        git(b.root, "stash", "push", "-q", "-m", f"edit {n}")
    at(monkeypatch, "2026-03-02T09:00")
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    assert sync(a).exit_code == 0
    out = sync(b, "--adopt-remote")
    assert out.exit_code == 0, out.output
    assert git(b.root, "stash", "list", "--format=%gs").splitlines() == [
        f"On main: edit {n}" for n in (2, 1, 0)
    ]
    for n in range(3):
        shown = git(b.root, "stash", "show", "-p", f"stash@{{{2 - n}}}")
        assert f"+unfinished edit {n}" in shown


def test_after_a_force_push_by_hand_the_stale_clone_is_refused(machines, monkeypatch):
    """The issue as reported: A forgets with --rewrite-history and force-pushes with plain git;
    B, which did not clone again, runs `giok sync`. Before: the entry was back in both
    MEMORY.md files and its text back on the remote."""
    ms, bare = machines
    a, b = ms["A"], ms["B"]
    at(monkeypatch, "2026-03-02T08:00")
    eid = secret_everywhere(ms, bare)
    at(monkeypatch, "2026-03-02T09:00")
    a.forget(eid, reason="a code is not a memory", rewrite_history=True)
    git(a.root, "push", "-q", "--force", "origin", "main")
    assert remote_holds(bare) == []
    out = sync(b)
    assert out.exit_code == 5 and "sync --adopt-remote" in out.output, out.output
    assert remote_holds(bare) == []
    out = sync(a)  # its record of the rewrite is spent: an ordinary sync
    assert out.exit_code == 0 and json.loads(out.output)["rewritten"] is None, out.output
    assert files_holding(a.root) == [] and SECRET not in texts(a)
    assert sync(b, "--adopt-remote").exit_code == 0
    assert files_holding(b.root) == [] and objects_holding(b.root) == 0
    assert remote_holds(bare) == []


def test_an_old_export_imported_again_does_not_bring_the_entry_back(ws, monkeypatch, tmp_path):
    """`giok export` taken before the forget, imported after it: the entry carrying the
    forgotten id and text is refused. Before: it came back."""
    from giok.edges import porting

    a = ws
    at(monkeypatch, "2026-03-02T08:00")
    eid = a.remember(SECRET).entry.id
    export = tmp_path / "zeon.jsonl"
    export.write_text(porting.export_jsonl(a))
    a.forget(eid, reason="a code is not a memory")
    report = porting.import_path(a, export, fmt="giok")
    refused = [o for o in report.outcomes if o.action == "refused" and "forgotten" in o.reason]
    assert [o.item.fields.get("id") for o in refused] == [eid], [
        (o.action, o.reason, o.item.kind) for o in report.outcomes
    ]
    assert SECRET not in texts(a) and "MEMORY.md" not in files_holding(a.root)


def test_of_two_entries_sharing_an_id_the_tombstoned_one_is_dropped(ws, monkeypatch):
    """MEMORY.md holds two lines with one id (a line copied by hand, or two machines that drew
    the same id): another text first, then the forgotten one, restored from a backup. What
    sync runs after a pull drops the forgotten line and keeps the other. Before: the first
    line with that id went, and the forgotten text stayed."""
    from giok.store import tombstones

    at(monkeypatch, "2026-03-02T08:00")
    entry = ws.remember(SECRET).entry
    line = next(x for x in (ws.root / "MEMORY.md").read_text().splitlines() if SECRET in x)
    ws.forget(entry.id, reason="a code is not a memory")
    other = line.replace(SECRET, "Lunch with the team is at noon on Fridays")
    with (ws.root / "MEMORY.md").open("a") as f:
        f.write(f"{other}\n{line}\n")
    git(ws.root, "commit", "-qam", "restore two lines by hand")
    assert [e.id for e in ws.memory().entries()].count(entry.id) == 2
    back = tombstones.drop_returned(ws)
    assert list(back.entries) == [entry.id]
    assert texts(ws) == ["Lunch with the team is at noon on Fridays"]
    assert "MEMORY.md" not in files_holding(ws.root)


def test_the_cache_scrub_after_a_sync_leaves_a_pending_journal_as_it_is(ws):
    """The scrub of .giok/ that follows an incoming forget changes derived text files only:
    the journal a killed write left (which the next write recovers from) is kept byte for
    byte, even when a line of it holds the forgotten text. Before: the line was cut out of
    it, and the recovery read a damaged journal."""
    from giok.write.forget import scrub_derived

    journal = ws.layout.journal
    journal.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"files": {"MEMORY.md": SECRET}}, indent=1).encode()
    journal.write_bytes(data)
    cache = ws.data_dir / "boot-cache.txt"
    cache.write_text(f"{SECRET}\nkept\n")
    changed = scrub_derived(ws, ["m-123456"], [SECRET])
    assert journal.read_bytes() == data
    assert cache.read_text() == "kept\n" and changed == [str(cache.relative_to(ws.root))]
