"""Routines: the real crontab (restored after each test), the foreground scheduler, routine
runs noted in the diary, and wake-ups with HEARTBEAT items."""

import datetime as dt
import json
import shutil
import subprocess
import sys

import pytest

from giok.errors import InvalidInput, NotFound
from giok.lifecycle import routines
from giok.lifecycle.routines import Routine, Scheduler

USER_LINE = "17 4 * * * /usr/bin/true # the user's own job, giok must not touch it"


@pytest.fixture
def crontab(monkeypatch):
    """The real crontab of this user, saved before and restored after the test."""
    if shutil.which("crontab") is None:
        pytest.skip("the crontab command is not installed (apt-get install cron)")
    monkeypatch.delenv("GIOK_CRONTAB", raising=False)
    saved = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    had = saved.returncode == 0
    subprocess.run(["crontab", "-"], input=USER_LINE + "\n", text=True, check=True)
    yield lambda: subprocess.run(["crontab", "-l"], capture_output=True, text=True).stdout
    if had:
        subprocess.run(["crontab", "-"], input=saved.stdout, text=True, check=True)
    else:
        subprocess.run(["crontab", "-r"], capture_output=True)


def test_default_and_custom_routines(ws):
    names = [(r.name, r.schedule, r.command) for r in routines.routines(ws)]
    assert names == [
        ("checkin-morning", "30 9 * * *", ["wake"]),
        ("checkin-evening", "30 21 * * *", ["wake"]),
        ("nightly-distill", "0 23 * * *", ["distill"]),
    ]
    routines.save(ws, Routine("qrt", "0 0,8,16 * * *", ["wake"]))
    routines.forget(ws, "checkin-evening")
    got = {r.name: r for r in routines.routines(ws, include_disabled=True)}
    assert got["qrt"].schedule == "0 0,8,16 * * *"
    assert not got["checkin-evening"].enabled
    assert "checkin-evening" not in [r.name for r in routines.routines(ws)]
    with pytest.raises(InvalidInput, match="cron schedule"):
        routines.save(ws, Routine("bad", "every day", ["wake"]))
    with pytest.raises(InvalidInput, match="routine name"):
        routines.save(ws, Routine("../x", "* * * * *", ["wake"]))
    with pytest.raises(NotFound, match="no routine"):
        routines.find(ws, "nope")


def test_cron_line_is_marked_and_escaped(ws):
    line = routines.cron_line(ws, Routine("nightly-distill", "0 23 * * *", ["distill"]))
    assert line.startswith("0 23 * * * GIOK_HOME=")
    assert line.endswith("# giok:zeon:nightly-distill")
    assert f"{sys.executable} -m giok schedule run --routine nightly-distill -w zeon" in line
    assert "%" not in line.replace("\\%", "")


def test_install_list_remove_touch_only_giok_lines(ws, crontab, cli):
    result = routines.install(ws)
    table = crontab()
    assert USER_LINE in table
    assert [l.split(" # ")[-1] for l in table.splitlines() if "# giok:" in l] == [
        "giok:zeon:checkin-morning",
        "giok:zeon:checkin-evening",
        "giok:zeon:nightly-distill",
    ]
    assert result["changed"]
    assert routines.install(ws)["changed"] is False  # idempotent
    assert crontab() == table
    listed = json.loads(cli("schedule", "list", "-w", "zeon", "--json").output)
    assert all(r["installed"] for r in listed["routines"])
    assert listed["routines"][0]["next"]
    out = cli(
        "schedule",
        "install",
        "-w",
        "zeon",
        "--add",
        "qrt",
        "0 0,8,16 * * *",
        "wake",
        "--disable",
        "checkin-evening",
    )
    assert out.exit_code == 0, out.output
    table = crontab()
    assert "giok:zeon:qrt" in table
    assert "giok:zeon:checkin-evening" not in table
    assert USER_LINE in table
    gone = cli("schedule", "remove", "-w", "zeon", "--routine", "qrt", "--json")
    assert [l.endswith("giok:zeon:qrt") for l in json.loads(gone.output)["removed"]] == [True]
    assert routines.uninstall("zeon")
    assert crontab().strip() == USER_LINE


def test_cron_command_runs_the_routine(ws, crontab, monkeypatch):
    """The command a cron line holds, run by a shell as cron would, lands in the diary."""
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T23:00")
    ws.diary("Decided to run the distillation from cron")
    routines.install(ws)
    line = next(l for l in crontab().splitlines() if l.endswith("giok:zeon:nightly-distill"))
    command = line.split(None, 5)[5].replace("\\%", "%")
    proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    diary = ws.read_text("memory/2026-03-05.md")
    assert "nightly-distill: 1 day(s), 1 item(s) judged" in diary
    assert "routine nightly-distill (giok distill): ok" in diary
    assert (ws.home.path / "logs" / "routines.log").exists()


def test_failed_routine_is_noted(ws, monkeypatch):
    monkeypatch.setenv("GIOK_NOW", "2026-03-05T09:30")
    result = routines.run_routine(ws, Routine("broken", "* * * * *", ["distill", "--date", "2099-01-01"]))
    assert result["exit"] != 0
    assert (
        "routine broken (giok distill --date 2099-01-01): failed (exit 2) — Error: cannot distill"
        in ws.read_text("memory/2026-03-05.md")
    )


def test_scheduler_runs_routines_on_their_schedules(ws):
    clock = [dt.datetime(2026, 3, 5, 9, 0)]
    ran = []

    def sleep(seconds):
        clock[0] += dt.timedelta(seconds=seconds)

    def run(ws_, routine):
        ran.append((routine.name, clock[0]))
        return {"diary": routine.name}

    scheduler = Scheduler(ws, routines.routines(ws), run=run, clock=lambda: clock[0], sleep=sleep)
    assert scheduler.loop(max_runs=4) == 4
    assert ran == [
        ("checkin-morning", dt.datetime(2026, 3, 5, 9, 30)),
        ("checkin-evening", dt.datetime(2026, 3, 5, 21, 30)),
        ("nightly-distill", dt.datetime(2026, 3, 5, 23, 0)),
        ("checkin-morning", dt.datetime(2026, 3, 6, 9, 30)),
    ]
    with pytest.raises(InvalidInput):
        Scheduler(ws, []).loop(1)


def test_wake_hands_boot_context_and_heartbeat(ws, cli):
    ws.heartbeat_add("QRT pool is empty: find new articles")
    ws.heartbeat_add("Two unanswered messages in the group chat")
    data = routines.wake(ws)
    assert data["heartbeat"] == [
        "QRT pool is empty: find new articles",
        "Two unanswered messages in the group chat",
    ]
    assert "1. QRT pool is empty" in data["prompt"]
    assert "2. Two unanswered" in data["prompt"]
    assert "zeon" in data["prompt"]
    assert data["agent"] is None
    out = cli("wake", "-w", "zeon")
    assert out.exit_code == 0
    assert "## Open HEARTBEAT items" in out.output


def test_wake_runs_the_configured_agent_with_the_prompt(ws, cli):
    script = "import sys; t = sys.stdin.read(); print('got', len(t.splitlines()), 'lines;', 'QRT' in t)"
    agent = f'{sys.executable} -c "{script}"'
    ws.home.update(lambda c: c["workspaces"]["zeon"].update({"agent_command": agent}))
    ws.heartbeat_add("QRT pool is empty: find new articles")
    data = routines.wake(ws)
    assert data["agent"]["exit"] == 0
    assert data["agent"]["output"].strip().endswith("True")
    printed = cli("wake", "-w", "zeon", "--print")
    assert "QRT pool is empty" in printed.output
    ws.home.update(
        lambda c: c["workspaces"]["zeon"].update(
            {"agent_command": f"{sys.executable} -c 'raise SystemExit(3)'"}
        )
    )
    assert cli("wake", "-w", "zeon").exit_code == 1


@pytest.mark.parametrize(
    "schedule", ["0 23 * * * *", "0 23 * * * * *", "0 23 * *", "@reboot now", "0 23\t* * * x"]
)
def test_only_five_field_schedules_or_macros_reach_the_crontab(ws, schedule):
    # croniter accepts six fields (seconds); cron would run the sixth as the command ("*": a glob)
    with pytest.raises(InvalidInput, match="cron schedule"):
        Routine("qrt", schedule, ["wake"]).check()
    assert Routine("qrt", "@daily", ["wake"]).check().schedule == "@daily"
    assert Routine("qrt", "*/5 0-6 * * 1-5", ["wake"]).check()


def test_six_field_schedule_in_the_config_is_refused(ws):
    ws.home.update(
        lambda c: (
            c["workspaces"]["zeon"]
            .setdefault("routines", [])
            .append({"name": "qrt", "schedule": "0 23 * * * *", "command": "wake"})
        )
    )
    with pytest.raises(InvalidInput, match="cron schedule"):
        routines.routines(ws)


def test_crontab_update_holds_the_home_lock(ws, crontab):
    import threading
    import time

    from giok.store.fsutil import file_lock

    held, released = threading.Event(), []

    def holder():
        with file_lock(ws.home.path / ".lock"):
            held.set()
            time.sleep(0.6)
            released.append(time.monotonic())

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    routines.install(ws)
    done = time.monotonic()
    thread.join()
    assert done >= released[0], "install changed the crontab while another giok held the home lock"
    assert len(routines.installed("zeon")) == 3
