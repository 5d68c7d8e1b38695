"""Colour for people: click.style, off when $NO_COLOR is set (https://no-color.org); click.echo
drops the codes by itself when stdout is not a terminal (a pipe, a file, --json consumers)."""

from __future__ import annotations

import os

import click

SEVERITY = {"error": "red", "warning": "yellow", "info": "blue"}


def paint(text: str, **styles) -> str:
    if os.environ.get("NO_COLOR"):
        return text
    return click.style(text, **styles)


def name(text: str) -> str:
    return paint(text, fg="cyan", bold=True)


def ident(text: str) -> str:
    return paint(text, fg="yellow")


def dim(text: str) -> str:
    return paint(text, dim=True)


def good(text: str) -> str:
    return paint(text, fg="green")


def bad(text: str) -> str:
    return paint(text, fg="red")


def heading(text: str) -> str:
    return paint(text, bold=True)


def severity(level: str, text: str | None = None) -> str:
    return paint(text if text is not None else level, fg=SEVERITY.get(level), bold=level == "error")


# Labels of the text output, in the workspace's language (giok.store.templates.language).
LABELS = {
    "en": {
        "expiring": "expiring in 7 days",
        "expired": "expired (archived by `giok distill`)",
        "unreadable": "unreadable line(s): run `giok check`",
        "expires": "expires",
        "superseded": "superseded by",
        "no_problems": "no problems",
        "error": "error",
        "warning": "warning",
        "info": "info",
    },
    "ko": {
        "expiring": "7일 안에 만료",
        "expired": "만료됨 (`giok distill`이 보관)",
        "unreadable": "읽을 수 없는 줄: `giok check`를 실행하세요",
        "expires": "만료",
        "superseded": "대체함:",
        "no_problems": "문제 없음",
        "error": "오류",
        "warning": "경고",
        "info": "정보",
    },
}


def labels(lang: str | None) -> dict[str, str]:
    return LABELS.get(lang or "en", LABELS["en"])
