"""Property tests of the MEMORY.md grammar (issue 9): whatever the text and fields, an entry
reads back as it was written; any file renders back byte for byte; a changed entry re-renders
only its own line; a canonical re-render of hand-written lines keeps what they say and their
ids. CI runs GIOK_FUZZ_EXAMPLES (default 1,000) examples per property; bench/fuzz_grammar.py
runs 10,000 and prints the counts."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from giok.store.memoryfile import FIELD_ORDER, LAYERS, MemoryEntry, MemoryFile, empty

EXAMPLES = int(os.environ.get("GIOK_FUZZ_EXAMPLES", "1000"))
RUNS: Counter = Counter()  # examples run per property (bench/fuzz_grammar.py prints them)
fuzz = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Pieces that the grammar gives a meaning to, mixed into arbitrary unicode (Korean included).
HOSTILE = [
    "<!--",
    "-->",
    "<!",
    "<! -",
    "→",
    ">",
    "--",
    "—",
    "–",
    ";",
    "; ",
    ":",
    ": ",
    "|",
    " | ",
    "&lt;!",
    "&amp;lt;!",
    "&amp;",
    "&#10;",
    "&#91;",
    "%",
    "%3B",
    "%25",
    "%0A",
    "%E2%80%A8",
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b",
    "\t",
    "[2026-03-05]",
    "[2026-13-40]",
    "[note]",
    "[",
    "]",
    "expires: 2026-01-01",
    "id: m-abcdef",
    "scope: workspace",
    "#",
    "## M0",
    "- ",
    "* ",
    "기억",
    "배포는 금요일",
    "한국어 텍스트",
    "🔮",
    "\ufeff",
    "\x00",
]
_chars = st.characters(blacklist_categories=("Cs",))
_piece = st.one_of(st.text(_chars, max_size=6), st.sampled_from(HOSTILE), st.sampled_from(HOSTILE))
texts = st.lists(_piece, min_size=1, max_size=8).map("".join).map(str.strip).filter(bool)
values = st.lists(_piece, max_size=5).map("".join).map(str.strip)
keys = st.one_of(
    st.sampled_from(FIELD_ORDER),
    st.builds(
        str.__add__,
        st.sampled_from("abcdefghijklmnopqrstuvwxyz_"),
        st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=7),
    ),
)
keys = keys.filter(lambda k: k != "expires")
dates = st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31))
entries = st.builds(
    MemoryEntry,
    text=texts,
    layer=st.sampled_from(LAYERS),
    date=st.none() | dates,
    expires=st.none() | dates,
    fields=st.dictionaries(keys, values, max_size=5),
    indent=st.sampled_from(["", "  ", "\t"]),
    bullet=st.sampled_from("-*+"),
)

# Lines as people, OpenClaw and older gioks write them, and broken ones.
_date_ish = st.sampled_from(["[2026-03-05] ", "[2026–03–05] ", "[2026-13-40] ", "[note] ", ""])
_comment = st.lists(st.tuples(keys | st.sampled_from(["expires", "ID", "bad key"]), values), max_size=4).map(
    lambda kv: "; ".join(f"{k}: {v}" for k, v in kv)
)
_ending = st.sampled_from([" -->", " →", " —>", "", " -- >"])
_entry_line = st.builds(
    lambda i, b, d, t, c, e, has: f"{i}{b} {d}{t}" + (f" <!-- {c}{e}" if has else ""),
    st.sampled_from(["", "  "]),
    st.sampled_from("-*+"),
    _date_ish,
    st.lists(_piece, min_size=1, max_size=6).map("".join),
    _comment,
    _ending,
    st.booleans(),
)
_line = st.one_of(
    _entry_line,
    _entry_line,
    st.sampled_from(
        [
            "## 🔮 M0 : core memory (permanent)",
            "## M365",
            "## 📚 M90 : 90일 기억",
            "## m30",
            "# MEMORY.md",
            "## Notes",
            "",
            "<!-- giok:refs-counted-until 2026-03-05T23:00:00 -->",
            "<!-- Who are you working with? -->",
            "---",
        ]
    ),
    st.text(_chars, max_size=20),
)
_eol = st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"])
_junk = st.sampled_from([b"", b"", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc", b"\xef\xbb\xbf"])


@st.composite
def files(draw) -> bytes:
    lines = draw(st.lists(_line, max_size=8))
    body = b"".join(l.encode("utf-8", "surrogatepass") + draw(_junk) + draw(_eol) for l in lines)
    if draw(st.booleans()):
        body = body.rstrip(b"\r\n")
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + body


def _append_comment_to_text(entry: MemoryEntry) -> None:
    entry.text += " <!-- x: y -->"
    entry.touch()


def _said(e: MemoryEntry) -> tuple:
    return (e.text, e.layer, e.date, e.expires, e.fields, e.id, e.indent, e.bullet)


@fuzz
@given(entry=entries)
def test_an_entry_reads_back_as_written(entry):
    RUNS["entry reads back as written"] += 1
    expected = _said(entry)
    mf = MemoryFile.parse(empty())
    mf.add(entry)
    line = str(entry)
    assert not any(c in line for c in "\n\r\u2028\u2029\x85\x0b\x0c")  # one line, whatever the input
    if "<!--" in line:  # the text has no comment opener; no value closes the comment
        assert line.count("<!") == 1
        assert line[line.index("<!--") :].count("-->") == 1
        assert line.endswith(" -->")
    back = MemoryFile.parse(mf.render())
    assert not back.unreadable
    assert len(back.lines) == len(mf.lines)
    [found] = [e for e in back.entries() if e.line_no == entry.line_no]
    assert _said(found) == expected


@fuzz
@given(data=st.one_of(files(), st.binary(max_size=300)))
def test_any_file_renders_back_byte_for_byte(data):
    RUNS["file renders back byte for byte"] += 1
    assert MemoryFile.parse(data).render() == data


@fuzz
@given(data=files(), choice=st.data())
def test_a_changed_entry_re_renders_only_its_own_line(data, choice):
    RUNS["changed entry re-renders only its line"] += 1
    mf = MemoryFile.parse(data)
    found = mf.entries()
    if not found:
        return
    entry = choice.draw(st.sampled_from(found))
    choice.draw(
        st.sampled_from(
            [
                lambda e: e.set("refs", e.refs + 1),
                lambda e: e.set("source", "cli; scope: x"),
                _append_comment_to_text,
                MemoryEntry.touch,
            ]
        )
    )(entry)
    before, after = MemoryFile.parse(data), mf.render()
    old_lines = [str(l) for l in before.lines]
    new_lines = MemoryFile.parse(after).lines
    assert len(new_lines) == len(old_lines)
    for n, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), 1):
        if n != entry.line_no:
            assert str(new) == old
    assert _said(MemoryFile.parse(after).lines[entry.line_no - 1]) == _said(entry)


@fuzz
@given(data=files())
def test_canonical_re_render_keeps_what_hand_written_lines_say(data):
    RUNS["canonical re-render keeps text, fields, ids"] += 1
    mf = MemoryFile.parse(data)
    said = [_said(e) for e in mf.entries()]
    unreadable = [n for n, _, _ in mf.unreadable]
    for e in mf.entries():
        e.touch()
    back = MemoryFile.parse(mf.render())
    assert [_said(e) for e in back.entries()] == said
    assert [n for n, _, _ in back.unreadable] == unreadable
