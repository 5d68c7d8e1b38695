"""The retrieval evaluation sets (bench/data/retrieval) load and are consistent: unique ids, the
documented split rule, balanced splits, every expected id stored, the promised sizes. No search
and no embedding here; bench/retrieval_sets.py runs them."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "retrieval_sets.py"
spec = importlib.util.spec_from_file_location("retrieval_sets", BENCH)
assert spec and spec.loader
rs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rs)

# the least each set promises: (kind or "ALL" / "ALL-nothing", count)
MINIMUM = {
    "bilingual": {"ko-ko": 60, "en-en": 60, "ko-en": 60, "en-ko": 60},
    "associative": {"ALL": 120, "ALL-nothing": 100},
    "korean_keywords": {"ALL": 40, "ALL-nothing": 20},
    "cjk": {"ALL": 20},
    "colloquial": {"ko-ko": 50, "en-en": 50, "ko-en": 12, "en-ko": 12, "ALL-nothing": 36},
    "verb_forms_ko": {"colloquial": 70, "ALL-nothing": 12},
}
HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.fixture(params=rs.SETS)
def data(request):
    return rs.load(request.param)


def test_ids_unique_and_expected_ids_stored(data):
    fact_ids = [f["id"] for f in data["facts"]]
    assert len(fact_ids) == len(set(fact_ids))
    query_ids = [q["id"] for q in data["queries"]]
    assert len(query_ids) == len(set(query_ids))
    for q in data["queries"]:
        assert set(q["expected"]) <= set(fact_ids), q["id"]
        assert q["query"].strip() and q["kind"]
    assert all(f["text"].strip() and "\n" not in f["text"] for f in data["facts"])


def test_split_follows_the_hash_rule_and_is_balanced(data):
    for q in data["queries"]:
        assert q["split"] == rs.split_of(q["group"], data["name"]), q["id"]
    for answerable in (True, False):
        part = [q for q in data["queries"] if bool(q["expected"]) is answerable]
        if len(part) >= 20:
            dev = sum(q["split"] == "dev" for q in part) / len(part)
            assert 0.4 <= dev <= 0.6, (data["name"], answerable, dev)


def test_sizes_and_kinds(data):
    kinds = Counter(q["kind"] for q in data["queries"])
    kinds["ALL"] = sum(1 for q in data["queries"] if q["expected"])
    kinds["ALL-nothing"] = sum(1 for q in data["queries"] if not q["expected"])
    for kind, least in MINIMUM[data["name"]].items():
        assert kinds[kind] >= least, (data["name"], kind, kinds[kind])


def test_bilingual_kinds_match_languages():
    data = rs.load("bilingual")
    lang = {f["id"]: f["lang"] for f in data["facts"]}
    assert sum(v == "en" for v in lang.values()) >= 40 and sum(v == "ko" for v in lang.values()) >= 40
    for q in data["queries"]:
        asked = "ko" if HANGUL.search(q["query"]) else "en"
        assert q["kind"] == f"{asked}-{lang[q['expected'][0]]}", q["id"]


def test_bm25_baseline_ranks_by_shared_words():
    bm25 = rs.BM25([{"id": "a", "text": "the cat sleeps"}, {"id": "b", "text": "a dog barks at the cat"}])
    assert bm25.ranked("sleeps") == ["a"]
    assert bm25.ranked("dog") == ["b"]
    assert bm25.ranked("unrelated words") == []
    assert bm25.ranked("???") == []


def test_curve_applies_the_documented_cut_offs():
    scored = [("a", 0.9), ("b", 0.8), ("c", 0.5), ("d", 0.45), ("e", 0.3)]
    assert rs.cut(scored, 0.35, None) == ["a", "b", "c", "d"]
    assert rs.cut(scored, 0.35, 0.15) == ["a", "b"]  # 0.8 → 0.5 is a gap wider than 0.15
    assert rs.cut(scored, 0.95, 0.15) == []
    assert rs.cut(scored, 0.0, None) == ["a", "b", "c", "d", "e"]
