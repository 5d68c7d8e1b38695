"""Another person named by a relation (docs/judgement.md, "Another person named by a relation"):
"Priya's sister moved to Bristol" is no change of where Priya lives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from giok.write import persons
from giok.write.statements import relation

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("text", "rel"),
    [
        ("Priya's sister Meera lives in Toronto", "sister"),
        ("My boss moved the standup to Thursdays", "boss"),
        ("하윤 언니가 지난주에 서울로 이사했다", "언니"),
        ("하윤의 동생은 대전에 산다", "동생"),
        ("채원 전 남친이 요즘 클라이밍에 빠졌다", "남친"),  # the head of the phrase, after 전 (former)
        ("서아 회사 동기도 크로스핏으로 바꿨다", "동기"),
        # a thing of the owner's, not a person
        ("Priya's new flat is in Bristol", None),
        ("하윤 회사가 판교로 옮겼다", None),
        ("하윤의 월세는 이제 110만원이다", None),
        # the person noun does not carry the sentence, or is a slot of the owner's
        ("하윤 엄마랑 통화했다", None),  # with mom: 하윤 is the subject
        ("Grandpa's doctor is Dr. Patel", None),  # who Grandpa's doctor is: Grandpa's slot
        ("김 과장님 퇴사하시고 이제 박 부장님이 팀장", None),  # a surname before a title is the person
        ("Priya moved to Bristol last weekend", None),
    ],
)
def test_the_relation_a_text_names_its_person_by(text, rel):
    assert relation(text) == rel


@pytest.mark.parametrize(
    ("old", "relative", "own"),
    [
        (
            "Priya lives in Leeds.",
            "Priya's sister moved to Bristol last weekend.",
            "Priya moved to Bristol last weekend.",
        ),
        ("하윤은 대전에 산다.", "하윤 언니가 지난주에 서울로 이사했다.", "하윤이 지난주에 서울로 이사했다."),
    ],
)
def test_a_relatives_change_does_not_replace_the_owners_fact(ws, old, relative, own):
    # the keyword rules (the tests' default judge): "priya s sister" once counted as Priya
    entry = ws.remember(old, layer="M90").entry
    assert entry is not None
    assert ws.remember(relative).action == "written"
    assert not ws.get(entry.id).superseded
    assert ws.remember(own).action == "superseded"
    assert ws.get(entry.id).superseded


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    ("old", "relative"),
    [
        (
            "하은은 지하철로 출근한다.",
            "하은 남자친구는 요즘 자전거로 출근한다.",
        ),  # the slot head read one slot
        ("Noah lives in Leeds.", "Noah's stepmother moved to Bristol last month."),  # a relation not listed
    ],
)
def test_the_learned_judge_keeps_a_relatives_change_apart_too(ws, old, relative):
    entry = ws.remember(old, layer="M90").entry
    assert entry is not None
    assert ws.remember(relative).action == "written"
    assert not ws.get(entry.id).superseded


@pytest.mark.judgement_model
def test_the_person_head_reads_relations_it_was_not_shown():
    unlisted = ["stepmother", "godmother", "시어머니", "새엄마"]
    assert not any(w in persons._head()[2] for w in unlisted)
    assert all(persons.is_person(w) for w in unlisted)
    assert not any(persons.is_person(w) for w in ["mortgage", "scooter", "적금", "오피스텔"])


def test_without_the_model_the_shipped_list_answers():
    assert persons.is_person("sister") and persons.is_person("언니")
    assert not persons.is_person("stepmother")  # the head's to read, and the rules do not run it
    assert not persons.is_person("rent")
    # a compound whose head is listed: Korean compounds put it last, English after a hyphen
    assert persons.is_person("새언니") and persons.is_person("외할머니") and persons.is_person("ex-wife")
    assert not persons.is_person("season")  # a Latin word's bare ending is no head


def test_the_shipped_list_is_the_materials_persons():
    data = json.loads((ROOT / "tools" / "data" / "raw" / "persons.json").read_text("utf-8"))
    listed = {w.casefold() for lang in ("en", "ko") for w in data["person"][lang]}
    assert persons._head()[2] == listed


@pytest.mark.judgement_model
def test_a_relatives_value_is_no_contradiction_of_the_owners():
    from giok.lifecycle import review

    # the same words around another value ("대전에" / "언니는 서울에") once read as a contradiction
    assert review.classify("하윤은 대전에 산다.", "하윤 언니는 서울에 산다.") is None
    assert review.classify("하윤 언니는 서울에 산다.", "하윤은 대전에 산다.") is None
    assert review.classify("하윤은 대전에 산다.", "하윤은 서울에 산다.") is not None


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    from conftest import stocked_workspace

    entries = [
        "[2026-03-01] Priya lives in Leeds, in Headingley.",
        "[2026-03-02] Priya takes the train to work.",
        "[2026-05-12] Priya's sister Meera lives in Bristol.",
        "[2026-03-03] 하윤은 대전 유성구에 산다.",
        "[2026-05-11] 하윤 언니는 수원 광교에 산다.",
    ]
    yield from stocked_workspace(tmp_path_factory, entries, prefix="f", name="family", user="Priya")


@pytest.mark.parametrize(
    ("query", "own"), [("Where does Priya live?", "f-000000"), ("하윤이 어디 살지?", "f-000003")]
)
def test_a_relatives_newer_entry_is_no_newer_value_of_the_owners(family, monkeypatch, query, own):
    # two live entries near in meaning and score are ordered newest first (search._by_date): the
    # sister's home, written later, once came first for where Priya lives
    monkeypatch.setenv("GIOK_HOME", str(family.home.path))
    found = family.search(query, k=3, record=None)
    assert found and found[0].id == own, [(r.id, round(r.score, 3)) for r in found]
