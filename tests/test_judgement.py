"""The one judgement (giok.write.judgement) with the shipped model: what a user sees through
`remember` and the nightly distill. Figures on held-out sets are in bench/judgement_sets.py."""

from __future__ import annotations

import numpy as np
import pytest

from giok.lifecycle.distill import distill
from giok.write import judgement, judges, policy, statements

pytestmark = pytest.mark.judgement_model

LAYERS = ("M30", "M90", "M365", "M0")


def at(monkeypatch, when: str) -> None:
    monkeypatch.setenv("GIOK_NOW", when)


def test_the_shipped_model_answers():
    assert judgement.available()
    assert judgement.judge("Seojun is allergic to peanuts").judge == "model"


@pytest.mark.parametrize(
    "text",
    ["우리 딸 오늘 태어났어, 3.2kg", "Dad passed away last night", "My passport expires on 2027-03-02"],
)
def test_a_life_event_is_kept_for_at_least_a_year(ws, text):
    result = ws.remember(text)
    assert result.action == "written", result
    assert LAYERS.index(result.entry.layer) >= LAYERS.index("M365")


@pytest.mark.parametrize("text", ["택배 3개 왔음", "Traffic was bad this morning", "hi!", "x", "음", "test"])
def test_trivia_greetings_and_filler_are_refused(ws, text):
    assert ws.remember(text).action == "refused"
    assert ws.memory().entries() == []


@pytest.mark.parametrize(
    "text",
    [
        "Yerin and I chatted about a baking show",
        "Yerin and I talked about a cooking competition on TV",
        "예린이 택배 언제 오냐고 물어봄, 머그컵 배송 중",
        "예린이랑 다큐 얘기하다 퇴근",
    ],
)
def test_everyday_trivia_about_a_named_person_stays_below_what_matters_about_her(text):
    # a name must not lift a chat or a parcel to a standing preference or a life event
    assert judgement.judge(text).layer in ("drop", "M30")


@pytest.mark.parametrize(
    "text",
    [
        "Yerin gave birth to a boy last night.",
        "예린이 참깨 알레르기 있어",
        "Yerin starts her new job at Naver next month.",
    ],
)
def test_what_matters_about_the_same_person_is_kept_for_90_days_or_more(text):
    assert LAYERS.index(judgement.judge(text).layer) >= LAYERS.index("M90")


def test_trivia_is_kept_when_the_caller_chooses_a_layer(ws):
    result = ws.remember("택배 3개 왔음", layer="M30")
    assert result.action == "written"
    assert result.entry.layer == "M30"


def test_a_line_kept_for_its_type_stands_as_long_as_its_type_does(ws):
    """Kept only because the caller named it a preference, a line the model calls trivia is a
    standing preference (M90), not a fact of the day; a fact so kept stays 30 days."""
    preference = ws.remember("I prefer tea over coffee.", type="preference")
    assert preference.action == "written" and preference.entry.layer == "M90"
    fact = ws.remember("택배 3개 왔음", type="fact")
    assert fact.action == "written" and fact.entry.layer == "M30"


def test_a_preference_lands_in_the_90_day_layer(ws):
    assert ws.remember("Seojun takes his coffee black, no sugar, always").entry.layer == "M90"


def test_a_redacted_secret_alone_is_refused_but_a_sentence_around_it_is_kept(ws):
    refused = ws.remember("The staging API key is sk-abcdef1234567890abcdef1234567890")
    assert refused.action == "refused"
    assert "secret" in refused.reason
    kept = ws.remember("Seojun prefers green tea; api_key=sk-abcdef1234567890abcdef1234567890")
    assert kept.action == "written"
    assert "sk-abcdef" not in ws.read_text("MEMORY.md")


def test_greetings_and_questions_around_a_fact_do_not_hide_it():
    text = "Hey Mel! Good to see you! I got the job at Naver, I start in March. How are you?"
    rest = judgement.substance(text)[0]
    assert "I got the job at Naver" in rest
    assert "How are you" not in rest
    assert judgement.judge(text).keep


def test_remember_and_the_nightly_distill_give_one_answer(ws, monkeypatch):
    lines = [
        "우리 딸 오늘 태어났어, 3.2kg",
        "택배 3개 왔음",
        "Seojun takes his coffee black, no sugar, always",
        "Traffic was bad this morning",
        "서준이 아마 이사 갈 것 같아, 잘 모르겠어",
    ]
    offline = judges.OfflineJudge()
    items = [judges.Item(key=str(n), kind="diary", text=t) for n, t in enumerate(lines)]
    nightly = offline.decide(items, {})
    for n, text in enumerate(lines):
        written = ws.remember(text).action == "written"
        assert written == (nightly[str(n)].decision != "drop"), text
    at(monkeypatch, "2026-03-05T10:00")
    for text in lines:
        ws.diary(text)
    at(monkeypatch, "2026-03-05T23:00")
    report = distill(ws)
    assert sorted(a["text"] for a in report.added) == []  # each kept line was remembered already
    assert len(report.dropped) == 3


@pytest.mark.parametrize(
    "aside",
    [
        "Ugh, forgot my gloves again and my fingers are frozen lol.",
        "My cat just knocked a glass of water off the desk haha.",
    ],
)
def test_an_aside_typed_in_a_chat_is_trivia_in_the_chat_voice(aside):
    """How a text was said is part of its context: the chat voice the flush reads with refuses
    an aside typed in passing."""
    chat = judgement.judge(aside, voice="chat")
    assert not chat.keep and chat.kind == "trivia"


def _weights(**more):
    """Judgement weights with a note keep head that drops everything, and `more` beside them."""
    width = judgement.PAIR_SHORT
    return {
        "keep_w": np.zeros(384, np.float32),
        "keep_b": np.float32(-20),
        "layer_w": np.zeros((384, 5), np.float32),
        "layer_b": np.array([20, 0, 0, 0, 0], np.float32),  # drop
        "keep_at": np.float32(0.5),
        "type_w": np.zeros((384, 6), np.float32),
        "type_b": np.zeros(6, np.float32),
        "pair_w": np.zeros(width, np.float32),
        "pair_b": np.float32(0),
        "m0_at": np.float32(0.5),
        "change_at": np.float32(0.8),
        "unsure_at": np.float32(0.5),
        **more,
    }


CHAT_KEEPS = {
    "chat_keep_w": np.zeros(384, np.float32),
    "chat_keep_b": np.float32(20),
    "chat_layer_w": np.zeros((384, 5), np.float32),
    "chat_layer_b": np.array([0, 0, 20, 0, 0], np.float32),  # M90
    "chat_keep_at": np.float32(0.5),
}


def test_each_voice_reads_its_own_heads_and_weights_without_a_chat_voice_read_the_notes():
    v = np.ones((1, 384), np.float32) / np.sqrt(384)
    both = judgement.Heads(_weights(**CHAT_KEEPS))
    assert not both.verdict(v, voice="note").keep
    chat = both.verdict(v, voice="chat")
    assert chat.keep and chat.layer == "M90"
    for weights in (_weights(), _weights(**{k: a for k, a in CHAT_KEEPS.items() if k != "chat_keep_at"})):
        heads = judgement.Heads(weights)
        assert set(heads.readings) == {"note"}
        assert not heads.verdict(v, voice="chat").keep  # the note heads answer


@pytest.mark.parametrize(
    "text",
    [
        "My brother was diagnosed with celiac disease last month.",
        "우리 엄마 다음 주 화요일에 무릎 수술 받으셔",
        "Please never book me meetings before 10am.",
        "내 여권 내년 3월에 만료돼",
    ],
)
def test_what_matters_is_kept_in_either_voice(text):
    assert judgement.judge(text).keep and judgement.judge(text, voice="chat").keep


def test_an_unknown_voice_is_an_error():
    with pytest.raises(ValueError, match="unknown voice 'diary'"):
        judgement.judge("Lena is allergic to penicillin.", voice="diary")


def test_keyword_rules_answer_where_the_model_is_turned_off(monkeypatch):
    monkeypatch.setenv("GIOK_JUDGEMENT", "rules")
    assert judgement.judge("Seojun is allergic to peanuts").judge == "rules"


def test_an_instruction_is_no_question():
    assert not judgement.is_question("don't use bullet points with me")
    assert judgement.is_question("do you like tea")
    assert judgement.is_question("서준이 어디 살지")
    assert judgement.is_question("주차 되려나")


def test_a_statement_with_a_tag_is_no_question():
    """ "…있는 거 알지?" says the allergy; it does not ask about it."""
    assert not judgement.is_question("근데 나 새우 알레르기 있는 거 알지?")
    assert not judgement.is_question("I'm allergic to shellfish, remember?")
    assert not judgement.is_question("we agreed on Tuesday, right?")
    assert judgement.is_question("뭐 알지?")
    assert judgement.is_question("is it raining?")
    assert judgement.judge("근데 나 새우 알레르기 있는 거 알지?").keep


@pytest.mark.parametrize(
    "text, said",
    [
        ("sure, but did I ever tell you I'm allergic to sesame?", "I'm allergic to sesame"),
        ("have I mentioned that my sister lives in Oslo?", "my sister lives in Oslo"),
        ("I don't know if I told you, but we moved to Leeds.", "we moved to Leeds"),
        ("아 근데 제가 매운 거 잘 못 먹는 거 말씀드렸었나요?", "아 근데 제가 매운 거 잘 못 먹는다"),
        ("제 차 2019년식 쏘렌토인 거 말씀드렸나요?", "제 차 2019년식 쏘렌토이다"),
        ("나 페니실린 알레르기 있는 거 말했나?", "나 페니실린 알레르기 있다"),
        # questions indeed: nothing said, or what was said is asked
        ("did I tell you?", None),
        ("Did I tell you about my new job?", None),
        ("what did I tell you yesterday?", None),
        ("내가 말했던 거 기억나?", None),
    ],
)
def test_a_statement_asked_as_whether_it_was_told_is_said(text, said):
    assert judgement.told(text) == said
    assert judgement.is_question(text) is (said is None)


@pytest.mark.parametrize(
    "text, rule",
    [
        ("could you spell things the british way from now on?", "from now on, spell things the british way"),
        ("Going forward, can you keep it short?", "going forward, keep it short"),
        ("앞으로 존댓말로 해 줄래?", "앞으로 존댓말로 해 줘"),
        ("앞으로 답변은 짧게 해 주실 수 있나요?", "앞으로 답변은 짧게 해 주세요"),
        ("could you send this to Mina?", None),  # a one-off task
        ("can you remind me tomorrow?", None),
    ],
)
def test_a_standing_request_asked_as_a_question_is_a_rule(text, rule):
    assert judgement.standing_request(text) == rule
    assert judgement.is_question(text) is (rule is None)


def test_a_question_typed_without_its_apostrophe_or_mark_is_a_question():
    assert judgement.is_question("whats a quick gluten free dessert that isnt just fruit")
    assert judgement.is_question("wheres the charger")
    assert not judgement.is_question("Whatsapp is how the family talks.")


def test_a_question_after_an_opening_word_is_a_question():
    assert judgement.is_question("anyway can you find vegan ramen near Higashiyama")
    assert judgement.is_question("so what do you think")
    assert not judgement.is_question("ok so I moved to Busan")
    assert not judgement.is_question("so, do not use bullet points")


@pytest.mark.parametrize(
    "said",
    [
        "i might drop french next semester, havent decided",
        "We might move to Lisbon next year.",
        "여울이 요즘 회사 그만둘까 고민하더라",
        "팀장님이 로고 색깔 바꿀까 생각 중이래",
        "I'm considering a move to Lisbon.",
    ],
)
def test_what_the_speaker_might_do_or_has_not_decided_is_a_guess(said):
    assert judgement.is_speculation(said)
    assert not judgement.judge(said).keep


def test_a_reason_that_might_happen_or_a_decision_after_thought_is_no_guess():
    assert not judgement.is_speculation("Don't push to main on Fridays, it might break the build.")
    assert not judgement.is_speculation("고민 끝에 이직하기로 했어")
    assert not judgement.is_speculation("We decided after considering all options.")


def test_change_score_reads_a_pair():
    found = judgement.change_score("Seojun moved to Seoul last month", "Seojun lives in Busan")
    assert found is not None
    assert 0.0 <= found.p <= 1.0
    assert found.verdict in ("change", "unsure", "none")


def test_a_change_is_kept_even_in_words_the_model_finds_everyday(ws, monkeypatch):
    tea = ws.remember("I prefer tea", layer="M90").entry  # the caller chose to keep it
    coffee = ws.remember("I now prefer coffee")
    assert coffee.action == "superseded", coffee
    assert ws.get(tea.id).superseded
    assert coffee.entry.layer == "M90"  # the layer of the memory it changes


def test_a_homonym_does_not_replace_a_preference(ws):
    tea = ws.remember("서준은 녹차를 좋아한다").entry
    car = ws.remember("서준이 차를 테슬라로 바꿨다")
    assert car.action == "written", car
    assert not ws.get(tea.id).superseded


@pytest.mark.parametrize(
    ("old", "new"),
    [("월세 100만원", "배터리 이제 80%"), ("주간회의 화요일 10시", "이제 커피 하루 2잔만 마셔")],
)
def test_a_new_number_of_another_slot_replaces_nothing(ws, old, new):
    # the pair head scores any two texts with other numbers and a change word near 0.9, whatever
    # their slots: it is shown only entries that share a word or the speaker with the new text
    kept = ws.remember(old, layer="M90").entry
    result = ws.remember(new, force=True)
    assert result.action == "written", result
    assert not ws.get(kept.id).superseded


def test_a_change_replaces_its_own_slot_and_no_other_fact_of_the_same_person(ws):
    # the rules see one subject (도윤) and a change word, and the pair head calls every pair of
    # this person a change: meaning picks the one slot the new text fills
    others = [
        ws.remember(text, type="fact").entry
        for text in (
            "도윤은 갑각류 알레르기가 있다",
            "도윤은 매일 아침 현미녹차를 마신다",
            "도윤은 8시에 출근한다",
        )
    ]
    car = ws.remember("도윤의 차는 회색 쏘나타다", type="fact").entry
    result = ws.remember("도윤이 차를 쏘나타에서 아이오닉5로 바꿨다")
    assert result.action == "superseded", result
    assert ws.get(car.id).superseded
    assert [e.text for e in others if ws.get(e.id).superseded] == []


def test_a_change_that_names_the_value_it_leaves_replaces_only_an_entry_holding_it(ws):
    # "차를 아반떼에서 …로 바꿨다" leaves a car called 아반떼: with the car entry gone (expired), the
    # tea of the same person, the nearest entry left, is not the slot it changes
    tea = ws.remember("도윤은 요즘 아침에 보리차 대신 루이보스차를 마신다", type="preference").entry
    result = ws.remember("도윤이 차를 아반떼에서 테슬라 모델Y로 바꿨다", type="fact")
    assert result.action == "written", result
    assert not ws.get(tea.id).superseded


@pytest.mark.parametrize("reader", [True, False])
def test_a_change_the_second_reader_is_sure_of_replaces_its_slot(ws, monkeypatch, reader):
    # the pair head reads no change in "Moved my phone plan over to KT" (no word it weighs); the
    # reader over USE's vectors is sure of it, and the plan is the nearest entry; without the
    # reader the change is not found
    plan = "My phone plan is with SKT."
    moved = "Moved my phone plan over to KT last week."
    assert judgement.read_pair(moved, plan) >= policy.READ_AT
    if not reader:
        monkeypatch.setattr(policy, "READ_AT", 1.01)
        monkeypatch.setattr(policy, "SURE_AT", 1.01)
    old = ws.remember(plan, type="fact").entry
    result = ws.remember(moved, type="fact")
    assert result.action == ("superseded" if reader else "written"), result
    assert bool(ws.get(old.id).superseded) is reader


@pytest.mark.parametrize("sure", [True, False])
@pytest.mark.parametrize(
    "before, after",
    [
        (
            "I get my groceries from Marlo Mart.",
            "Cancelled my Marlo Mart membership, everything comes from the co-op now.",
        ),
        ("관리비 12만 원", "관리인이 관리비 올렸어. 다음 달부터 15"),
    ],
)
def test_a_change_naming_its_subject_replaces_it_when_the_reader_is_all_but_certain(
    ws, monkeypatch, sure, before, after
):
    # neither text starts where the other does ("Cancelled …" / "I …", 관리인이 / 관리비), so the
    # reader's ordinary bar does not apply; the new text names the old one's subject (the speaker,
    # 관리비) and the reader is all but certain: the change is found, and not without that path
    assert not policy.same_lead(after, before) and policy.names_subject_of(after, before)
    assert judgement.read_pair(after, before) >= policy.SURE_AT
    if not sure:
        monkeypatch.setattr(policy, "SURE_AT", 1.01)
    old = ws.remember(before, type="fact").entry
    result = ws.remember(after, type="fact")
    assert result.action == ("superseded" if sure else "written"), result
    assert bool(ws.get(old.id).superseded) is sure


@pytest.mark.parametrize("veto", [True, False])
def test_an_exception_for_a_day_replaces_nothing_on_the_sure_readers_path(ws, monkeypatch, veto):
    # the reader is all but certain and the text names the subject (the speaker), but the shift
    # head reads "just this once" as an exception for a while: the standing fact stays
    before = "I get my groceries from Marlo Mart."
    after = "Marlo Mart was closed today so I switched to the corner shop just this once."
    assert judgement.read_pair(after, before) >= policy.SURE_AT
    assert judgement.not_now(after, policy.SURE_NOT_NOW)
    if not veto:
        monkeypatch.setattr(policy, "SURE_NOT_NOW", 1.01)
    old = ws.remember(before, type="fact").entry
    result = ws.remember(after, type="fact")
    assert result.action == ("written" if veto else "superseded"), result
    assert bool(ws.get(old.id).superseded) is not veto


def test_the_second_reader_does_not_replace_anothers_or_a_mere_mention(ws):
    old = ws.remember("My phone plan is with SKT.", type="fact").entry
    for text in (
        "My mom moved her phone plan over to KT last week.",
        "KT sent me a promo for their new phone plan.",
    ):
        assert ws.remember(text, type="fact").action == "written", text
    assert not ws.get(old.id).superseded


def test_the_second_readers_word_needs_the_same_subject(ws):
    # the reader is sure that another household's rent going up contradicts mine; it reads
    # whether a claim changed, not whose it is
    mine, theirs = "월세 100만원", "지민이네 월세 120으로 올랐대"
    assert judgement.read_pair(theirs, mine) >= policy.READ_AT
    ws.remember(mine, type="fact")
    assert policy.decide(ws.memory(), theirs).action == "write"


def test_the_second_reader_is_silent_without_the_learned_judgement(monkeypatch):
    monkeypatch.setenv("GIOK_JUDGEMENT", "rules")
    assert (
        judgement.read_pair("Moved my phone plan over to KT last week.", "My phone plan is with SKT.") is None
    )


@pytest.mark.parametrize(
    ("text", "old"),
    [
        ("Priya switched from oat flat whites to matcha lattes", {"oat", "flat", "white"}),
        ("Standup is now at 10:15 instead of 9:30", {"9", "30"}),
        ("Priya no longer works at Harrow & Finch; she starts at Kestrel", {"harrow", "finch"}),
        ("하윤은 요즘 아침에 보리차 대신 루이보스차를 마신다", {"보리차"}),
        ("하윤이 필라테스를 그만두고 클라이밍을 다니기 시작했다", {"필라테스"}),
        ("디자인팀 회의가 화요일 오전에서 목요일 오후 2시로 바뀌었다", {"화요일", "오전"}),
        ("하윤이 수원 광교로 이사했다", set()),  # names no old value
        ("하윤은 판교 회사에서 일한다", set()),  # 에서 of a place, no change
    ],
)
def test_the_old_value_a_change_names(text, old):
    from giok.write.statements import holds_old_value, old_value

    assert old_value(text) == old
    if old:
        assert not holds_old_value("A line about something else entirely", old_value(text))


def test_a_korean_old_value_is_read_as_written_too():
    from giok.write.statements import holds_old_value, old_value

    # 요가's stem is read as 요 + the particle 가: the entry holding 요가를 is still the one it leaves
    left = old_value("엄마가 요가 대신 수영을 시작하셨다")
    assert holds_old_value("엄마는 저녁마다 요가를 하신다.", left)
    assert not holds_old_value("엄마는 요즘 바쁘시다.", left)


def test_a_kept_line_about_a_lasting_attribute_stands_at_least_in_m90(monkeypatch):
    # the layer head files how someone gets to school as a fact of the day; the attribute head
    # knows a commute is a lasting attribute of a life (docs/judgement.md, "Lasting attributes")
    commute = "Ethan started riding an e-scooter to campus."
    assert judgement.judge(commute).layer == "M90"
    monkeypatch.setattr(judgement, "LASTING_SURE", 1.0)
    assert judgement.judge(commute).layer == "M30"


def test_a_line_of_two_statements_joined_by_a_semicolon_is_as_worth_keeping_as_its_best():
    # read whole, a job change said with its start day is a fact of the day (M30); its halves
    # are a standing fact and a life event, and the whole stays a part ("Be blunt with me; skip
    # the pleasantries." is a style rule whole, two bare imperatives apart)
    moved = (
        "Priya no longer works at Harrow & Finch; she starts at Kestrel Health as head of analytics on Monday"
    )
    assert judgement.clauses(moved)[1:] == [
        "Priya no longer works at Harrow & Finch;",
        "she starts at Kestrel Health as head of analytics on Monday",
    ]
    assert judgement.judge(moved).layer in ("M90", "M365", "M0")
    blunt = judgement.judge("Be blunt with me; skip the pleasantries.")
    assert blunt.keep and blunt.layer == "M90"
    assert judgement.clauses("No semicolon here. Nor here.") == ["No semicolon here.", "Nor here."]


def test_trivia_is_kept_as_a_change_only_on_the_pair_heads_own_verdict(monkeypatch):
    # a kept text may replace an entry the pair head gives 0.5 and meaning puts in its slot;
    # trivia kept only because it "changes" something needs the head's verdict itself: a lunch
    # walk is no new commute
    from giok.store.memoryfile import MemoryEntry, MemoryFile, empty
    from giok.write import policy

    mf = MemoryFile.parse(empty("ko"))
    mf.add(MemoryEntry("도윤은 아침 8시 30분까지 출근한다", layer="M90", fields={"id": "m-000001"}))
    monkeypatch.setattr(judgement, "slot_likeness", lambda new, olds: [0.7] * len(olds))
    monkeypatch.setattr(judgement, "change_score", lambda new, old: judgement.Change(0.6, "unsure"))
    monkeypatch.setattr(judgement, "one_attribute", lambda new, old, sure=0.3, **how: True)
    walk = "도윤이 점심 먹고 잠깐 산책"  # no number: two numbers of two attributes are no slot at all
    assert judgement.judge(walk).kind == "trivia"
    assert policy.decide(mf, walk).action == "refuse"
    assert policy.decide(mf, walk, force=True).action == "supersede"  # a text kept anyway: the lower bar


def test_a_pair_head_trained_on_the_joint_reading_reads_the_pair_as_one_passage(monkeypatch):
    # tools/train_judgement.py --pair-joint writes pair_reading = "joint": change_score then also
    # embeds "OLD → NEW" whole and the head weighs what that vector adds to the two alone
    from importlib import resources

    import numpy as np

    with resources.files("giok.write").joinpath(judgement.WEIGHTS).open("rb") as f:
        shipped = dict(np.load(f))
    old, new = "Jiwoo works at Samsung as a designer", "Jiwoo quit Samsung and joined Kakao as a designer"
    u, v, j = judgement.vectors_of([new, old, judgement.joint_text(old, new)])
    added = j - (u + v) / 2
    weights = np.zeros(384 + len(shipped["pair_w"]), dtype=np.float32)
    weights[:384] = added / float(added @ added)  # reads 1.0 for this pair's joint vector alone
    heads = judgement.Heads(
        {**shipped, "pair_w": weights, "pair_b": np.float32(0.0), "pair_reading": np.array("joint")}
    )
    monkeypatch.setattr(judgement, "_load_heads", lambda: heads)
    found = judgement.change_score(new, old)
    assert found is not None
    assert found.p == pytest.approx(1 / (1 + np.exp(-1.0)), abs=1e-3)
    # another pair's joint vector is another reading
    assert judgement.change_score("Jiwoo has been at Samsung for four years now", old).p != pytest.approx(
        found.p, abs=1e-3
    )


@pytest.mark.parametrize(
    ("new", "old", "values"),
    [
        ("Mina's favourite band is Blur.", "Mina's favourite band is Oasis.", ("Blur", "Oasis")),
        ("지민이 최애 가수는 뉴진스", "지민이 최애 가수는 아이유", ("뉴진스", "아이유")),
        ("서준이 혈액형 O형", "서준이 혈액형 A형", ("o", "a")),
        ("My manager is Priya now.", "My manager is Kevin.", ("Priya", "Kevin")),
        ("Mina also likes tea.", "Mina likes coffee.", None),  # an addition
        ("Seojun likes tea.", "Seojun likes jazz.", None),  # one may like both
        ("제일 좋아하는 가수는 데이식스", "제일 좋아하는 가수는 아이유", ("데이식스", "아이유")),
        ("지민이 녹차도 좋아해", "지민이 커피 좋아해", None),  # an addition, by its particle
        ("The Android release is Friday.", "The iOS release is Friday.", None),  # another subject
        ("서준은 녹차를 좋아해", "서준은 녹차를 좋아한다", None),  # one word, two endings
        ("Mina's home is in Haeundae, Busan.", "Mina lives in Busan.", None),  # said another way
        ("We renamed the default branch to main.", "We changed the default branch to main.", None),
    ],
)
def test_one_frame_with_another_value(new, old, values):
    from giok.write.statements import swapped

    found = swapped(new, old)
    assert (found and (found.new.casefold(), found.old.casefold())) == (
        values and (values[0].casefold(), values[1].casefold())
    )


@pytest.mark.parametrize(
    "old, other, new",
    [
        # no word of a change, and the pair head reads "Oasis" → "Blur" as no change (p 0.31):
        # the frame the two share is the evidence
        (
            "Mina's favourite band is Oasis.",
            "Mina's favourite food is bibimbap.",
            "Mina's favourite band is Blur.",
        ),
        # "switched careers … product designer" is 0.60 near "backend engineer", under the bar
        # the pair head alone meets (0.65): the same subject first, no number on either side and
        # one lasting attribute (occupation) carry it down to 0.5
        (
            "Seojun is a backend engineer.",
            "Seojun lives in Mapo.",
            "Seojun switched careers, he works as a product designer now.",
        ),
    ],
    ids=["one-frame-another-value", "every-kind-of-evidence"],
)
def test_a_change_replaces_its_own_fact_and_not_the_next_one(ws, old, other, new):
    replaced = ws.remember(old, type="fact").entry
    kept = ws.remember(other, type="fact").entry
    result = ws.remember(new, type="fact")
    assert result.action == "superseded", result
    assert ws.get(replaced.id).superseded and not ws.get(kept.id).superseded


def test_two_things_measured_alike_are_no_slot():
    # "phone" / "watch" is the run, but the two are readings of two things, not one value
    assert judgement.swap("Priya's watch battery at 6%", "Priya's phone battery at 6%") is None
    assert judgement.swap("Priya's phone battery at 85%", "Priya's phone battery was at 94%") is not None


def test_a_change_said_as_an_event_replaces_the_fact_of_its_subject(ws):
    # no word of a change and the pair head under its bar (p 0.37): the new text names the
    # subject of the old one and the attribute head puts both in one lasting attribute (people)
    dating = ws.remember("Seojun is dating Hana.", type="fact").entry
    work = ws.remember("Seojun works at Kakao.", type="fact").entry
    assert policy.decide(ws.memory(), "Jae and Hana broke up.").action == "write"  # another subject
    result = ws.remember("Seojun and Hana broke up.", type="fact")
    assert result.action == "superseded", result
    assert ws.get(dating.id).superseded and not ws.get(work.id).superseded


def test_another_subject_or_another_kind_of_value_is_no_change_further_in_meaning(ws):
    ws.remember("월세 100만원", type="fact")
    memory = ws.memory()
    assert policy.decide(memory, "지민이네 월세 120으로 올랐대").action == "write"  # another's rent
    assert policy.decide(memory, "월세 이제 계좌이체로만 받는대").action == "write"  # how, not how much


def test_a_korean_change_is_found_through_a_compound_or_a_title(ws):
    # 출시일 / 출시 and 팀장님 / 팀장 share no whole word: the entry must still be a candidate
    launch = ws.remember("출시일 3월 3일", type="fact").entry
    lead = ws.remember("우리 팀장님은 김 과장님이야", type="fact").entry
    assert ws.remember("출시 4월 10일로 밀림", type="fact").action == "superseded"
    assert ws.get(launch.id).superseded and not ws.get(lead.id).superseded
    assert ws.remember("김 과장님 퇴사하시고 이제 박 부장님이 팀장", type="fact").action == "superseded"
    assert ws.get(lead.id).superseded


def test_two_numbers_of_two_attributes_are_no_slot(ws):
    # the rent and the weight of one person are 0.68 near and the pair head reads a new number
    # (0.55): the attribute head puts them apart, so neither replaces the other
    rent = ws.remember("하윤의 월세는 85만원이다", type="fact").entry
    weight = ws.remember("하윤의 현재 체중은 62.7kg이다", type="fact")
    assert weight.action == "written", weight
    assert not ws.get(rent.id).superseded
    assert ws.remember("하윤의 월세는 이제 110만원이다", type="fact").action == "superseded"
    assert ws.get(rent.id).superseded and not ws.get(weight.entry.id).superseded


def test_readings_of_two_things_are_no_slot(ws):
    # 0.80 near, the pair head 0.55 for a new number, one attribute (device): but the words
    # around the numbers are one frame around another thing
    watch = ws.remember("Priya's watch battery at 99%", type="fact").entry
    assert policy.decide(ws.memory(), "Priya's phone battery at 68%", force=True).action == "write"
    assert judgement.two_things_measured("Priya's phone battery at 68%", "Priya's watch battery at 99%")
    assert not judgement.two_things_measured("하윤의 월세는 이제 110만원이다", "하윤의 월세는 85만원이다")
    assert not ws.get(watch.id).superseded


def test_a_fact_behind_many_newer_lines_about_the_same_person_is_still_its_slot(ws):
    # the rivals are the entries sharing the most words, not the newest twelve that name Mina
    diet = ws.remember("Mina is vegetarian.", type="preference").entry
    for thing in (
        "Mina works at Kakao.",
        "Mina lives in Mapo.",
        "Mina drives a grey Sonata.",
        "Mina plays the cello.",
        "Mina's cat is called Dubu.",
        "Mina's birthday is May 3.",
        "Mina runs on Sundays.",
        "Mina's sister lives in Toronto.",
        "Mina uses a Galaxy phone.",
        "Mina studies Japanese.",
        "Mina's dentist is Dr Han.",
        "Mina supports Doosan Bears.",
        "Mina's passport expires in 2029.",
    ):
        ws.remember(thing, type="fact")
    result = ws.remember(
        "Mina has started eating fish again, so she is pescatarian now rather than vegetarian."
    )
    assert result.action == "superseded", result
    assert ws.get(diet.id).superseded


def test_an_addition_is_no_change_said_as_an_event():
    from giok.write.statements import adds

    assert adds("서준이 고양이도 입양했대") and adds("I'm also allergic to latex.")
    assert not adds("서준이 고양이 입양했대") and not adds("Seojun and Hana broke up.")


def test_a_label_is_not_the_subject_a_change_names():
    # the flush writes "constraint: …" lines: two constraints of one conversation are not about
    # one subject because both carry the label
    from giok.write.statements import names_subject_of

    old, new = "constraint: 앞으로 존댓말 써 주세요", "constraint: 코드 예시는 꼭 타입스크립트로"
    assert not names_subject_of(new, old)
    assert names_subject_of("Seojun and Hana broke up.", "Seojun is dating Hana.")
    assert names_subject_of("my coffee has oat milk now", "I take my coffee black")  # the speaker


def _kept(*lines: str):
    """A MEMORY.md holding `lines` at M90, one a day, as the write path reads it."""
    import datetime as dt

    from giok.store.memoryfile import MemoryEntry, MemoryFile, empty

    mf = MemoryFile.parse(empty("en"))
    for n, line in enumerate(lines):
        when = dt.date(2026, 1, 1) + dt.timedelta(n)
        mf.add(MemoryEntry(policy.normalize(line), layer="M90", date=when, fields={"id": f"m-{n:06d}"}))
    return MemoryFile.parse(mf.render())


def test_a_turn_said_by_another_person_changes_nothing_of_the_one_addressed():
    """LoCoMo conv-42: Nate's compliment on the desserts replaced Joanna's "I can't have dairy"
    at night (the name addressed read as the subject)."""
    mf = _kept("Joanna: That looks delicious! Unfortunately, I can't have dairy, so no ice cream for me.")
    nate = (
        "Nate: Wow, Joanna, that looks amazing! I bet it tastes great - you're so talented at"
        " making dairy-free desserts!"
    )
    assert policy.compare(mf, nate, "workspace")[0] == "new"
    assert statements.said_by_others(nate, mf.entries()[0].text)
    assert not statements.said_by_others("Joanna: I started oat milk", "Joanna: I can't have dairy")
    assert not statements.said_by_others("constraint: never deploy on Fridays", "Joanna: I can't have dairy")


def test_thanks_between_two_people_is_no_slot_of_a_life():
    """Two turns of thanks near in meaning read as a change to the pair head (trained on
    sentences); the attribute head reads no lasting attribute an event changes in them."""
    mf = _kept(
        "Joanna: Thanks so much, Nate! Your support means a lot. I'll keep working at it and"
        " hopefully the next steps will become clearer soon."
    )
    again = (
        "Joanna: Thanks, Nate! Your support means a lot. I'll make sure to keep you updated."
        " Anything new on your end?"
    )
    assert policy.compare(mf, again, "workspace")[0] != "supersede"


def test_the_night_asks_only_of_lines_it_keeps(ws, monkeypatch):
    """A diary line the night drops as trivia is not kept for changing a kept line of trivia
    (`remember`, asked to keep it, still is:
    test_a_change_is_kept_even_in_words_the_model_finds_everyday)."""
    at(monkeypatch, "2026-03-01T09:00")
    ws.remember("Priya's phone battery at 37%", layer="M30")
    ws.diary("Priya's phone battery at 30%")
    at(monkeypatch, "2026-03-01T23:00")
    report = distill(ws)
    assert not report.added and not report.superseded
    assert [d["text"] for d in report.dropped] == ["Priya's phone battery at 30%"]


def test_a_new_hobby_joins_the_others():
    """LoCoMo conv-42: Nate's love of sci-fi movies replaced "Playing video games and watching
    movies are my main hobbies"; a person has many hobbies and pets at once (judgement.MANY)."""
    mf = _kept("Nate: Playing video games and watching movies are my main hobbies.")
    movies = (
        "Nate: I love fantasy and sci-fi movies, they're a great escape and get my imagination going."
        " Playing video games is a great way to express my creativity."
    )
    assert policy.compare(mf, movies, "workspace")[0] != "supersede"


def test_a_turn_of_talk_changes_a_slot_only_by_the_rules():
    """LoCoMo conv-42: one dairy-free dessert of Joanna's replaced another (0.84 near, the pair
    head and the attribute head agreeing). A turn of a conversation gives a slot a new value by
    the rules' evidence alone; a note's label is no speaker."""
    mf = _kept(
        "Joanna: Hey Nate, my favorite dairy-free treat is this amazing chocolate raspberry tart."
        " It has an almond flour crust, chocolate ganache, and fresh raspberries."
    )
    cake = (
        "Joanna: Hey Nate, I love making this dairy-free chocolate cake with raspberries."
        " It's so moist and delicious - perfect sweetness level."
    )
    assert statements.spoken(cake)
    assert policy.compare(mf, cake, "workspace")[0] != "supersede"
    assert not statements.spoken("Correction: Lucas is allergic to cashews, not walnuts.")
    assert statements.spoken("서준: 나 이번 달에 서울로 이사했어")


def test_a_diary_kept_as_a_conversation_keeps_the_turns_that_say_something():
    """A diary of talk (LoCoMo's shape): the turn head keeps the turn that tells a fact and drops
    the reactions around it, where the note heads kept every line the model found any substance
    in. A diary of notes has no turns: a label that speaks as no one is no speaker."""
    talk = [
        "Nate: Wow, Joanna, that looks amazing! You have to send me the recipe.",
        "Joanna: Unfortunately, I can't have dairy, so I bake everything dairy-free now.",
        "Nate: Haha yeah, totally.",
        "Joanna: Oh wow, that's so cool!",
    ]
    assert judgement.turns(talk) == [True] * 4
    judged = judgement.judge_many(talk)
    assert [j.keep for j in judged] == [False, True, False, False]
    assert judged[0].reason == judgement.SMALL_TALK
    notes = ["Bug: login returns a 500 when the email has a plus sign.", "교훈: 마이그레이션 전에 백업부터"]
    assert judgement.turns(notes) == [False, False]
    assert [j.keep for j in judgement.judge_many(notes)] == [True, True]
    assert judgement.turns(["Joanna: I can't have dairy."]) == [False]  # one person: no conversation


@pytest.mark.parametrize(("turn_b", "kept"), [(-20.0, False), (-0.4, True), (20.0, True)])
def test_a_turn_the_note_heads_call_a_life_event_needs_some_chance_from_the_turn_head(turn_b, kept):
    """The note heads put a turn in M365 (a life event): it is kept under the turn head's own
    threshold, but not where the turn head gives it next to no chance (under TURN_EVENT_FLOOR:
    "Thanks, Maria! Your support means a lot" reads as lasting to the note heads)."""
    v = np.ones((2, 384), np.float32) / np.sqrt(384)
    said = "John: Thanks, Maria! Your support means a lot."
    events = {
        "keep_b": np.float32(20),
        "layer_b": np.array([0, 0, 0, 20, 0], np.float32),  # M365
        "turn_w": np.zeros(389, np.float32),
        "turn_b": np.float32(turn_b),  # the turn head's chance: sigmoid(turn_b)
        "turn_at": np.float32(0.9),  # above every chance here: the turn head alone keeps nothing
    }
    heads = judgement.Heads(_weights(**events))
    assert judgement.TURN_EVENT_FLOOR < 1 / (1 + np.exp(0.4)) < 0.9
    assert heads.verdict(v, turn=said).keep is kept
    assert heads.verdict(v).keep  # as a note, the note heads alone decide


@pytest.mark.parametrize(
    "notes",
    [
        ["교훈: 나는 마이그레이션 전에 백업부터 해야 한다", "교훈: 마이그레이션 전에 백업"],
        ["Note: you need to renew the passport by May", "Note: passport renewal costs 80 euros"],
        ["TODO: call you back about the lease", "Note: I pay the rent on the 1st", "TODO: pay rent"],
        ["메모: 네 시에 회의", "Update: your order shipped"],
    ],
)
def test_a_diary_of_labelled_notes_has_no_turns(notes):
    """A note's label speaking to "you" or as "I" is still no speaker: its lines are judged as
    notes, each as it would be alone."""
    assert judgement.turns(notes) == [False] * len(notes)
    together = judgement.judge_many(notes)
    assert [j.keep for j in together] == [judgement.judge(n).keep for n in notes]


def test_a_turn_is_judged_by_the_note_heads_where_the_weights_carry_no_turn_head():
    v = np.ones((2, 384), np.float32) / np.sqrt(384)
    said = "Joanna: I can't have dairy. I bake dairy-free."
    keeps = {**CHAT_KEEPS, "turn_w": np.zeros(389, np.float32), "turn_b": np.float32(20)}
    with_turn = judgement.Heads(_weights(**keeps, turn_at=np.float32(0.5)))
    kept = with_turn.verdict(v, turn=said)
    assert kept.keep and kept.layer != "drop"
    assert not with_turn.verdict(v).keep  # the same vectors as a note: the note heads drop them
    without = judgement.Heads(_weights(**keeps))  # no turn_at: no turn head
    assert without.turn is None and not without.verdict(v, turn=said).keep
