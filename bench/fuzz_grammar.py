"""The MEMORY.md grammar fuzz at soak strength: the properties of
tests/adversarial/test_grammar_fuzz.py with 10,000 examples each (CI runs 1,000), and a table
of examples run and failures.

    PYTHONPATH=src .venv/bin/python bench/fuzz_grammar.py [EXAMPLES]
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path


def main() -> int:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    os.environ["GIOK_FUZZ_EXAMPLES"] = str(examples)  # read when the test module is imported
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from adversarial import test_grammar_fuzz as fuzz

    properties = [getattr(fuzz, name) for name in dir(fuzz) if name.startswith("test_")]
    rows, failed = [], 0
    for prop in properties:
        before = sum(fuzz.RUNS.values())
        start = time.perf_counter()
        try:
            prop()
            verdict = "ok"
        except Exception:  # a falsified property: hypothesis prints the smallest failing example
            failed += 1
            verdict = "FAILED"
            traceback.print_exc()
        rows.append((prop.__name__, sum(fuzz.RUNS.values()) - before, verdict, time.perf_counter() - start))
    print(f"\nMEMORY.md grammar fuzz, max_examples={examples} per property")
    print(f"{'property':<62} {'examples':>9} {'result':>7} {'seconds':>8}")
    for name, runs, verdict, seconds in rows:
        print(f"{name:<62} {runs:>9} {verdict:>7} {seconds:>8.1f}")
    print(f"{'total':<62} {sum(r[1] for r in rows):>9} {f'{failed} failed':>7}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
