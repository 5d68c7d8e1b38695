"""The policy index kept in .giok/ for a new process (docs/architecture.md, "Write path at scale"):
read back, it gives the decisions of the full comparison; it is used only for the exact bytes it
was made of; a file that is not giok's index is ignored and replaced, never an error."""

from __future__ import annotations

import json
import os
import random

import pytest

from giok.store import memoryfile
from giok.store.memoryfile import MemoryFile
from giok.text import likeness
from giok.write import policy
from giok.write import remember as remember_mod
from test_remember_scale import TODAY, _apply, _memory, _same, _statements, _variants


def _round_trip(index: policy.Index, mf: MemoryFile) -> policy.Index:
    """The index as a new process reads it: through JSON, against a new parse of the same bytes."""
    data = json.loads(json.dumps(index.dump()).encode("ascii"))
    loaded = policy.Index.load(MemoryFile.parse(mf.render()), data)
    assert loaded is not None
    return loaded


def _unique(mf: MemoryFile) -> MemoryFile:
    """mf without a second entry of an id (a stored index is of a file whose ids are unique)."""
    seen: set[str] = set()
    for entry in list(mf.entries()):
        if entry.id in seen:
            mf.remove(entry.id)  # removes the first: the ids stay unique either way
        seen.add(entry.id)
    return MemoryFile.parse(mf.render())


@pytest.mark.parametrize("collide", [False, True])
def test_a_stored_index_decides_as_the_full_comparison(collide, monkeypatch):
    """Also when every key's CRC is one of three (all buckets shared): candidates are a superset."""
    if collide:
        monkeypatch.setattr(likeness, "_hashed", lambda name: str(len(name) % 3))
    rnd = random.Random(2027)
    statements = _statements()
    mf = _unique(_memory(rnd, [v for s in statements for v in _variants(s, rnd) if rnd.random() < 0.2]))
    built = policy.Index(mf)
    built.same_subject(policy.Statement("x", "use", frozenset()))  # built, so they are stored too
    built.same_claim("x")
    index = _round_trip(built, mf)
    mf = index.memory
    seen = set()
    for text in rnd.sample([v for s in statements for v in _variants(s, rnd)], 400):
        full = policy.decide(mf, text, today=TODAY)
        fast = policy.decide(mf, text, today=TODAY, index=index)
        assert _same(full, fast), (text, full, fast)
        seen.add(full.action)
    assert {"write", "supersede", "duplicate"} <= seen


def test_a_stored_index_kept_in_step_with_writes_decides_the_same():
    """Each write in a new process: the index read back, told of the new entry, stored again."""
    rnd = random.Random(8)
    statements = _statements()
    mf = _unique(_memory(rnd, rnd.sample(statements, 60)))
    index = _round_trip(policy.Index(mf), mf)
    actions = set()
    for text in rnd.sample([v for s in statements for v in _variants(s, rnd)], 150):
        mf = index.memory
        full = policy.decide(mf, text, today=TODAY)
        fast = policy.decide(mf, text, today=TODAY, index=index)
        assert _same(full, fast), (text, full, fast)
        actions.add(full.action)
        if _apply(full, mf, index, rnd):
            index = _round_trip(index, mf)
    assert {"write", "supersede"} <= actions


def _new_process(ws) -> None:
    """What a new process has kept in memory of MEMORY.md: nothing (nor has it stored an index
    or left one to store at its exit)."""
    memoryfile.forget_kept(remember_mod._key(ws))
    remember_mod._STORED.discard(remember_mod._key(ws))
    remember_mod._PENDING.pop(remember_mod._key(ws), None)


def _builds(monkeypatch) -> list[int]:
    built: list[int] = []
    real = policy.Index.__init__

    def counting(self, memory):
        built.append(len(memory.entries()))
        real(self, memory)

    monkeypatch.setattr(policy.Index, "__init__", counting)
    return built


def test_a_new_process_reads_the_index_the_last_one_kept(ws, monkeypatch):
    for i in range(5):
        ws.remember(f"Seojun uses editor number {i} for the backend")
    _new_process(ws)
    ws.remember("The staging server moved to the second rack")
    path = ws.layout.derived(remember_mod.INDEX_FILE)
    stored = json.loads(path.read_bytes())
    assert stored["digest"] == remember_mod._digest((ws.root / "MEMORY.md").read_bytes())
    assert b"staging" not in path.read_bytes()  # keys by their CRC: no text in the file
    built = _builds(monkeypatch)
    actions = []
    for text in ("Seojun now uses editor number 4 for the backend", "The billing queue is drained nightly"):
        _new_process(ws)
        actions.append(ws.remember(text).action)
    assert built == []
    assert actions == ["superseded", "written"]


def test_any_change_of_the_bytes_makes_the_index_be_built_again(ws, monkeypatch):
    ws.remember("The deploy script lives in the tools folder")
    _new_process(ws)
    ws.remember("The release branch is cut on Mondays")
    memory = ws.root / "MEMORY.md"
    data = memory.read_bytes()
    stat = memory.stat()
    memory.write_bytes(data.replace(b"Mondays", b"Fridays"))  # same size, same time
    os.utime(memory, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    built = _builds(monkeypatch)
    _new_process(ws)
    result = ws.remember("The release branch is cut on Fridays")
    assert result.action == "duplicate"
    assert built  # the stored index was of other bytes


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"\xff\xfe",
        b"[]",
        b"[" * 100_000,  # nested too deep for the JSON reader
        b'{"version": 1}',
        "digest",  # the right digest, buckets that are not giok's
        "ids",  # the right digest, ids of other entries
    ],
)
def test_a_foreign_or_broken_index_is_ignored_and_replaced(ws, content):
    for text in ("Seojun likes green tea", "The office is in Pangyo", "Minsu uses vim"):
        ws.remember(text)
    _new_process(ws)
    digest = remember_mod._digest((ws.root / "MEMORY.md").read_bytes())
    path = ws.layout.derived(remember_mod.INDEX_FILE)
    if content == "digest":
        near = {"keys": {"0": "9999"}, "numbers": {"": "x y"}, "words": {"a": [1]}}
        ids = [e.id for e in MemoryFile.parse((ws.root / "MEMORY.md").read_bytes()).entries()]
        content = json.dumps({"version": 1, "digest": digest, "index": {"ids": ids, "near": near}}).encode()
    elif content == "ids":
        index = {"ids": ["m-000000"] * 3, "near": {"keys": {}, "numbers": {}, "words": {}}}
        content = json.dumps({"version": 1, "digest": digest, "index": index}).encode()
    path.write_bytes(content)
    result = ws.remember("Seojun now likes black coffee")
    assert result.action == "superseded"
    assert result.entry is not None
    stored = json.loads(path.read_bytes())
    assert stored["digest"] == remember_mod._digest((ws.root / "MEMORY.md").read_bytes())


def test_an_index_path_that_is_no_regular_file_is_ignored(ws):
    ws.remember("The office is in Pangyo")
    _new_process(ws)
    path = ws.layout.derived(remember_mod.INDEX_FILE)
    path.unlink()
    path.symlink_to("/dev/zero")  # reading it would never end
    result = ws.remember("The office moved to Jamsil")
    assert result.entry is not None
    path.unlink()
    path.mkdir()
    _new_process(ws)
    result = ws.remember("The parking lot is behind the office")
    assert result.entry is not None
