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
