"""Time one `giok remember` end to end (median of 20, including the git commit), as a CLI
process and as a library call, plus the 8-writer concurrency run, plus the CPU of one
`Workspace.remember` (this process only, git excluded) at 100 / 1,000 / 5,000 entries.

    .venv/bin/python bench/remember.py            # everything
    .venv/bin/python bench/remember.py --scale    # only the CPU at 100 / 1,000 / 5,000 entries
    .venv/bin/python bench/remember.py --long-lived   # the same in a new long-lived process

`--long-lived`: a new process (as the MCP server is) that opens the workspace once, after a CLI
remember left .giok/policy-index.json, and remembers 22 times: the median CPU of the last 20.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (100, 1000, 5000)
RUNS = 20  # remembers measured per size, after 2 that fill the kept parse and its index
_VOCAB = [
    "deploy",
    "script",
    "backend",
    "frontend",
    "billing",
    "search",
    "index",
    "report",
    "meeting",
    "review",
    "budget",
    "laptop",
    "editor",
    "terminal",
    "coffee",
    "tea",
    "hiking",
    "weekend",
    "morning",
    "evening",
    "friday",
    "monday",
    "release",
    "branch",
    "invoice",
    "customer",
    "server",
    "database",
    "cache",
    "queue",
    "worker",
    "token",
    "schedule",
    "travel",
    "flight",
    "hotel",
    "Seojun",
    "Minsu",
    "Jiwoo",
    "Haneul",
    "team",
    "project",
    "alpha",
    "gamma",
    "delta",
    "staging",
    "production",
    "runner",
]
_KO_VOCAB = [
    "서준",
    "민수",
    "회의",
    "배포",
    "예산",
    "커피",
    "등산",
    "주말",
    "아침",
    "저녁",
    "노트북",
    "회사",
    "집",
    "서버",
    "검색",
    "보고서",
]


def _entry_text(i: int) -> str:
    """A varied, realistic-looking entry: 6-10 words drawn by a fixed rule, some in Korean."""
    n = 6 + i % 5
    vocab = _KO_VOCAB if i % 4 == 0 else _VOCAB
    return " ".join(vocab[(i * 7919 + k * 104729) % len(vocab)] for k in range(n)) + f" {i}"


def scale(tmp: Path) -> None:
    """CPU of one remember (time.process_time: this process, not git) by MEMORY.md size."""
    from giok import Workspace
    from giok.write import policy

    cpu: dict[int, float] = {}
    for size in SIZES:
        ws, _ = Workspace.init(tmp / f"scale{size}", name=f"scale{size}")
        lines = "".join(f"- [2026-03-01] {_entry_text(i)} <!-- id: m-{i:06x} -->\n" for i in range(size))
        body = ws.read_text("MEMORY.md").replace(
            "## 📝 M30 : 30-day memory\n", "## 📝 M30 : 30-day memory\n" + lines
        )
        ws.edit("MEMORY.md", lambda old, body=body: (body, None), "bench: fill")
        fixed = ws.memory()
        index = policy.Index(fixed)  # what the write path keeps with its parse
        runs, decide, indexed = [], [], []
        for k in range(RUNS + 2):
            text = f"Bench note {k}: {_entry_text(size + 17 * k)}"
            start = time.process_time()
            ws.remember(text)
            runs.append(time.process_time() - start)
            mf = ws.memory()
            start = time.process_time()
            policy.decide(mf, text + " again")
            decide.append(time.process_time() - start)
            start = time.process_time()
            policy.decide(fixed, text + " again", index=index)
            indexed.append(time.process_time() - start)
        cpu[size] = statistics.median(runs[2:])
        print(
            f"remember CPU at {size:>5} entries: {cpu[size] * 1000:6.1f} ms "
            f"(policy.decide alone {statistics.median(decide[2:]) * 1000:5.1f} ms, "
            f"with its index {statistics.median(indexed[2:]) * 1000:4.1f} ms; median of {RUNS}, git excluded)"
        )
    ratio = cpu[SIZES[-1]] / cpu[SIZES[0]]
    print(f"remember CPU {SIZES[-1]} / {SIZES[0]} entries: {ratio:.2f}x (target <= 1.5x)")


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="giok-bench-"))
    env = {**os.environ, "GIOK_HOME": str(tmp / "home")}
    os.environ.update(env)
    if "--scale" in sys.argv:
        scale(tmp)
        return
    if "--long-lived" in sys.argv:
        long_lived(tmp, env)
        return
    from giok import Workspace

    ws, _ = Workspace.init(tmp / "zeon", name="zeon")
    cli, lib = [], []
    for i in range(20):
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "giok",
                "-w",
                "zeon",
                "remember",
                f"CLI benchmark fact {i} about topic {i * 7919 % 104729}",
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        cli.append(time.perf_counter() - start)
    for i in range(20):
        start = time.perf_counter()
        ws.remember(f"Library benchmark fact {i} about subject {i * 104729 % 7919}")
        lib.append(time.perf_counter() - start)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import giok.edges.cli"], env=env, check=True)
    startup = time.perf_counter() - start
    print(
        f"giok remember, CLI process  median of 20: {statistics.median(cli) * 1000:.0f} ms "
        f"(p95 {sorted(cli)[18] * 1000:.0f} ms; interpreter + import alone {startup * 1000:.0f} ms)"
    )
    print(
        f"Workspace.remember, library median of 20: {statistics.median(lib) * 1000:.0f} ms (incl. git commit)"
    )
    concurrency(tmp, env)
    scale(tmp)


LONG_LIVED = r"""
import statistics, sys, time
from giok import Workspace
ws = Workspace.open(sys.argv[1])
runs = []
for k in range(2 + int(sys.argv[3])):
    start = time.process_time()
    ws.remember(f"Server note {k}: " + sys.argv[2].split("|")[k % 20])
    runs.append(time.process_time() - start)
print(statistics.median(runs[2:]))
"""


def long_lived(tmp: Path, env: dict) -> None:
    """CPU of one remember in a long-lived process that did not write the file's last bytes."""
    from giok import Workspace

    cpu: dict[int, float] = {}
    for size in (SIZES[0], SIZES[-1]):
        ws, _ = Workspace.init(tmp / f"long{size}", name=f"long{size}")
        lines = "".join(f"- [2026-03-01] {_entry_text(i)} <!-- id: m-{i:06x} -->\n" for i in range(size))
        body = ws.read_text("MEMORY.md").replace(
            "## 📝 M30 : 30-day memory\n", "## 📝 M30 : 30-day memory\n" + lines
        )
        ws.edit("MEMORY.md", lambda old, body=body: (body, None), "bench: fill")
        cli = [sys.executable, "-m", "giok", "-w", f"long{size}", "remember", "Seed note about the editor"]
        subprocess.run(cli, env=env, check=True, capture_output=True)
        texts = "|".join(_entry_text(size + 17 * k) for k in range(20))
        run = subprocess.run(
            [sys.executable, "-c", LONG_LIVED, str(ws.root), texts, str(RUNS)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        cpu[size] = float(run.stdout)
        print(f"remember CPU in a long-lived process at {size:>5} entries: {cpu[size] * 1000:6.1f} ms")
    ratio = cpu[SIZES[-1]] / cpu[SIZES[0]]
    print(f"long-lived remember CPU {SIZES[-1]} / {SIZES[0]} entries: {ratio:.2f}x")


def concurrency(tmp: Path, env: dict) -> None:
    from giok import Workspace
    from giok.store.memoryfile import MemoryFile

    ws, _ = Workspace.init(tmp / "many", name="many")
    code = (
        "import sys, hashlib; from giok import Workspace; ws = Workspace.open(sys.argv[1])\n"
        "for i in range(25):\n"
        "    words = (hashlib.sha1(f'{sys.argv[2]}-{i}-{k}'.encode()).hexdigest()[:8] for k in range(6))\n"
        "    ws.remember('Note ' + ' '.join(words))\n"
    )
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", code, str(ws.root), str(w)], env=env) for w in range(8)]
    codes = [p.wait() for p in procs]
    elapsed = time.perf_counter() - start
    mf = MemoryFile.parse((ws.root / "MEMORY.md").read_bytes())
    commits = subprocess.run(
        ["git", "-C", str(ws.root), "rev-list", "--count", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"8 processes x 25 remember: exit codes {set(codes)}, {len(mf.entries())}/200 entries present, "
        f"{len(mf.problems)} problems, {commits} commits (incl. init), {elapsed:.1f} s total"
    )


if __name__ == "__main__":
    main()
