"""The standing proof, reduced for CI: bench/simulate.py over 36 simulated days with every
scripted agent (bench/data/simulate/), in a real subprocess with real git, SQLite and files,
and the deterministic fake embedder. 36 days is the shortest run in which a 30-day entry
written on day 2 must be gone (archived on day 33, missing from day 34's boot) and every
trivial line of the first days must have expired; the full run is `bench/simulate.py`.

Each invariant is its own test, so a failure names the invariant and shows its first
violations with their day."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "simulate.py"
DAYS = 36
sys.path.insert(0, str(SCRIPT.parent))
from simulate import INVARIANTS  # noqa: E402


@pytest.fixture(scope="module")
def run():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--days", str(DAYS), "--embedder", "fake", "--json", "--samples", "8"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    return proc.returncode, result


@pytest.mark.parametrize("name", INVARIANTS)
def test_invariant_holds_every_simulated_day(run, name):
    _, result = run
    row = result["invariants"][name]
    assert row["checks"] > 0, (
        f"{name}: the simulation never checked it (the scripted days do not exercise it)"
    )
    shown = "\n  ".join(row["samples"])
    assert row["violations"] == 0, (
        f"{name}: {row['violations']} violation(s) in {row['checks']} checks over "
        f"{DAYS} days ({row['distinct']} distinct), first ones:\n  {shown}"
    )


def test_exit_status_says_whether_any_invariant_was_violated(run):
    code, result = run
    violated = [n for n, row in result["invariants"].items() if row["violations"]]
    assert code == (1 if violated else 0), f"exit {code} but violated: {violated}"
    assert result["days"] == DAYS
    assert len(result["agents"]) >= 2
    assert result["weeks"], "the per-week table of layers is missing"
