"""The write path at scale (docs/architecture.md, "Write path at scale"): the policy's index
gives the same decisions as comparing every entry, and the kept parse of MEMORY.md is never
served for bytes it was not made from."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

from giok.store.memoryfile import MemoryEntry, MemoryFile, empty, new_id
from giok.write import policy

DATA = Path(__file__).parent / "data"
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
        if full.action in ("write", "supersede"):
            entry = MemoryEntry(text=full.text, layer=rnd.choice(["M0", "M30"]), date=TODAY)
            entry.fields = {"id": new_id(index.ids()), "scope": "workspace"}
            for old in [full.target, *full.also] if full.action == "supersede" else []:
                old.set("superseded_by", entry.id)
            mf.add(entry)
            index.add(entry)
    assert {"write", "supersede", "duplicate"} <= actions
