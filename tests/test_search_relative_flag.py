"""`giok search --relative`: the store-relative floor from the command line (a number in 0–1,
or `off`), with one clear error for anything else."""

from __future__ import annotations

import json

from conftest import run_giok

ENTRIES = [f"Seojun visited city number {i} on a rainy day." for i in range(10)] + [
    "Seojun keeps his passport in the blue drawer."
]


def _stock(ws):
    mem = ws.root / "MEMORY.md"
    mem.write_text(
        mem.read_text() + "".join(f"- {t} <!-- id: r-{i:06x} -->\n" for i, t in enumerate(ENTRIES))
    )


def _ids(out):
    return [r["text"] for r in json.loads(out)["results"]]


def test_relative_off_lets_the_shared_words_through(ws):
    _stock(ws)
    ask = ("search", "Seojun visited a rainy city", "-w", ws.root, "--mode", "keyword", "-k", "20", "--json")
    default = run_giok(*ask)
    off = run_giok(*ask, "--relative", "off")
    assert off.returncode == 0, off.stderr
    assert len(_ids(off.stdout)) > len(_ids(default.stdout))


def test_relative_rejects_a_bad_value_with_one_error(ws):
    for bad in ("1.5", "often"):
        out = run_giok("search", "passport", "-w", ws.root, "--relative", bad)
        assert out.returncode == 2, out.stderr
        assert "--relative" in out.stderr
        assert "Traceback" not in out.stderr
