"""bench/conversations.py's loader, diary writer, BM25 reference and figures, on a tiny set
written here; and the stored conversation sets hold together (every evidence id is a turn of
its conversation, both splits populated). No giok search and no embedding here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "conversations.py"
spec = importlib.util.spec_from_file_location("conversations_bench", BENCH)
assert spec and spec.loader
cb = importlib.util.module_from_spec(spec)
sys.modules["conversations_bench"] = cb
spec.loader.exec_module(cb)

TINY = {
    "name": "tiny",
    "conversations": [
        {
            "id": "c1",
            "sessions": [
                {
                    "id": "s1",
                    "date": None,
                    "turns": [
                        {"id": "s1:0", "speaker": "", "text": "[Scene: a kitchen, morning.]"},
                        {"id": "s1:1", "speaker": "Ana Lopez", "text": "Where did you  put the kettle?"},
                        {"id": "s1:2", "speaker": "Ben", "text": "The kettle is behind the bread bin."},
                        {"id": "s1:3", "speaker": "Cleo", "text": "Morning, both of you!"},
                    ],
                },
                {
                    "id": "s2",
                    "date": None,
                    "turns": [
                        {
                            "id": "s2:0",
                            "speaker": "Ben",
                            "text": "My sister adopted a greyhound called Pixel.",
                        },
                        {"id": "s2:1", "speaker": "Ana Lopez", "text": "Pixel is a lovely name for a dog."},
                    ],
                },
            ],
            "questions": [
                {"id": "q1", "question": "Where is the kettle?", "evidence": ["s1:2"], "answerable": True},
                {
                    "id": "q2",
                    "question": "What is the greyhound called?",
                    "evidence": ["s2:0", "s2:1"],
                    "answerable": True,
                },
                {"id": "q3", "question": "What car does Cleo drive?", "evidence": [], "answerable": False},
            ],
        }
    ],
}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY), "utf-8")
    return cb.load_set("tiny", path)["conversations"][0]


def test_undated_sessions_become_one_diary_a_day_written_as_a_user_would(tiny, tmp_path):
    root = tmp_path / "ws"
    where, said = cb.write_diaries(tiny, root)
    first = (root / "memory" / "2024-01-01.md").read_text("utf-8").splitlines()
    second = (root / "memory" / "2024-01-02.md").read_text("utf-8").splitlines()
    assert first[0] == "# 2024-01-01"
    assert "- 10:00 [Scene: a kitchen, morning.]" in first  # no speaker: no "Name:" label
    assert "- 10:00 Ana Lopez: Where did you put the kettle?" in first  # whitespace folded
    assert "- 10:01 Ben: The kettle is behind the bread bin." in first
    assert "- 10:00 Ben: My sister adopted a greyhound called Pixel." in second
    # every turn maps back from its file and line
    assert sorted(where.values()) == sorted(t["id"] for s in tiny["sessions"] for t in s["turns"])
    for (rel, line), turn in where.items():
        text = (root / rel).read_text("utf-8").splitlines()[line - 1]
        assert text.endswith(said[(rel, line)])
        assert turn.startswith(("s1:", "s2:"))
    assert (
        said[next(k for k, v in where.items() if v == "s1:2")] == "Ben: The kettle is behind the bread bin."
    )
    # a rerun leaves unchanged diaries untouched (the workspace cache stays valid)
    before = (root / "memory" / "2024-01-01.md").stat().st_mtime_ns
    assert cb.write_diaries(tiny, root) == (where, said)
    assert (root / "memory" / "2024-01-01.md").stat().st_mtime_ns == before


def test_bm25_reference_ranks_the_turns_that_share_the_question_words(tiny, tmp_path):
    where, said = cb.write_diaries(tiny, tmp_path / "ws")
    bm25 = cb.locomo.BM25(said)
    got = cb.bm25_turns(bm25, "Where is the kettle?", where)
    assert got[0] in ("s1:1", "s1:2") and set(got[:2]) == {"s1:1", "s1:2"}
    got = cb.bm25_turns(bm25, "What is the greyhound called?", where)
    assert got[0] == "s2:0"
    assert cb.recall(got, ["s2:0", "s2:1"], k=1) == (0.5, 1.0)
    assert cb.recall(["s1:0"], ["s2:0", "s2:1"]) == (0.0, 0.0)
    assert cb.bm25_turns(bm25, "zebra", where) == []


def test_figures_per_split_with_standard_errors():
    def row(split, g, b, answerable=True, top=("x",)):
        r = {
            "set": "tiny",
            "split": split,
            "conversation": split,
            "answerable": answerable,
            "giok_top": list(top),
        }
        if answerable:
            r["giok"] = {"frac": g, "any": g}
            r["bm25"] = {"frac": b, "any": b}
        return r

    rows = [row("dev", 1.0, 0.5), row("dev", 0.0, 0.5), row("test", 1.0, 1.0), row("test", 0, 0, False, ())]
    res = {r["split"]: r for r in cb.table(rows, ["dev", "test", "all"])}
    assert res["dev"]["n"] == 2 and res["test"]["n"] == 1 and res["all"]["n"] == 3
    assert res["dev"]["giok"]["frac@5"] == pytest.approx(0.5)
    assert res["dev"]["giok"]["frac_se"] == pytest.approx(0.5)  # sd 0.707 / sqrt 2
    assert res["dev"]["bm25"]["frac_se"] == pytest.approx(0.0)
    assert res["dev"]["ratio_frac"] == pytest.approx(1.0)
    assert res["dev"]["ratio_frac_se"] == pytest.approx(1.0)  # all of it from giok's spread
    assert res["test"]["giok_abstain"] == 1.0 and res["test"]["unanswerable"] == 1
    assert res["dev"]["giok_abstain"] is None
    r, se = cb.ratio_se([1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    assert r == pytest.approx(1.0) and se == pytest.approx(0.0)


@pytest.mark.parametrize("name", [n for n in cb.set_names() if n != "locomo"])
def test_stored_sets_hold_together(name):
    data = cb.load_set(name)
    assert data["licence"] and data["source"] and len(data["commit"]) == 40
    splits = {cb.split_of(name, c["id"]) for c in data["conversations"]}
    assert splits == {"dev", "test"}
    asked = 0
    for conv in data["conversations"]:
        turns = [t["id"] for s in conv["sessions"] for t in s["turns"]]
        assert len(turns) == len(set(turns))
        for q in conv["questions"]:
            assert q["answerable"] == bool(q["evidence"])
            assert set(q["evidence"]) <= set(turns), q["id"]
            asked += q["answerable"]
    assert 300 <= asked <= 2500


def test_locomo_keeps_the_tuning_half_as_dev():
    assert {cb.split_of("locomo", c) for c in cb.locomo.TUNING} == {"dev"}
    assert cb.split_of("locomo", "conv-42") == "test"


def test_the_sweep_applies_giok_cut_offs_and_the_rest_floor_only_once_something_is_found():
    from giok.retrieval.search import Options, Response, Result, _cut

    def mk(scores):
        return [Result(str(i), "w", "p", i, i, None, None, s, "", None) for i, s in enumerate(scores)]

    def at(ranked, **point):
        return [
            r.score for r in cb.cut_at(ranked, False, {"relative": None, "rest": None, "gap": None, **point})
        ]

    ranked = mk([0.9, 0.6, 0.3, 0.1])
    for point in (cb.BEFORE, {"min_score": 0.5, "relative": None, "rest": None, "gap": None}):
        o = Options(k=cb.K, min_score=point["min_score"], relative=point["relative"], gap=point["gap"])
        assert cb.cut_at(ranked, False, point) == _cut(ranked, o, Response("q", []), False)
    assert at(ranked, min_score=0.35, gap=0.15) == [0.9]  # 0.9 → 0.6 is a gap wider than 0.15
    assert at(ranked, min_score=0.35) == [0.9, 0.6]
    assert at(ranked, min_score=0.35, rest=0.2) == [0.9, 0.6, 0.3]
    assert at(mk([0.34, 0.3]), min_score=0.35, rest=0.2) == []  # nothing clears the floor: no answer
    points = cb.sweep_points(compare=False)
    assert points[0] == cb.BEFORE and points.count(cb.BEFORE) == 1
    assert all(p["rest"] is None or p["rest"] < p["min_score"] for p in points)
