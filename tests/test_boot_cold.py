"""Boot in a new process after MEMORY.md changed (docs/architecture.md, "Write path at scale"):
the token costs of the lines the last boot counted are taken from its cache in .giok/, only new
lines are counted, and the boot is the one a boot without any cache gives."""

from __future__ import annotations

import json

import pytest

from giok.lifecycle import boot


def _fresh(ws) -> boot.Boot:
    """The boot with no cache at all, nothing counted before."""
    path = ws.layout.derived(boot.CACHE)
    kept = path.read_bytes() if path.exists() else None
    path.unlink(missing_ok=True)
    boot._tokens.cache_clear()
    try:
        return boot.build(ws, budget=400, record=False)
    finally:
        if kept is not None:
            path.write_bytes(kept)


def _counting(monkeypatch) -> list[str]:
    counted: list[str] = []
    real = boot.tokens.count

    def spy(text: str) -> int:
        counted.append(text)
        return real(text)

    monkeypatch.setattr(boot.tokens, "count", spy)
    boot._tokens.cache_clear()  # what a new process has counted: nothing
    return counted


def _said(b: boot.Boot) -> tuple:
    return b.text, b.left_out, [(s.name, s.lines, s.ids) for s in b.sections]


def test_a_boot_after_a_write_counts_only_the_new_line(ws, monkeypatch):
    for i in range(30):
        ws.remember(f"Seojun keeps project note number {i} about the billing queue")
    boot.build(ws, budget=400, record=False)
    ws.remember("The release branch is cut on Mondays")
    counted = _counting(monkeypatch)
    after = boot.build(ws, budget=400, record=False)
    memory_lines = [t for t in counted if "project note" in t or "release branch" in t]
    assert memory_lines == [line for line in memory_lines if "release branch" in line]
    assert len(memory_lines) == 1
    assert _said(after) == _said(_fresh(ws))


@pytest.mark.parametrize("cost", [-50, "3", 2.5, 0])
def test_a_cache_with_costs_that_are_no_counts_is_ignored(ws, cost):
    for i in range(12):
        ws.remember(f"Minsu reviews pull request number {i} on Fridays")
    boot.build(ws, budget=400, record=False)
    path = ws.layout.derived(boot.CACHE)
    data = json.loads(path.read_bytes())
    for rows in data["items"].values():
        for row in rows:
            row[2] = cost
    data["key"][1] = "0" * 40  # of other bytes: only the costs could be taken from it
    path.write_text(json.dumps(data))
    boot._tokens.cache_clear()
    assert _said(boot.build(ws, budget=400, record=False)) == _said(_fresh(ws))


def test_a_boot_cache_nested_too_deep_for_the_json_reader_is_ignored(ws):
    ws.remember("The office is in Pangyo")
    path = ws.layout.derived(boot.CACHE)
    path.parent.mkdir(exist_ok=True)
    path.write_text("[" * 100_000)
    assert "Pangyo" in boot.build(ws, record=False).text
