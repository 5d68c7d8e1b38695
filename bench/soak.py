"""Crash and concurrency soak: real `giok` processes, killed at random moments or racing.

    PYTHONPATH=src python bench/soak.py [--kills 100] [--writers 12] [--duration 60] [--seed N]

1. kill: `--kills` rounds; each starts one `python -m giok` remember, forget or distill and
   SIGKILLs it after a random delay (0 .. 1 x the op's measured duration). Then one
   unrelated write (a `remember` of a fresh fact, "the probe") runs, and every invariant is
   checked.
2. concurrent: `--writers` threads each run giok subprocesses back to back for `--duration`
   seconds (remember, diary, task add, decide, forget of an id remembered earlier).

Checked after each round: MEMORY.md and the other giok files parse; `git fsck` is clean;
every write that printed success is in HEAD (and every forget that printed success took its
entry out); the next write succeeds and commits only its own line (nothing swept in from the
killed one); `git status --porcelain` is clean for giok's files after it; no `.*.tmp` file is
left anywhere in the work tree. Prints a table: scenario / tried / failed / lost, with the
failure kinds beside. Exit 1 when anything failed or was lost.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

GIOK_PATHS = ("MEMORY.md", "memory", "compound", "state", "HEARTBEAT.md", "AGENTS.md", "SOUL.md", "USER.md")
WORDS = [
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
    "tundra",
    "basil",
    "cobalt",
    "saffron",
    "willow",
    "ember",
    "nickel",
    "meadow",
    "prism",
    "garnet",
    "juniper",
    "onyx",
    "pewter",
]
TMP_RE = re.compile(r"^\..+\.tmp$")


@dataclass
class Tally:
    tried: int = 0
    killed: int = 0
    failed: int = 0
    lost: int = 0
    kinds: dict = field(default_factory=dict)

    def fail(self, kind: str) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


class Soak:
    """One workspace in a temp dir, driven through real giok subprocesses."""

    def __init__(self, base: Path, seed: int):
        self.rng = random.Random(seed)
        self.ws = base / "ws"
        self.env = {
            **os.environ,
            "GIOK_HOME": str(base / "home"),
            "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        self.env.pop("GIOK_WORKSPACE", None)
        self.env.pop("GIOK_NOW", None)
        self.kept: set[str] = set()  # ids whose remember printed success (and not forgotten)
        self.gone: set[str] = set()  # ids whose forget printed success
        self.markers: list[str] = []  # texts of diary / task / decision writes that succeeded
        self.lock = threading.Lock()
        self.run("init", str(self.ws), "--name", "soak", "--user", "Seojun", workspace=False)

    # -- processes --------------------------------------------------------------------------
    def argv(self, *args: str, workspace: bool = True) -> list[str]:
        return [sys.executable, "-m", "giok", *(["-w", str(self.ws)] if workspace else []), *args]

    def run(self, *args: str, workspace: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv(*args, workspace=workspace), env=self.env, capture_output=True, text=True, timeout=180
        )

    def git(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["git", "-C", str(self.ws), *args], env=self.env, capture_output=True, text=True
        )

    # -- writes -------------------------------------------------------------------------------
    def fact(self) -> str:
        a, b = self.rng.sample(WORDS, 2)
        return f"Project {secrets.token_hex(3)} runs on the {a} {b} cluster"

    def remember(self) -> tuple[list[str], callable]:
        def done(proc):
            entry = json.loads(proc.stdout).get("entry") or {}
            if json.loads(proc.stdout).get("action") == "written" and entry.get("id"):
                with self.lock:
                    self.kept.add(entry["id"])

        return ["remember", "--json", self.fact()], done

    def forget(self) -> tuple[list[str], callable] | None:
        with self.lock:
            if not self.kept:
                return None
            target = self.rng.choice(sorted(self.kept))
            self.kept.discard(target)  # its fate is open until the forget reports

        def done(proc):
            with self.lock:
                self.gone.add(target)

        return ["forget", target, "--reason", f"soak drops {target}"], done

    def marked(self, *args: str) -> tuple[list[str], callable]:
        marker = f"soakmark{secrets.token_hex(4)}"

        def done(proc):
            with self.lock:
                self.markers.append(marker)

        return [a.replace("MARK", marker) for a in args], done

    def distill_prep(self) -> None:
        for _ in range(2):
            a, b = self.rng.sample(WORDS, 2)
            self.run("diary", f"we decided to keep the {a} {b} build for service {secrets.token_hex(2)}")

    def repair(self) -> None:
        """By hand, what a user would do after a failed round: drop git locks and temp files,
        commit what is left (so later rounds measure their own kill only)."""
        for lock in (self.ws / ".git").rglob("*.lock"):
            lock.unlink(missing_ok=True)
        for path in self._stray():
            os.unlink(path)
        self.git("add", "-A", "--", *GIOK_PATHS)
        self.git("commit", "-q", "--no-verify", "-m", "soak: repair after a failed round")

    # -- checks ------------------------------------------------------------------------------
    def status(self) -> str:
        return self.git("status", "--porcelain", "--", *GIOK_PATHS).stdout.strip()

    def head_text(self) -> str:
        names = self.git("ls-tree", "-r", "--name-only", "HEAD", "--", *GIOK_PATHS).stdout.split()
        batch = subprocess.run(
            ["git", "-C", str(self.ws), "cat-file", "--batch"],
            env=self.env,
            capture_output=True,
            input="".join(f"HEAD:{n}\n" for n in names).encode(),
        )
        return batch.stdout.decode("utf-8", errors="replace")

    def check(self, tally: Tally, probe: bool = True) -> None:
        """Run the next write (the probe) and every invariant; count what broke."""
        before = self.git("rev-parse", "HEAD").stdout.strip()
        if probe:
            args, done = self.remember()
            proc = self.run(*args)
            if proc.returncode != 0:
                tally.fail("next write failed")
                sys.stderr.write(f"probe failed: {proc.stderr.strip()[-300:]}\n")
            else:
                done(proc)
                if self._swept(before):
                    tally.fail("swept into next commit")
        if self.status():
            tally.fail("uncommitted after next write")
        if self.git("fsck", "--no-progress").returncode != 0:
            tally.fail("git fsck")
        if self._unparsable():
            tally.fail("file does not parse")
        if self._stray():
            tally.fail("stray .tmp")
        tally.lost += self._lost()

    def _swept(self, before: str) -> bool:
        """The probe's commit(s) after `before` may hold a `hand edit:` commit and its own one
        line in MEMORY.md; anything else came from the killed write."""
        log = self.git("log", "--format=%H %s", f"{before}..HEAD").stdout.splitlines()
        for line in log:
            sha, subject = line.split(" ", 1)
            if subject.startswith("hand edit:"):
                return True  # the soak never edits by hand: a killed write's leftovers
            stat = self.git("show", "--numstat", "--format=", sha).stdout.split("\n")
            changed = [row for row in stat if row.strip()]
            if changed != ["1\t0\tMEMORY.md"]:
                return True
        return False

    def _unparsable(self) -> bool:
        """MEMORY.md parses without problems; tasks and decisions read (in-process, same code)."""
        from giok import Home, Workspace
        from giok.store.memoryfile import MemoryFile

        try:
            ws = Workspace(self.ws, name="soak", home=Home(Path(self.env["GIOK_HOME"])))
            ws.tasks(), ws.decisions(), ws.state()
        except Exception as exc:
            sys.stderr.write(f"unreadable: {exc}\n")
            return True
        return bool(MemoryFile.parse((self.ws / "MEMORY.md").read_bytes()).problems)

    def _stray(self) -> list[str]:
        found = []
        for folder, dirs, files in os.walk(self.ws):
            dirs[:] = [d for d in dirs if d != ".git"]
            found += [os.path.join(folder, f) for f in files if TMP_RE.match(f)]
        return found

    def _lost(self) -> int:
        text = self.head_text()
        memory = self.git("show", "HEAD:MEMORY.md").stdout
        with self.lock:
            lost = [i for i in self.kept if i not in text] + [m for m in self.markers if m not in text]
            lost += [i for i in self.gone if f"id: {i}" in memory or f"id:{i}" in memory]
        if lost:
            sys.stderr.write(f"lost: {lost[:5]}\n")
        return len(lost)


# -- scenario 1: kills ---------------------------------------------------------------------------
def measure(soak: Soak) -> dict[str, float]:
    """How long each op takes here, so kill delays fall inside it."""
    took = {}
    for op in ("remember", "forget", "distill"):
        start = time.perf_counter()
        one(soak, op, delay=None)
        took[op] = time.perf_counter() - start
    return took


def one(soak: Soak, op: str, delay: float | None) -> bool:
    """Start op, SIGKILL it after delay (None: let it finish). True when it was killed."""
    if op == "distill":
        soak.distill_prep()
        args, done = ["distill"], None
    else:
        planned = soak.forget() if op == "forget" else soak.remember()
        if planned is None:
            soak.run(*soak.remember()[0])
            return one(soak, "remember", delay)
        args, done = planned
    proc = subprocess.Popen(
        soak.argv(*args), env=soak.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if delay is not None:
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            return True
    out, err = proc.communicate()
    if proc.returncode == 0 and done:
        done(subprocess.CompletedProcess(args, 0, out, err))
    return False


def kill_rounds(soak: Soak, kills: int) -> Tally:
    took = measure(soak)
    tally = Tally()
    # remember it so forgets always have targets
    for _ in range(3):
        args, done = soak.remember()
        done(soak.run(*args))
    for n in range(kills):
        op = ("remember", "forget", "distill")[n % 3]
        tally.tried += 1
        tally.killed += one(soak, op, delay=soak.rng.uniform(0.0, 1.0) * took[op])
        if soak.status():
            tally.fail("dirty right after kill")
        round_ = Tally()
        soak.check(round_)
        tally.lost += round_.lost
        for kind, _count in round_.kinds.items():
            tally.fail(kind)
        if round_.kinds or round_.lost:
            tally.failed += 1
            soak.repair()  # so each round starts from a sound workspace
    return tally


# -- scenario 2: concurrent writers ------------------------------------------------------------
def writer(soak: Soak, deadline: float, tally: Tally, failures: list[str]) -> None:
    while time.monotonic() < deadline:
        kind = soak.rng.choice(("remember", "remember", "diary", "task", "decide", "forget"))
        if kind == "remember":
            planned = soak.remember()
        elif kind == "forget":
            planned = soak.forget() or soak.remember()
        elif kind == "diary":
            planned = soak.marked("diary", "MARK happened in the soak")
        elif kind == "task":
            planned = soak.marked("task", "add", "MARK check the soak")
        else:
            planned = soak.marked("decide", "MARK is how the soak decides", "--why", "soak")
        args, done = planned
        proc = soak.run(*args)
        with soak.lock:
            tally.tried += 1
        if proc.returncode == 0:
            done(proc)
        else:
            with soak.lock:
                tally.failed += 1
                failures.append(f"{args[0]}: {proc.stderr.strip()[-200:]}")


def concurrent(soak: Soak, writers: int, duration: float) -> Tally:
    tally, failures = Tally(), []
    deadline = time.monotonic() + duration
    threads = [
        threading.Thread(target=writer, args=(soak, deadline, tally, failures)) for _ in range(writers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for line in failures[:5]:
        sys.stderr.write(f"writer failed: {line}\n")
    check = Tally()
    soak.check(check)
    tally.kinds = check.kinds
    tally.failed += sum(check.kinds.values())
    tally.lost = check.lost
    return tally


def table(rows: list[tuple[str, Tally]]) -> str:
    out = [f"{'scenario':<22} {'tried':>6} {'killed':>6} {'failed':>6} {'lost':>5}  kinds"]
    for name, t in rows:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(t.kinds.items())) or "-"
        out.append(f"{name:<22} {t.tried:>6} {t.killed:>6} {t.failed:>6} {t.lost:>5}  {kinds}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100, help="SIGKILL rounds (default 100)")
    parser.add_argument("--writers", type=int, default=12, help="concurrent writer processes (default 12)")
    parser.add_argument(
        "--duration", type=float, default=60.0, help="seconds of concurrent writing (default 60)"
    )
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    with tempfile.TemporaryDirectory(prefix="giok-soak-") as base:
        soak = Soak(Path(base), seed)
        rows = [("kill remember/forget/distill", kill_rounds(soak, args.kills))] if args.kills else []
        if args.writers and args.duration > 0:
            rows.append((f"{args.writers} concurrent writers", concurrent(soak, args.writers, args.duration)))
    if args.json:
        print(json.dumps({name: t.__dict__ for name, t in rows}))
    else:
        print(f"seed {seed}\n" + table(rows))
    return 1 if any(t.failed or t.lost for _, t in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
