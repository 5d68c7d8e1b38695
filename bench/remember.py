"""Time one `giok remember` end to end (median of 20, including the git commit), as a CLI
process and as a library call, plus the 8-writer concurrency run.

    .venv/bin/python bench/remember.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="giok-bench-"))
    env = {**os.environ, "GIOK_HOME": str(tmp / "home")}
    os.environ.update(env)
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


def concurrency(tmp: Path, env: dict) -> None:
    from giok import Workspace
    from giok.store.memoryfile import MemoryFile

    ws, _ = Workspace.init(tmp / "many", name="many")
    code = (
        "import sys, hashlib; from giok import Workspace; ws = Workspace.open(sys.argv[1])\n"
        "for i in range(25):\n"
        "    ws.remember('Note ' + ' "
        "'.join(hashlib.sha1(f'{sys.argv[2]}-{i}-{k}'.encode()).hexdigest()[:8] for k in range(6)))\n"
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
