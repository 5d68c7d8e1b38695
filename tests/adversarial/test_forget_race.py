"""forget beside a long index sync, in real processes: the forget finishes (exit 0, no
traceback) without waiting out the sync, and search never returns the forgotten text after it.

The long sync holds the index's write lock because a slow embedder (registered through the real
`giok.providers.embeddings` entry-point group, from a dist-info folder on PYTHONPATH) sleeps per text.

Also a script for the before/after figures:
    PYTHONPATH=$PWD/src python tests/adversarial/test_forget_race.py --rounds 20
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conftest import run_giok

PLUGIN = '''
import os, time
from giok.providers.embeddings import Fake

class Slow(Fake):
    """The fake embedder's vectors, slowly: a long sync holds the index's write lock."""
    name = "slowfake"
    batch_size = 1

    @property
    def identity(self):
        return f"fake:{self.dim}"

    def embed_batch(self, texts, kind):
        if kind == "passage":
            time.sleep(float(os.environ.get("SLOW_EMBED_SECONDS", "0")))
            gate, until = os.environ.get("EMBED_GATE"), time.monotonic() + 60
            if gate and os.path.exists(gate):
                open(gate + ".held", "w").close()   # inside the sync's write transaction now
            while gate and os.path.exists(gate) and time.monotonic() < until:
                time.sleep(0.02)   # held until the test removes the gate file
        return super().embed_batch(texts, kind)
'''


def slow_plugin(folder: Path) -> Path:
    """A one-module distribution registering `slowfake` in the giok.providers.embeddings group."""
    (folder / "slowembed-0.dist-info").mkdir(parents=True, exist_ok=True)
    (folder / "slowembed.py").write_text(PLUGIN)
    (folder / "slowembed-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: slowembed\nVersion: 0\n"
    )
    (folder / "slowembed-0.dist-info" / "entry_points.txt").write_text(
        "[giok.providers.embeddings]\nslowfake = slowembed:Slow\n"
    )
    return folder


class Race:
    """One workspace, a secret entry in the index, and many new notes for a long sync."""

    def __init__(self, base: Path, name: str, env: dict, notes: int = 40):
        self.base, self.name, self.env = base, name, env
        self.root = base / name
        assert self.giok("init", self.root, "--name", name, "--user", "Seojun").returncode == 0
        self.secret = f"the vault combination is orange{name}zebra"
        out = self.giok("-w", name, "remember", self.secret, "--layer", "M90", "--type", "fact", "--json")
        self.entry_id = json.loads(out.stdout)["entry"]["id"]
        assert self.giok("-w", name, "index").returncode == 0
        (self.root / "notes").mkdir(exist_ok=True)
        for i in range(notes):
            (self.root / "notes" / f"n{i}.md").write_text(
                f"# Note {i}\n\nwords about topic {i} and item {i * 7}\n"
            )

    def giok(self, *args, slow: float = 0.0, timeout: float = 120, **env) -> subprocess.CompletedProcess:
        return run_giok(*args, env={**self.env, "SLOW_EMBED_SECONDS": str(slow), **env}, timeout=timeout)

    def start_sync(self, slow: float = 0.0, gate: Path | None = None) -> subprocess.Popen:
        """`giok index` that has taken the write lock (its first progress line is out) when this
        returns; it holds the lock `slow` seconds per text, or while the `gate` file exists."""
        if gate:
            gate.touch()
        proc = subprocess.Popen(
            [sys.executable, "-m", "giok", "-w", self.name, "index"],
            env={**self.env, "SLOW_EMBED_SECONDS": str(slow), "EMBED_GATE": str(gate or "")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if gate:
            held, until = Path(str(gate) + ".held"), time.monotonic() + 60
            while not held.exists() and proc.poll() is None and time.monotonic() < until:
                time.sleep(0.02)
            assert held.exists(), (
                proc.stderr.read() if proc.poll() is not None else "sync never reached the gate"
            )
        else:
            first = proc.stderr.readline()
            assert first.startswith("indexing "), first
        return proc

    def forget(self, **env) -> subprocess.CompletedProcess:
        return self.giok("-w", self.name, "forget", self.entry_id, "--reason", "race test", **env)

    def found(self) -> list[str]:
        """Result texts of a search for the secret (the search syncs first)."""
        out = self.giok(
            "-w", self.name, "search", self.secret, "--json", "--mode", "keyword", "--min-score", "0"
        )
        assert out.returncode == 0, out.stderr
        return [
            r["text"] for r in json.loads(out.stdout)["results"] if f"orange{self.name}zebra" in r["text"]
        ]

    def index_rows(self) -> int:
        """Chunks holding the secret in the index file as committed (read directly, no sync)."""
        db = sqlite3.connect(self.root / ".giok" / "index.sqlite")
        try:
            return db.execute(
                "SELECT count(*) FROM memories WHERE text LIKE ?", (f"%orange{self.name}zebra%",)
            ).fetchone()[0]
        finally:
            db.close()


def _env(base: Path, plugin: Path, busy: str | None) -> dict:
    env = {
        **os.environ,
        "GIOK_HOME": str(base / "home"),
        "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIOK_EMBEDDINGS": "slowfake",
        "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(plugin)) if p),
    }
    env.pop("GIOK_WORKSPACE", None)
    if busy is not None:
        env["GIOK_INDEX_BUSY_TIMEOUT"] = busy
    return env


def _race(tmp_path: Path, name: str) -> Race:
    return Race(tmp_path, name, _env(tmp_path, slow_plugin(tmp_path / "plugin"), busy="1"))


def test_forget_beside_a_long_sync_exits_0_and_the_text_never_comes_back(tmp_path):
    race = _race(tmp_path, "w1")
    gate = tmp_path / "gate"
    sync = race.start_sync(gate=gate)  # holds the write lock until the gate goes
    out = race.forget()
    still_syncing = sync.poll() is None
    gate.unlink()
    rest = sync.communicate(timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert "warning: the search index is busy" in out.stdout
    assert still_syncing, "forget waited for the whole sync instead of its busy timeout"
    assert sync.returncode == 0, rest[1]
    assert race.index_rows() == 0  # the sync applied the recorded purge before it committed
    assert race.found() == []
    assert race.secret not in (race.root / "MEMORY.md").read_text()


def test_forget_beside_a_sync_that_dies_still_never_returns_the_text(tmp_path):
    race = _race(tmp_path, "w2")
    sync = race.start_sync(gate=tmp_path / "gate")
    out = race.forget()
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert sync.poll() is None
    sync.send_signal(signal.SIGKILL)  # its transaction rolls back: the old rows stay committed
    sync.communicate()
    assert race.found() == []  # the next open purges before anything is returned
    assert race.index_rows() == 0


def test_a_search_beside_a_long_sync_is_one_clear_error(tmp_path):
    race = _race(tmp_path, "w3")
    gate = tmp_path / "gate"
    sync = race.start_sync(gate=gate)
    (race.root / "notes" / "later.md").write_text("# Later\n\nanother file the search must index first\n")
    out = race.giok("-w", race.name, "search", "topic", "--json")
    gate.unlink()
    sync.communicate(timeout=120)
    assert out.returncode == 7, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "the search index is busy" in out.stderr
    assert (
        race.giok("-w", race.name, "search", "topic", "--json").returncode == 0
    )  # and works once it is free


# -- before/after figures -------------------------------------------------------------------
def main(rounds: int, busy: str | None, slow: float) -> dict:
    base = Path(tempfile.mkdtemp(prefix="giok-forget-race-"))
    env = _env(base, slow_plugin(base / "plugin"), busy)
    tally = {"rounds": rounds, "exit_0": 0, "tracebacks": 0, "leaks": 0, "forget_s_max": 0.0}
    for r in range(rounds):
        race = Race(base, f"r{r}", env)
        sync = race.start_sync(slow=slow)
        started = time.monotonic()
        out = race.forget()
        tally["forget_s_max"] = max(tally["forget_s_max"], round(time.monotonic() - started, 1))
        sync.communicate()
        leaked = race.index_rows() > 0 or bool(race.found())
        tally["exit_0"] += out.returncode == 0
        tally["tracebacks"] += "Traceback" in out.stderr
        tally["leaks"] += leaked
        print(
            f"round {r}: exit {out.returncode}, traceback {'Traceback' in out.stderr}, leaked {leaked}",
            file=sys.stderr,
        )
    return tally


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--busy-timeout", default=None, help="GIOK_INDEX_BUSY_TIMEOUT for the forgets (default: unset)"
    )
    parser.add_argument("--slow", type=float, default=0.15, help="seconds per embedded text in the long sync")
    args = parser.parse_args()
    print(json.dumps(main(args.rounds, args.busy_timeout, args.slow)))
