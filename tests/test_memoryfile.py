"""MEMORY.md parsing and rendering: byte-identical round trips, tolerance, local changes."""

import datetime as dt

import pytest

from giok.store.memoryfile import MemoryEntry, MemoryFile

# The seed's own sample (000_…txt), with its en dashes and mangled comment markers.
SEED = """## 🔮 M0 : 코어 메모리 (영구)
- 나는 제온이고, 서준이의 첫째 에이전트다
- 서준이는 체계적인 사고를 좋아한다
- 절대 규칙: 단톡방 보고 빠뜨리지 않기

## 🌳 M365 : 1년 기억
- [2025–09–15] 범우주적 아이덴티티 프로젝트 시작

## 📚 M90 : 90일 기억
- [2026–02–22] VibeDojo v2 리팩터링 결정 <! - expires: 2026–05–21 →

## 📝 M30 : 30일 기억
- [2026–03–05] 토끼굴 기억 에세이 초안 완성 <! - expires: 2026–04–05 →
""".encode()


def test_seed_sample_round_trips_byte_for_byte():
    mf = MemoryFile.parse(SEED)
    assert mf.render() == SEED
    assert mf.problems == []


def test_seed_sample_is_read_into_layers_with_dates_and_expiry():
    mf = MemoryFile.parse(SEED)
    assert [len(mf.entries(l)) for l in ("M0", "M365", "M90", "M30")] == [3, 1, 1, 1]
    m90 = mf.entries("M90")[0]
    assert m90.text == "VibeDojo v2 리팩터링 결정"
    assert m90.date == dt.date(2026, 2, 22)
    assert m90.expires == dt.date(2026, 5, 21)
    assert mf.entries("M0")[0].expires is None


def test_changing_one_entry_changes_only_its_line():
    mf = MemoryFile.parse(SEED)
    target = mf.entries("M90")[0]
    target.set("refs", 3)
    before, after = SEED.decode().splitlines(), mf.render().decode().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [target.line_no - 1]
    assert (
        after[target.line_no - 1]
        == "- [2026-02-22] VibeDojo v2 리팩터링 결정 <!-- expires: 2026-05-21; refs: 3 -->"
    )
    reparsed = MemoryFile.parse(mf.render()).entries("M90")[0]
    assert reparsed.refs == 3
    assert reparsed.expires == dt.date(2026, 5, 21)


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf## M0\r\n- a\r\n\r\n## M30\r\n- [2026-01-01] b <!-- expires: 2026-02-01 -->\r\n",
        b"# Memory\n\n- outside any layer\n## Core (M0)\n- x\n## m30\n* star bullet\n  - nested\nno "
        b"newline at end",
        b"## \xeb\xa9\x94\xeb\xaa\xa8\xeb\xa6\xac M90\n- [2026\xe2\x80\x9301\xe2\x80\x9301] en dash "
        b"<!\xe2\x80\x94 expires: 2026\xe2\x80\x9304\xe2\x80\x9301 \xe2\x80\x94>\n",
        b"",
        b"\n\n\n",
        b"## M30\n- [2026-13-40] impossible date\n- half comment <!-- expires: 2026-01-01\n- \xff\xfe not "
        b"utf8\n",
    ],
)
def test_tolerated_files_round_trip(data):
    assert MemoryFile.parse(data).render() == data


def test_bad_lines_are_kept_and_reported():
    data = b"## M30\n- [2026-13-40] impossible date\n- half comment <!-- expires: 2026-01-01\n- fine\n"
    mf = MemoryFile.parse(data)
    assert [p[0] for p in mf.problems] == [2, 3]
    assert [e.text for e in mf.entries()] == ["fine"]
    assert mf.render() == data


def test_entries_outside_layers_are_reported():
    mf = MemoryFile.parse(b"- stray\n## M0\n- ok\n")
    assert mf.problems
    assert "outside any layer" in mf.problems[0][1]


def test_crlf_file_gets_crlf_for_new_entries():
    mf = MemoryFile.parse(b"## M0\r\n- a\r\n## M30\r\n")
    mf.add(MemoryEntry(text="new", layer="M30", fields={"id": "m-abcdef"}))
    assert mf.render() == b"## M0\r\n- a\r\n## M30\r\n- new <!-- id: m-abcdef -->\r\n"


def test_add_creates_missing_layer_heading_in_order():
    mf = MemoryFile.parse(b"## M0\n- a\n\n## M30\n- b\n")
    mf.add(MemoryEntry(text="c", layer="M90"))
    layers = [l.layer for l in mf.lines if type(l).__name__ == "Heading"]
    assert layers == ["M0", "M90", "M30"]


def test_move_and_remove():
    mf = MemoryFile.parse(SEED)
    entry = mf.entries("M30")[0]
    mf.move(entry.id, "M90")
    assert [e.text for e in mf.entries("M90")][-1] == entry.text
    mf.remove(entry.id)
    assert entry.id not in mf.ids()
    assert MemoryFile.parse(mf.render()).ids() == mf.ids()


def test_machine_fields_round_trip():
    line = (
        b"## M30\n- [2026-03-05] x <!-- expires: 2026-04-05; id: m-7f3a2c; type: fact; scope: user:seojun; "
        b"source: cli; confidence: 0.8; supersedes: m-000001; refs: 2 -->\n"
    )
    mf = MemoryFile.parse(line)
    e = mf.entries()[0]
    assert (e.id, e.type, e.scope, e.refs, e.fields["supersedes"]) == (
        "m-7f3a2c",
        "fact",
        "user:seojun",
        2,
        "m-000001",
    )
    e.touch()
    assert mf.render() == line
