"""Ranking that knows what an entry is (docs/search.md, "Standing"): live before archived and
superseded, questions about the past answered from the supersede chain, only hits an answer
rests on counted as references, and colloquial Korean questions finding their facts."""

from __future__ import annotations

import json

import pytest

from conftest import stocked_workspace
from giok import Home, Workspace
from giok.retrieval.questions import Question, asks_past
from giok.retrieval.search import CONFIDENT, recall, search, search_full, used
from giok.store import refs
from giok.text.terms import query_terms

MEMORY = """# MEMORY

## 🔮 M0 : core memory (permanent)
- I am Zeon, the first agent of Seojun. <!-- id: m-self01 -->

## 📚 M90 : 90-day memory
- [2026-02-01] Seojun lives in Haeundae, Busan. <!-- id: m-live01; type: fact; supersedes: m-old001 -->
- [2025-06-01] Seojun lives in Mapo, Seoul. <!-- id: m-old001; type: fact; superseded_by: m-live01 -->
- [2026-01-05] These days Seojun's morning drink is an iced americano. <!-- id: m-live02; type: preference -->

## 📝 M30 : 30-day memory
- [2026-03-01] Said good morning to Seojun; he asked about the move. <!-- id: m-triv01; type: episode -->
- [2026-03-02] Seojun's team ships the billing release on Fridays. <!-- id: m-rel001; type: fact -->
"""
ARCHIVE = """# Archive 2026-01

- [2025-10-01] Seojun drinks a hot latte every morning. <!-- expires: 2026-01-01; id: m-arch01 -->
"""


@pytest.fixture(scope="module")
def life(tmp_path_factory):
    home = Home(tmp_path_factory.mktemp("rankhome"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIOK_HOME", str(home.path))
        ws, _ = Workspace.init(
            tmp_path_factory.mktemp("rank") / "zeon", name="zeon", user="Seojun", home=home
        )
        (ws.root / "MEMORY.md").write_text(MEMORY, "utf-8")
        (ws.root / "memory" / "archive").mkdir(parents=True, exist_ok=True)
        (ws.root / "memory" / "archive" / "2026-01.md").write_text(ARCHIVE, "utf-8")
        ws.search("warm up", record=None)
        yield ws


@pytest.fixture
def at_home(life, monkeypatch):
    monkeypatch.setenv("GIOK_HOME", str(life.home.path))
    return life


def test_a_live_entry_outranks_the_archived_one_it_replaced(at_home):
    found = search(at_home, "What does Seojun drink every morning?", k=3, record=None)
    assert found and found[0].id == "m-live02", [(r.id, round(r.score, 3)) for r in found]
    archived = [r for r in found if r.id == "m-arch01"]
    assert not archived or archived[0].score < found[0].score


@pytest.mark.parametrize(
    "query",
    ["Where did Seojun live before he moved?", "Where did Seojun use to live?"],
)
def test_a_question_about_the_past_is_answered_from_the_supersede_chain(at_home, query):
    found = [r.id for r in search(at_home, query, k=3, record=None)]
    assert found[:2] == ["m-old001", "m-live01"], found


def test_a_present_question_answers_with_the_live_entry_and_hides_the_old_one(at_home):
    found = [r.id for r in search(at_home, "Where does Seojun live?", k=3, record=None)]
    assert found and found[0] == "m-live01" and "m-old001" not in found, found


def test_include_superseded_puts_what_was_replaced_right_after_its_successor(at_home):
    found = [
        r.id for r in search(at_home, "Where does Seojun live?", k=3, record=None, include_superseded=True)
    ]
    assert found[:2] == ["m-live01", "m-old001"], found


def test_a_wrong_low_hit_is_logged_but_not_counted_as_a_reference(at_home):
    before = len(refs.events(at_home))
    # nothing stored is about the weather: with the floors off, what comes back is a wrong low hit
    response = search_full(
        at_home, "Will it rain in Busan tomorrow?", k=3, min_score=0.0, relative=None, gap=None
    )
    assert response.results and not any(used(r) for r in response.results)
    logged = refs.events(at_home)[before:]
    assert logged and all(refs.weight(e) == 0 for e in logged), logged


def test_a_confident_hit_sharing_a_word_of_the_question_counts(at_home):
    before = len(refs.events(at_home))
    found = search(at_home, "Which day does the billing release ship?", k=3)
    assert found[0].id == "m-rel001" and found[0].score >= CONFIDENT
    counted = [e["id"] for e in refs.events(at_home)[before:] if refs.weight(e)]
    assert counted == ["m-rel001"], counted


def test_recall_counts_only_its_answer(at_home):
    before = len(refs.events(at_home))
    result = recall(at_home, "Which day does the billing release ship?")
    assert result.results and result.results[0].id == "m-rel001"
    counted = {e["id"] for e in refs.events(at_home)[before:] if refs.weight(e)}
    assert counted == {"m-rel001"}, counted


def test_reference_weights_follow_the_used_flags():
    assert refs.weights(["a", "b", "c", "d"], "search", [True, False, True, True]) == [1, 0, 1, 0]
    assert refs.weights(["a", "b"], "search") == [1, 1]


SEOJUN = [
    "서준은 부산 해운대에 산다.",
    "서준은 아침마다 아이스 아메리카노를 마신다.",
    "서준의 여동생 민지는 부산에서 간호사로 일한다.",
    "서준은 화요일과 목요일에 헬스장에 간다.",
    "서준의 강아지 보리는 진돗개다.",
    "서준은 매운 음식을 잘 못 먹는다.",
    "서준은 다음 달에 제주도로 가족 여행을 간다.",
    "서준은 자기 전에 재즈를 듣는다.",
]


def with_replaced(tmp_path_factory, entries, replaced: list[str], *, prefix: str, name: str, user: str):
    """A module's workspace (`stocked_workspace`) whose MEMORY.md also holds `replaced`: entries
    already superseded, each line with its own id and `superseded_by`."""
    for ws in stocked_workspace(tmp_path_factory, entries, prefix=prefix, name=name, user=user, lang="ko"):
        with (ws.root / "MEMORY.md").open("a", encoding="utf-8") as f:
            f.writelines(f"- {line}\n" for line in replaced)
        ws.search("warm up", record=None)
        yield ws


@pytest.fixture(scope="module")
def korean(tmp_path_factory):
    where_before = "서준은 서울 마포에 산다. <!-- id: q-old001; superseded_by: q-000000 -->"  # before 해운대
    yield from with_replaced(tmp_path_factory, SEOJUN, [where_before], prefix="q", name="seo", user="서준")


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("서준이 어디 살지?", "해운대"),
        ("서준이 어디 사니?", "해운대"),
        ("서준이 어디 사냐?", "해운대"),
        ("서준이 아침에 뭘 마셔?", "아메리카노"),
        ("서준이 자기 전에 뭘 들어?", "재즈"),
    ],
)
def test_a_colloquial_korean_question_finds_its_fact(korean, monkeypatch, query, answer):
    monkeypatch.setenv("GIOK_HOME", str(korean.home.path))
    result = recall(korean, query, record=None)
    assert result.answer == "found" and answer in result.results[0].text, result.to_dict()


@pytest.mark.parametrize("query", ["서준은 예전에 어디 살았지?", "서준이 전에 어디 살았어?"])
def test_a_korean_question_about_the_past_is_answered_from_the_chain(korean, monkeypatch, query):
    monkeypatch.setenv("GIOK_HOME", str(korean.home.path))
    found = [r.id for r in search(korean, query, k=3, record=None)]
    assert found[:2] == ["q-old001", "q-000000"], found
    assert "q-old001" not in [r.id for r in search(korean, "서준이 어디 살지?", k=3, record=None)]


def test_the_written_forms_of_a_spoken_predicate():
    groups = Question.of("서준이 어디 살지?").groups(query_terms("서준이 어디 살지?"))
    assert {"산다", "살다", "삽니다"} <= set(groups["살지"])
    assert "마신다" in Question.of("뭘 마셔?").groups(["마셔"])["마셔"]
    assert "듣는다" in Question.of("뭘 들어?").groups(["들어"])["들어"]
    assert "몬다" in Question.of("무슨 차 모니?").groups(["모니"])["모니"]
    assert "뭘" in Question.of("뭘 마셔?").asking


JIHO = [
    "지호 엄마는 엄마 친구들과 주말마다 북한산에 오르신다.",
    "지호 엄마는 전주에 산다.",
    "하윤은 주말마다 한강에서 자전거를 탄다.",
    "하윤은 넥스트플레이에 다니지 않는다.",
    "도윤은 매일 저녁 여섯 시에 퇴근한다.",
    "도윤이 다니던 학원은 강남에 있었다.",
]


@pytest.fixture(scope="module")
def jiho(tmp_path_factory):
    for ws in stocked_workspace(tmp_path_factory, JIHO, prefix="j", name="jiho", user="지호", lang="ko"):
        ws.search("warm up", record=None)
        yield ws


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("엄마 어디 사셔?", "j-000001"),  # the honorific 사셔 (살 + 시 + 어) finds the plain 산다
        ("하윤 어디 다녀?", "j-000003"),  # the negation: 다니지 않는다
        ("도윤이 어디 다니니?", "j-000005"),  # the attributive: 다니던
    ],
)
def test_a_spoken_predicate_finds_a_memory_holding_the_verb_in_another_written_form(
    jiho, monkeypatch, query, answer
):
    monkeypatch.setenv("GIOK_HOME", str(jiho.home.path))
    found = [r.id for r in search(jiho, query, k=2, record=None)]
    assert found[:1] == [answer], found


def test_the_forms_a_memory_holds_inside_a_sentence():
    said = Question.of("하윤 어디 다녀?").groups(["다녀"])["다녀"]
    assert {"다니지", "다니는", "다니던", "다닌", "다니며", "다니면서", "다녔고"} <= set(said)
    assert {"산다", "사는", "살았다"} <= set(Question.of("엄마 어디 사셔?").groups(["사셔"])["사셔"])
    assert "먹은" in Question.of("뭘 먹어?").groups(["먹어"])["먹어"]
    # a one-syllable attributive is as often a noun (산 mountain, 한 one): not a form of 살, 하
    assert "산" not in Question.of("어디 살지?").groups(["살지"])["살지"]
    # a plain question is not read into the honorific (the mother's 사신다 for 서준이 어디 사니?)
    assert "사신다" not in Question.of("서준이 어디 사니?").groups(["사니"])["사니"]


@pytest.mark.parametrize(
    ("query", "past"),
    [
        ("Where did he live before he moved?", True),
        ("What did I use to drink?", True),
        ("Who was my manager previously?", True),
        ("서준은 예전에 어디 살았지?", True),
        ("원래 뭐 마셨어?", True),
        ("이사하기 전에 어디 살았어?", True),
        ("What does he do before bed?", False),
        ("자기 전에 뭘 들어?", False),
        ("Where does Seojun live?", False),
        # the past tense of any verb (잤 = 자 + 았), a thing of the past named (old, former, -던)
        ("서준이 전에는 몇 시에 잤어?", True),
        ("전에 있던 회사 어디야?", True),
        ("What was Lena's old number?", True),
        ("Who was her former manager?", True),
        ("How old is Lena?", False),
        ("전에 뭐 있어?", False),
        # 전 and 이전 before a noun: the former one, with a verb in the past
        ("도윤이 전 담임 선생님은 누구였어?", True),
        ("이전 회사 이름이 뭐였지?", True),
        ("도윤이 전 담임 선생님이 누구야?", False),
    ],
)
def test_questions_about_the_past(query, past):
    assert asks_past(query) is past


def _row(layer, category=None, superseded=0, expires=None):
    return {"layer": layer, "category": category, "superseded": superseded, "expires": expires}


def test_standing_orders_layers_types_and_status():
    from giok.retrieval.search import standing

    layers = [standing(_row(layer, "fact")) for layer in ("M0", "M365", "M90", "M30", "diary")]
    assert layers == sorted(layers, reverse=True) and len(set(layers)) == len(layers)
    assert standing(_row("M30", "episode")) < standing(_row("M30", "fact"))
    assert standing(_row("archive", "fact")) < standing(_row("diary"))
    assert standing(_row("M90", "fact", expires="2000-01-01")) < standing(
        _row("M90", "fact")
    )  # expired, not moved yet
    assert standing(_row("M90", "fact", superseded=1)) < standing(_row("M90", "fact"))
    assert standing(_row("M90", "fact", superseded=1), past=True) == standing(_row("M90", "fact"), past=True)


MINHO = [
    "민호가 지난달 인천 송도로 이사했다.",
    "민호는 매일 아침 녹차를 마신다.",
    "민호의 누나는 대구에서 약사로 일한다.",
    "민호는 주말마다 북한산에 등산을 간다.",
    "Priya moved to York in May.",
    "Priya's brother Dev works as a nurse in Leeds.",
    "Priya takes her coffee black.",
]


@pytest.fixture(scope="module")
def replaced(tmp_path_factory):
    moves = [  # what each move replaced
        "민호는 대구 수성구에 산다. <!-- id: r-old001; superseded_by: r-000000 -->",
        "Priya lives in a flat in Leeds. <!-- id: r-old002; superseded_by: r-000004 -->",
    ]
    yield from with_replaced(tmp_path_factory, MINHO, moves, prefix="r", name="min", user="민호")


@pytest.mark.parametrize(
    ("query", "before", "current", "old"),
    [
        ("민호 어디 살아?", "민호 예전에 어디 살았어?", "r-000000", "r-old001"),
        ("민호는 어디에 살지?", "민호는 전에 어디 살았지?", "r-000000", "r-old001"),
        ("Where does Priya live?", "Where did Priya live before she moved?", "r-000004", "r-old002"),
    ],
)
def test_a_present_question_worded_like_the_replaced_entry_finds_what_replaced_it(
    replaced, monkeypatch, query, before, current, old
):
    # the question shares its predicate with the entry a move replaced ("산다", "lives"), not with
    # the move; the replaced entry says which slot is asked, the live end of its chain answers
    monkeypatch.setenv("GIOK_HOME", str(replaced.home.path))
    found = search_full(replaced, query, k=3, record=None).results
    assert found and found[0].id == current, [(r.id, round(r.score, 3)) for r in found]
    assert found[0].evidence.get("via") == old
    assert old not in [r.id for r in found]
    past = [r.id for r in search(replaced, before, k=3, record=None)]
    assert past[:2] == [old, current], past  # the past is still answered from the chain


ASHA = [
    "Asha's sister Meera lives in Toronto.",
    "Asha takes the train to work.",
    "Asha moved to Bristol last weekend.",
    "지우의 생일은 7월 12일이다.",
    "지우는 요즘 성수동 투룸에서 지낸다.",
    "도윤이 새 담임은 이정민 선생님이다.",
    "도윤이는 수영을 배운다.",
]


@pytest.fixture(scope="module")
def histories(tmp_path_factory):
    befores = [
        "Asha lives in Leeds, in Headingley. <!-- id: h-old001; superseded_by: h-000002 -->",
        "지우는 망원동 원룸에 산다. <!-- id: h-old002; superseded_by: h-000004 -->",
        "도윤이 담임 선생님은 박선희 선생님이다. <!-- id: h-old003; superseded_by: h-000005 -->",
    ]
    yield from with_replaced(tmp_path_factory, ASHA, befores, prefix="h", name="his", user="Asha")


@pytest.mark.parametrize(
    ("query", "old"),
    [
        # the sister's home is live and shares "live"; the question presupposes a change
        ("Where did Asha live before she moved?", "h-old001"),
        ("지우가 예전에 어디 살았지?", "h-old002"),  # not the birthday, which never changed
        ("도윤이 전 담임 선생님은 누구였어?", "h-old003"),  # 전 before a noun: the former one
    ],
)
def test_a_question_about_the_past_prefers_what_changed_to_what_never_did(histories, monkeypatch, query, old):
    monkeypatch.setenv("GIOK_HOME", str(histories.home.path))
    found = search(histories, query, k=3, record=None)
    assert found and found[0].id == old, [(r.id, round(r.score, 3)) for r in found]


def test_a_change_linked_after_a_search_is_followed_by_the_next_one(ws, fake_embeddings, cli):
    old = ws.remember("Jonas lives in Hamburg, near the Alster.", layer="M365").entry
    ws.remember("Jonas takes his coffee with oat milk.", layer="M365")
    assert old is not None
    before = search(ws, "Where does Jonas live?", k=3, record=None)
    assert before and before[0].id == old.id
    moved = ws.remember("Jonas moved to Munich last month.", layer="M365", supersedes=old.id).entry
    assert moved is not None
    found = search(ws, "Where does Jonas live?", k=3, record=None)
    assert found and found[0].id == moved.id and found[0].evidence.get("via") == old.id, found
    out = cli("-w", "zeon", "search", "Where does Jonas live?", "--json")
    first = json.loads(out.output)["results"][0]
    assert (first["id"], first["via"]) == (moved.id, old.id), first
    shown = cli("-w", "zeon", "search", "Where does Jonas live?").output
    assert f"(found through {old.id}, the entry it replaced)" in shown, shown
