"""The CLI over the library: workspace selection, --json, one-line errors, --help everywhere."""

import json
import subprocess
import sys

import click

from conftest import run_giok
from giok import Workspace
from giok.edges.cli import main


def test_workspace_option_before_or_after_subcommand(ws, cli):
    a = cli("-w", "zeon", "remember", "Prefers green tea in the morning", "--json")
    assert a.exit_code == 0, a.output
    entry_id = json.loads(a.output)["entry"]["id"]
    for args in (
        ["-w", "zeon", "show", "--json"],
        ["show", "-w", "zeon", "--json"],
        ["show", "--json", "-w", str(ws.root)],
    ):
        out = cli(*args)
        assert out.exit_code == 0, out.output
        assert entry_id in out.output


def test_workspace_from_env_and_from_cwd(ws, tmp_path):
    r = run_giok("remember", "Deploys happen on Fridays", env={"GIOK_WORKSPACE": "zeon"})
    assert r.returncode == 0, r.stderr
    entry_id = r.stdout.strip()
    assert entry_id.startswith("m-")
    sub = ws.root / "drafts"
    r = run_giok("show", "--json", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert entry_id in r.stdout


def test_errors_are_one_line_and_nonzero(ws, tmp_path):
    cases = [
        (["-w", "nobody", "show"], "unknown workspace"),
        (["-w", "zeon", "remember", ""], "empty"),
        (["-w", "zeon", "remember", "x", "--layer", "M5"], "invalid layer"),
        (["-w", "zeon", "remember", "x", "--expires", "2026-02-31"], "no such day"),
        (["-w", "zeon", "forget", "m-zzzzzz", "--reason", "r"], "malformed"),
        (["-w", "zeon", "forget", "m-abcdef", "--reason", "r"], "no memory"),
        (["-w", "zeon", "decide", "x", "--why", "y", "--supersedes", "D-404"], "no decision"),
        (["-w", "zeon", "task", "done", "T-404"], "no task"),
        (["-w", "../..", "show"], "not a giok workspace"),
    ]
    for args, needle in cases:
        r = run_giok(*args, cwd=tmp_path)
        assert r.returncode != 0, args
        assert r.stderr.strip().count("\n") == 0, r.stderr
        assert r.stderr.startswith("Error: "), (args, r.stderr)
        assert needle in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_a_folder_holding_other_things_is_never_offered_to_init(ws, tmp_path):
    """`giok init` adopts a folder (a git repository and giok's files in it): offered for a
    missing or empty folder only, never for /etc or a project folder named by mistake."""
    busy = tmp_path / "project"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    said = {
        name: run_giok("-w", f"./{name}", "show", cwd=tmp_path).stderr for name in ("project", "empty", "new")
    }
    assert "giok init" not in said["project"] and "known: zeon" in said["project"], said["project"]
    assert "giok init ./empty" in said["empty"] and "giok init ./new" in said["new"], said
    assert not (busy / ".git").exists() and not (busy / "MEMORY.md").exists()


def test_no_workspace_anywhere(tmp_path):
    r = run_giok("show", cwd=tmp_path)
    assert r.returncode != 0
    assert "no workspace given" in r.stderr


def test_binary_text_from_stdin_is_refused(ws):
    r = run_giok("-w", "zeon", "remember", "-", input="abc\x00def")
    assert r.returncode == 2
    assert "binary" in r.stderr


def test_json_outputs_parse(ws, cli):
    cli("-w", "zeon", "task", "add", "write docs")
    cli("-w", "zeon", "decide", "Use SQLite", "--why", "simple")
    for args in (
        ["workspaces"],
        ["show"],
        ["log"],
        ["check"],
        ["task", "list"],
        ["state", "show"],
        ["heartbeat", "list"],
    ):
        out = cli("-w", "zeon", *args, "--json")
        assert out.exit_code == 0, (args, out.output)
        json.loads(out.output)


def test_log_shows_memory_timeline(ws, cli):
    cli("-w", "zeon", "remember", "The essay draft is finished")
    cli("-w", "zeon", "diary", "Wrote the essay")
    out = cli("-w", "zeon", "log")
    lines = out.output.splitlines()
    assert "diary:" in lines[0]
    assert "memory: remember" in lines[1]


def _commands(group, prefix=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"`giok {' '.join((*prefix, name))}` is listed but cannot be loaded"
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


def test_every_command_has_help_text():
    for path, command in _commands(main):
        assert (command.help or "").strip(), f"`giok {' '.join(path)}` has no help text"


def test_quickstart_runs_on_embedded_defaults(tmp_path):
    r = run_giok(
        "quickstart", "--path", tmp_path / "demo", env={"GIOK_HOME": str(tmp_path / "h")}, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert "remember [M0]" in r.stdout
    assert "M30: 1" in r.stdout


def test_a_simple_command_does_not_import_search_or_scheduler():
    code = (
        "import sys; from giok.edges.cli import main\n"
        "try:\n    main(['workspaces'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'croniter', 'httpx', 'mcp', 'giok.retrieval.index') if m in "
        "sys.modules]\n"
        "print(heavy)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout + r.stderr


def test_groups_without_a_subcommand_show_their_contents(ws, cli):
    cli("-w", "zeon", "task", "add", "Write the release notes")
    assert "T-001\ttodo\tWrite the release notes" in cli("-w", "zeon", "task").output
    assert json.loads(cli("-w", "zeon", "state", "--json").output).keys() >= {"phase", "next-step"}
    cli("-w", "zeon", "heartbeat", "add", "Two unanswered messages")
    assert "1. Two unanswered messages" in cli("heartbeat", "-w", "zeon").output


def test_state_shows_its_sections_in_the_workspaces_language(tmp_path, giok_home, cli):
    """A Korean workspace's memo reads 현재 단계, with the key `state set` takes beside it."""
    Workspace.init(tmp_path / "nuri", name="nuri", lang="ko", home=giok_home)
    cli("-w", "nuri", "state", "set", "phase", "설계 중")
    shown = cli("-w", "nuri", "state").output
    assert "## 현재 단계 (phase)\n설계 중" in shown
    assert "[phase]" not in shown and "Current phase" not in shown


def test_a_long_first_index_reports_progress_on_stderr(ws):
    for day in range(1, 26):
        (ws.root / "memory" / f"2026-01-{day:02d}.md").write_text(
            f"# 2026-01-{day:02d}\n\n- 09:00 billing feature {day}\n"
        )
    r = run_giok("-w", "zeon", "index", env={"GIOK_EMBEDDINGS": "fake"})
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("indexing ")]
    assert lines
    assert lines[-1].startswith("indexing ")
    assert "files" in lines[-1]
    assert "indexing" not in r.stdout
