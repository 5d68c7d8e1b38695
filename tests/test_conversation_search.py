"""Conversation transcripts in the diary (issue 16, "Conversations"): lines written as
`- HH:MM Speaker: text`. A question that names a speaker is answered by what that speaker
said; the line after a question is its answer and comes before it."""

from __future__ import annotations

from giok.retrieval import search
from giok.text.terms import query_terms


def _diary(ws, day: str, lines: list[str]) -> None:
    (ws.root / "memory" / f"{day}.md").write_text(f"# {day}\n\n" + "\n".join(lines) + "\n", "utf-8")


def test_the_answer_after_a_question_comes_before_the_question(ws):
    _diary(
        ws,
        "2024-03-02",
        [
            "- 10:00 Ana: How was the weekend?",
            "- 10:01 Ben: Quiet, we stayed in with the new kittens.",
            "- 10:02 Ana: Cute! What are the names of your kittens?",
            "- 10:03 Ben: Luna and Oliver, sisters from the same litter.",
            "- 10:04 Ana: Lovely. See you on Monday.",
        ],
    )
    found = [r.text for r in ws.search("What are the names of the kittens?", k=3)]
    assert found and "Luna and Oliver" in found[0], found


def test_a_question_naming_a_speaker_prefers_what_that_speaker_said(ws):
    # Ben's line has the query's words and names Ana; Ana's own line says what she cooks
    _diary(
        ws,
        "2024-03-02",
        [
            "- 10:00 Ana: Morning Ben, busy week at the clinic.",
            "- 10:01 Ben: Ana, I like to cook pasta at the weekend, cooking is what I like best.",
        ],
    )
    _diary(
        ws,
        "2024-03-09",
        [
            "- 18:00 Ben: How was the market?",
            "- 18:01 Ana: Fine. On Sundays I always make a spicy lentil curry for the whole family.",
            "- 18:02 Ben: Sounds tasty.",
        ],
    )
    found = [r.text for r in ws.search("What does Ana like to cook?", k=3)]
    assert found and "curry" in found[0], found


def test_of_two_named_speakers_the_subject_is_the_one_asked_about(ws):
    # "what did Ana tell Ben": Ana's line answers, Ben's has more of the query's words
    _diary(
        ws,
        "2024-03-02",
        [
            "- 10:00 Ana: Morning Ben, busy week at the clinic.",
            "- 10:01 Ben: Ana, your trip to Lisbon sounds fun, tell me all about the trip when you are back.",
        ],
    )
    _diary(
        ws,
        "2024-03-09",
        [
            "- 18:00 Ben: How was it?",
            "- 18:01 Ana: Ben, Lisbon was lovely: cheap flights, and our hotel was right by the river.",
            "- 18:02 Ben: Sounds great.",
        ],
    )
    found = [r.text for r in ws.search("What did Ana tell Ben about her trip to Lisbon?", k=3)]
    assert found and "hotel was right by the river" in found[0], found


def test_a_label_opening_diary_lines_is_no_speaker():
    rows = {
        i: {"layer": "diary", "text": text}
        for i, text in enumerate(
            [
                "09:00 Decision: standup moves to ten",
                "11:00 Decision: the API is frozen",
                "15:00 lunch with the team",
            ]
        )
    }
    query = "what decision did we make about the API"
    assert search._named_speakers(query, query_terms(query), rows) == set()


def test_a_speaker_label_without_searchable_words_is_named_by_no_question():
    # a TV transcript's chorus line ("All: Hi!"): "all" is a stop word, so no question names
    # that speaker, and the lines of everyone else keep their score
    lines = [
        "20:00 All: Hi Ross!",
        "20:01 Ross: Hi. Where is the bread knife?",
        "20:02 Monica: The bread knife is in the second drawer.",
        "20:03 All: Bye!",
        "20:04 Monica: Bye, Ross.",
    ]
    rows = {i: {"layer": "diary", "text": text} for i, text in enumerate(lines)}
    for query, named in (
        ("Where is the bread knife?", set()),
        ("What did Monica say about the knife?", {"monica"}),
    ):
        assert search._named_speakers(query, query_terms(query), rows) == named, query
