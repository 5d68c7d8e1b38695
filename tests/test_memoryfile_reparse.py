"""A write re-reads only the lines of MEMORY.md it changed (giok.store.memoryfile keeps each
line's parse): the result is the same as a fresh parse, and fast at thousands of entries."""

from giok.store.memoryfile import LAYER_TITLES, MemoryFile, empty


def _file(n: int, word: str) -> str:
    rows = "".join(
        f"- [2026-03-01] {word} note {i} about the deploy <!-- id: m-{i:06x} -->\n" for i in range(n)
    )
    return empty("en").replace(LAYER_TITLES["en"]["M30"] + "\n", LAYER_TITLES["en"]["M30"] + "\n" + rows)


def test_the_same_line_under_another_heading_takes_that_layer() -> None:
    line = "- [2026-03-01] Seojun prefers tea <!-- id: m-000001 -->\n"
    first = MemoryFile.parse(
        empty("en").replace(LAYER_TITLES["en"]["M30"] + "\n", LAYER_TITLES["en"]["M30"] + "\n" + line)
    )
    moved = empty("en").replace(LAYER_TITLES["en"]["M365"] + "\n", LAYER_TITLES["en"]["M365"] + "\n" + line)

    assert [e.layer for e in first.entries()] == ["M30"]
    assert [e.layer for e in MemoryFile.parse(moved).entries()] == ["M365"]


def test_a_bullet_outside_any_heading_is_adopted_as_m30_each_time() -> None:
    text = "- loose bullet <!-- id: m-00000a -->\n"
    for _ in range(2):
        (entry,) = MemoryFile.parse(text).entries()
        assert (entry.layer, entry.headed) == ("M30", False)


def test_changing_a_parsed_entry_leaves_the_next_parse_alone() -> None:
    text = _file(3, "alpha")
    mf = MemoryFile.parse(text)
    mf.entries()[0].set("refs", 7)
    mf.entries()[1].layer = "M0"

    again = MemoryFile.parse(text)
    assert [e.refs for e in again.entries()] == [0, 0, 0]
    assert [e.layer for e in again.entries()] == ["M30", "M30", "M30"]
    assert again.render() == text.encode()


def test_untouched_lines_stay_byte_identical_after_an_edit() -> None:
    text = _file(50, "beta").replace("note 7 about", "note  7   about")  # an odd spacing, kept as written
    mf = MemoryFile.parse(text)
    mf.find("m-000003").set("refs", 2)
    after = mf.render().decode()

    changed = [(a, b) for a, b in zip(text.splitlines(), after.splitlines(), strict=True) if a != b]
    assert len(changed) == 1
    assert "refs: 2" in changed[0][1]
    assert MemoryFile.parse(after).render().decode() == after


def test_reparsing_a_big_file_after_one_change_reads_only_the_changed_line(monkeypatch) -> None:
    # The speed itself is measured by bench/remember.py; here: how many lines are parsed again.
    text = _file(3000, "gamma")
    MemoryFile.parse(text)
    parsed: list[str] = []
    real = MemoryFile._parse_piece.__func__  # type: ignore[attr-defined]

    def counting(cls: type[MemoryFile], piece: str, layer: str | None) -> object:
        parsed.append(piece)
        return real(cls, piece, layer)

    monkeypatch.setattr(MemoryFile, "_parse_piece", classmethod(counting))
    edited = text.replace("note 5 about", "note 5 really about")
    assert MemoryFile.parse(edited).render().decode() == edited
    assert parsed == ["- [2026-03-01] gamma note 5 really about the deploy <!-- id: m-000005 -->\n"]


def test_line_endings_are_kept_per_line_on_every_parse() -> None:
    text = _file(2, "delta").replace("\n", "\r\n", 3) + "- last line without an end <!-- id: m-0000ff -->"
    for _ in range(2):
        mf = MemoryFile.parse(text.encode())
        assert mf.render() == text.encode()
    mf.find("m-0000ff").set("refs", 1)
    assert mf.render().startswith(text.encode()[: text.index("- last line")])
