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

from conftest import run_giok
from giok import Home, Workspace

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
    assert len(list(tmp.iterdir())) == 1  # no second, empty temp folder
    demo = Path(Home().workspaces()["zeon-demo"]["path"])
    shutil.rmtree(demo.parent)
    third = run_giok("quickstart", "--json", env=env)
    assert third.returncode == 0, third.stderr
    data = json.loads(third.stdout)
    assert Path(data["path"]).is_dir()
    assert data["path"] != str(demo)
    assert [m["action"] for m in data["memories"]] == ["written"] * 4


def test_quickstart_with_another_path_says_how_and_leaves_nothing(tmp_path):
    assert run_giok("quickstart", "--path", tmp_path / "a", env=FAKE).returncode == 0
    other = run_giok("quickstart", "--path", tmp_path / "b", env=FAKE)
    assert other.returncode != 0
    assert "giok workspaces remove zeon-demo" in other.stderr
    assert "Traceback" not in other.stderr
    assert not (tmp_path / "b").exists()


def test_example_agent_loop_reruns(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path), "GIOK_EMBEDDINGS": "fake"}
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    shutil.rmtree(Path(Home().workspaces()["zeon-loop"]["path"]))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr


# -- 2. workspaces remove, and workspaces whose folder is gone ------------------------------
@pytest.fixture
def trio(tmp_path, giok_home):
    return {
        n: Workspace.init(tmp_path / n, name=n, user="Seojun", home=giok_home)[0] for n in ("a", "b", "c")
    }


@pytest.fixture
def fake_cron(tmp_path, setenv):
    table = tmp_path / "crontab.txt"
    script = tmp_path / "crontab.sh"
    script.write_text(
        f'if [ "$1" = "-l" ]; then cat "{table}" 2>/dev/null || '
        f'{{ echo "no crontab for you" >&2; exit 1; }}; '
        f'else cat > "{table}"; fi\n'
    )
    setenv("GIOK_CRONTAB", f"sh {script}")
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
    assert r.returncode != 0
    assert "gone" in r.stderr
    assert "Traceback" not in r.stderr


def test_workspaces_marks_missing_folders(trio, cli):
    shutil.rmtree(trio["b"].root)
    data = json.loads(cli("workspaces", "--json").output)
    assert data["missing"] == ["b"]
    assert [w["missing"] for w in data["workspaces"]] == [False, True, False]
    assert "missing" in cli("workspaces").output.splitlines()[1]


def test_workspaces_remove_keeps_files_unless_asked(trio, cli, giok_home, fake_cron):
    r = cli("workspaces", "remove", "a", "--json")
    assert json.loads(r.output)["files"] == "kept"
    assert "a" not in giok_home.workspaces()
    assert (trio["a"].root / "MEMORY.md").is_file()
    refused = run_giok(
        "workspaces",
        "remove",
        "c",
        "--delete-files",
        input="n\n",
        env={"GIOK_CRONTAB": os.environ["GIOK_CRONTAB"]},
    )
    assert refused.returncode != 0
    assert trio["c"].root.is_dir()
    assert "c" in giok_home.workspaces()
    assert "no terminal to confirm" in refused.stderr
    assert "--yes" in refused.stderr
    cli("workspaces", "remove", "c", "--delete-files", "--yes")
    assert not trio["c"].root.exists()
    assert "c" not in giok_home.workspaces()
    unknown = run_giok("workspaces", "remove", "zzz")
    assert unknown.returncode != 0
    assert "unknown workspace 'zzz'" in unknown.stderr


def test_workspaces_remove_takes_the_workspace_out_of_the_crontab(trio, cli, fake_cron):
    cli("-w", "a", "schedule", "install")
    cli("-w", "b", "schedule", "install")
    assert "giok:a:" in fake_cron.read_text()
    out = json.loads(cli("workspaces", "remove", "a", "--json").output)
    assert out["cron_removed"]
    assert "giok:a:" not in fake_cron.read_text()
    assert "giok:b:" in fake_cron.read_text()


# -- 3. edit, move, show filters -------------------------------------------------------------
def _git(ws, *args) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_edit_keeps_the_id_goes_through_the_policy_and_keeps_history(ws, cli):
    mid = ws.remember("Seojun prefers tea over coffee", type="preference", layer="M30").entry.id
    r = json.loads(
        cli(
            "-w",
            "zeon",
            "edit",
            mid,
            "Seojun prefers green tea; api_key=sk-abcdef1234567890abcdef",
            "--reason",
            "more precise",
            "--json",
        ).output
    )
    assert r["action"] == "edited"
    assert r["entry"]["id"] == mid
    entry = ws.get(mid)
    assert "green tea" in entry.text
    assert "sk-abcdef" not in ws.read_text("MEMORY.md")
    assert entry.type == "preference"
    assert entry.layer == "M30"
    assert "memory: edit " + mid in _git(ws, "log", "-1", "--format=%B")
    assert "Seojun prefers tea over coffee" in _git(ws, "log", "-p", "--", "MEMORY.md")
    refused = json.loads(cli("-w", "zeon", "edit", mid, "Hello there!", "--json").output)
    assert refused["action"] == "refused"
    assert "green tea" in ws.get(mid).text
    other = ws.remember("The deploy is on Friday", layer="M90").entry.id
    dup = json.loads(cli("-w", "zeon", "edit", other, ws.get(mid).text, "--json").output)
    assert dup["action"] == "duplicate"
    assert ws.get(other).text == "The deploy is on Friday"


def test_edit_of_an_adopted_line_keeps_its_id(ws, cli):
    mf = ws.read_text("MEMORY.md")
    ws.path("MEMORY.md").write_text(mf + "\n- Seojun reads the news at 07:00\n", "utf-8")
    mid = next(e.id for e in ws.memory().entries() if "news" in e.text)
    cli("-w", "zeon", "edit", mid, "Seojun reads the news at 07:30")
    assert ws.get(mid).text == "Seojun reads the news at 07:30"


def test_edit_and_move_of_unknown_ids_fail_cleanly(ws):
    for args in (
        ("edit", "m-abcdef", "Seojun likes rain"),
        ("move", "m-abcdef", "--layer", "M90"),
        ("move", "nonsense", "--layer", "M90"),
    ):
        r = run_giok("-w", ws.root, *args)
        assert r.returncode != 0
        assert r.stderr.startswith("Error:")
        assert "Traceback" not in r.stderr
    bad_layer = run_giok("-w", ws.root, "move", "m-abcdef", "--layer", "M7")
    assert bad_layer.returncode != 0
    assert "invalid layer" in bad_layer.stderr


def test_move_recomputes_the_expiry_and_records_the_reason(ws, cli):
    import datetime as dt

    mid = ws.remember("Deploys happen on Fridays", layer="M30").entry.id
    r = json.loads(
        cli("-w", "zeon", "move", mid, "--layer", "M365", "--reason", "held for a year", "--json").output
    )
    assert r["action"] == "promoted"
    assert ws.get(mid).layer == "M365"
    assert ws.get(mid).expires == dt.date.today() + dt.timedelta(days=365)
    assert "held for a year" in _git(ws, "log", "-1", "--format=%B")
    cli("-w", "zeon", "move", mid, "--layer", "M0")
    assert ws.get(mid).layer == "M0"
    assert ws.get(mid).expires is None
    assert "expires" not in next(l for l in ws.read_text("MEMORY.md").splitlines() if mid in l)
    down = json.loads(cli("-w", "zeon", "move", mid, "--layer", "M90", "--json").output)
    assert down["action"] == "demoted"
    assert ws.get(mid).expires == dt.date.today() + dt.timedelta(days=90)
    same = json.loads(cli("-w", "zeon", "move", mid, "--layer", "M90", "--json").output)
    assert same["action"] == "unchanged"
    assert same["commit"] is None


def test_show_filters_by_layer_scope_and_type(ws, cli):
    a = ws.remember("Seojun prefers short answers", layer="M90", type="preference").entry.id
    b = ws.remember("The build takes nine minutes", layer="M90", type="fact").entry.id
    c = ws.remember("Minji likes the dark theme", layer="M30", type="preference", user="minji").entry.id

    def shown(*args):
        layers = json.loads(cli("-w", "zeon", "show", *args, "--json").output)["layers"]
        return {e["id"] for info in layers.values() for e in info["entries"]}

    assert shown("--layer", "M90") == {a, b}
    assert shown("--type", "preference") == {a, c}
    assert shown("--scope", "user:minji") == {c}
    assert shown("--layer", "m90", "--type", "preference") == {a}
    assert shown("--layer", "M0", "--layer", "M30") == {c}
    text = cli("-w", "zeon", "show", "--layer", "M30").output
    assert c in text
    assert a not in text
    assert "M90" not in text


# -- 4. check's exit status, schedule install --dry-run --------------------------------------
def test_check_exit_status_counts_warnings_and_errors_not_info(ws):
    assert run_giok("-w", ws.root, "check").returncode == 0
    text = ws.read_text("MEMORY.md")
    ws.path("MEMORY.md").write_text("- an adopted line outside any layer\n" + text, "utf-8")
    info = run_giok("-w", ws.root, "check", "--json")
    assert info.returncode == 0
    assert json.loads(info.stdout)["counts"]["info"] == 1
    mid = ws.remember("Seojun is the founder", layer="M0").entry.id
    lines = [
        l + " <!-- expires: 2030-01-01 -->" if mid in l else l for l in ws.read_text("MEMORY.md").splitlines()
    ]
    ws.path("MEMORY.md").write_text("\n".join(lines) + "\n", "utf-8")
    warned = run_giok("-w", ws.root, "check")
    assert warned.returncode == 3, warned.stdout
    assert "warning:" in warned.stdout
    assert "\x1b[" not in warned.stdout  # piped: no colour codes
    ws.path("SOUL.md").unlink()
    errored = run_giok("-w", ws.root, "check", "--json")
    assert errored.returncode == 1
    assert json.loads(errored.stdout)["exit"] == 1


def test_schedule_install_dry_run_prints_the_crontab_and_changes_nothing(ws, cli, fake_cron, giok_home):
    fake_cron.write_text("0 5 * * * /usr/bin/backup # mine\n")
    before = giok_home.config_path.read_text()
    r = cli(
        "-w",
        "zeon",
        "schedule",
        "install",
        "--dry-run",
        "--add",
        "qrt",
        "0 0,8,16 * * *",
        "wake",
        "--disable",
        "checkin-evening",
    )
    assert r.exit_code == 0
    assert "/usr/bin/backup # mine" in r.output
    assert "# giok:zeon:qrt" in r.output
    assert "giok:zeon:checkin-evening" not in r.output
    assert "giok:zeon:nightly-distill" in r.output
    assert fake_cron.read_text() == "0 5 * * * /usr/bin/backup # mine\n"
    assert giok_home.config_path.read_text() == before
    data = json.loads(cli("-w", "zeon", "schedule", "install", "--dry-run", "--json").output)
    assert data["dry_run"] is True
    assert data["changed"] is True
    assert data["crontab"].count("# giok:zeon:") == 3
    cli("-w", "zeon", "schedule", "install")
    again = json.loads(cli("-w", "zeon", "schedule", "install", "--dry-run", "--json").output)
    assert again["changed"] is False
    assert again["crontab"] == fake_cron.read_text()


# -- 5. output for people --------------------------------------------------------------------
def test_boot_left_out_line_is_korean_in_a_korean_workspace(tmp_path, giok_home):
    ko, _ = Workspace.init(tmp_path / "ko", name="ko", lang="ko", user="서준", home=giok_home)
    for i in range(40):
        ko.remember(f"서준은 프로젝트 {i}번의 마감을 {i % 28 + 1}일로 정했다", layer="M30", force=True)
    from giok.lifecycle import boot

    text = boot.build(ko, budget=700, record=False).text
    last = text.rstrip().splitlines()[-1]
    assert "예산이 모자라 빠진 것" in last
    assert "entries" not in last
    assert "tokens" not in last
    assert "reaches them" not in last
    assert "M30 항목" in last
    assert "토큰" in last


def test_colour_in_a_terminal_none_when_piped_or_no_color(ws, monkeypatch):
    from click.testing import CliRunner

    from giok.edges.cli import main

    ws.remember("Seojun prefers short answers", layer="M90")
    runner = CliRunner()
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" in runner.invoke(main, ["-w", "zeon", "show"], color=True).output
    assert "\x1b[" not in runner.invoke(main, ["-w", "zeon", "show", "--json"], color=True).output
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in runner.invoke(main, ["-w", "zeon", "show"], color=True).output
    monkeypatch.delenv("NO_COLOR")
    piped = run_giok("-w", ws.root, "show")
    assert piped.returncode == 0
    assert "\x1b[" not in piped.stdout
    assert "M90" in piped.stdout


def test_korean_workspace_gets_korean_labels_in_show_and_check(tmp_path, giok_home, cli):
    ko, _ = Workspace.init(tmp_path / "ko", name="ko", lang="ko", user="서준", home=giok_home)
    ko.remember("배포는 금요일에 한다", layer="M30")
    shown = cli("-w", "ko", "show").output
    assert "30일 기억" in shown
    assert "만료" in shown
    assert "expires" not in shown
    assert "문제 없음" in cli("-w", "ko", "check").output


def test_watch_json_says_whether_a_flush_is_due(ws, cli):
    def watch(used):
        args = ("--used", used, "--window", 1000, "--session", "s1", "--json")
        return json.loads(cli("-w", "zeon", "watch", *args).output)

    assert watch(100)["flush_due"] is False
    assert watch(750)["flush_due"] is True
    cli("-w", "zeon", "flush", "--session", "s1", input="We decided to ship on Friday.\n")
    assert watch(760)["flush_due"] is False
    assert watch(900)["flush_due"] is True
    assert (
        "flush due: no"
        in cli("-w", "zeon", "watch", "--used", 100, "--window", 1000, "--session", "s1").output
    )


def test_flush_updates_the_state_memos_updated_stamp(ws, cli, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-04T10:15:00")
    ws.state_set("phase", "writing the essay")
    assert "updated 2026-03-04 10:15" in ws.read_text("state/memo.md").splitlines()[0]
    monkeypatch.setenv("GIOK_NOW", "2026-03-04T16:40:00")
    cli("-w", "zeon", "flush", "--session", "s2", input="Next step: ship the essay on Friday.\n")
    title = ws.read_text("state/memo.md").splitlines()[0]
    assert "updated 2026-03-04 16:40" in title
    assert title.count("updated") == 1


@pytest.mark.parametrize(
    "command",
    [
        ["quickstart"],
        ["workspaces"],
        ["workspaces", "list"],
        ["workspaces", "remove"],
        ["edit"],
        ["move"],
        ["show"],
        ["check"],
        ["schedule", "install"],
        ["watch"],
    ],
)
def test_new_commands_have_help_and_json(cli, command):
    r = cli(*command, "--help")
    assert r.exit_code == 0
    assert "--json" in r.output
    assert len(r.output.splitlines()) > 4
