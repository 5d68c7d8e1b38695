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


# -- 2. workspaces remove, and workspaces whose folder is gone ------------------------------
@pytest.fixture
def trio(tmp_path, giok_home):
    made = {n: Workspace.init(tmp_path / n, name=n, user="Seojun", home=giok_home)[0] for n in ("a", "b", "c")}
    return made


@pytest.fixture
def fake_cron(tmp_path, monkeypatch):
    table = tmp_path / "crontab.txt"
    script = tmp_path / "crontab.sh"
    script.write_text(f'if [ "$1" = "-l" ]; then cat "{table}" 2>/dev/null || {{ echo "no crontab for you" >&2; exit 1; }}; '
                      f'else cat > "{table}"; fi\n')
    monkeypatch.setenv("GIOK_CRONTAB", f"sh {script}")
    return table


def test_send_all_skips_a_workspace_whose_folder_is_gone_and_says_so(trio, cli):
    shutil.rmtree(trio["b"].root)
    r = cli("crossview", "send", "--from", "a", "--all", "the deploy moved to Friday", "--json")
    data = json.loads(r.output)
    assert data["recipients"] == ["c"]
    assert data["skipped_missing"] == ["b"]
    assert data["transports"]["local"]["ok"] is True
    text = cli("crossview", "send", "--from", "a", "the review is on Monday")
    assert "skipped (folder gone): b" in text.output


def test_send_to_a_gone_workspace_by_name_is_refused(trio, cli):
    shutil.rmtree(trio["b"].root)
    r = run_giok("crossview", "send", "--from", "a", "--to", "b", "the deploy moved to Friday")
    assert r.returncode != 0 and "gone" in r.stderr and "Traceback" not in r.stderr


def test_workspaces_marks_missing_folders(trio, cli):
    shutil.rmtree(trio["b"].root)
    data = json.loads(cli("workspaces", "--json").output)
    assert data["missing"] == ["b"]
    assert [w["missing"] for w in data["workspaces"]] == [False, True, False]
    assert "missing" in cli("workspaces").output.splitlines()[1]


def test_workspaces_remove_keeps_files_unless_asked(trio, cli, giok_home, fake_cron):
    r = cli("workspaces", "remove", "a", "--json")
    assert json.loads(r.output)["files"] == "kept"
    assert "a" not in giok_home.workspaces() and (trio["a"].root / "MEMORY.md").is_file()
    refused = run_giok("workspaces", "remove", "c", "--delete-files", input="n\n", env={"GIOK_CRONTAB": os.environ["GIOK_CRONTAB"]})
    assert refused.returncode != 0 and trio["c"].root.is_dir() and "c" in giok_home.workspaces()
    cli("workspaces", "remove", "c", "--delete-files", "--yes")
    assert not trio["c"].root.exists() and "c" not in giok_home.workspaces()
    unknown = run_giok("workspaces", "remove", "zzz")
    assert unknown.returncode != 0 and "unknown workspace 'zzz'" in unknown.stderr


def test_workspaces_remove_takes_the_workspace_out_of_the_crontab(trio, cli, fake_cron):
    cli("-w", "a", "schedule", "install")
    cli("-w", "b", "schedule", "install")
    assert "giok:a:" in fake_cron.read_text()
    out = json.loads(cli("workspaces", "remove", "a", "--json").output)
    assert out["cron_removed"] and "giok:a:" not in fake_cron.read_text() and "giok:b:" in fake_cron.read_text()
