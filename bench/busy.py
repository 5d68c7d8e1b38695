"""The tests that drive real clients and real processes, run N times on a busy machine.

    .venv/bin/python bench/busy.py [-n 10] [--busy 2] [-k EXPR] [TEST_FILE_OR_ID ...]

A test that fails when the machine is busy blocks every submission, so this script makes the
machine busy on purpose: it starts `--busy` CPU-bound processes (`python -c 'while True: pass'`,
default 2: the machine's two cores taken) and stops them when it ends, then runs pytest on the
given files `-n` times, one run after the other, and prints for each test how many runs it
passed, failed (with the first line of its first failure) and skipped, and its slowest time.
Without files: the integration tests for Claude Code, the MCP Inspector and OpenClaw, and
tests/test_concurrency.py. `--busy 0` runs them on the machine as it is, for comparison.

Each run is a fresh `python -m pytest -q -p no:cacheprovider --junitxml=…` in this tree (the
real clients come from .tools/, installed by .ci/setup-node-tools.sh and .ci/setup-openclaw.sh;
without them those tests are skipped and counted as such). The load average is printed with
each run: on a shared machine the busy processes are the floor, not the whole load.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [
    "tests/test_claude_code.py",
    "tests/test_mcp_inspector.py",
    "tests/test_openclaw.py",
    "tests/test_concurrency.py",
]
SPIN = "while True: pass"


@contextlib.contextmanager
def busy(count: int) -> Iterator[list[int]]:
    """`count` CPU-bound processes for the duration of the block; each is stopped (by its own
    id) when the block ends, however it ends."""
    procs = [
        subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL, start_new_session=True)
        for _ in range(count)
    ]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def run_once(targets: list[str], keyword: str | None, extra: list[str]) -> tuple[dict[str, dict], float, int]:
    """One pytest run: {test id: {outcome, message, seconds}}, the wall time, pytest's exit code."""
    with tempfile.TemporaryDirectory(prefix="giok-busy-") as tmp:
        report = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
        cmd += (["-k", keyword] if keyword else []) + extra + targets
        start = time.monotonic()
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - start
        if not report.exists():
            sys.stderr.write(out.stdout[-3000:] + out.stderr[-3000:])
            return {}, wall, out.returncode
        return outcomes(report), wall, out.returncode


def outcomes(report: Path) -> dict[str, dict]:
    found = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = "skipped" if tag == "skipped" else "failed"
                message = (node.get("message") or node.text or "").strip().splitlines()[:1]
                message = message[0][:160] if message else tag
                break
        found[name] = {"outcome": outcome, "message": message, "seconds": float(case.get("time") or 0)}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "targets", nargs="*", help="test files or ids (default: %(default)s)", default=DEFAULT
    )
    parser.add_argument("-n", "--runs", type=int, default=10, help="how many runs (default 10)")
    parser.add_argument(
        "--busy", type=int, default=2, help="CPU-bound processes beside the tests (default 2)"
    )
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--pytest-arg", action="append", default=[], help="passed on to pytest")
    args = parser.parse_args(argv)
    tally: dict[str, dict] = defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": 0, "slowest": 0.0})
    failures: dict[str, str] = {}
    print(f"{len(args.targets)} target(s), {args.runs} run(s), {args.busy} CPU-bound process(es) beside them")
    with busy(args.busy) as pids:
        if pids:
            print(f"busy processes: {' '.join(map(str, pids))}")
        for i in range(1, args.runs + 1):
            found, wall, code = run_once(args.targets, args.keyword, args.pytest_arg)
            for name, r in found.items():
                tally[name][r["outcome"]] += 1
                tally[name]["slowest"] = max(tally[name]["slowest"], r["seconds"])
                if r["outcome"] == "failed":
                    failures.setdefault(name, f"run {i}: {r['message']}")
            failed = sum(r["outcome"] == "failed" for r in found.values())
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"run {i}: {len(found)} tests, {failed} failed, exit {code}, {wall:.0f} s, load {load}")
            for name, r in found.items():
                if r["outcome"] == "failed":
                    print(f"  failed: {name}: {r['message']}")
            sys.stdout.flush()
    print(f"\n{'passed':>6} {'failed':>6} {'skipped':>7} {'slowest':>8}  test")
    for name in sorted(tally):
        t = tally[name]
        print(f"{t['passed']:>6} {t['failed']:>6} {t['skipped']:>7} {t['slowest']:>7.1f}s  {name}")
    for name, why in failures.items():
        print(f"first failure of {name}: {why}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
