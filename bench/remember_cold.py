"""CPU of one giok command in a fresh process (a CLI call, a hook, a cron routine) by MEMORY.md size.

    .venv/bin/python bench/remember_cold.py                      # this tree's giok
    .venv/bin/python bench/remember_cold.py --before OLD/src     # and another tree's, in the same run
    .venv/bin/python bench/remember_cold.py --sizes 100,5000 --runs 8

bench/remember.py --scale times `Workspace.remember` in one process, where the parse of MEMORY.md
and the policy index are kept between calls. Here every call is a new `python -m giok` process,
which starts with nothing kept in memory: what it reuses must come from the files. For each size
(100 and 5,000 MEMORY.md entries by default, written with bench/remember.py's `_entry_text`) and
each source tree, a workspace is built, then `runs` times in turn:

- `giok -w NAME remember TEXT` (a new text each time; it commits, so git runs);
- `giok -w NAME remember "Seojun now uses the … editor K"` ("change": a subject and a change
  word, so the policy also looks for an entry it replaces and a claim it negates);
- `giok -w NAME boot` right after it (MEMORY.md just changed: what a session start pays);
- `giok -w NAME search --mode keyword QUERY` (the fake embedder: the index is synced first, once,
  not counted; each search then syncs the MEMORY.md the remember just changed).

Modules are compiled once (bytecode in the temporary folder, as an installed giok has it,
whatever PYTHONDONTWRITEBYTECODE says). A figure is the median CPU (user + system) of the child
and everything it ran, git included, from `resource.getrusage(RUSAGE_CHILDREN)`. Trees are run
in turn, command by command, so a busy machine slows both alike. The last line gives each
command's ratio of its cost at the largest size to its cost at the smallest.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

import remember as remember_bench  # noqa: E402  (bench/remember.py: the entry texts)

COMMANDS = ("remember", "change", "boot", "search")


def _build(root: Path, home: Path, name: str, size: int) -> None:
    """A workspace NAME with `size` entries in M30, committed."""
    from giok import Home, Workspace

    ws, _ = Workspace.init(root / name, name=name, home=Home(home))
    lines = "".join(
        f"- [2026-03-01] {remember_bench._entry_text(i)} <!-- id: m-{i:06x} -->\n" for i in range(size)
    )
    heading = "## 📝 M30 : 30-day memory\n"
    body = ws.read_text("MEMORY.md").replace(heading, heading + lines)
    ws.edit("MEMORY.md", lambda old, body=body: (body, None), "bench: fill")


def _cpu(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds of one `python -m giok ARGS` and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "giok", *args], env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"giok {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", help="another tree's src/ folder, measured beside this one")
    parser.add_argument("--sizes", default="100,5000", help="MEMORY.md entries, comma-separated")
    parser.add_argument("--runs", type=int, default=8, help="calls of each command per size")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    trees = {"after": str(ROOT / "src")}
    if opts.before:
        trees = {"before": str(Path(opts.before).resolve()), **trees}
    tmp = Path(tempfile.mkdtemp(prefix="giok-cold-"))
    home = tmp / "home"
    base = {**os.environ, "GIOK_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIOK_EMBEDDINGS": "fake"}
    base.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed giok is
    envs = {
        tree: {**base, "PYTHONPATH": src, "PYTHONPYCACHEPREFIX": str(tmp / "pycache" / tree)}
        for tree, src in trees.items()
    }
    os.environ.update(base)
    cpu: dict[tuple[str, int, str], list[float]] = {}
    for size in sizes:
        for tree, env in envs.items():
            _build(tmp, home, f"{tree}{size}", size)
            _cpu(["-w", f"{tree}{size}", "search", "--mode", "keyword", "warm up"], env)  # the first index
        for k in range(opts.runs):
            text = f"Cold note {k}: {remember_bench._entry_text(size + 17 * k)}"
            change = f"Seojun now uses the {remember_bench._VOCAB[k % 36]} editor {k}"
            for command, args in (
                ("remember", ["remember", text]),
                ("change", ["remember", change]),
                ("boot", ["boot"]),
                ("search", ["search", "--mode", "keyword", "frontend laptop"]),
            ):
                for tree, env in envs.items():
                    name = f"{tree}{size}"
                    cpu.setdefault((tree, size, command), []).append(_cpu(["-w", name, *args], env))
    for tree in trees:
        for size in sizes:
            figures = ", ".join(
                f"{command} {statistics.median(cpu[tree, size, command]) * 1000:4.0f} ms"
                for command in COMMANDS
            )
            print(f"{tree:>6} {size:>5} entries: {figures}  (median of {opts.runs}, CPU incl. git)")
        ratio = {
            c: statistics.median(cpu[tree, sizes[-1], c]) / statistics.median(cpu[tree, sizes[0], c])
            for c in COMMANDS
        }
        ratios = ", ".join(f"{command} {ratio[command]:.2f}x" for command in COMMANDS)
        print(f"{tree:>6} {sizes[-1]} / {sizes[0]} entries: {ratios}")


if __name__ == "__main__":
    main()
