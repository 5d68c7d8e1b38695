"""A flush keeps what a person would keep from ordinary talk — decisions, constraints, pending
work, style instructions, dated facts — in both languages, each stored once and injected once
at boot (DESIGN.md parts 7 and 13)."""

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

from giok.lifecycle import boot
from giok.lifecycle.watchdog import extract, flush
from giok.store.memoryfile import MemoryFile


def everything(gist: dict[str, list[str]]) -> list[str]:
    """Every item a gist keeps, of any category."""
    return [t for items in gist.values() for t in items]


TALK = "\n".join(
    json.dumps(m, ensure_ascii=False)
    for m in [
        {"role": "user", "content": "morning! ugh, the coffee machine is broken again"},
        {"role": "assistant", "content": "Good morning! What are we working on today?"},
        {
            "role": "user",
            "content": "Let's keep the index in SQLite and never use Postgres for the solo setup",
        },
        {"role": "assistant", "content": "Got it: SQLite for the solo setup, no Postgres."},
        {"role": "user", "content": "Also remember I am away next Monday"},
        {"role": "user", "content": "don't use bullet points with me"},
        {"role": "user", "content": "답변은 짧게 해줘"},
        {"role": "user", "content": "다음 주 월요일에 치과 예약 있어"},
        {"role": "user", "content": "I have to finish the changelog before Friday"},
        {"role": "user", "content": "what's the max db size sqlite handles anyway?"},
        {"role": "user", "content": "lol ok, plenty"},
    ]
)


def _live(ws) -> list[str]:
    return [e.text for e in MemoryFile.parse(ws.path("MEMORY.md").read_bytes()).entries() if not e.superseded]


def test_ordinary_talk_keeps_decisions_style_and_dated_facts(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")  # a Thursday
    result = flush(ws, TALK, "s1", level="soft")
    texts = _live(ws)
    assert any("keep the index in SQLite and never use Postgres" in t for t in texts)
    assert "Also remember I am away next Monday (2026-03-09)" in texts
    assert "다음 주 월요일(2026-03-09)에 치과 예약 있어" in texts
    assert any("don't use bullet points with me" in t for t in texts)
    assert any("답변은 짧게 해줘" in t for t in texts)
    assert not any("coffee" in t or "max db size" in t or "plenty" in t for t in texts)
    assert "finish the changelog before Friday (2026-03-06)" in ws.state()["next-step"]
    assert not any("changelog" in t for t in texts)  # pending work lives in the state memo
    assert "nothing new to keep" not in result.lines[0]


def test_each_kept_item_is_injected_once_at_boot(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    result = flush(ws, TALK, "s1", level="soft")
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T16:00")  # the fresh session, the same day
    text = boot.build(ws, record=False).text
    kept = [m["text"] for m in result.memories] + ["pending: I have to finish the changelog"]
    assert len(kept) >= 6
    for item in kept:
        assert text.count(item) == 1, item
    assert text.count("never use Postgres") == 1
    assert text.count("bullet points") == 1


def test_a_constraint_is_injected_once_at_boot(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    flush(ws, "user: Never push directly to main.", "s1", level="hard")
    for when in ("2026-03-05T15:00", "2026-03-06T09:00"):  # today's diary, then yesterday's
        monkeypatch.setenv("GIOK_NOW", when)
        assert boot.build(ws, record=False).text.count("Never push directly to main") == 1


def test_style_instructions_in_both_languages():
    gist = extract(
        "user: don't use bullet points with me\nuser: 답변은 짧게 해줘\n"
        "user: 앞으로 저한테는 존댓말 써 주세요\nuser: 너 답변에 이모지 너무 많아. 빼줘"
    )
    rules = gist["constraints"] + gist["preferences"]
    assert "don't use bullet points with me" in rules
    assert "답변은 짧게 해줘" in rules
    assert "앞으로 저한테는 존댓말 써 주세요" in rules
    assert "너 답변에 이모지 너무 많아. 빼줘" in rules  # a fragment is read with the sentence before it


def test_chit_chat_questions_and_trivia_are_not_kept():
    gist = extract(
        "user: hi! how are you?\nuser: what's the max db size sqlite handles anyway?\n"
        "user: lol ok, plenty\nuser: 오늘 점심 뭐 먹지\nuser: maybe we should use Redis, not sure"
    )
    assert not any(gist.values()), gist


def test_the_ordinary_talk_set_dev_split():
    """bench/data/judgement/flush.json (written apart from these rules), its dev split: a floor."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from flush_ordinary import evaluate

    result = evaluate("dev")
    assert result["kept_rate"] >= 0.85, [r["missed"] for r in result["rows"]]
    assert result["injected_once"], [r["injections"] for r in result["rows"]]


def test_a_pronoun_keeps_whom_it_stands_for():
    """A sentence kept on its own would lose the turn it leans on: "he" is the name said last."""
    gist = extract(
        "user: Dara's cat Pixel is staying with us this week\n"
        "assistant: Lovely! Anything I should know about Pixel?\n"
        "user: he's on a special diet and he can't have fish, allergic"
    )
    assert "Pixel is on a special diet and he can't have fish, allergic" in gist["facts"]


@pytest.mark.judgement_model
def test_a_name_typed_in_lower_case_at_the_start_of_a_sentence_is_still_a_name():
    gist = extract(
        "user: booking flights with my friend Tamsin, we go in February\n"
        "assistant: Lovely, want help with where to stay?\n"
        "user: yes but she's vegetarian, so any food recs need to work for her\n"
        "assistant: Noted.\n"
        "user: tamsin just sent me a meme lol"
    )
    assert any(t.startswith("yes but Tamsin is vegetarian") for t in everything(gist)), gist


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    "talk, kept",
    [
        (
            "user: physio says no running for six weeks\nassistant: Oof.\n"
            "user: sure, but did I ever tell you I'm allergic to sesame? like properly, epipen allergic",
            "I'm allergic to sesame",
        ),
        (
            "user: 아 제가 페니실린 알레르기 있는 거 말씀드렸나요?\nassistant: 처음 듣네요.",
            "제가 페니실린 알레르기 있다",
        ),
    ],
)
def test_a_fact_asked_as_whether_it_was_told_is_kept_as_said(talk, kept):
    # "did I tell you …?" asks nothing: the speaker says it (judgement.told)
    assert any(kept in t and "?" not in t for t in everything(extract(talk))), extract(talk)


def test_a_pronoun_with_no_name_near_it_is_left_as_said():
    gist = extract(
        "user: Dara's cat Pixel is staying with us\nassistant: ok\nuser: the vet is on Elm Street\n"
        "assistant: noted\nuser: anyway\nassistant: sure\nuser: she's allergic to penicillin"
    )
    assert "she's allergic to penicillin" in gist["facts"]


def test_mine_keeps_the_question_it_answers():
    gist = extract(
        "user: how long does a visa renewal take?\nassistant: About two weeks.\n"
        "user: ok, mine expires on 14 March",
        today=dt.date(2026, 12, 3),
    )
    assert any(
        f.startswith("ok, mine expires on 14 March") and "(re: visa renewal)" in f for f in gist["facts"]
    )


@pytest.mark.judgement_model
def test_a_decision_said_in_passing_is_kept():
    """An explicit decision ("…하기로 했어") is kept even where the model calls the sentence trivia."""
    gist = extract("user: 방금 회의 끝났어\nuser: 버그는 재현이가 고치기로 했고", today=dt.date(2026, 12, 3))
    assert gist["decisions"] == ["버그는 재현이가 고치기로 했고"]


def test_a_pronoun_is_left_as_said_when_two_people_were_named():
    """A wrong name is worse than none: with Calloway and Odalys both named, "he" stays "he"."""
    gist = extract(
        "user: my manager Calloway is leaving at the end of the month\n"
        "assistant: Do you know who's replacing him?\n"
        "user: Everyone says it'll probably be Odalys.\nassistant: I see.\n"
        "user: He asked me to finish the budget by the 23rd, I need to do it"
    )
    kept = everything(gist)
    assert not any("Odalys asked" in t for t in kept), kept
    assert any(t.startswith("He asked me to finish the budget") for t in kept), kept


def test_a_short_answer_to_the_agents_question_completes_the_point_it_asked_about():
    gist = extract(
        "user: We're picking up our new dog on Saturday\nassistant: Exciting! What's her name?\n"
        "user: Biscuit.\nassistant: Lovely.\n"
        "user: 동생한테 30만원 빌려줬어. 다음 달에 갚는대\n"
        "assistant: 기억해 둘게. 동생 이름이 뭐였지?\nuser: 은찬이",
        today=dt.date(2026, 12, 3),
    )
    kept = everything(gist)
    assert any("new dog" in t and "(What's her name? Biscuit.)" in t for t in kept), kept
    assert any("30만원" in t and "은찬이" in t for t in kept), kept


@pytest.mark.judgement_model
def test_answers_to_the_agents_questions_one_after_another_complete_one_point():
    """The agent asks where, then when, then with whom: each short answer is of the same point,
    not only the first (the second was kept apart from the place it goes with)."""
    gist = extract(
        "user: 다음 달에 여행 가기로 했어\nassistant: 좋다! 어디로 가?\nuser: 삿포로\n"
        "assistant: 언제 가?\nuser: 2월 3일 출발 3박\nassistant: 누구랑 가?\nuser: 동생 서윤이랑",
        today=dt.date(2026, 12, 3),
    )
    kept = everything(gist)
    assert any("삿포로" in t and "2월 3일" in t and "서윤" in t for t in kept), kept
    assert len(kept) == 1, kept


@pytest.mark.judgement_model
def test_a_two_word_korean_fact_is_kept_and_two_words_of_trivia_are_not():
    """A Korean word carries its particle: "회사는 판교야" says as much as "my office is in Pangyo"."""
    kept = everything(extract("user: 회사는 판교야", today=dt.date(2026, 12, 3)))
    assert kept == ["회사는 판교야"], kept
    for trivia in ("user: 오늘 좀 춥다", "user: 점심은 김밥", "user: 배고파 죽겠다"):
        assert not everything(extract(trivia, today=dt.date(2026, 12, 3))), trivia


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    "said",
    [
        "turn these notes into three bullet points for me",
        "이 문단 좀 세 줄로 요약해 줘",
        "이 문장 일본어로 바꿔 줘: '회의 자료는 메일로 보내 드렸습니다'",
        "shorten this paragraph for me: 'We are pleased to announce our new office hours for winter'",
    ],
)
def test_a_task_for_now_is_no_memory(said):
    """The agent does it in the talk and nothing is left to remember: not the request, not the
    text handed over with it (the learned request head, judgement.request)."""
    assert not everything(extract(f"user: {said}", today=dt.date(2026, 12, 3)))


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    "said",
    [
        "please always answer me in British English",
        "답장은 항상 존댓말로 써 줘",
        "my landlord raised the rent to 1,200 a month",
        "동생이 제주도로 이사 갔어",
    ],
)
def test_a_lasting_request_or_a_statement_is_still_kept(said):
    assert everything(extract(f"user: {said}", today=dt.date(2026, 12, 3)))


def test_a_yes_to_an_offer_adds_nothing():
    gist = extract(
        "user: We're picking up our new dog on Saturday\n"
        "assistant: Want me to put it in your calendar?\nuser: Yeah please.",
        today=dt.date(2026, 12, 3),
    )
    kept = everything(gist)
    assert kept and not any("calendar" in t or "Yeah" in t for t in kept), kept


def test_a_value_corrected_in_the_same_talk_is_kept_with_its_correction():
    """No memory keeps the wrong day alone: the correction is written into the point it corrects."""
    gist = extract(
        "user: 나 이사 날짜 잡았어. 1월 22일\nassistant: 어디로 가?\n"
        "user: 판교. 아 잠깐, 22일 아니고 23일이다. 22일은 잔금 날이고",
        today=dt.date(2026, 12, 3),
    )
    kept = everything(gist)
    assert len(kept) == 1, kept
    assert "1월 22일" in kept[0] and "22일 아니고 23일이다" in kept[0], kept


def test_actually_without_a_value_is_no_correction():
    gist = extract(
        "user: the demo is on 12 March\nassistant: ok\nuser: Actually, we also need a projector by 11 March"
    )
    kept = everything(gist)
    assert any(t.startswith("Actually, we also need a projector") for t in kept), kept


def test_a_later_flush_completes_a_point_instead_of_keeping_it_twice(ws, monkeypatch):
    """Soft flush, then the user answers the agent's question, then a hard flush of the same
    session: the completed point replaces the one kept before, and boot shows it once."""
    monkeypatch.setenv("GIOK_NOW", "2026-12-03T15:00")
    first = "user: We're picking up our new dog on Saturday\nassistant: Exciting! What's her name?"
    flush(ws, first, "s1", level="soft")
    flush(ws, first + "\nuser: Pickle.\nassistant: Lovely.", "s1", level="hard")
    monkeypatch.setenv("GIOK_NOW", "2026-12-04T09:00")
    text = boot.build(ws, record=False).text
    assert text.count("picking up our new dog") == 1, text
    assert "(What's her name? Pickle.)" in text


def test_a_reminder_that_names_nothing_is_kept_with_what_it_is_about():
    gist = extract(
        "user: my passport expires in May, so I need to renew it before then. Remind me in January.\n"
        "user: 여권 5월에 만료돼. 1월에 알려줘",
        today=dt.date(2026, 12, 3),
    )
    kept = everything(gist)
    assert any("passport" in t and "Remind me in January" in t for t in kept), kept
    assert any("여권" in t and "1월에 알려줘" in t for t in kept), kept


ASIDES = [
    "Ugh, forgot my gloves again and my fingers are frozen lol.",
    "My cat just knocked a glass of water off the desk haha.",
]


@pytest.mark.judgement_model
def test_an_aside_in_a_chat_is_no_memory_though_the_point_beside_it_is(ws, monkeypatch):
    """The flush reads talk in judgement's chat voice: an aside typed in passing is not kept,
    though the note voice (a line written down to keep) keeps these words."""
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T14:00")
    talk = "\n".join(
        json.dumps({"role": "user", "content": t})
        for t in [ASIDES[0], "My brother was diagnosed with celiac disease last month.", ASIDES[1]]
    )
    flush(ws, talk, "s1", level="soft")
    texts = _live(ws)
    assert any("celiac disease" in t for t in texts), texts
    assert not any("gloves" in t or "glass of water" in t for t in texts), texts


def _talk(*turns: tuple[str, str]) -> str:
    return "\n".join(json.dumps({"role": role, "content": text}) for role, text in turns)


DAY = dt.date(2026, 12, 9)  # a Wednesday


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    "said, kept",
    [
        (
            "Big news: I handed in my notice at Corvid Labs today. My last day is January 8.",
            "Big news: I handed in my notice at Corvid Labs today. My last day is January 8 (2027-01-08).",
        ),
        (
            "드디어 회사 옮긴다! 오늘 사표 냈어. 마지막 출근은 1월 8일이야",
            "드디어 회사 옮긴다! 오늘 사표 냈어. 마지막 출근은 1월 8일(2027-01-08)이야",
        ),
    ],
)
def test_the_sentences_of_one_point_are_kept_together(said, kept):
    """The sentence that says when is not kept apart from the one that says what."""
    assert extract(_talk(("user", said)), today=DAY)["facts"] == [kept]


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    "said, kind, words",
    [
        (
            "드디어 이사 날짜 정했어!! 다음 달 12일 금요일. 합정동에서 성수동으로 가 ㅋㅋ",
            "decisions",
            ("12일", "성수동"),
        ),
        (
            "their main contact is Ottilie. she only does email, never phone her",
            "constraints",
            ("Ottilie", "email"),
        ),
    ],
)
def test_a_point_is_kept_whole_though_its_sentences_were_filed_apart(said, kind, words):
    """The judgement files "합정동에서 성수동으로 가" apart from the date it follows, and "she only
    does email" as a rule beside the fact that names her: one point, kept as one memory, a rule
    where one joins it."""
    gist = extract(_talk(("user", said)), today=DAY)
    kept = [t for items in gist.values() for t in items]
    assert len(kept) == 1 and all(w in kept[0] for w in words), gist
    assert gist[kind] == kept, gist


@pytest.mark.judgement_model
@pytest.mark.parametrize(
    "said",
    [
        "I start at Brightwater on January 11. Also my sister is getting married in May.",
        "언니가 5월에 결혼해. 아 그리고 나 다음 달에 부산으로 이사 가",
    ],
)
def test_also_opens_another_point(said):
    assert len(extract(_talk(("user", said)), today=DAY)["facts"]) == 2


@pytest.mark.judgement_model
def test_an_answer_to_a_question_before_the_agents_last_sentence_completes_the_point():
    talk = _talk(
        ("user", "We're adopting a rescue puppy on Saturday!"),
        ("assistant", "How exciting! What's her name? I can also suggest some toys."),
        ("user", "Biscuit."),
    )
    assert extract(talk, today=DAY)["facts"] == [
        "We're adopting a rescue puppy on Saturday (2026-12-12)! (What's her name? Biscuit.)"
    ]


@pytest.mark.judgement_model
def test_an_answer_of_two_fragments_is_kept_whole():
    talk = _talk(
        ("user", "My cat Tofu needs surgery next week."),
        ("assistant", "Oh no. How old is Tofu?"),
        ("user", "11. a siamese"),
    )
    assert extract(talk, today=DAY)["facts"] == [
        "My cat Tofu needs surgery next week (week of 2026-12-14). (How old is Tofu? 11. a siamese)"
    ]


@pytest.mark.judgement_model
def test_a_correction_after_a_hesitation_or_as_x_not_y_is_written_into_its_point():
    talk = _talk(
        ("user", "The piano recital is on the 12th at 6pm."),
        ("assistant", "Noted."),
        ("user", "hmm wait, I checked the flyer, it's the 14th not the 12th."),
    )
    gist = extract(talk, today=DAY)
    assert gist["facts"] == [
        "The piano recital is on the 12th at 6pm. "
        "(hmm wait, I checked the flyer, it's the 14th not the 12th.)"
    ]
    assert not gist["pending"]


@pytest.mark.judgement_model
def test_a_guess_said_after_a_point_is_not_kept_with_it():
    """A short guess leans on nothing: the point before it is kept without it."""
    talk = _talk(("user", "담당자가 김 대리님에서 오 과장님으로 바뀌었대. 김 대리님 퇴사하셨나 봐"))
    assert extract(talk, today=DAY)["facts"] == ["담당자가 김 대리님에서 오 과장님으로 바뀌었대."]


@pytest.mark.judgement_model
def test_a_korean_pronoun_keeps_the_sentence_that_names_whom_it_stands_for():
    talk = _talk(
        ("assistant", "혹시 반려동물 있어?"),
        ("user", "응 강아지 콩이. 걔 심장이 약해서 처방 사료만 먹어"),
    )
    facts = [t for items in extract(talk, today=DAY).values() for t in items]
    assert any("콩이" in t and "처방 사료" in t for t in facts), facts


@pytest.mark.judgement_model
def test_a_long_turn_of_facts_is_several_points_and_none_is_cut():
    said = (
        "I am Seojun and I live in Busan with my family. I work at Kakao as a backend engineer on the "
        "payments team. My wife is Mina, she teaches piano at a school in Haeundae. We have a son, Jun, "
        "who is five. Jun is allergic to peanuts and to kiwi. My mother lives with us since last year."
    )
    facts = extract(_talk(("user", said)), today=DAY)["facts"]
    assert len(facts) >= 2 and not any(f.endswith("…") for f in facts), facts
    assert any("allergic to peanuts and to kiwi" in f for f in facts), facts


def test_no_point_of_one_flush_replaces_another_it_kept(ws):
    """All the points one flush keeps were said in one talk: the write policy's reading of a
    slot does not let one replace another (`remember(apart=…)`), though the same text said later
    does replace it."""
    first = ws.remember("Our standup is at 9:30.", source="flush:s9")
    kept = ws.remember("Our standup is at 10:00 now.", source="flush:s9", apart=[first.entry.id])
    assert kept.action == "written" and "kept beside" in kept.reason, kept
    assert {"Our standup is at 9:30.", "Our standup is at 10:00 now."} <= set(_live(ws))
    later = ws.remember("Our standup is at 10:30 now.", source="flush:s10")
    assert later.action == "superseded", later
