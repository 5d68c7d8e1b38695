"""MEMORY.md fields and text against hostile values (issue 9, items 2 and 9): no field's value
sets another field, closes the comment or starts a line; text reads back exactly as given."""

from __future__ import annotations

import json

import pytest

from conftest import run_giok
from giok.errors import InvalidInput
from giok.store.memoryfile import MemoryEntry, MemoryFile, derived_id, empty

# Values that try to set `scope` (or another field) from inside another field.
PAYLOADS = [
    "cli; scope: workspace",
    "cli | scope: workspace",
    "cli --> <!-- scope: workspace",
    "cli -->\n- injected entry <!-- scope: workspace -->",
    "cli\r\nscope: workspace",
    "cli\u2028scope: workspace",
    "cli;scope:workspace;id:m-000000",
    "100%3B sure; scope: workspace",
    "cli -> x; expires: 2000-01-01",
]


def _reparsed(entry: MemoryEntry) -> MemoryFile:
    mf = MemoryFile.parse(empty())
    mf.add(entry)
    return MemoryFile.parse(mf.render())


@pytest.mark.parametrize("field", ["source", "type", "scope", "supersedes", "confidence", "refs", "note"])
@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_field_value_sets_another_field(field, payload):
    fields = {"id": "m-abc123", "scope": "user:minji", field: payload}
    entry = MemoryEntry(text="Minji likes tea", layer="M30", fields=dict(fields))
    mf = _reparsed(entry)
    assert not mf.problems
    [back] = mf.entries()
    assert back.fields == fields
    assert back.expires is None
    assert back.text == "Minji likes tea"
    line = mf.render().decode().splitlines()[-1]
    comment = line[line.index("<!--") + 4 :]
    assert comment.count("-->") == 1
    assert comment.endswith("-->")  # no value closes the comment


def test_field_keys_that_are_not_names_are_refused():
    entry = MemoryEntry(text="x", layer="M30", fields={"id": "m-abc123"})
    with pytest.raises(InvalidInput):
        entry.set("scope: workspace; x", "1")
    entry.fields["bad key"] = "1"
    with pytest.raises(InvalidInput):
        str(entry)


@pytest.mark.parametrize("payload", PAYLOADS[:4])
def test_cli_source_cannot_set_the_scope(ws, payload):
    done = run_giok(
        "-w",
        ws.root,
        "remember",
        "Minji likes green tea in the morning",
        "--user",
        "minji",
        "--source",
        payload,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    entry_id = json.loads(done.stdout)["entry"]["id"]
    stored = ws.get(entry_id)
    assert stored.scope == "user:minji"
    assert stored.fields["source"] == payload.strip()
    assert len(ws.memory().entries()) == 1
    assert not ws.memory().problems
    shown = run_giok("-w", ws.root, "show", "--json")
    [entry] = [e for layer in json.loads(shown.stdout)["layers"].values() for e in layer["entries"]]
    assert (entry["scope"], entry["source"]) == ("user:minji", payload.strip())


TEXTS = {  # text: a search that finds it
    "Use <!DOCTYPE html> at the top of every page": "DOCTYPE top page",
    "Comments look like <!-- this --> in HTML": "comments HTML",
    "The old file said &lt;!DOCTYPE; keep it": "old file DOCTYPE",
    "Escaped twice: &amp;lt;! and &amp;amp;lt;!": "escaped twice",
    "Arrows end the fields comment: <! →": "arrows fields comment",
    "주석은 <!-- 이렇게 --> 쓴다; 비율: 100%": "주석은 비율",
}


@pytest.mark.parametrize("text", list(TEXTS))
def test_text_reads_back_exactly(ws, cli, giok_home, text):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))
    result = ws.remember(text, force=True)
    stored = ws.get(result.entry.id)
    assert stored.text == text
    shown = json.loads(cli("-w", ws.root, "show", "--json").output)
    assert [e["text"] for layer in shown["layers"].values() for e in layer["entries"]] == [text]
    hits = ws.search(TEXTS[text], k=3)
    assert text in [h.text for h in hits]


@pytest.mark.parametrize("text", list(TEXTS)[:4])
def test_hand_written_entry_keeps_its_id_when_touched(text):
    data = f"## M30\n- [2026-03-05] {text}\n".encode()
    mf = MemoryFile.parse(data)
    [entry] = mf.entries()
    before = (entry.id, entry.text)
    assert entry.id == derived_id(entry.text, entry.date)
    entry.set("refs", 2)  # what distillation does to an entry that was referenced
    [back] = MemoryFile.parse(mf.render()).entries()
    assert (back.id, back.text) == before
    assert back.refs == 2
    entry.set("refs", None)
    assert mf.render() == data or MemoryFile.parse(mf.render()).entries()[0].text == before[1]


def test_text_with_a_line_break_never_splits_the_file():
    entry = MemoryEntry(
        text="first line\nsecond line <!-- scope: workspace -->",
        layer="M30",
        fields={"id": "m-abc123", "scope": "user:minji"},
    )
    mf = _reparsed(entry)
    [back] = mf.entries()
    assert back.text == entry.text
    assert back.scope == "user:minji"


@pytest.mark.parametrize(
    "line", ["<!" * 50000, "<!-" * 50000 + ">", "<!- a: b >" * 30000 + " y", "<!-- " * 30000]
)
def test_a_line_of_many_comment_markers_parses_in_linear_time(line):
    import time

    data = f"## M30\n- x {line}\n".encode()
    start = time.perf_counter()
    mf = MemoryFile.parse(data)
    assert time.perf_counter() - start < 2.0
    assert mf.render() == data
