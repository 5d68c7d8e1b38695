"""Moving in and out, and the check-up: export, import, doctor."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from giok.edges.cli import emit, json_option, main, open_workspace, workspace_option
from giok.edges.importers import FORMATS
from giok.errors import GiokError, InvalidInput


@main.command(name="export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "tar"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one JSON object per line (entries with every field, diary lines, decisions, tasks, "
    "lessons, state, heartbeat); tar: the workspace's files without .git and .giok.",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to FILE (default: stdout)."
)
@workspace_option()
def export_(fmt, output):
    """Write the whole workspace in a form that needs no git.

    `giok import FILE` reads it back, into this or another workspace.
    """
    from giok.edges.porting import export_jsonl, export_tar

    ws = open_workspace()
    data = export_tar(ws) if fmt == "tar" else export_jsonl(ws).encode("utf-8")
    if fmt == "tar" and not output and sys.stdout.isatty():
        raise InvalidInput("a tar is binary: give -o FILE, or redirect stdout")
    if output:
        Path(output).write_bytes(data)
        click.echo(f"exported {ws.name} to {output} ({len(data)} bytes)", err=True)
    else:
        click.echo(data, nl=False)  # bytes go to the binary stdout


@main.command(name="import")
@click.argument("source", type=click.Path(exists=True))
@click.option(
    "--from",
    "fmt",
    type=click.Choice(FORMATS),
    help="The format of SOURCE (default: detected from what it holds).",
)
@click.option("--dry-run", is_flag=True, help="Decide every item the same way; write nothing.")
@workspace_option()
@json_option
def import_(source, fmt, dry_run, as_json):
    """Bring memory in from FILE or FOLDER: a giok export, an OpenClaw workspace, a mem0
    export (JSON), Claude Code's auto memory folder, basic-memory notes or plain markdown.

    Every item goes through the write policy: duplicates and updates are merged, secrets are
    redacted, small talk, questions and guesses are refused. Importing the same source twice
    changes nothing the second time. Prints what was kept, merged and refused (--json: with
    the reason for each item).
    """
    from giok.edges.porting import import_path

    report = import_path(open_workspace(), source, fmt, dry_run=dry_run)
    emit(report.to_dict(), as_json, _import_text)


def _import_text(d: dict) -> str:
    head = (
        f"{'dry run: ' if d['dry_run'] else ''}{d['items']} item(s) from {d['source']} ({d['format']}): "
        f"{d['kept']} kept, {d['merged']} merged, {d['refused']} refused"
    )
    lines = [f"  {o['action']}: {o['origin']}: {o['reason']}" for o in d["outcomes"] if o["action"] != "kept"]
    return "\n".join([head, *lines])


@main.command()
@click.option(
    "--repair",
    is_flag=True,
    help="First settle what killed processes left: stale git locks, an "
    "interrupted write (rolled back or confirmed), temp files.",
)
@click.option(
    "--all", "every", is_flag=True, help="Check every workspace registered in the home, one after another."
)
@workspace_option()
@json_option
def doctor(repair, every, as_json):
    """Check a workspace end to end and say how to fix each finding.

    Git identity, Claude Code hooks, crontab entries, the index's embedding model, stale
    locks and an interrupted write, registered workspaces whose folder is gone, and the
    token size of the always-injected tier. Exits 1 when there is an error. `--all` checks
    every registered workspace (--json: a list, one result each).
    """
    from giok.edges.doctor import diagnose
    from giok.store.home import Home
    from giok.workspace import Workspace

    if not every:
        result = diagnose(open_workspace(), repair=repair)
        emit(result, as_json, _doctor_text)
        if result["errors"]:
            click.get_current_context().exit(1)
        return
    home = Home()
    spaces = home.workspaces()
    names = sorted(spaces)
    if not names:
        raise InvalidInput("no workspace is registered in this home: create one with `giok init PATH`")
    results = []
    for name in names:
        try:
            results.append(diagnose(Workspace.open(name, home=home), repair=repair))
        except GiokError as exc:  # a folder gone or unreadable: one finding, the others still checked
            results.append(_unopened(name, str(spaces[name].get("path", "")), exc))
    emit(results, as_json, lambda rs: "\n\n".join(_doctor_text(r) for r in rs))
    if any(r["errors"] for r in results):
        click.get_current_context().exit(1)


def _unopened(name: str, path: str, exc: GiokError) -> dict:
    """diagnose's result for a registered workspace that cannot be opened."""
    fix = f"restore its folder, or `giok workspaces remove {name}` to unregister it"
    finding = {"check": "workspace", "severity": "error", "message": str(exc), "fix": fix}
    return {
        "workspace": name,
        "path": path,
        "errors": 1,
        "warnings": 0,
        "infos": 0,
        "findings": [finding],
        "repaired": None,
    }


def _doctor_text(d: dict) -> str:
    lines = [f"{f['severity']}: {f['check']}: {f['message']}\n  fix: {f['fix']}" for f in d["findings"]]
    lines.append(
        f"{d['workspace']}: {d['errors']} error(s), {d['warnings']} warning(s)"
        + ("" if d["findings"] else " — all checks passed")
    )
    return "\n".join(lines)
