"""Everyday commands (issue 15): quickstart and the example rerunnable, workspaces remove and
missing folders, edit/move/show filters, check's exit status, schedule install --dry-run,
output for people (colour, Korean labels), watch --json and the memo's stamp on flush."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from giok import Home, Workspace

from conftest import run_giok

FAKE = {"GIOK_EMBEDDINGS": "fake"}
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"


# -- 1. quickstart and the example loop run again and again ---------------------------------
def test_quickstart_reruns_in_one_home_and_after_its_folder_is_deleted(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "GIOK_EMBEDDINGS": "fake"}
    first = run_giok("quickstart", env=env)
    assert first.returncode == 0, first.stderr
    again = run_giok("quickstart", env=env)
    assert again.returncode == 0, again.stderr
    assert "already" in again.stdout
    assert len(list(tmp.iterdir())) == 1          # no second, empty temp folder
    demo = Path(Home().workspaces()["zeon-demo"]["path"])
    shutil.rmtree(demo.parent)
    third = run_giok("quickstart", "--json", env=env)
    assert third.returncode == 0, third.stderr
    data = json.loads(third.stdout)
    assert Path(data["path"]).is_dir() and data["path"] != str(demo)
    assert [m["action"] for m in data["memories"]] == ["written"] * 4


def test_quickstart_with_another_path_says_how_and_leaves_nothing(tmp_path):
    assert run_giok("quickstart", "--path", tmp_path / "a", env=FAKE).returncode == 0
    other = run_giok("quickstart", "--path", tmp_path / "b", env=FAKE)
    assert other.returncode != 0
    assert "giok workspaces remove zeon-demo" in other.stderr and "Traceback" not in other.stderr
    assert not (tmp_path / "b").exists()


def test_example_agent_loop_reruns(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path), "GIOK_EMBEDDINGS": "fake"}
    for _ in range(2):
        proc = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    shutil.rmtree(Path(Home().workspaces()["zeon-loop"]["path"]))
    proc = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
