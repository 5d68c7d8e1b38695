"""Two-machine sync soak with SIGKILLs: real `giok` processes, a bare git remote, the real merge
driver.

    PYTHONPATH=src python bench/sync_soak.py [--rounds 40] [--seed N] [--dir PATH] [--json]

Machine a made the workspace and pushed it, machine b cloned it. Each round both remember one
or two new facts (and every third round both log a decision, so the merge renumbers one), then
one of them runs `giok sync` as its own process group and the group (giok, its git child, the
merge driver) is SIGKILLed at one point of the sync, in turn: after the fetch, inside the
driver, after the merge (nothing committed), giok alone while its git merge runs on, after the
merge commit, after the push, after a fast-forward, or after a random delay. Then plain
`giok sync` runs on the killed machine, the other, and the killed one again.

Counted: entries (and decisions) written; kills that landed; syncs after a kill that failed
("unmergeable", target 0); rounds that left a merge in progress, uncommitted changes or git's
`.merge_file_*` temp files after those syncs ("leftovers", target 0); at the end, after a last
sync on both, the written texts missing from either machine ("lost", target 0) and whether the
two machines' HEADs agree. Exit 1 when anything was lost, left or unmergeable.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# Runs the CLI as its own process group and SIGKILLs the group at KILL_AT: `after:<git command>`
# (`after:merge` is the true merge, `--no-commit`; `after:ff` the fast-forward), `driver` (inside
# git's merge, once giok's driver has written its result), `parent` (giok alone, while its git
# merge runs on and finishes by itself), anything else: no kill from inside.
KILLER = r"""
import os, shlex, signal, subprocess, sys
os.setpgrp()
point = os.environ["KILL_AT"]
from giok.store import git, remote
real_run = git.run
def run(root, *args, **kw):
    true_merge = args[:1] == ("merge",) and "--no-commit" in args
    if point == "parent" and true_merge:
        subprocess.Popen(["git", "-C", str(root), *args], env={**os.environ, **(kw.get("env") or {})},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.kill(os.getpid(), signal.SIGKILL)
    out = real_run(root, *args, **kw)
    name = "ff" if args[:1] == ("merge",) and "--ff-only" in args else args[0]
    if point == "after:" + name and (name != "merge" or true_merge):
        os.killpg(0, signal.SIGKILL)
    return out
git.run = run
WRAP = '''
import os, signal, sys
from giok.edges.cli import main
try:
    main(['merge-driver', *sys.argv[1:]], prog_name='giok')
except SystemExit:
    pass
os.killpg(0, signal.SIGKILL)
'''
if point == "driver":
    remote.driver_command = lambda: f"{shlex.quote(sys.executable)} -c {shlex.quote(WRAP)} %O %A %B %P"
from giok.edges.cli import main
main(sys.argv[1:], prog_name="giok")
"""
POINTS = (
    "after:fetch",
    "driver",
    "after:merge",
    "parent",
    "after:commit",
    "after:push",
    "after:ff",
    "random",
)
INCOMING = (
    "driver",
    "after:merge",
    "parent",
    "after:commit",
    "after:ff",
)  # points reached only with commits to merge
WORDS = (
    "amber",
    "falcon",
    "river",
    "copper",
    "maple",
    "orbit",
    "velvet",
    "cedar",
    "harbor",
    "quartz",
    "lumen",
)


@dataclass
class Figures:
    rounds: int = 0
    written: int = 0
    decisions: int = 0
    kills: int = 0
    syncs: int = 0
    unmergeable: int = 0
    leftovers: int = 0
    lost: int = 0
    landed: dict[str, int] = field(default_factory=dict)  # kills that landed, per point
    converged: bool = False
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


class Machine:
    def __init__(self, name: str, base: Path):
        self.name, self.root = name, base / name / "soak"
        self.env = {
            **os.environ,
            "GIOK_HOME": str(base / f"home-{name}"),
            "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIOK_JUDGEMENT": "rules",
        }
        self.env.pop("GIOK_WORKSPACE", None)
        self.env.pop("GIOK_NOW", None)
        self.texts: list[str] = []  # remembered and decided on this machine (printed as written)

    def giok(self, *args: str, workspace: bool = True) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "giok", *(["-w", str(self.root)] if workspace else []), *args]
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=300)

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.root), *args], env=self.env, capture_output=True, text=True
        ).stdout

    def remember(self, rng: random.Random) -> bool:
        a, b = rng.sample(WORDS, 2)
        text = f"Project {secrets.token_hex(3)} from {self.name} runs on the {a} {b} cluster"
        out = self.giok("remember", "--json", text)
        if out.returncode == 0 and json.loads(out.stdout).get("action") == "written":
            self.texts.append(text)
            return True
        return False

    def decide(self) -> bool:
        text = f"Decision {secrets.token_hex(3)} taken on {self.name}"
        if self.giok("decide", text, "--why", "the soak").returncode == 0:
            self.texts.append(text)
            return True
        return False

    def killed_sync(self, point: str, rng: random.Random, typical: float) -> bool:
        """One sync killed at `point`; True when the kill landed."""
        argv = [sys.executable, "-c", KILLER, "-w", str(self.root), "sync"]
        proc = subprocess.Popen(
            argv,
            env={**self.env, "KILL_AT": point},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if point == "random":
            try:
                proc.wait(timeout=rng.uniform(0, typical))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    proc.kill()
        code = proc.wait(timeout=300)
        if point == "parent":
            self.wait_for_git()
        return code == -signal.SIGKILL

    def wait_for_git(self) -> None:
        from giok.store import git

        deadline = time.monotonic() + 120
        while git.running_in(self.root) and time.monotonic() < deadline:
            time.sleep(0.05)

    def leftovers(self) -> list[str]:
        found = [p.name for p in self.root.glob(".merge_file_*")]
        if (self.root / ".git" / "MERGE_HEAD").exists():
            found.append("MERGE_HEAD")
        if self.git("status", "--porcelain", "--untracked-files=no").strip():
            found.append("uncommitted changes")
        return found

    def holds(self) -> str:
        return "\n".join(
            [
                (self.root / "MEMORY.md").read_text("utf-8", "replace"),
                (self.root / "state" / "decisions.md").read_text("utf-8", "replace"),
            ]
        )


def setup(base: Path) -> tuple[Machine, Machine]:
    bare = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    a, b = Machine("a", base), Machine("b", base)
    steps = [
        (a, ("init", str(a.root), "--name", "soak", "--user", "Seojun"), False),
        (a, ("remote", "add", "origin", str(bare)), True),
        (a, ("sync",), True),
    ]
    for machine, args, ws in steps:
        out = machine.giok(*args, workspace=ws)
        if out.returncode != 0:
            raise SystemExit(f"setup failed: giok {' '.join(args)}: {out.stderr}")
    subprocess.run(["git", "clone", "-q", str(bare), str(b.root)], check=True, env=b.env)
    for args, ws in ((("init", str(b.root), "--name", "soak", "--user", "Seojun"), False), (("sync",), True)):
        out = b.giok(*args, workspace=ws)
        if out.returncode != 0:
            raise SystemExit(f"setup failed: giok {' '.join(args)}: {out.stderr}")
    return a, b


def sync(machine: Machine, figures: Figures) -> None:
    figures.syncs += 1
    out = machine.giok("sync")
    if out.returncode != 0:
        figures.unmergeable += 1
        figures.failures.append(f"round {figures.rounds} sync on {machine.name}: {out.stderr.strip()[-300:]}")


def soak(base: Path, rounds: int, seed: int) -> Figures:
    rng = random.Random(seed)
    figures = Figures()
    started = time.monotonic()
    a, b = setup(base)
    typical = 1.0
    for n in range(rounds):
        figures.rounds = n + 1
        killed, other = (a, b) if n % 2 == 0 else (b, a)
        point = POINTS[n % len(POINTS)]
        for machine in (a, b):
            if point == "after:ff" and machine is killed:
                continue  # nothing new here: the sync fast-forwards
            figures.written += sum(machine.remember(rng) for _ in range(rng.choice((1, 2))))
            if n % 3 == 0:
                figures.decisions += machine.decide()
        if point in INCOMING or rng.random() < 0.5:  # the other side pushed first: a merge here
            sync(other, figures)
        t0 = time.monotonic()
        landed = killed.killed_sync(point, rng, typical)
        figures.kills += landed
        figures.landed[point] = figures.landed.get(point, 0) + landed
        typical = max(typical, time.monotonic() - t0)
        for machine in (killed, other, killed):
            sync(machine, figures)
        for machine in (a, b):
            left = machine.leftovers()
            if left:
                figures.leftovers += 1
                figures.failures.append(f"round {n + 1} ({point}) left on {machine.name}: {', '.join(left)}")
    for machine in (a, b, a):
        sync(machine, figures)
    for machine in (a, b):
        held = machine.holds()
        missing = [t for m in (a, b) for t in m.texts if t not in held]
        figures.lost += len(missing)
        figures.failures += [f"lost on {machine.name}: {t}" for t in missing[:5]]
    figures.converged = a.git("rev-parse", "HEAD") == b.git("rev-parse", "HEAD")
    figures.seconds = round(time.monotonic() - started, 1)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40, help="kill rounds (default 40)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--dir", type=Path, default=None, help="work here (default: a temp dir, removed)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        figures = soak(args.dir, args.rounds, seed)
    else:
        with tempfile.TemporaryDirectory(prefix="giok-sync-soak-") as tmp:
            figures = soak(Path(tmp), args.rounds, seed)
    data = {"seed": seed, **figures.__dict__}
    if args.json:
        print(json.dumps(data))
    else:
        print(f"seed {seed}: {figures.rounds} rounds in {figures.seconds} s, {figures.kills} kills landed")
        print("kills landed per point: " + ", ".join(f"{k} {v}" for k, v in figures.landed.items()))
        print(f"entries written      {figures.written} (+ {figures.decisions} decisions)")
        print(f"lost                 {figures.lost}   (target 0)")
        print(f"syncs unmergeable    {figures.unmergeable} of {figures.syncs}   (target 0)")
        print(f"rounds with leftovers {figures.leftovers}   (target 0)")
        print(f"machines converged   {figures.converged}")
        for line in figures.failures[:20]:
            print("  " + line)
    bad = figures.lost or figures.unmergeable or figures.leftovers or not figures.converged
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
