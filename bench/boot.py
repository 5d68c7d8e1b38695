"""Figures for boot and the write policy.

    .venv/bin/python bench/boot.py

1. `giok boot` on workspaces with 100, 1,000 and 5,000 MEMORY.md entries and 365 diary files:
   the library call (median of 20, in process, after the first; target at 5,000: <= 60 ms),
   and the CLI process end to end minus a bare `python -c "import giok.edges.cli"`
   (interpreter + imports), median of 10. `--sizes 5000` picks the sizes.
2. Tokens of the always-injected tier (TIER 1 + SOUL.md + USER.md) of the default templates,
   en and ko, with the counter that runs here.
3. The policy set (tests/data/policy_set.json): of 50 greeting/question/speculation lines,
   how many `remember` refuses; of 50 genuine facts, how many it keeps.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


SIZES = (100, 1000, 5000)
_SHARE = {"M0": 0.02, "M365": 0.13, "M90": 0.35, "M30": 0.5}  # of the entries, per layer


def _big_workspace(tmp: Path, size: int = 2000):
    from giok import Workspace
    from giok.store import git
    from giok.store.memoryfile import LAYER_TITLES

    ws, _ = Workspace.init(tmp / f"big{size}", name=f"big{size}", user="Seojun")
    rnd = random.Random(7)
    today = dt.date.today()
    lines = ["# MEMORY.md : long-term memory", ""]
    counts = {layer: max(1, round(size * share)) for layer, share in _SHARE.items()}
    n = 0
    for layer, count in counts.items():
        lines += [LAYER_TITLES["en"][layer]]
        for _ in range(count):
            n += 1
            day = today - dt.timedelta(days=rnd.randint(0, 29))
            exp = "" if layer == "M0" else f"expires: {today + dt.timedelta(days=30)}; "
            lines.append(
                f"- [{day}] Memory number {n} about project {rnd.randint(1, 300)} and its "
                f"decision on module {rnd.randint(1, 999)} <!-- {exp}id: m-{n:06x}; type: fact; "
                f"scope: workspace; refs: {rnd.randint(0, 9)} -->"
            )
        lines.append("")
    (ws.root / "MEMORY.md").write_text("\n".join(lines), "utf-8")
    for i in range(365):
        day = today - dt.timedelta(days=i)
        body = "".join(
            f"- {h:02d}:00 Diary line {h} of {day}: worked on feature {rnd.randint(1, 99)}\n"
            for h in range(8, 20)
        )
        (ws.root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{body}", "utf-8")
    git.commit(ws.root, ["MEMORY.md", "memory"], f"bench: {n} entries, 365 diaries")
    return ws


def bench_boot(tmp: Path, env: dict, size: int) -> None:
    from giok.lifecycle import boot

    ws = _big_workspace(tmp, size)
    boot.build(ws, record=False)
    lib = []
    for _ in range(20):
        start = time.perf_counter()
        result = boot.build(ws, record=False)
        lib.append(time.perf_counter() - start)
    data = result.to_dict()
    print(
        f"boot library call, {size} entries + 365 diaries: median {statistics.median(lib) * 1000:.1f} ms "
        f"(p90 {sorted(lib)[17] * 1000:.1f} ms); {data['tokens']} tokens in budget {data['budget']}, "
        f"left out: {_left(data)}"
    )
    cli, bare = [], []
    for _ in range(10):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "giok", "-w", ws.name, "boot", "--no-record"],
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            raise SystemExit(f"giok boot failed: {proc.stderr.strip()}")
        cli.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import giok.edges.cli"], env=env, check=True)
        bare.append(time.perf_counter() - start)
    c, b = statistics.median(cli), statistics.median(bare)
    print(
        f"giok boot CLI process, {size} entries: median {c * 1000:.0f} ms; "
        f"interpreter + `import giok.edges.cli` {b * 1000:.0f} ms; "
        f"work after start {max(0.0, c - b) * 1000:.0f} ms (target <= 150 ms)"
    )


def _left(data: dict) -> str:
    return ", ".join(f"{d['count']} {d['section']}" for d in data["left_out"]) or "nothing"


def bench_tier(tmp: Path) -> None:
    from giok import Workspace
    from giok.lifecycle import boot
    from giok.text import token_count as tokens

    for lang in ("en", "ko"):
        ws, _ = Workspace.init(
            tmp / f"tier-{lang}", name=f"tier-{lang}", lang=lang, user="Seojun" if lang == "en" else "서준"
        )
        result = boot.build(ws, record=False)
        print(
            f"always-injected tier, default {lang} templates: {result.always_tokens} tokens "
            f"(counter: {tokens.counter()}; target <= 1000)"
        )


def bench_policy(tmp: Path) -> None:
    from giok import Workspace

    cases = json.loads((ROOT / "tests" / "data" / "policy_set.json").read_text("utf-8"))
    ws, _ = Workspace.init(tmp / "policy", name="policy", user="Seojun")
    refused = sum(ws.remember(t).action == "refused" for t in cases["refuse"])
    kept = sum(ws.remember(t).action == "written" for t in cases["keep"])
    print(
        f"policy set: refused {refused}/{len(cases['refuse'])} greeting/question/speculation lines; "
        f"kept {kept}/{len(cases['keep'])} genuine facts"
    )


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="giok-bench-boot-"))
    env = {**os.environ, "GIOK_HOME": str(tmp / "home")}
    os.environ.update(env)
    sizes = (
        [int(x) for x in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
        if "--sizes" in sys.argv
        else SIZES
    )
    for size in sizes:
        bench_boot(tmp, env, size)
    if "--sizes" not in sys.argv:
        bench_tier(tmp)
        bench_policy(tmp)


if __name__ == "__main__":
    main()
