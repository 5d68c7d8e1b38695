"""The write path at scale (docs/architecture.md, "Write path at scale"): the policy's index
gives the same decisions as comparing every entry, and the kept parse of MEMORY.md is never
served for bytes it was not made from."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest

from giok.store.memoryfile import MemoryEntry, MemoryFile, empty, new_id
from giok.write import policy

DATA = Path(__file__).parent / "data"
BENCH = Path(__file__).parent.parent / "bench" / "data" / "judgement"
TODAY = dt.date(2026, 3, 10)


def _statements() -> list[str]:
    pairs = json.loads((DATA / "change_pairs.json").read_text("utf-8"))["items"]
    keep = json.loads((DATA / "policy_set.json").read_text("utf-8"))["keep"]
    return [p["old"] for p in pairs] + [p["new"] for p in pairs] + list(keep)


def _variants(text: str, rnd: random.Random) -> list[str]:
    """Rewordings, negations, changes, other subjects and numbers of one statement."""
    words = text.rstrip(".").split()
    out = [
        text,
        text.rstrip(".") + ".",
        text.lower(),
        "Now " + text[:1].lower() + text[1:],
        "이제 " + text,
        text.replace(" is ", " is not ").replace(" likes ", " does not like "),
        text.replace("는다", "지 않는다").replace("한다", "하지 않는다"),
        text + f" {rnd.randint(1, 9)}",
        " ".join(words[:-1]) if len(words) > 3 else text + " again",
        " ".join(rnd.sample(words, len(words))),
    ]
    for a, b in (("Seojun", "Minsu"), ("서준", "민수"), ("Minji", "Jiho"), ("Mondays", "Monday")):
        if a in text:
            out.append(text.replace(a, b))
    return out


def _memory(rnd: random.Random, texts: list[str]) -> MemoryFile:
    mf = MemoryFile.parse(empty("en"))
    ids: set[str] = set()
    for i, text in enumerate(texts):
        entry = MemoryEntry(text=text, layer=rnd.choice(["M0", "M365", "M90", "M30", "M30"]))
        entry.date = TODAY - dt.timedelta(days=rnd.randint(0, 60))
        entry.expires = None if entry.layer == "M0" else TODAY + dt.timedelta(days=rnd.randint(-5, 60))
        entry.fields = {"id": new_id(ids), "scope": rnd.choice(["workspace"] * 6 + ["user:seojun"])}
        if i % 17 == 5:
            del entry.fields["id"]  # a hand-written line: its id is derived from its text
        ids.add(entry.id)
        mf.add(entry)
    entries = mf.entries()
    for entry in rnd.sample(entries, len(entries) // 6):  # some replaced, some in chains
        entry.set("superseded_by", rnd.choice(entries).id)
    return MemoryFile.parse(mf.render())


def _same(a: policy.Decision, b: policy.Decision) -> bool:
    def ids(d: policy.Decision) -> tuple:
        return (d.target.id if d.target else None, d.target.line_no if d.target else None)

    return (a.action, a.reason, ids(a), [e.id for e in a.also]) == (
        b.action,
        b.reason,
        ids(b),
        [e.id for e in b.also],
    )


def test_indexed_decisions_equal_the_full_comparison():
    rnd = random.Random(2026)
    statements = _statements()
    stored = [v for s in statements for v in _variants(s, rnd) if rnd.random() < 0.2]
    mf = _memory(rnd, stored)
    index = policy.Index(mf)
    queries = rnd.sample([v for s in statements for v in _variants(s, rnd)], 500)
    assert len(mf.entries()) > 300
    seen = set()
    for text in queries:
        for scope in ("workspace", "user:seojun") if rnd.random() < 0.3 else ("workspace",):
            full = policy.decide(mf, text, scope=scope, today=TODAY)
            fast = policy.decide(mf, text, scope=scope, today=TODAY, index=index)
            assert _same(full, fast), (text, scope, full, fast)
            seen.add(
                full.reason.split(" (")[0].split(" ")[0]
                + (" subject" if "same subject" in full.reason else "")
                + (" back" if "back to" in full.reason else "")
                + (" claim" if "same claim" in full.reason else "")
            )
    # every kind of verdict was tried: duplicate, same subject, same claim negated, back to an
    # earlier value, near-duplicate
    assert {"exact", "replaces subject", "replaces claim", "replaces back", "near-duplicate"} <= seen, seen


@pytest.mark.judgement_model
def test_indexed_decisions_equal_the_full_comparison_with_the_model():
    """With the shipped model the policy also reads entries by meaning (a frame, the pair head,
    the attribute head): the index must name every entry those read, or `remember` decides
    otherwise than the full comparison. The dev split of the change set, every old text in one
    file, and every new text decided against it."""
    items = json.loads((BENCH / "changes.json").read_text("utf-8"))["items"]
    changed = 0
    for lang in ("en", "ko"):
        mine = [i for i in items if i["split"] == "dev" and i["lang"] == lang]
        mf = MemoryFile.parse(empty(lang))
        for n, item in enumerate(mine):
            entry = MemoryEntry(text=policy.normalize(item["old"]), layer="M90")
            entry.date = TODAY - dt.timedelta(days=len(mine) - n)
            entry.fields = {"id": f"m-{n:06d}"}
            mf.add(entry)
        mf = MemoryFile.parse(mf.render())
        index = policy.Index(mf)
        for item in mine:
            full = policy.decide(mf, item["new"], force=True, today=TODAY)
            fast = policy.decide(mf, item["new"], force=True, today=TODAY, index=index)
            assert _same(full, fast), (item["new"], full, fast)
            changed += full.action == "supersede"
    assert changed >= 20  # the learned path was taken, not only the rules


def test_index_kept_in_step_with_writes_decides_the_same():
    """Writes carried out one after another, the index told of each new entry (as the write
    path does): every decision equals the full comparison's on the same file."""
    rnd = random.Random(7)
    statements = _statements()
    mf = _memory(rnd, rnd.sample(statements, 60))
    index = policy.Index(mf)
    actions = set()
    for text in rnd.sample([v for s in statements for v in _variants(s, rnd)], 300):
        full = policy.decide(mf, text, today=TODAY)
        fast = policy.decide(mf, text, today=TODAY, index=index)
        assert _same(full, fast), (text, full, fast)
        actions.add(full.action)
        _apply(full, mf, index, rnd)
    assert {"write", "supersede", "duplicate"} <= actions


def test_a_file_changed_in_place_with_the_same_size_and_time_is_read_again(ws):
    """The kept parse is served only for the bytes it was made from: an edit that keeps the
    size, the inode and (restored) the modification time is still seen by the next read and
    by the next remember's duplicate check."""
    import os

    first = ws.remember("The staging database runs on port 5432").entry
    ws.memory()  # parsed and kept
    path = ws.root / "MEMORY.md"
    st = os.stat(path)
    data = path.read_bytes()
    edited = data.replace(b"staging database", b"billing database")
    assert len(edited) == len(data) and edited != data
    with open(path, "r+b") as f:  # in place: the same inode
        f.write(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_ino == st.st_ino and os.stat(path).st_size == st.st_size
    assert ws.get(first.id).text == "The billing database runs on port 5432"
    again = ws.remember("The billing database runs on port 5432")
    assert again.action == "duplicate", again


def _ids(monkeypatch):
    from giok.write import remember as remember_module

    counter = iter(range(1, 10_000))
    monkeypatch.setattr(remember_module, "new_id", lambda taken=(): f"m-{next(counter):06x}")


def _history(ws, texts: list[tuple[str, dict]]) -> list[bytes]:
    out = []
    for text, opts in texts:
        ws.remember(text, **opts)
        out.append((ws.root / "MEMORY.md").read_bytes())
    return out


def test_spliced_writes_give_the_bytes_of_a_full_render(tmp_path, giok_home, monkeypatch):
    """Remembers that add, supersede (one and several entries), go to other layers and to a
    file with CRLF line ends and no final line break: each MEMORY.md equals the one the full
    render writes."""
    from giok import Workspace
    from giok.write import remember as remember_module

    steps = [
        ("Seojun prefers tea in the morning", {}),
        ("Seojun likes green tea after lunch", {}),
        ("The deploy script runs on Mondays", {"layer": "M0"}),
        ("Seojun now prefers coffee", {}),  # supersedes both tea entries
        ("서준은 주말마다 북한산에 등산을 간다", {"layer": "M90"}),
        ("The deploy script runs on Monday", {}),  # near-duplicate of the M0 entry
        ("배포는 금요일에 하지 않는다", {"layer": "M365"}),
        ("Jiho works at Naver", {}),
        ("Jiho now works at Kakao", {"layer": "M0"}),  # put in above the entry it supersedes
    ]
    results = []
    for full in (False, True):
        _ids(monkeypatch)
        if full:
            monkeypatch.setattr(remember_module, "_rendered", lambda before, mf, *rest: mf.render())
        ws, _ = Workspace.init(tmp_path / f"w{full}", name=f"w{full}", home=giok_home)
        memory = ws.root / "MEMORY.md"
        history = _history(ws, steps[:4])
        crlf = memory.read_bytes().replace(b"\n", b"\r\n").rstrip(b"\r\n")
        ws.edit_bytes("MEMORY.md", lambda old, crlf=crlf: (crlf, None), "test: CRLF, no final break")
        history += _history(ws, steps[4:])
        results.append(history)
    assert results[0] == results[1]
    assert b"superseded_by" in results[0][3] and results[0][-1].count(b"\r\n") > 10
    assert results[0][-1].index(b"Kakao") < results[0][-1].index(b"Naver <!-- expires")


def test_memory_file_changes_keep_the_layout_of_a_fresh_parse():
    """add / insert_line / remove / move on one parse (which keeps where its headings are)
    give the same file as the same change on a fresh parse of the bytes before it."""
    from giok.store.memoryfile import Heading, RawLine

    rnd = random.Random(5)
    mf = MemoryFile.parse(empty("en"))
    for step in range(300):
        fresh = MemoryFile.parse(mf.render())
        op = rnd.random()
        entries = mf.entries()
        if op < 0.5 or not entries:
            layer = rnd.choice(["M0", "M365", "M90", "M30"])
            for m in (mf, fresh):
                m.add(MemoryEntry(text=f"fact {step}", layer=layer, fields={"id": f"m-{step:06x}"}))
        elif op < 0.65:
            pos = rnd.randrange(len(mf.lines) + 1)
            make = rnd.choice([lambda: RawLine(""), lambda: Heading("## M90 again", "M90")])
            for m in (mf, fresh):
                m.insert_line(pos, make())
        elif op < 0.8:
            gone = rnd.choice(entries).id
            for m in (mf, fresh):
                m.remove(gone)
        else:
            moved, layer = rnd.choice(entries).id, rnd.choice(["M0", "M365", "M90", "M30"])
            for m in (mf, fresh):
                m.move(moved, layer)
        assert mf.render() == fresh.render(), step
        assert [e.line_no for e in mf.entries()] == [e.line_no for e in fresh.entries()]


def test_a_journal_of_the_inline_format_is_still_rolled_back(ws):
    """A write killed by a giok that kept the old bytes inside the journal (version 1) is
    rolled back by this one; a write of this one leaves no kept bytes behind."""
    import base64

    from giok.store import git, journal

    ws.remember("The VPN certificate for the lab is valid until spring")
    assert not list((ws.root / ".giok").glob("journal-*"))
    before = (ws.root / "MEMORY.md").read_bytes()
    after = before + b"- [2026-12-03] half written\n"
    record = {"before": base64.b64encode(before).decode("ascii"), "after": git.blob_id(ws.root, after)}
    data = {"version": 1, "head": git.head_id(ws.root), "message": "memory: remember x", "files": {}}
    data["files"]["MEMORY.md"] = record
    journal.path(ws.root).write_text(json.dumps(data), "utf-8")
    (ws.root / "MEMORY.md").write_bytes(after)
    ws.diary("the next write settles the journal")
    assert (ws.root / "MEMORY.md").read_bytes() == before
    assert not journal.path(ws.root).exists()


def test_boot_sees_an_in_place_edit_that_keeps_size_and_time(ws):
    """boot's kept lines (.giok/boot-memory.json) follow MEMORY.md's bytes, not its stat."""
    import os

    from giok.lifecycle import boot

    ws.remember("The staging database runs on port 5432")
    assert "staging database" in boot.build(ws).text  # and kept for the next boot
    path = ws.root / "MEMORY.md"
    st = os.stat(path)
    edited = path.read_bytes().replace(b"staging database", b"billing database")
    with open(path, "r+b") as f:
        f.write(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    text = boot.build(ws).text
    assert "billing database" in text and "staging database" not in text


def test_word_and_near_indexes_never_miss_a_match():
    """Over every pair of a few hundred texts (and Korean claim words of one letter): each
    pair `counterparts` / `near_duplicate` accepts is among the index's candidates."""
    from giok.text import likeness

    rnd = random.Random(11)
    texts = [v for s in _statements() for v in _variants(s, rnd)]
    texts = [*rnd.sample(texts, 300), "서버api 는 돈다", "도 는 돈다", "돌 도", "회의실 의실", "의실 회의"]
    word_sets = [*(set(policy.claim(t)[0]) for t in texts), {"도"}, {"도", "돌"}, {"의실"}, {"회의실"}]
    words = likeness.WordIndex()
    for serial, ws_ in enumerate(word_sets):
        words.add(serial, ws_)
    for mine in word_sets:
        found = words.candidates(mine)
        assert {s for s, other in enumerate(word_sets) if likeness.counterparts(mine, other)} <= found
    features = [likeness.features(t) for t in texts]
    near = likeness.NearIndex()
    for serial, f in enumerate(features):
        near.add(serial, f)
    hits = 0
    for mine in features:
        accepted = {s for s, other in enumerate(features) if likeness.near_duplicate(mine, other)}
        assert accepted <= near.candidates(mine), mine.text
        hits += len(accepted) - 1
    assert hits > 50  # pairs other than a text with itself were found


def _apply(decision, mf, index, rnd) -> bool:
    """Carry out a write or supersede `decision` in `mf` and `index`, as remember does; whether
    it wrote."""
    if decision.action not in ("write", "supersede"):
        return False
    entry = MemoryEntry(text=decision.text, layer=rnd.choice(["M0", "M30"]), date=TODAY)
    entry.fields = {"id": new_id(index.ids()), "scope": "workspace"}
    for old in [decision.target, *decision.also] if decision.action == "supersede" else []:
        old.set("superseded_by", entry.id)
    mf.add(entry)
    index.add(entry)
    return True
