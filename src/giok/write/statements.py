"""What a sentence says, by rule, in English and Korean: its memory type (`classify`), its
subject, predicate and objects (`subject` → `Statement`), whether it announces a change
(`changes`), gives the slot another sentence fills a new value (`contradicts`), says another
again with one value swapped (`swapped`) or denies what another says (`opposed`, over
`claim`). Pure functions of the text.

The write policy (giok.write.policy) decides with them; the judgement model
(giok.write.judgement) reads them for its rules fallback and as its pair head's evidence.
"""

from __future__ import annotations

import difflib
import functools
import re
from typing import NamedTuple

from giok.text import analysis, likeness
from giok.text import terms as tokenize
from giok.text.lazy import lazy

# -- the memory type ---------------------------------------------------------------------------
# The one list of type keywords: `classify` for remember and judges.guess_type for distilled
# diary items. First match wins, in this order.
_TYPE_RULES = (
    (
        "decision",
        lazy(
            r"\b(decided|decides|decision|we chose|chose to|agreed to|settled on|going with|will use)\b|"
            r"결정|합의|하기로|정했",
            re.I,
        ),
    ),
    (
        "lesson",
        lazy(
            r"\b(lessons?|learned|learnt|never again|always (check|use|run)|next time|should have|"
            r"mistakes?|mistake was|root cause|post-?mortem|pattern:)|교훈|배운|배웠|다음부터|다음엔|실수",
            re.I,
        ),
    ),
    (
        "preference",
        lazy(
            r"\b(prefers?|preferred|likes?|loves?|hates?|dislikes?|wants?|favou?rite|"
            r"would rather|enjoys?)\b|선호|좋아|싫어|원한다|원함|즐겨",
            re.I,
        ),
    ),
    (
        "workflow",
        lazy(
            r"\b(pending|in progress|waiting (for|on)|blocked|next step|todo|to do|wip|"
            r"half[- ]done|unfinished|resume|awaiting)\b|진행 ?중|대기|다음 단계|미완|보류|재개",
            re.I,
        ),
    ),
    (
        "episode",
        lazy(
            r"\b(yesterday|today|this morning|last (week|night|month)|finished|completed|"
            r"shipped|released|launched|started|founded|joined|married|graduated|met|happened|did|"
            r"failed|broke|crashed)\b|어제|오늘|완료|했다|끝냈|출시|런칭|창업|합류|시작했|실패했|깨졌",
            re.I,
        ),
    ),
)


def classify(text: str) -> str:
    """The memory type a text most likely is (fact when nothing more specific fits)."""
    for name, pattern in _TYPE_RULES:
        if pattern.search(text):
            return name
    return "fact"


# -- statements: subject, predicate, polarity ------------------------------------------------
# A statement is read as subject + predicate + objects, with a polarity. The same rules hold in
# English and Korean (docs/policy.md, "Changes and contradictions in Korean"):
#   supersede      same subject, same predicate family and a change word in the new statement
#                  ("now", "no longer", "이제", "요즘", "더 이상"); a switch or a move ("switched to",
#                  "moved to", "바꿨다", "옮겼다", "이사했다") of the same subject; the same subject and
#                  object with the opposite leaning (likes / dislikes, 좋아한다 / 좋아하지 않는다); or
#                  the same claim negated together with a change word
#   contradiction  the same claim with the opposite polarity and no change word: both are kept,
#                  the nightly review flags them (`opposed`)
_KO_SWITCH = "바꿨|바꿈|바꾸었|바꿔|변경"  # switched (to)
_KO_VALUE_CHANGE = "늘었|늘어났|줄었|줄어들|올랐|올렸|내렸|내려갔|바뀌었|바뀜"  # went up / down, changed
CHANGE_WORDS = lazy(
    r"\b(now|currently|actually|instead|anymore|these days|no longer|from now on|"
    r"switched|changed|moved|increased|decreased|raised|lowered|went up|went down|rose|dropped)\b|"
    rf"이제|요즘|지금은|현재는|더 이상|앞으로는|대신|{_KO_SWITCH}|옮겼|옮김|이사했|이사함|{_KO_VALUE_CHANGE}",
    re.I,
)
_PREDICATES = (
    (
        "prefer",
        lazy(
            r"\b(prefers?|preferred|would rather|likes?|loves?|enjoys?|favou?rite)\b|선호|좋아|즐기|즐긴",
            re.I,
        ),
    ),
    ("dislike", lazy(r"\b(hates?|dislikes?|can'?t stand)\b|싫어|싫다", re.I)),
    ("want", lazy(r"\b(wants?)\b|원한다|원함|원해", re.I)),
    ("switch", lazy(rf"\b(switched|changed|migrated) (over )?to\b|{_KO_SWITCH}", re.I)),
    ("move", lazy(r"\b(moved|relocated) to\b|이사|옮겼|옮김|이전했", re.I)),
    (
        "live",
        lazy(r"\b(lives? in|based in|located in|is in|are in)\b|산다|살고|살아|거주|에 있다|에 있음", re.I),
    ),
    (
        "use",
        lazy(
            r"\b(uses?|using|runs? on|deploys? to|works? (at|for))\b|사용|쓴다|쓰고|쓰지|쓴|돌린다|돌려|"
            r"일한다|일해|다닌다|근무",
            re.I,
        ),
    ),
    (
        "call",
        lazy(r"\b(call(s|ed)? (him|her|them|me)|address(es|ed)? as|goes by)\b|호칭|부른다|불러", re.I),
    ),
    (
        "change",
        lazy(
            r"\b(increased|decreased|raised|lowered|went (up|down)|rose|dropped|fell|cut|moved)"
            rf"( back)? to\b|{_KO_VALUE_CHANGE}",
            re.I,
        ),
    ),
    ("be", lazy(r"\b(is|are)\b|[가-힣]다$|입니다$|이에요$|예요$", re.I)),
)
# What a switch or a move replaces besides its own kind; the polarity of a leaning.
SUPERSEDES = {"switch": {"use", "be", "prefer"}, "move": {"live", "use"}, "change": {"be", "use"}}
_LEANING = {"prefer": 1, "want": 1, "dislike": -1}
VALUE_PREDICATES = {"use", "switch", "move", "live", "be", "change"}
_KO_TOPIC = lazy(r"..*(은|는|이|가|께서)$")
_KO_OBJECT = lazy(r"..*(을|를)$")
_KO_SELF = {"나", "저", "내", "제", "우리", "저희"}
_KO_LOCATIVE = lazy(r"..*(에서|에선)$")
# What a preference is about: two preferences of different aspects are two facts ("I prefer short
# answers" / "I prefer Korean from now on"); a preference of no known aspect may replace another.
_PREFERENCE_ASPECTS = (
    (
        "language",
        lazy(
            r"\b(korean|english|japanese|chinese|french|german|spanish)\b|한국어|영어|일본어|중국어|한글",
            re.I,
        ),
    ),
    (
        "length",
        lazy(r"\b(short|long|brief|concise|detailed|verbose|terse|lengthy)\b|짧|길게|간결|자세", re.I),
    ),
    ("format", lazy(r"\b(bullets?|markdown|tables?|lists?|prose|json)\b|표로|목록|마크다운", re.I)),
    ("tone", lazy(r"\b(formal|casual|polite|friendly)\b|존댓말|반말|격식", re.I)),
)
_STOP = {
    "the",
    "a",
    "an",
    "my",
    "our",
    "his",
    "her",
    "their",
    "now",
    "currently",
    "actually",
    "still",
    "also",
    "really",
    "very",
    "no",
    "longer",
    "instead",
    "these",
    "days",
    "이제",
    "요즘",
    "지금은",
    "현재는",
    "not",
    "never",
    "don",
    "doesn",
    "didn",
    "t",
    "더",
    "이상",
    "앞으로는",
    "대신",
    "가장",
    "안",
    "못",
    "절대",  # "never" / "absolutely", as "never" above: an intensifier of the polarity, not a claim word
    "전혀",
    "결코",
}


class Statement(NamedTuple):
    who: str  # the subject ("seojun", "deploy day", "배포 요일"; "" for the speaker in Korean)
    predicate: str  # prefer, dislike, want, switch, move, live, use, call, be
    objects: frozenset  # the other words of the statement
    purpose: frozenset = frozenset()  # "for X" words: "use Redis for caching"
    where: frozenset = frozenset()  # Korean locatives: "회사에서 맥북을 쓴다" → {회사}


@functools.lru_cache(maxsize=1 << 15)
def subject(text: str) -> Statement | None:
    """(who or what, predicate, object words) of a statement like "Seojun prefers tea" or
    "서준은 차를 좋아한다"; None when no predicate is found or nothing names the subject."""
    for name, pattern in _PREDICATES:
        m = pattern.search(text)
        if not m:
            continue
        found = _subject_ko(text, m, name) if analysis.language(text) == "ko" else _subject_en(text, m, name)
        if found:
            return found
    return None


def _subject_en(text: str, m: re.Match, name: str) -> Statement | None:
    head = [w for w in analysis.key_words(text[: m.start()].casefold()) if w not in _STOP]
    if not head:
        return None
    after = [w for w in analysis.key_words(text[m.end() :].casefold()) if w not in _STOP]
    purpose = after[after.index("for") + 1 :] if "for" in after else []
    return Statement(" ".join(head[-3:]), name, frozenset(after), frozenset(purpose) - {"the", "a", "an"})


def _subject_ko(text: str, m: re.Match, name: str) -> Statement | None:
    head = [w for w in analysis.key_words(text[: m.start()].casefold()) if w not in _STOP]
    marker = (
        _KO_OBJECT if name in ("switch", "move") and any(_KO_OBJECT.match(w) for w in head) else _KO_TOPIC
    )
    cut = next((i + 1 for i, w in enumerate(head) if marker.match(w)), 0)
    who = " ".join(analysis.stem_ko(w) for w in head[:cut])
    who = "" if who in _KO_SELF else who
    if name == "be" and not who:
        return None
    rest = head[cut:]
    where = frozenset(analysis.stem_ko(w) for w in rest if _KO_LOCATIVE.match(w))
    return Statement(who, name, frozenset(analysis.stem_ko(w) for w in rest), where=where)


def same_subject(a: Statement, b: Statement) -> bool:
    """The same subject, or (for values and places) one statement names the other's subject among
    its words: "채팅에 더 이상 슬랙을 쓰지 않는다" is about "채팅은 슬랙을 쓴다"."""
    if a.who == b.who:
        return True
    if a.predicate not in VALUE_PREDICATES or b.predicate not in VALUE_PREDICATES:
        return False
    for x, y in ((a, b), (b, a)):
        named = set(y.who.split())
        if (
            named
            and (not x.who or x.predicate in SUPERSEDES)
            and named <= set(x.objects) | set(x.who.split())
            and not _relative(x.who, named)
        ):
            return True
    return False


def _relative(who: str, named: set[str]) -> bool:
    """Does `who` name a relative of `named` ("priya s sister", "하윤 언니"): a word after the
    name that names a person (`giok.write.persons`)?"""
    from giok.write import persons

    words = who.split()
    at = max((i for i, w in enumerate(words) if w in named), default=None)
    return at is not None and any(persons.is_person(w) for w in words[at + 1 :] if w not in named)


def changes(text: str) -> bool:
    """Does the text say something changed ("now", "no longer", "switched", "이제", "대신")?"""
    return bool(CHANGE_WORDS.search(text))


def contradicts(new: str, old: str) -> bool:
    """Does `new` replace `old`: same subject and predicate family with a change word ("now",
    "이제", "no longer"), a switch or move of the same subject, or the same subject and object
    with the opposite leaning?"""
    a, b = subject(new), subject(old)
    if not a or not b or not same_subject(a, b):
        return False
    if (a.purpose or b.purpose) and not a.purpose & b.purpose:
        return False  # "use Postgres for the database" / "now use Redis for caching"
    if a.where and b.where and not a.where & b.where:
        return False  # "회사에서 맥북을 쓴다" / "이제 집에서 윈도우를 쓴다": two places, two facts
    if a.predicate in _LEANING and b.predicate in _LEANING and _aspects(new) != _aspects(old):
        return False  # "I prefer short answers" / "I prefer Korean from now on"
    kin = a.predicate == b.predicate or b.predicate in SUPERSEDES.get(a.predicate, ())
    if {a.predicate, b.predicate} <= {"be", "change", "move"} and _value_update(a, b, new, old):
        return True  # "budget went up to 60 h" / "budget is 40 h"; "is 80 h" after it
    if kin and CHANGE_WORDS.search(new):
        if a.predicate in ("move", "change") and _value_kind(a) != _value_kind(b):
            return False  # the meeting moved to 9시 is no move of house
        return a.predicate != "be" or _same_kind_of_value(a, b)
    lean_a = _LEANING.get(a.predicate, 0) * (-1 if claim(new)[1] else 1)
    lean_b = _LEANING.get(b.predicate, 0) * (-1 if claim(old)[1] else 1)
    return lean_a * lean_b < 0 and bool(a.objects & b.objects)


def _aspects(text: str) -> frozenset[str]:
    """What a preference is about (language, length, format, tone), as far as the words say."""
    return frozenset(name for name, pattern in _PREFERENCE_ASPECTS if pattern.search(text))


_VALUE_KINDS = (
    ("weekday", lazy(r"\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|[월화수목금토일]요일")),
    ("time", lazy(r"\b\d{1,2}(\s\d{2})?\s?(am|pm)\b|\d+시|오전|오후|\b\d{1,2} \d{2}\b")),
    (
        "month",
        lazy(
            r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\b|\d+월"
        ),
    ),
    ("number", lazy(r"\d")),
)


_LINKS = {"at", "to", "on", "in", "by", "back"}


def _kind_of(text: str) -> str | None:
    """The first kind of value (weekday, time, month, number) the text holds, or None."""
    return next((k for k, rx in _VALUE_KINDS if rx.search(text)), None)


def _value_kind(x: Statement) -> str | None:
    """The kind of value among a statement's words (weekday, time, month, number), or None."""
    return next((k for k, rx in _VALUE_KINDS if any(rx.search(w) for w in x.objects)), None)


def _value_update(a: Statement, b: Statement, new: str, old: str) -> bool:
    """A new value of the same attribute: the same subject (checked by the caller), a value of the
    same kind (weekday, time, month, number) that differs, the same other words ("every weekday",
    "한 달에"), neither negated. "Standup moved to 09:30 every weekday" replaces "Standup is at
    10:00 every weekday"; "연구실 GPU 예산은 한 달에 80시간이다" replaces "…60시간으로 늘었다"."""
    if claim(new)[1] or claim(old)[1]:
        return False
    parts = []
    for x in (a, b):
        slots: dict[str, set] = {}
        rest = set(x.who.split())  # "서준은 아침 회의를" = "서준은 … 아침 회의"
        for w in x.objects:
            kind = _kind_of(w)
            if kind:
                slots.setdefault(kind, set()).add(re.sub(r"(?<=[a-z])s$", "", w))  # Mondays = Monday
            else:
                rest.add(w)
        parts.append((slots, rest - _LINKS))
    (slots_a, rest_a), (slots_b, rest_b) = parts
    if not slots_a or slots_a.keys() != slots_b.keys() or rest_a != rest_b:
        return False
    return sum(slots_a[k] != slots_b[k] for k in slots_a) == 1  # one value changed, not two


def _same_kind_of_value(a: Statement, b: Statement) -> bool:
    """ "X is Y" → "X is now Z" replaces only a value of the same kind (a weekday, a time, a month,
    a number), or, with no kind on either side, an attribute named in several words ("deploy day",
    "favourite food"): "Seojun is busy these days" does not replace "Seojun is a developer"."""
    if len(a.objects) > 3 or len(b.objects) > 3:
        return False
    kind_a, kind_b = _kind_of(" ".join(sorted(a.objects))), _kind_of(" ".join(sorted(b.objects)))
    if kind_a or kind_b:
        return kind_a == kind_b
    return len(a.who.split()) >= 2


_KO_ENDINGS = ("는다", "다", "지는", "지", "함", "해", "할")  # only on words tokenize.stem_ko left alone
_LIGHT_VERBS = {"하", "되", "이", "있", "수"}


@functools.lru_cache(maxsize=1 << 15)
def claim(text: str) -> tuple[frozenset, bool]:
    """(the words of the positive claim, negated?): "배포는 금요일에 하지 않는다" and "Deploys do not
    happen on Friday" become the words of "배포는 금요일에 한다" / "Deploys happen on Friday", True.
    Korean words are compared by stem (particles and endings off, last final consonant dropped:
    한다 / 하지 → 하, 돈다 / 돌지 → 도); English words by tokenize's stemmer; change words drop."""
    body, negated = analysis.positive(text)
    body = CHANGE_WORDS.sub(" ", body)
    out = set()
    for word in analysis.key_words(body):
        if word in _STOP:
            continue
        if re.match(r"[가-힣]", word):
            stem = _ko_claim_word(word)
            if stem not in _LIGHT_VERBS:
                out.add(stem)
        else:
            out.update(tokenize.terms(word))
    return frozenset(out), negated


def _ko_claim_word(word: str) -> str:
    stem = analysis.stem_ko(word)
    for ending in _KO_ENDINGS if stem == word else ():
        if stem.endswith(ending) and len(stem) > len(ending):
            stem = stem[: -len(ending)]
            break
    if len(stem) > 1 and stem.endswith("하"):
        stem = stem[:-1]
    last = ord(stem[-1]) - 0xAC00
    if 0 <= last < 11172 and last % 28:
        stem = stem[:-1] + chr(0xAC00 + last - last % 28)  # the final consonant off: 한 → 하, 돌 → 도
    return stem


def opposed(a: str, b: str) -> bool:
    """The same claim with the opposite polarity ("runs on Fridays" / "does not run on Fridays",
    "GPU가 있다" / "GPU가 없다"): a contradiction to flag, unless the newer one says it changed."""
    (wa, na), (wb, nb) = claim(a), claim(b)
    return na != nb and bool(wa) and bool(wb) and likeness.counterparts(set(wa), set(wb))


# -- the old value a change names ----------------------------------------------------------------
# "switched from oat flat whites to matcha", "9시 30분에서 8시 30분으로 당겨졌다", "보리차 대신
# 루이보스차", "필라테스를 그만두고", "no longer works at Harrow & Finch", "더 이상 넥스트플레이에
# 다니지 않는다": the words of the value the change leaves (`old_value`). An entry that holds none
# of them is not the one this change replaces ("차를 아반떼에서 테슬라로 바꿨다" leaves a car
# called 아반떼, not a tea).
_KO_MOVED = rf"{_KO_SWITCH}|바꾸|바뀌|바뀐|옮기|옮겼|옮김|이사|당겨|당겼|미뤄|미뤘|갈아"
_OLD_VALUE = (
    lazy(r"\bfrom\s+(?P<x>[^,.;!?]+?)\s+to\b", re.I),
    lazy(r"\b(?:instead of|rather than)\s+(?P<x>[^,.;!?]+)", re.I),
    lazy(r"\breplaced\s+(?:(?:his|her|their|my|our|the)\s+)?(?P<x>[^,.;!?]+?)\s+with\b", re.I),
    lazy(r"\bno longer\s+\w+\s+(?:at|for|with|in|on)\s+(?P<x>[^,.;!?]+)", re.I),
    lazy(r"(?P<x>\S+)\s*대신"),
    lazy(r"(?P<x>\S+?)(?:을|를)\s+그만두고"),
    lazy(r"더 이상\s+(?P<x>\S+?)(?:에서|에|을|를|이|가|은|는)?\s"),
    lazy(r"(?P<x>\S+?)\s*말고\s"),
    lazy(rf"(?P<x>(?:\S+\s)?\S+?)에서\s+\S+(?:\s\S+){{0,2}}?(?:으로|로)\s*(?:\S+\s)?(?:{_KO_MOVED})"),
)


def old_value(text: str) -> frozenset[str]:
    """The content words of the value a change says it leaves (empty when it names none)."""
    words: set[str] = set()
    for pattern in _OLD_VALUE:
        for m in pattern.finditer(text):
            words |= analysis.content_words(m.group("x"))
            # a Korean noun as written too: its stem can take a syllable for a particle (요가 → 요)
            words |= {w for w in analysis.words(m.group("x")) if analysis.is_hangul(w) and len(w) >= 2}
    return frozenset(words)


def holds_old_value(entry: str, old: frozenset[str]) -> bool:
    """Whether an entry holds one of the words `old_value` found (a word or its start: 아반떼 in
    아반떼다, white in whites)."""
    have = analysis.content_words(entry)
    return any(
        h == w or (min(len(h), len(w)) >= 2 and (h.startswith(w) or w.startswith(h)))
        for h in have
        for w in old
    )


# -- one frame, another value --------------------------------------------------------------------
# "Mina's favourite band is Oasis" / "Mina's favourite band is Blur", "출시일 금요일" / "출시일
# 월요일", "서준이 혈액형 A형" / "서준이 혈액형 O형": the same words around one other run of at
# most two words. The shared words are the frame (who, and which attribute of theirs); the run is
# the value. The alignment reads any sentence of either language the same way and needs no list
# of attributes; whether the frame names one lasting attribute is the attribute head's to say
# (giok.write.judgement.swap).
_SPAN = 2  # words of the value, at most, on either side
_SELF = frozenset({"i", "my", "me", "we", "our", "us", *_KO_SELF})  # the speaker, either language
_ADDING = lazy(r"\b(also|too|as well|another|additionally)\b", re.I)
_KO_ALSO = ("도", "까지")  # 녹차도, 일본어까지: a particle of addition on a value
# One may like many things: "Seojun likes jazz" / "Seojun likes tea" are two likings, where
# "Mina's favourite band is Oasis" / "… is Blur" and "제일 좋아하는 가수는 …" hold one value.
_LIKING = lazy(r"\b(likes?|loves?|enjoys?)\b|좋아|즐기|즐긴", re.I)
_ONE_OF_ALL = lazy(r"\b(favou?rite|best|most)\b|제일|가장|최애", re.I)


class Swap(NamedTuple):
    old: str  # the value `old` holds ("Oasis")
    new: str  # the value `new` puts in its place ("Blur")


def swapped(new: str, old: str) -> Swap | None:
    """The values when `new` says `old` again with one value swapped, else None.

    Beside the swapped run (its edges' function words and words of a change set aside: "Priya
    now"), `new` may add trailing words ("… now to beat the crowds") and either text a change
    word or a function word anywhere. A shared word must come before the run (the subject:
    "The iOS release is Friday" / "The Android release is Friday" are two subjects), the
    frame must be at least half of each text, and the run must not be one word said another
    way (좋아한다 / 좋아해), a word of a change ("changed" / "renamed"), nor an addition ("Mina
    also likes tea", "녹차도")."""
    a, b = _tokens(old), _tokens(new)
    lead = _lead(old)
    if lead is None or lead[1] != _lead_stem(new):
        return None  # another subject, or none (the first word of substance comes before the run)
    if 2 * min(len(a), len(b)) < max(len(a), len(b)):
        return None  # the frame cannot be half of each text: no alignment needed to say so
    if 2 * sum(map(_stem_set(new).__contains__, _stems(old))) < max(len(a), len(b)):
        return None  # the words they share (at least the frame) are too few
    if _ADDING.search(new):
        return None
    if _LIKING.search(new) and not _ONE_OF_ALL.search(new):
        return None
    matcher = difflib.SequenceMatcher(None, [s for _, s in a], [s for _, s in b], autojunk=False)
    ops = matcher.get_opcodes()
    runs = [op for op in ops if op[0] == "replace"]
    if len(runs) != 1:
        return None
    _, i1, i2, j1, j2 = runs[0]
    if i2 - i1 > _SPAN or j2 - j1 > _SPAN:
        return None
    shared = [a[i][1] for tag, x1, x2, _, _ in ops if tag == "equal" for i in range(x1, x2)]
    if 2 * len(shared) < max(len(a), len(b)):
        return None
    if lead[0] >= i1:
        return None  # nothing of the frame before the run: the run is the subject
    last_shared = max((x2 for tag, _, x2, _, _ in ops if tag == "equal"), default=0)
    for tag, x1, x2, y1, y2 in ops:
        if tag in ("insert", "delete") and not (tag == "insert" and x1 >= last_shared):
            extra = [w for w, _ in (b[y1:y2] if tag == "insert" else a[x1:x2])]
            if not all(w in analysis.STOP_WORDS or CHANGE_WORDS.search(w) for w in extra):
                return None
    was, now = _core(a[i1:i2]), _core(b[j1:j2])
    if any(w != s and w.endswith(_KO_ALSO) for w, s in now):
        return None
    if len(was) == len(now) == 1 and _one_word(*was[0], *now[0]):
        return None
    if any(CHANGE_WORDS.search(w) for w, _ in was + now):
        return None  # "changed" / "renamed the default branch to main": one change said two ways
    return Swap(" ".join(w for w, _ in was), " ".join(w for w, _ in now))


def _core(run: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The run without the function words and words of a change at its edges ("Priya now")."""

    def aside(word: str) -> bool:
        return word in analysis.STOP_WORDS or bool(CHANGE_WORDS.search(word))

    while len(run) > 1 and aside(run[-1][0]):
        run = run[:-1]
    while len(run) > 1 and aside(run[0][0]):
        run = run[1:]
    return run


@functools.lru_cache(maxsize=1 << 13)
def _tokens(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((w, analysis.stem(w)) for w in analysis.words(text))


_LABELLED = lazy(r"^\s*\w+:\s")  # "constraint: …", "decision: …": the flush's labels, not a subject


@functools.lru_cache(maxsize=1 << 13)
def _lead(text: str) -> tuple[int, str] | None:
    """The place and stem of the text's first word of substance: not a label ("constraint:"), a
    function word (but "I", "my", 나 …) nor a word of a change."""
    skip = 1 if _LABELLED.match(text) else 0
    for n, (word, stem) in enumerate(_tokens(text)):
        if n < skip:
            continue
        if (stem in _SELF or stem not in analysis.STOP_WORDS) and not CHANGE_WORDS.search(word):
            return n, stem
    return None


def lead_key(text: str) -> str | None:
    """The text's first word of substance (`_lead`) as `same_lead` compares it (the speaker's
    words as one), or None. The relation after it (`relation`) is not part of the key: the
    policy index files entries by this key, the same in every judgement mode."""
    lead = _lead(text)
    return _speaker(lead[1]) if lead else None


def about_another(new: str, old: str, learned: bool = True) -> bool:
    """Is `new` about a relative of the subject it shares with `old` ("Priya's sister moved to
    Bristol" against "Priya lives in Leeds", "하윤 언니가 …" against "하윤은 대전에 산다"): it names a
    relation (`relation`) that `old` does not? "Grandpa's doctor is Dr. Patel" is a slot of
    Grandpa's, so "Grandpa isn't seeing Dr. Patel anymore" is not about another. `learned`: False
    reads relations by the shipped list alone (no model load: the search's use)."""
    found = relation(new, learned)
    return found is not None and found != relation(old, learned)


_POSSESSIVE_EN = lazy(r"(?:['’]s?|^(?:my|our|his|her|their|your))$", re.I)
_KO_OWNER = ("", "의", "네", "이네", "은", "는", "이", "가")  # 하윤, 하윤의, 하윤네, 하윤은 (언니가 …)
_KO_CARRIES = ("", "가", "이", "은", "는", "도", "께서", "께선", "의", "네")  # the noun is the subject


def _filled_by_name(text: str, noun: str) -> bool:
    """Is the person noun a role of the owner's, filled by the name after it ("Grandpa's doctor
    is Dr. Patel", "Priya's boss is now Tom"): a slot of the owner's, not news of another person
    ("Priya's sister is a nurse")?"""
    return bool(
        re.search(rf"(?i:\b{re.escape(noun)}\s+(?:is|was|are|has been|'s)\s+(?:now\s+|still\s+)?)[A-Z]", text)
    )


def relation(text: str, learned: bool = True) -> str | None:
    """The relation by which a text names the person it is about, after its lead: "Priya's
    sister Meera lives in Toronto" → sister, "my boss moved the meeting" → boss, "하윤 언니가 서울로
    이사했다" → 언니, "민지 친구 유나가 …" → 친구, "채원 전 남친이 …" and "서아 회사 동기도 …" → 남친,
    동기. The head of the noun phrase owned by the lead (English 's or a possessive pronoun; in
    Korean the bare name, or with 의, 네 or a topic or subject particle), one of the next two
    words, carrying the sentence (in Korean bare or with a subject or topic particle: not 하윤
    엄마랑, with mom), that names a person (`giok.write.persons`: "Priya's new flat", 하윤 회사가
    name things; `learned` False: by the shipped list alone). None otherwise."""
    from giok.write import persons

    for stem, word, english, last in _owned(text):
        if persons.is_person(stem, learned):
            return None if english and _filled_by_name(text, word) else stem
        if last:
            break
    return None


@functools.lru_cache(maxsize=1 << 13)
def _owned(text: str) -> tuple[tuple[str, str, bool, bool], ...]:
    """The words that may head the noun phrase the text's lead owns, in order: (stem, word,
    English, the phrase ends with it). Empty where the lead owns nothing."""
    lead = _lead(text)
    if lead is None:
        return ()
    tokens = _tokens(text)
    word, stem = tokens[lead[0]]
    korean = analysis.is_hangul(word)
    if korean and not (stem in _KO_SELF or (word.startswith(stem) and word[len(stem) :] in _KO_OWNER)):
        return ()
    if korean and len(word) == 1 and stem not in _KO_SELF:
        return ()  # a surname before a title is the person titled: 김 과장님, 이 선생님
    if not korean and not _POSSESSIVE_EN.search(word):
        return ()
    out = []
    for after, after_stem in tokens[lead[0] + 1 : lead[0] + 3]:
        if analysis.is_hangul(after) != korean:
            break
        ending = after[len(after_stem) :] if after.startswith(after_stem) else None
        if korean and ending not in _KO_CARRIES:
            break
        out.append((after_stem, after, not korean, bool(korean and ending)))  # 하윤 회사가 …: ends there
    return tuple(out)


def _lead_stem(text: str) -> str | None:
    lead = _lead(text)
    return lead[1] if lead else None


@functools.lru_cache(maxsize=1 << 13)
def _stems(text: str) -> tuple[str, ...]:
    return tuple(s for _, s in _tokens(text))


@functools.lru_cache(maxsize=1 << 13)
def _stem_set(text: str) -> frozenset[str]:
    return frozenset(_stems(text))


def _one_word(x: str, x_stem: str, y: str, y_stem: str) -> bool:
    """좋아한다 / 좋아해, 먹었음 / 먹었어: one Korean word in two endings (the first two syllables of
    the words or of their stems)."""
    if not (analysis.is_hangul(x) and analysis.is_hangul(y)):
        return False
    return any(min(len(p), len(q)) >= 2 and p[:2] == q[:2] for p, q in ((x, y), (x_stem, y_stem)))


def names_subject_of(new: str, old: str) -> bool:
    """Does `new` name what `old` is about: the first word of substance of `old` (`_lead`:
    "Seojun" of "Seojun works at Kakao", 서준 of "서준이는 카카오 다녀"; "I", "my", 나, 내 and
    우리 count as one, the speaker)? "The Seoul meetup moved to a bigger venue" does not name
    Seojun of "Seojun moved to Seoul"."""
    lead = _lead(old)
    if lead is None or about_another(new, old):
        return False  # "Jasmine's husband no longer works at …" names Jasmine, and is not about her
    return _speaker(lead[1]) in {_speaker(s) for _, s in _tokens(new)}


def same_lead(new: str, old: str) -> bool:
    """Do both texts start with the same word of substance (`_lead`; the speaker's words as one)?
    "지민이네 월세 120으로 올랐대" does not start where "월세 100만원" does: it is another's rent."""
    key = lead_key(new)
    return key is not None and key == lead_key(old) and not about_another(new, old)


_SPEAKER_LABEL = lazy(r"^\s*([A-Z][\w'’.-]*|[가-힣]{1,5}):\s")  # "Joanna: …", "서준: …"; not "constraint: …"
# the labels of a note, not a person speaking ("Note: you need to …", "TODO: call you back", "교훈: 나는 …")
_NOTE_LABEL_WORDS = (
    "note notes nb todo to-do bug fix lesson update updated re fwd fw til fyi ps p.s. reminder idea ideas"
    " tip question q answer a summary decision action correction noted sure warning error info issue"
    " task done next later agenda plan goal status result"
    " 메모 교훈 할일 참고 결정 요약 질문 답 답변 수정 알림 공지 정리 결론 계획 목표 상태 결과 주의"
)
_NOTE_LABELS = frozenset(_NOTE_LABEL_WORDS.split())


def said_by_others(new: str, old: str) -> bool:
    """Are both texts a turn of a conversation, said by two people ("Nate: Wow Joanna, that
    looks amazing!" / "Joanna: I can't have dairy")? Each speaks of themself unless a rule's
    frame says otherwise: the one addressed is not the one described."""
    a, b = speaker(new), speaker(old)
    return bool(a and b and a != b)


_ADDRESSED = frozenset({"you", "your", "yours", "너", "네", "니", "당신"})  # the one spoken to


def _led(text: str) -> re.Match | None:
    """The speaker's name leading a text, where a name does (a note's label is none)."""
    found = _SPEAKER_LABEL.match(text)
    return found if found and found.group(1).lower() not in _NOTE_LABELS else None


def speaker(text: str) -> str | None:
    """The name a text is led by as its speaker ("Joanna: …" → "Joanna"), or None; a note's
    label ("TODO: …", "Note: …", "교훈: …") is no speaker."""
    found = _led(text)
    return found.group(1) if found else None


def said(text: str) -> str:
    """What a text says after its speaker's name ("Joanna: I can't have dairy" → "I can't have
    dairy"); the whole text where no speaker leads it."""
    found = _led(text)
    return text[found.end() :] if found else text


def spoken(text: str) -> bool:
    """Is the text a turn of a conversation: led by its speaker's name, and speaking as "I" or
    to "you" ("Joanna: Thanks, Nate! Your support means a lot", "서준: 나 이사했어")? A note's
    label is no speaker ("Correction: Lucas is allergic to cashews, not walnuts")."""
    found = _led(text)
    return found is not None and any(
        stem in _SELF or stem in _ADDRESSED for _, stem in _tokens(text[found.end() :])
    )


def _speaker(stem: str) -> str:
    return "<the speaker>" if stem in _SELF else stem


def adds(text: str) -> bool:
    """Does the text add a value rather than replace one ("also", "too", "as well"; a Korean
    word with 도 or 까지: "고양이도 입양했대")?"""
    return bool(_ADDING.search(text)) or any(w != s and w.endswith(_KO_ALSO) for w, s in _tokens(text))
