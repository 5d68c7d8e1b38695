"""giok.text.dates: days said in passing, resolved against the day they were said."""

import datetime as dt

import pytest

from giok.text.dates import dated, resolve

THURSDAY = dt.date(2026, 3, 5)


@pytest.mark.parametrize(
    "said,resolved",
    [
        ("I am away next Monday", "I am away next Monday (2026-03-09)"),
        ("다음 주 월요일에 휴가야", "다음 주 월요일(2026-03-09)에 휴가야"),
        ("this Friday we ship", "this Friday (2026-03-06) we ship"),
        ("my grandmother passed away on Tuesday", "my grandmother passed away on Tuesday (2026-03-03)"),
        ("the review moved to Tuesday", "the review moved to Tuesday (2026-03-10)"),
        ("배포 일정은 목요일로 결정했습니다", "배포 일정은 목요일(2026-03-12)로 결정했습니다"),
        ("the investor demo is Dec 10 at 2pm", "the investor demo is Dec 10 (2026-12-10) at 2pm"),
        ("the 3rd of May", "the 3rd of May (2026-05-03)"),
        ("엄마 수술 날짜 잡혔어 12월 3일", "엄마 수술 날짜 잡혔어 12월 3일(2026-12-03)"),
        ("the lease ends Jan 31", "the lease ends Jan 31 (2027-01-31)"),
        ("내일 테스트를 더 해야 한다", "내일(2026-03-06) 테스트를 더 해야 한다"),
        ("지민이 다음 달부터 이직한대", "지민이 다음 달(2026-04)부터 이직한대"),
        ("the audit is next week", "the audit is next week (week of 2026-03-09)"),
        ("mine expires in March", "mine expires in March (2026-03)"),
    ],
)
def test_relative_and_partial_dates_get_their_iso_form(said, resolved):
    assert resolve(said, THURSDAY) == resolved
    assert resolve(resolved, THURSDAY) == resolved  # once: an ISO form already there stays alone
    assert dated(said, THURSDAY)


@pytest.mark.parametrize(
    "said",
    [
        "we meet on Mondays",
        "매주 월요일 회의",
        "금요일에는 배포하지 말자",
        "엄마 생신은 음력 8월 3일이야",
        "you may go",
        "never deploy on a Friday",
        "we meet every Friday",
        "each Monday we sync",
        "화요일이랑 목요일 저녁에 정기적으로 가",  # a habit: the second weekday recurs too
        "I usually swim on Tuesday and Thursday",
    ],
)
def test_habits_lunar_dates_and_modals_are_left_as_said(said):
    assert resolve(said, THURSDAY) == said


def test_what_names_no_day_is_not_dated():
    assert not dated("my phone is at 5%", THURSDAY)
    assert not dated("출근이 30분 줄었어", THURSDAY)
    assert not dated("Mina had the same thing yesterday", THURSDAY)
    assert dated("송별회 7시에 강남에서 해", THURSDAY)  # a time of day
    assert dated("엄마 생신은 음력 8월 3일이야", THURSDAY)  # named, though not resolved


@pytest.mark.parametrize(
    "said,resolved",
    [
        ("Dentist on Tuesday the 10th at 9:30", "Dentist on Tuesday the 10th at 9:30"),
        ("1월 16일 토요일. 장소는 잠실이래", "1월 16일(2027-01-16) 토요일. 장소는 잠실이래"),
        ("Meeting on Friday, 13 March", "Meeting on Friday, 13 March (2026-03-13)"),
        ("the call is on Monday 2 pm", "the call is on Monday (2026-03-09) 2 pm"),
        ("3 people on Monday", "3 people on Monday (2026-03-09)"),
    ],
)
def test_a_weekday_beside_a_day_of_the_month_is_not_resolved_on_its_own(said, resolved):
    """ "1월 16일 토요일" is the Saturday of that date, not the next or last Saturday."""
    assert resolve(said, THURSDAY) == resolved


DECEMBER = dt.date(2026, 12, 9)


@pytest.mark.parametrize(
    "said,resolved",
    [
        ("Jun turned 5 in March.", "Jun turned 5 in March (2026-03)."),
        ("the lease was renewed in January", "the lease was renewed in January (2026-01)"),
        ("she was born on March 3", "she was born on March 3 (2026-03-03)"),
        ("booked the flights for Jan 14", "booked the flights for Jan 14 (2027-01-14)"),
        ("we fly out in March", "we fly out in March (2027-03)"),
        ("we met on Jan 14", "we met on Jan 14 (2026-01-14)"),
        ("I met Dana on Tuesday", "I met Dana on Tuesday (2026-12-08)"),
        ("I meet Dana on Tuesday", "I meet Dana on Tuesday (2026-12-15)"),
    ],
)
def test_a_month_the_past_event_took_place_in_is_not_next_years(said, resolved):
    """Said in December: what happened in March happened this March; a flight booked for January
    is next January's."""
    assert resolve(said, DECEMBER) == resolved
