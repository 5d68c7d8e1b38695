"""Regressions found by using giok as a user would: each test is one bug that was fixed."""

from __future__ import annotations

import os
import stat
import subprocess

from giok import Workspace
from giok import tokens
from giok.boot import build

from conftest import run_giok


def test_invalid_utf8_in_a_hand_edited_memory_file_does_not_crash(ws):
    with open(ws.root / "MEMORY.md", "ab") as handle:
        handle.write("- [2026-03-01] bad bytes \xff\xfe here\n".encode("latin-1"))
    ws.check()  # raised UnicodeEncodeError before
    result = ws.remember("Seojun likes jazz on Fridays", layer="M90")
    assert result.action == "written"
    assert b"bad bytes \xff\xfe here" in (ws.root / "MEMORY.md").read_bytes()  # kept byte for byte
    boot = build(ws, record=False)
    assert "bad bytes" in boot.text and "Seojun likes jazz" in boot.text


def test_token_estimate_counts_lone_surrogates():
    assert tokens.estimate("ok \udcff\udcfe") >= 2
