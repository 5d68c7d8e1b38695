"""What a question's form says, apart from what it is about: whether it needs memory at all
(`needs_memory`, recall's first step: here rather than in `search`, so that the prompt hook
decides without loading numpy or the index), whether it asks about the past, and, for a
colloquial Korean question, the written forms its predicate takes in a memory.

A memory is written in the plain declarative (`서준은 부산에 산다`, `아메리카노를 마신다`); a
question asks in the spoken forms (`어디 살지?`, `사니?`, `사냐?`, `뭘 마셔?`). Those share no
keyword term, and the question words (뭘, 어디, 누구, 언제, 얼마) are terms no memory holds, so
the score sank under the floor. `Question.of(query)` gives:

- `past`: the query asks about the past (`asks_past`);
- `forms`: for each keyword term of a Korean predicate in a question form, the terms of
  the written forms of the same verb (살지 → 살다, 산다, 살고, 삽니다, 살았다; 마셔 → 마신다,
  마셨다), found by taking the question ending off at the level of the letters (jamo: 사니 is
  살 + 니 with the ㄹ dropped, 마셔 is 마시 + 어 contracted) and conjugating the stem again; a
  keyword hit counts the term present when any of its alternatives is (`search._keyword_evidence`);
- `stems`: the stem term of such a predicate (살았지 → 살), counted within the word's term;
- `asking`: the question words, and in a question about the past the words that say so (예전에,
  before): they weigh nothing in the keyword share (`search.ASKING_WEIGHT`); the vector side
  embeds them as asked.

Nothing here is a list of verbs: the endings and the conjugation are Korean grammar, so an
unseen verb is handled as a seen one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from giok.text.analysis import has_hangul, is_hangul, words
from giok.text.lazy import lazy
from giok.text.terms import query_terms, terms
from giok.write import judgement

# -- the past ------------------------------------------------------------------------------------
# Cues that say "the past" on their own, and cues that also make time clauses ("before bed",
# "자기 전에") or name a thing of now ("my old laptop", "the former office"): those count only with
# a verb in the past tense ("before he moved", "what was her old number?", "전에 살았지").
_PAST_ALONE = lazy(
    r"\b(used to|did\b.*\buse to|previously|formerly|originally|no longer|any ?more|in the past|back then|"
    r"at first)\b|"
    r"예전|옛날|원래|이전에|처음엔|처음에는|그 전에|그전에",
    re.I,
)
_PAST_CLAUSE = lazy(
    r"\b(before|earlier|prior|old|former|previous)\b|전에|전엔|(?<!\w)(?:이전|전)(?=\s)", re.I
)
_PAST_TENSE_EN = lazy(r"\b(did|was|were|had|used|\w{3,}ed)\b", re.I)


def asks_past(query: str) -> bool:
    """Whether the query asks what was true before ("where did he live before he moved?",
    "what did I use to drink?", "예전에 어디 살았지?", "원래 뭐 마셨어?")."""
    if _PAST_ALONE.search(query):
        return True
    if not _PAST_CLAUSE.search(query):
        return False
    return bool(_PAST_TENSE_EN.search(query) or any(_past_tense_ko(w) for w in words(query)))


def _past_tense_ko(word: str) -> bool:
    """A Korean word in the past tense: a syllable closed by ㅆ, the past's 았/었 fused with the
    stem (살았, 마셨, 했, 잤, 갔), except 있 (to be, have) and 겠 (the conjectural); or a verb in
    the retrospective -던 before a noun (살던, 다니던, 있던)."""
    if len(word) >= 2 and word.endswith("던"):
        return True
    return any((p := _split(ch)) is not None and p[2] == _SS and ch not in "있겠" for ch in word)


_PAST_CUE_WORD = lazy(r"^(예전|옛날|원래|이전|처음|전에|전엔)")


def _says_past(word: str) -> bool:
    """A word of a past question that says when, not what (예전에, 원래, before, previously)."""
    return bool(_PAST_ALONE.fullmatch(word) or _PAST_CLAUSE.fullmatch(word) or _PAST_CUE_WORD.match(word))


# -- Hangul letters ------------------------------------------------------------------------------
_BASE = 0xAC00
_NONE, _N, _L, _B, _SS = 0, 4, 8, 17, 20  # final consonants: none, ㄴ, ㄹ, ㅂ, ㅆ
_T = 7  # ㄷ as a final
_A, _AE, _EO, _YEO, _O, _WA, _WAE, _OE, _U, _WO, _EU, _I = 0, 1, 4, 6, 8, 9, 10, 11, 13, 14, 18, 20
_BRIGHT = {_A, _O, _WA}  # a stem with these vowels takes 아/았, the others 어/었


def _split(syllable: str) -> tuple[int, int, int] | None:
    code = ord(syllable) - _BASE
    if not 0 <= code < 11172:
        return None
    return code // 588, (code % 588) // 28, code % 28


def _join(initial: int, vowel: int, final: int) -> str:
    return chr(_BASE + initial * 588 + vowel * 28 + final)


def _with_final(syllable: str, final: int) -> str:
    parts = _split(syllable)
    return _join(parts[0], parts[1], final) if parts else syllable


# -- question endings ----------------------------------------------------------------------------
# Endings that follow a verb stem whole (살+지, 먹+니, 듣+냐, 마시+니까); those that open with ㄴ
# drop a stem's final ㄹ (사+니 is 살다's as well as 사다's).
def _list(text: str) -> list[str]:
    return text.split()


_ENDINGS = tuple(
    sorted(
        [
            *_list("지 니 냐 나 니까 냐고 나요 지요 죠 는지 는데 던 던가 더라 세요 시니 시지 시냐 고"),
            *_list("았지 었지 였지 았어 었어 였어 았니 었니 였니 았냐 었냐 였냐 았나 었나"),
            *_list("았어요 었어요 았더라 었더라 는 을까 을래 어 아 어요 아요"),
        ],
        key=len,
        reverse=True,
    )
)
# A spoken ending glued onto the stem's last syllable as its final consonant: 살까 (사+ㄹ까),
# 갈래, 할지; and the contracted 아/어 of a vowel stem (마셔 = 마시+어, 배워 = 배우+어, 해 = 하+여),
# optionally with 요 or, with ㅆ, the past (마셨어, 배웠지).
_GLUED = {"까": _L, "래": _L, "지": _L}
_UNCONTRACT = {_YEO: (_I,), _WO: (_U,), _WA: (_O,), _WAE: (_OE,), _EO: (_EU, _EO), _A: (_A,)}
_AFTER_CONTRACTED = ("", "요", "서", "도")
_PAST_AFTER = tuple(_list("다 어 어요 지 니 냐 나 더라"))

# Question words: no memory holds them, so they leave the keyword terms (the vector side keeps
# them: "어디" says a place is asked for). A word is one when it is one of these with at most a
# particle or a copula after it (어디서, 누구랑, 언제냐, 뭐였지, 몇이야).
_ASKING = (
    "뭘",
    "뭐",
    "무엇",
    "무슨",
    "어디",
    "어느",
    "어떤",
    "언제",
    "누구",
    "누가",
    "얼마",
    "몇",
    "왜",
    "어떻게",
)
_ASKING_TAIL = frozenset(
    [
        "",
        *_list("야 냐 지 니 요 죠 서 로 에 에서 에서는 랑 를 을 까 였지 였어 였더라 이었지 나 가 든"),
        *_list("이냐 이야 이지 인지 일까 으로 라고 이라고 나요 야요 예요 에요"),
    ]
)


def _asking(word: str) -> bool:
    return any(word.startswith(q) and word[len(q) :] in _ASKING_TAIL for q in _ASKING)


_ASKS_FOR_EN = lazy(
    r"\b(what|what's|whats|who|who's|whom|whose|which|when|when's|where|where's"
    r"|how (many|much|long|old|far|often|soon))\b",
    re.I,
)


def asks_for(question: str) -> bool:
    """Whether a question asks for a value (a name, a place, a time, a number: "what's her
    name?", "who's running it?", "how long?", "동생 이름이 뭐였지?", "얼마나 가 있어요?"), so that
    the answer fills its gap, rather than for yes or no ("is that manageable?", "정했대?")."""
    if _ASKS_FOR_EN.search(question):
        return True
    return any(_asking(re.sub(r"[^\w]", "", w)) for w in question.split() if has_hangul(w))


def _stems(word: str, last: bool) -> set[str]:
    """The verb stems a word in a question form may be (none for a word in no such form)."""
    out: set[str] = set()
    for ending in _ENDINGS:
        if len(word) > len(ending) and word.endswith(ending):
            stem = word[: -len(ending)]
            out.add(stem)
            head = _split(stem[-1])
            if head and not head[2] and ending[0] in "니냐나는":  # 사니: 살 with ㄹ dropped
                out.add(stem[:-1] + _with_final(stem[-1], _L))
            if head and head[2] == _L and ending[0] in "어아었았":  # 들어: 듣 (ㄷ irregular)
                out.add(stem[:-1] + _with_final(stem[-1], _T))
            break
    if len(word) >= 2 and word[-1] in _GLUED:  # 살까 / 갈래 / 할지: ㄹ on the syllable before
        before = _split(word[-2])
        if before and before[2] == _GLUED[word[-1]]:
            out.add(word[:-2] + _with_final(word[-2], _NONE))
            out.add(word[:-2] + word[-2])  # 살까 may be 살다's too
    if last:
        out |= _uncontracted(word)
    return {s for s in out if s and is_hangul(s)}


def _uncontracted(word: str) -> set[str]:
    """Stems of a predicate whose 아/어 fused with the stem's vowel (마셔, 배워, 봐, 해, 써; with
    ㅆ the past: 마셨어, 했지), read at each of the word's last three syllables."""
    out: set[str] = set()
    for i in range(len(word) - 1, max(-1, len(word) - 4), -1):
        parts = _split(word[i])
        if parts is None:
            break
        after = word[i + 1 :]
        initial, vowel, final = parts
        if (final == _NONE and after in _AFTER_CONTRACTED) or (final == _SS and after in _PAST_AFTER):
            if word[i] in "해했":
                out.add(word[:i] + "하")
            out.update(word[:i] + _join(initial, v, _NONE) for v in _UNCONTRACT.get(vowel, ()))
    return out


def _forms(stem: str) -> list[str]:
    """The written forms of a verb stem: the dictionary form, the plain present (산다, 먹는다),
    the connective (살고), the formal present (삽니다, 먹습니다) and the past (살았다, 마셨다);
    and the forms a memory holds inside a longer sentence: the negation (다니지 않는다), the
    attributive (다니는 회사, 다닌, 다니던), the connective of two facts (다니며, 다니면서,
    먹으며) and the past connective (다녔고, 살았고)."""
    parts = _split(stem[-1])
    if parts is None:
        return []
    initial, vowel, final = parts
    body, last = stem[:-1], stem[-1]
    out = [stem + "다", stem + "고", stem + "는", stem + "지", stem + "던"]
    if final in (_NONE, _L):  # 마시 → 마신다, 마십니다, 마시며, 마신; 살 → 산다, 삽니다, 사는, 살며
        out += [body + _join(initial, vowel, _N) + "다", body + _join(initial, vowel, _B) + "니다"]
        out += [stem + "며", stem + "면서"]
        if body:  # 다닌, 마신; not 산, 한, 간: one syllable is as often a noun (mountain, one)
            out.append(body + _join(initial, vowel, _N))
        if final == _L:
            out.append(body + _join(initial, vowel, _NONE) + "는")
    else:  # 먹 → 먹는다, 먹습니다, 먹은, 먹으며
        out += [stem + "는다", stem + "습니다", stem + "은", stem + "으며", stem + "으면서"]
    if final == _NONE:
        past = [body + _join(initial, v, _SS) for v in _contracted(last, vowel)]
    else:
        past = [stem + ("았" if vowel in _BRIGHT else "었")]
    out += [p + ending for p in past for ending in ("다", "고")]
    return out


# The honorific -(으)시- (사셔 = 살 + 시 + 어, 다니셔, 읽으셔): a question about an elder asks in it
# while the memory may be written plainly ("엄마는 전주에 산다"). A ㄹ stem drops its ㄹ before 시
# (사시 is 살's). Not the other way: a plain question ("서준이 어디 사니?") is about a peer, and
# reading it into "서준의 어머니는 대구에 사신다" put the mother first (colloquial Korean dev).
def _plain_stems(stems: set[str]) -> set[str]:
    """The plain stems under an honorific one (사시 → 사, 살; 다니시 → 다니; 읽으시 → 읽)."""
    out: set[str] = set()
    for stem in stems:
        if len(stem) < 2 or stem[-1] != "시":
            continue
        body = stem[:-2] if stem[-2] == "으" else stem[:-1]  # 읽으시 → 읽; 사시 → 사
        if not body:
            continue
        out.add(body)
        parts = _split(body[-1])
        if parts and parts[2] == _NONE:  # 사시: 살다's too
            out.add(body[:-1] + _with_final(body[-1], _L))
    return out


def _plain_forms(stem: str) -> list[str]:
    """The forms of a plain stem found under an honorific one that stand for the predicate alone
    (산다, 삽니다, 사는, 살았다): not 살고 or 살지, whose shapes are as often other words (마시 →
    마, 말: "커피 말고")."""
    return [f for f in _forms(stem)[1:] if f.endswith(("다", "는"))]


def _contracted(syllable: str, vowel: int) -> tuple[int, ...]:
    """The vowel of a vowel stem's last syllable fused with 았/었 (마시 → 마셨, 배우 → 배웠)."""
    if syllable == "하":
        return (_AE,)
    return {_I: (_YEO,), _U: (_WO,), _O: (_WA,), _EU: (_EO,), _OE: (_WAE,)}.get(vowel, (vowel,))


@dataclass
class Question:
    query: str
    past: bool = False
    asking: frozenset[str] = frozenset()
    forms: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a predicate's term → its written forms
    stems: dict[str, str] = field(default_factory=dict)  # a predicate's stem term → the word's term

    @classmethod
    def of(cls, query: str) -> Question:
        found = words(query)
        past = asks_past(query)
        asking = frozenset(t for w in found if _asking(w) or (past and _says_past(w)) for t in terms(w))
        forms: dict[str, tuple[str, ...]] = {}
        stems: dict[str, str] = {}
        for n, word in enumerate(found):
            if not is_hangul(word) or _asking(word):
                continue
            own = terms(word)
            stems_of = _stems(word, n == len(found) - 1)
            written = [t for stem in sorted(stems_of) for f in _forms(stem) for t in terms(f)]
            written += [  # the whole written form only: a one-syllable stem (사, 마) is no evidence
                terms(f)[0] for stem in sorted(_plain_stems(stems_of)) for f in _plain_forms(stem) if terms(f)
            ]
            extra = tuple(dict.fromkeys(t for t in written if t not in own))
            if own and extra:
                forms[own[0]] = extra
                stems.update((t, own[0]) for t in own[1:] if t != own[0])
        return cls(query, past, asking, forms, stems)

    def groups(self, query_terms: list[str]) -> dict[str, tuple[str, ...]]:
        """Each keyword term of the query with the terms that count as it: itself first, then
        for a predicate in a question form its written forms (`search._predicates` keeps those
        the store holds and counts the word's stem within it)."""
        return {t: (t, *self.forms.get(t, ())) for t in query_terms}


# -- does a question need memory at all? (the seed's first step of recall) ---------------------
# Personal: the asker's or the user's own things, people, plans, preferences and past events.
# Any of these means search, whatever else the question looks like.
_MEMORY_CUE = lazy(
    r"\b(remember|remind|recall|last time|previous(ly)?|earlier|again|my|mine|our|ours|us|the user'?s?|"
    r"(?<!give )(?<!tell )(?<!show )me|did (i|we|you)|have (i|we)|had (i|we)|was i|were we|am i|are we|"
    r"do (i|we) (usually|prefer|like|use|want|need|have)|we (decided|agreed|said|picked|chose|use|used|"
    r"fixed|went|talked)|"
    r"i (said|told|mentioned|asked|picked|chose|prefer|like|usually|wanted)|still|yesterday|last (week|"
    r"month|year|night))\b|"
    r"기억|지난|저번|예전|전에|어제|그때|그날|우리|저희|(?<![가-힣])(내|제|나|저)(?=\s|가\b|를\b|는\b|한테|"
    r"$)|나의|저의|"
    r"했었|했던|하던|쓰던|갔던|였지|였더라|더라\??$|뭐였|하기로|정했|결정|약속|말했|말한|알려준|추천해 준|"
    r"사용자|아직",
    re.I,
)
_TASK = lazy(
    r"^(please\s+)?(fix|write|implement|run|refactor|add|create|translate|summari[sz]e|rename|delete|format|"
    r"test|build|deploy|"
    r"convert|generate|draft|review)\b|(고쳐|작성해|만들어|구현해|실행해|번역해|요약해|정리해|바꿔|지워|"
    r"테스트해)\s*(줘|주세요|줄래)?[.!?]*$",
    re.I,
)
# Not about anyone's memory: general knowledge, how-to, weather, news, math, recommendations.
_GENERAL = lazy(
    r"^how (do|does|can|could|should|would|to|many|much|tall|far|long|big|old is the)\b|"
    r"^(what|who|which|where|when|why)('s| is| are| was| were| does| did) (a|an)\b|^why\b|^what year\b|"
    r"^explain\b|"
    r"^who (wrote|invented|discovered|won|painted|founded|directed|composed|built)\b|"
    r"capital of|how many .* in a |what does .* mean|\bmean\??$|\bdefin(e|ition)\b|meaning of|formula|"
    r"\b(boiling point|speed of|square root|population of|symptoms?|recipe|difference between|"
    r"time difference|"
    r"price of|theory of|weather|forecast|rain|snow|temperature|news|headlines?|stock price)\b|"
    r"\b(a good|recommend|suggest)\b|\d+\s*([-+*/×÷x]|times|plus|minus|divided by)\s*\d+|"
    r"수도|뜻이|뜻\b|의미|정의|공식|란 무엇|이란\??$|날씨|기온|비 ?와|눈 ?와|미세먼지|일기예보|뉴스|가격|"
    r"시세|"
    r"하는 ?법|방법|어떻게 (해|하|동작|작동|일어|만들|설치)|누가 썼|우승|높이|끓는점|속도|제곱근|곱하기|"
    r"더하기|빼기|나누기|"
    r"킬로미터|몇 도|며칠이야|시차|증상|차이|레시피|이론|언제 (끝났|시작됐|일어났|만들어졌)|(?<![가-힣])왜 |"
    r"추천해 ?줘|지어 ?줘|써 ?줘",
    re.I,
)


def needs_memory(query: str) -> tuple[bool, str]:
    """The seed's first step: does this query need memory at all? (needed, why). A personal
    cue (my/our/the user's, remember, last time, 지난번, 우리, 내, 기억) always searches; a task,
    general knowledge, how-to, weather, news or math skips; anything else searches, because a
    wasted search costs less than a forgotten memory (docs/search.md, "When recall searches")."""
    q = query.strip()
    if judgement.is_greeting(q):  # the one greeting list (giok.write.judgement)
        return False, "greeting or small talk"
    if _MEMORY_CUE.search(q):
        return True, "a personal question (the user's or our own things, people, plans or past)"
    if _TASK.search(q):
        return False, "an instruction about the current task"
    if _GENERAL.search(q):
        return False, "a general-knowledge, how-to, weather, news or math question"
    if not query_terms(q):
        return False, "no words to look up"
    return True, "may concern something remembered (when unsure, search)"
