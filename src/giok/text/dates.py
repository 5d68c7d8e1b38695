"""Dates said in passing ("next Monday", "다음 주 월요일", "Dec 10", "12월 3일", "on Tuesday"),
resolved against the day they were said into ISO dates, so a memory written today still means
the right day when it is read a month later.

    resolve("I am away next Monday", date(2026, 3, 5)) == "I am away next Monday (2026-03-09)"

What is resolved: a weekday (bare, or after this/next/last, 이번 주/다음 주/지난 주), tomorrow /
내일 / 모레, a month and day in either language, a month alone ("in March", "3월에", → YYYY-MM),
next/this week and month (→ the week's Monday, the month). A bare weekday is the next one, or
the last one when the sentence is in the past tense ("passed away on Tuesday"). A month and day
without a year is this year's, or next year's when that is gone (in a past-tense sentence:
more than half a year ago), unless the past-tense sentence says the event took place then ("Jun
turned 5 in March", "she was born on March 3"): then it is the last such day. Lunar dates
(음력 8월 3일) and recurring ones ("on Mondays", "매주 월요일") are left as said.

`dated(text)` says whether a text names a particular day or time of day: the flush keeps such a
sentence as a dated fact. Today, yesterday and "last week" name no day worth a memory. A
weekday said as a habit ("금요일에는 배포하지 말자", "on Mondays") is not a date."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from giok.text.lazy import LazyPattern, lazy

DAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAYS_KO = "월화수목금토일"
MONTHS_EN = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_DAY_EN = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?!s)"
_MON_EN = r"(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?"
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"
_PATTERNS: tuple[tuple[str, LazyPattern], ...] = tuple(
    (kind, lazy(pattern, re.I))
    for kind, pattern in (
        ("rel_weekday", rf"\b(this|next|coming|last)\s+{_DAY_EN}\b"),
        ("rel_weekday_ko", rf"(이번|다음|지난) ?주 ?([{_DAYS_KO}])요일"),
        ("month_day", rf"\b{_MON_EN}\s+{_ORD}\b(?!\s*(?:%|시|:))"),
        ("day_month", rf"\b{_ORD}\s+(?:of\s+)?{_MON_EN}(?![a-z])"),
        ("month_day_ko", r"(?<!음력 )(?<!음력)(?<!\d)(\d{1,2})월 ?(\d{1,2})일"),
        ("tomorrow", r"\b(the day after tomorrow|tomorrow)\b|(?<![가-힣])(내일|모레)"),
        (
            "rel_period",
            r"\b(this|next)\s+(week|month)\b|(이번|다음) ?(주|달)(?![가-힣]?요일|\s?[월화수목금토일]요일)",
        ),
        ("weekday", rf"(?<!\ba )(?<!\bevery )(?<!\beach )(?<!\bany )\b{_DAY_EN}\b"),
        ("weekday_ko", rf"(?<!매주 )(?<!매주)([{_DAYS_KO}])요일(?!마다|에는|엔|은|날은)"),
        (
            "month",
            r"\bin\s+(january|february|march|april|may|june|july|august|september|october|november"
            r"|december)\b|(?<![\d음력 ])(?<!음력 )(\d{1,2})월(?! ?\d{1,2}일)(?=에|까지|부터|\s|$|[.,!])",
        ),
    )
)
_TIME = lazy(
    r"\b\d{1,2}(:\d{2})?\s?(am|pm)\b|\b\d{1,2}:\d{2}\b|(오전|오후|저녁|아침) ?\d{1,2}시|\d{1,2}시(?!간)", re.I
)
_ISO_AFTER = lazy(r"^\s*\((week of )?\d{4}-\d{2}")
_LUNAR = lazy(r"음력 ?\d{1,2}월 ?\d{1,2}일")
_PAST_EN = lazy(
    r"\b(was|were|did|had|went|got|passed|left|came|\w+ed"
    # common irregular past forms (not those spelt like the present, read, put, set, cut, nor
    # those that are also nouns or adjectives in a present sentence: lost, found)
    r"|met|made|took|saw|bought|sold|told|said|began|ran|won|paid|sent|spent|gave|kept"
    r"|held|heard|felt|broke|fell|flew|drove|wrote|ate|drank|slept|thought|brought|caught|taught"
    r"|became|chose|forgot|led|rode|sat|stood|swam|threw|woke|wore)\b",
    re.I,
)
# A decision or a move names a day to come, whatever its tense ("배포는 목요일로 결정했다",
# "the review moved to Friday").
_AHEAD = lazy(
    r"\b(decided|agreed|scheduled|planned|moved|booked|confirmed|settled|postponed|pushed)\b"
    r"|결정|확정|하기로|정했|예약|미뤘|옮겼",
    re.I,
)
_PAST_KO_FINAL = 20  # ㅆ as a syllable's final consonant: 했, 었, 갔, 왔 …


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    said: str
    iso: str  # "2026-03-09", "2026-03" or "week of 2026-03-09"


def _past(text: str) -> bool:
    if _AHEAD.search(text):
        return False
    if _PAST_EN.search(text):
        return True
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172 and code % 28 == _PAST_KO_FINAL and ch != "있":
            return True
    return False


def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _weekday(today: dt.date, index: int, past: bool) -> dt.date:
    ahead = (index - today.weekday()) % 7 or 7
    return today - dt.timedelta(days=7 - ahead if ahead != 7 else 7) if past else today + dt.timedelta(ahead)


def _year_of(today: dt.date, month: int, day: int | None, past: bool, happened: bool = False) -> int:
    """This year's, unless that is gone: before today for a sentence about what is to come
    (a whole month: before this month), more than half a year ago for one in the past tense
    ("booked the flights, Jan 14" said in December). `happened`: the date is when the past
    event took place ("Jun turned 5 in March"), so this year's unless it is still to come."""
    try:
        candidate = dt.date(today.year, month, day or 1)
    except ValueError:
        return today.year
    if happened:
        return today.year - 1 if candidate > today else today.year
    if past:
        return today.year + 1 if (today - candidate).days > 183 else today.year
    gone = month < today.month if day is None else candidate < today
    return today.year + 1 if gone else today.year


def _month_index(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(n for n, name in enumerate(MONTHS_EN, 1) if name.startswith(word[:3]))


# "… in March" in a sentence in the past tense: the month the event took place
_IN_BEFORE = lazy(r"\b(in|during|on)\s+$", re.I)


def _iso(kind: str, m: re.Match[str], today: dt.date, past: bool) -> str | None:
    g = [x for x in m.groups() if x is not None]
    happened = (
        past
        and (
            (kind == "month" and m.group(0)[:2].lower() == "in")  # the English month pattern holds its "in"
            or (kind in ("month_day", "day_month") and bool(_IN_BEFORE.search(m.string[: m.start()])))
        )
    )
    if kind in ("rel_weekday", "rel_weekday_ko"):
        which, day = g[0].lower(), g[1].lower()
        index = DAYS_EN.index(day) if kind == "rel_weekday" else _DAYS_KO.index(day)
        if which in ("coming",):
            return _weekday(today, index, False).isoformat()
        shift = {"this": 0, "이번": 0, "next": 1, "다음": 1, "last": -1, "지난": -1}[which]
        return (_monday(today) + dt.timedelta(weeks=shift, days=index)).isoformat()
    if kind in ("weekday", "weekday_ko"):
        index = DAYS_EN.index(g[0].lower()) if kind == "weekday" else _DAYS_KO.index(g[0])
        return _weekday(today, index, past).isoformat()
    if kind == "tomorrow":
        word = g[0].lower()
        return (today + dt.timedelta(days=2 if word in ("the day after tomorrow", "모레") else 1)).isoformat()
    if kind in ("month_day", "day_month", "month_day_ko"):
        if kind == "month_day":
            month, day = _month_index(g[0]), int(g[1])
        elif kind == "day_month":
            month, day = _month_index(g[1]), int(g[0])
        else:
            month, day = int(g[0]), int(g[1])
        try:
            return dt.date(_year_of(today, month, day, past, happened), month, day).isoformat()
        except ValueError:
            return None
    if kind == "month":
        month = _month_index(g[0]) if not g[0].isdigit() else int(g[0])
        return f"{_year_of(today, month, None, past, happened):04d}-{month:02d}" if 1 <= month <= 12 else None
    if kind == "rel_period":
        which, unit = (g[0].lower(), g[1].lower())
        shift = 0 if which in ("this", "이번") else 1
        if unit in ("week", "주"):
            return f"week of {_monday(today) + dt.timedelta(weeks=shift):%Y-%m-%d}"
        month = today.month + shift
        return f"{today.year + (month - 1) // 12:04d}-{(month - 1) % 12 + 1:02d}"
    return None


# A day of the month just after a weekday ("Tuesday the 8th", "Friday, 11 December", "토요일 16일")
# or just before it ("1월 16일 토요일", "the 8th, a Tuesday"); a time is not one ("Monday 2 pm",
# "Monday 10:30").
_DAY_AFTER = lazy(
    r"^[\s,]*(the\s+)?\d{1,2}(st|nd|rd|th)?\b(?![.:]\d|\s*(am|pm|a\.m|p\.m|o'clock|h\b))|^[\s,]*\d{1,2}일",
    re.I,
)
_DAY_BEFORE = lazy(r"(\b\d{1,2}(st|nd|rd|th)?|\d{1,2}일)[\s,]*(a\s+)?$", re.I)


def _with_day(text: str, m: re.Match[str]) -> bool:
    """Whether a weekday stands beside a day of the month, which then says which day it is."""
    return bool(_DAY_AFTER.search(text[m.end() : m.end() + 16]) or _DAY_BEFORE.search(text[: m.start()]))


# A sentence that says a habit: its bare weekdays recur ("화요일이랑 목요일 저녁에 정기적으로 가", "I
# usually swim on Tuesday and Thursday"); they name no one day.
_HABIT = lazy(r"\b(usually|regularly|weekly|normally)\b|매주|정기적|매번|꾸준히|보통", re.I)


def mentions(text: str, today: dt.date) -> list[Mention]:
    """The dates in a text, in order, each resolved; overlapping matches keep the first pattern's.
    The bare weekdays of a sentence that says a habit are left as said."""
    past = _past(text)
    habit = bool(_HABIT.search(text))
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            if kind in ("weekday", "weekday_ko") and (habit or _with_day(text, m)):
                continue  # "Tuesday the 8th", "1월 16일 토요일": the day of the month says which
            iso = _iso(kind, m, today, past)
            if iso:
                found.append(Mention(m.start(), m.end(), m.group(0), iso))
                taken.append((m.start(), m.end()))
    return sorted(found, key=lambda x: x.start)


def resolve(text: str, today: dt.date) -> str:
    """The text with each date it names followed by its ISO form (once: an ISO form already
    there is not added again)."""
    out, last = [], 0
    for m in mentions(text, today):
        if _ISO_AFTER.match(text[m.end :]):
            continue
        space = "" if re.match(r"[가-힣]", text[m.end - 1]) else " "  # 월요일(2026-03-09)에
        out.append(text[last : m.end] + f"{space}({m.iso})")
        last = m.end
    return "".join(out) + text[last:]


def dated(text: str, today: dt.date) -> bool:
    """Whether the text names a particular day (or a time of day): a dated fact."""
    return bool(mentions(text, today) or _TIME.search(text) or _LUNAR.search(text))
