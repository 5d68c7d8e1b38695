"""The quick reading of common MEMORY.md lines (memoryfile._parse_plain) gives exactly what the
general reading gives, on every line the grammar fuzz makes (tests/adversarial/test_grammar_fuzz.py,
bench/fuzz_grammar.py), on every canonical entry line, and on lines built to sit at the edge of
its shape; whole files parse and render the same either way."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from adversarial.test_grammar_fuzz import _piece, entries, files, fuzz
from giok.store import memoryfile
from giok.store.memoryfile import LAYERS, MemoryEntry, MemoryFile

# The grammar fuzz's count when GIOK_FUZZ_EXAMPLES is set (bench strength: 10,000), else fewer.
fuzz = settings(fuzz, max_examples=int(os.environ.get("GIOK_FUZZ_EXAMPLES", "300")))

FIRED: Counter = Counter()  # lines the quick reading settled, per property


def _same_reading(line: str, layer: str | None, where: str) -> None:
    plain = memoryfile._parse_plain(line, layer)
    if plain is None:
        return
    FIRED[where] += 1
    general = memoryfile._parse_general(line, layer)
    assert isinstance(general, MemoryEntry), (line, general)
    assert plain == general, line  # every field of the dataclass: text, dates, fields, raw, …
    assert str(plain) == str(general)


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="surrogateescape")
    return [piece.rstrip("\n").removesuffix("\r") for piece in memoryfile._PIECES_RE.findall(text)]


_layers = st.sampled_from([None, *LAYERS])


@fuzz
@given(data=files(), layer=_layers)
def test_the_fuzz_files_lines_read_the_same(data, layer):
    for line in _lines(data):
        _same_reading(line, layer, "files")


@fuzz
@given(entry=entries, layer=_layers)
def test_canonical_entry_lines_read_the_same(entry, layer):
    try:
        line = str(entry)
    except Exception:  # text the grammar refuses to write is no line to read
        return
    for part in line.split("\n"):
        _same_reading(part, layer, "entries")


# Lines of the quick shape, some bent by a snippet put anywhere: spaces and dashes before `-->`,
# bad dates, `expires`, odd keys, `<`, `&`, `[`, `%`, `→`, `;`, `|` and unicode spaces.
_edge = st.sampled_from(
    [
        " ",
        "  ",
        "\u00a0",
        "\u3000",
        "\t",
        "-",
        "—",
        "–",
        "<",
        "&",
        "[",
        "]",
        "%",
        "%3B",
        ">",
        "→",
        ":",
        ";",
        "|",
    ]
)
_snippets = st.sampled_from(
    ["!", "\n", "\r", "-->", " <!-- ", "; id: ", "expires: 2026-02-30", "[2026-03-05] ", "&lt;!"]
)
_words = st.lists(
    st.sampled_from(["deploy", "서준은", "Seojun", "x", "m-0a1b2c", "12", "b-", "a:b"]), min_size=1
)
_date = st.sampled_from(
    ["", "[2026-03-05] ", "[2026-13-40] ", "[0000-01-01] ", "[2026-02-29] ", "[٢٠٢٦-03-05] "]
)
_key = st.sampled_from(["id", "type", "expires", "source", "refs", "x_1", "_"])
_value = st.sampled_from(["m-0a1b2c", "2026-05-01", "2026-02-30", "", "cli", "user:서준", "a-", "b —", "1 2"])


@settings(fuzz, max_examples=max(fuzz.max_examples, 1000))
@given(
    date=_date,
    text=_words.map(" ".join),
    fields=st.lists(st.tuples(_key, _value), max_size=4),
    bends=st.lists(st.tuples(st.floats(0, 1), _edge | _snippets | _piece), max_size=2),
    layer=_layers,
)
def test_lines_at_the_edge_of_the_quick_shape_read_the_same(date, text, fields, bends, layer):
    comment = "; ".join(f"{k}: {v}" for k, v in fields)
    line = f"- {date}{text}" + (f" <!-- {comment} -->" if fields else "")
    for where, snippet in bends:
        at = int(where * len(line))
        line = line[:at] + snippet + line[at:]
    _same_reading(line, layer, "edge")


def test_the_quick_reading_settles_written_lines():
    """The shapes the write path writes are read quickly (else the test above checks nothing)."""
    written = [
        "- [2026-03-01] deploy script backend 12 <!-- id: m-00000c -->",
        "- I am Zeon.",
        "- [2026-02-22] Decided X <!-- expires: 2026-05-21; id: m-7f3a2c; type: decision -->",
        "- 서준은 차를 좋아한다 <!-- id: m-0a1b2c; scope: user:서준; refs: 3 -->",
    ]
    for line in written:
        assert memoryfile._parse_plain(line, "M30") is not None, line
        _same_reading(line, "M30", "written")
    entry = memoryfile._parse_plain(written[2], "M90")
    assert entry is not None
    assert entry.expires == dt.date(2026, 5, 21)
    assert entry.fields == {"id": "m-7f3a2c", "type": "decision"}


def test_files_parse_and_render_the_same_with_the_quick_reading_or_without(monkeypatch):
    body = "".join(
        f"- [2026-03-{1 + i % 28:02d}] note {i} <!-- id: m-{i:06x}; refs: {i % 3} -->\n" for i in range(200)
    )
    data = (
        "# MEMORY.md\n\n## 📝 M30 : 30-day memory\n" + body + "- [2026-13-40] bad <!-- id: x -->\n"
    ).encode()
    quick = MemoryFile.parse(data)
    memoryfile._LINES.clear()
    monkeypatch.setattr(memoryfile, "_parse_plain", lambda raw, layer: None)
    general = MemoryFile.parse(data)
    memoryfile._LINES.clear()
    assert quick.render() == data
    assert quick.lines == general.lines
    assert quick.problems == general.problems


def teardown_module() -> None:
    print("\nlines the quick reading settled:", dict(FIRED))
