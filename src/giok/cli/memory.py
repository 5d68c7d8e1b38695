"""Workspace and memory commands: init, workspaces, remember, forget, diary, lesson, decide,
task, state, heartbeat, show, log, check, quickstart."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from ..home import Home
from ..workspace import LESSONS, Workspace
from . import emit, json_option, main, open_workspace, read_text_arg, workspace_option


@main.command()
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--name", help="Workspace name in the home (default: the folder's name).")
@click.option("--lang", type=click.Choice(["en", "ko"]), default="en", show_default=True, help="Template language.")
@click.option("--user", "user", help="Who the agent works for (goes into USER.md).")
@click.option("--openclaw/--no-openclaw", default=None,
              help="Write only giok's own files; SOUL/AGENTS/USER/TOOLS/HEARTBEAT.md are OpenClaw's "
                   "(default: on when PATH looks like an OpenClaw workspace).")
@json_option
def init(path, name, lang, user, openclaw, as_json):
    """Create a workspace at PATH, or adopt an existing folder.

    Adds only the files that are missing (never overwrites), runs `git init`, ignores
    derived data (.giok/) and commits. Registers the workspace in the giok home.
    """
    from ..workspace import OPENCLAW_FILES, is_openclaw
    if openclaw is None and Path(path).is_dir():
        openclaw = is_openclaw(Path(path))
    ws, created = Workspace.init(path, name=name, lang=lang, user=user, openclaw=bool(openclaw))
    data = {"workspace": ws.name, "path": str(ws.root), "created": created, "openclaw": bool(openclaw)}
    emit(data, as_json, lambda d: f"workspace {d['workspace']} at {d['path']}\n"
         + (f"created: {', '.join(d['created'])}" if d["created"] else "nothing to add: every file was already there")
         + (f"\nOpenClaw workspace: {', '.join(OPENCLAW_FILES)} are left to OpenClaw" if d["openclaw"] else ""))


@main.command()
@json_option
def workspaces(as_json):
    """List the workspaces registered in the giok home."""
    home = Home()
    data = {"home": str(home.path), "workspaces": [{"name": n, **s} for n, s in sorted(home.workspaces().items())]}
    emit(data, as_json, lambda d: "\n".join(f"{w['name']}\t{w['path']}" for w in d["workspaces"]) or "no workspaces yet")


@main.command()
@click.argument("text")
@click.option("--layer", help="M0 (permanent), M365, M90 or M30 (default: M30; an update keeps the layer of the entry it supersedes).")
@click.option("--expires", help="Expiry date YYYY-MM-DD (default: today + the layer's days; M0 never expires).")
@click.option("--date", "date", help="When it happened, YYYY-MM-DD (default: today; not in the future). The expiry still counts from today.")
@click.option("--type", "type_", help="preference, fact, workflow, episode, lesson or decision (default: guessed).")
@click.option("--scope", help="workspace (default), user:NAME, thread:ID or task:ID.")
@click.option("--user", help="Shorthand for --scope user:NAME (a memory only this user's sessions see).")
@click.option("--thread", help="Shorthand for --scope thread:ID (temporary state of one thread).")
@click.option("--source", help="Where this came from (a session, a message id, a file).")
@click.option("--confidence", type=float, help="How sure, 0..1. A guess is kept only with --type and --confidence <= 0.5.")
@click.option("--force", is_flag=True, help="Write even what the policy refuses (the trace records that it was forced).")
@workspace_option()
@json_option
def remember(text, layer, expires, date, type_, scope, user, thread, source, confidence, force, as_json):
    """Keep TEXT in MEMORY.md (`-` reads stdin) and commit at once. Prints the new id.

    The write policy decides first: greetings, thanks, questions and guesses are refused
    (with the reason); an exact duplicate is not written again; an update or contradiction of
    an entry of the same subject supersedes it; secrets are redacted. `giok trace ID` shows why. A refusal is a decision,
    not an error: it prints `refused: REASON` and exits 0 (`--json` gives the action:
    written, refused, duplicate or superseded).
    """
    ws = open_workspace()
    result = ws.remember(read_text_arg(text), layer=layer, expires=expires, type=type_, scope=scope,
                         user=user, thread=thread, source=source, confidence=confidence, force=force, via="cli",
                         date=date)
    emit(result.to_dict(), as_json, _result_text)


def _result_text(d: dict) -> str:
    entry = d.get("entry") or {}
    if d["action"] in ("written", "superseded", "duplicate") and entry:
        lines = [entry["id"]]
        if d["action"] != "written":
            lines.append(f"{d['action']}: {d['reason']}")
    else:
        lines = [f"{d['action']}: {d['reason']}"]
    lines += [f"note: {n}" for n in d.get("notes", [])]
    return "\n".join(lines)


@main.command()
@click.argument("entry_id", required=False)
@click.option("--reason", required=True, help="Why it must go; recorded in the commit message.")
@click.option("--match", help="Instead of an id: forget every line (memory, diary, lessons, …) containing TEXT.")
@click.option("--dry-run", is_flag=True, help="Show what would be removed; change nothing.")
@click.option("--purge", is_flag=True, help="Also list the git commits that still hold the text, and how to remove it.")
@click.option("--rewrite-history", is_flag=True, help="Also remove it from every commit of git history (rewrites history).")
@workspace_option()
@json_option
def forget(entry_id, reason, match, dry_run, purge, rewrite_history, as_json):
    """Remove memory ENTRY_ID (or every line matching --match) for good, with a reason.

    It leaves the files, the search index, the embedding cache and giok's caches, in one
    commit. Nothing else deletes entries. --purge / --rewrite-history deal with git history.
    """
    result = open_workspace().forget(entry_id, reason, match=match, purge=purge,
                                     rewrite_history=rewrite_history, dry_run=dry_run)
    emit(result.to_dict(), as_json, _forget_text)


def _forget_text(d: dict) -> str:
    entry = d.get("entry")
    head = f"forgot {entry['id']}: {entry['text']}" if entry and d["action"] == "removed" else \
        ("dry run: nothing changed" if d["action"] == "unchanged" else "forgot the matching lines")
    return "\n".join([head] + [f"  {n}" for n in d.get("notes", [])])


@main.command()
@click.argument("text")
@workspace_option()
@json_option
def diary(text, as_json):
    """Append a timestamped line to today's diary (memory/YYYY-MM-DD.md)."""
    ws = open_workspace()
    line = ws.diary(read_text_arg(text))
    emit({"path": ws.diary_path(), "line": line}, as_json, lambda d: f"{d['path']}: {d['line']}")


@main.command()
@click.argument("title")
@click.option("--body", required=True, help="What was learned (`-` reads stdin).")
@workspace_option()
@json_option
def lesson(title, body, as_json):
    """Add a dated lesson section to compound/lessons.md; a lesson of the same title gets
    the new lines appended (dated), never replaced."""
    ws = open_workspace()
    before = ws.read_text(LESSONS)
    heading = ws.lesson(title, read_text_arg(body))
    action = "added" if heading not in before.splitlines() else \
        "appended" if ws.read_text(LESSONS) != before else "unchanged (it holds these lines already)"
    emit({"heading": heading, "action": action}, as_json, lambda d: f"{d['action']}: {d['heading']}")


@main.command()
@click.argument("text")
@click.option("--why", required=True, help="The reason for the decision.")
@click.option("--supersedes", help="The decision this one replaces (D-NNN).")
@workspace_option()
@json_option
def decide(text, why, supersedes, as_json):
    """Append a decision (D-001, D-002, …) to state/decisions.md. Never edits earlier ones."""
    did = open_workspace().decide(text, why, supersedes=supersedes)
    emit({"id": did}, as_json, lambda d: d["id"])


@main.group(invoke_without_command=True)
@workspace_option()
@json_option
@click.pass_context
def task(ctx, as_json):
    """Tasks in state/tasks.md: todo → doing → done, or blocked. Without a subcommand: list."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(task_list, as_json=as_json, status=None)


@task.command("add")
@click.argument("text")
@workspace_option()
@json_option
def task_add(text, as_json):
    """Add a todo task; prints its id (T-001…)."""
    emit({"id": open_workspace().task_add(text)}, as_json, lambda d: d["id"])


def _task_mover(status: str, doc: str):
    @click.argument("task_id")
    @click.option("--note", help="A note kept with the task (for blocked: why).")
    @workspace_option()
    @json_option
    def command(task_id, note, as_json):
        emit(open_workspace().task_move(task_id, status, note), as_json,
             lambda t: f"{t['id']} {t['status']}: {t['text']}")

    command.__doc__ = doc
    return command


task.command("start")(_task_mover("doing", "Move a task to doing."))
task.command("done")(_task_mover("done", "Move a task to done."))
task.command("block")(_task_mover("blocked", "Move a task to blocked (say why with --note)."))


@task.command("list")
@click.option("--status", type=click.Choice(["todo", "doing", "done", "blocked"]), help="Only this status.")
@workspace_option()
@json_option
def task_list(status, as_json):
    """List tasks with their status."""
    tasks = [t for t in open_workspace().tasks() if not status or t["status"] == status]
    emit({"tasks": tasks}, as_json, lambda d: "\n".join(f"{t['id']}\t{t['status']}\t{t['text']}" for t in d["tasks"]) or "no tasks")


@main.group(invoke_without_command=True)
@workspace_option()
@json_option
@click.pass_context
def state(ctx, as_json):
    """The state memo (state/memo.md): phase, last-done, next-step, failure-modes. Without a subcommand: show."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(state_show, as_json=as_json)


@state.command("show")
@workspace_option()
@json_option
def state_show(as_json):
    """Print the state memo's sections."""
    emit(open_workspace().state(), as_json, lambda d: "\n".join(f"[{k}]\n{v}\n" for k, v in d.items()).rstrip())


@state.command("set")
@click.argument("section")
@click.argument("text")
@workspace_option()
@json_option
def state_set(section, text, as_json):
    """Replace SECTION (phase, last-done, next-step, failure-modes) with TEXT."""
    emit(open_workspace().state_set(section, read_text_arg(text)), as_json, lambda d: "state memo updated")


@main.group(invoke_without_command=True)
@workspace_option()
@json_option
@click.pass_context
def heartbeat(ctx, as_json):
    """Open background tasks in HEARTBEAT.md (done items are removed). Without a subcommand: list."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(heartbeat_list, as_json=as_json)


@heartbeat.command("add")
@click.argument("text")
@workspace_option()
@json_option
def heartbeat_add(text, as_json):
    """Add an open item."""
    emit({"added": open_workspace().heartbeat_add(text)}, as_json, lambda d: f"added: {d['added']}")


@heartbeat.command("list")
@workspace_option()
@json_option
def heartbeat_list(as_json):
    """List open items, numbered."""
    items = open_workspace().heartbeat()
    emit({"items": items}, as_json, lambda d: "\n".join(f"{i}. {t}" for i, t in enumerate(d["items"], 1)) or "nothing open")


@heartbeat.command("done")
@click.argument("item")
@workspace_option()
@json_option
def heartbeat_done(item, as_json):
    """Remove ITEM (its number from `list`, or its text)."""
    emit({"removed": open_workspace().heartbeat_done(item)}, as_json, lambda d: f"done: {d['removed']}")


@main.command()
@workspace_option()
@json_option
def show(as_json):
    """Show MEMORY.md by layer, with what expires in the next 7 days."""
    emit(open_workspace().show(), as_json, _show_text)


def _show_text(d: dict) -> str:
    out = [f"{d['workspace']} ({d['path']})"]
    for layer, info in d["layers"].items():
        out.append(f"\n{layer}: {info['count']}")
        for e in info["entries"]:
            date = f"[{e['date']}] " if e["date"] else ""
            exp = f"  (expires {e['expires']})" if e["expires"] else ""
            old = f"  (superseded by {e['superseded_by']})" if e.get("superseded_by") else ""
            out.append(f"  {e['id']}  {date}{e['text']}{exp}{old}")
    if d["expiring_soon"]:
        out.append("\nexpiring in 7 days: " + ", ".join(e["id"] for e in d["expiring_soon"]))
    if d["expired"]:
        out.append("expired (archived by `giok distill`): " + ", ".join(e["id"] for e in d["expired"]))
    if d["problems"]:
        out.append(f"{d['problems']} unreadable line(s): run `giok check`")
    return "\n".join(out)


@main.command()
@click.option("-n", "--limit", default=30, show_default=True, help="How many commits.")
@workspace_option()
@json_option
def log(limit, as_json):
    """The memory timeline, from git history."""
    emit({"commits": open_workspace().log(limit)}, as_json,
         lambda d: "\n".join(f"{c['commit']} {c['date'][:16]} {c['message'].splitlines()[0]}" for c in d["commits"]))


@main.command()
@workspace_option()
@json_option
def check(as_json):
    """Report problems in the workspace files (unreadable lines, duplicate ids, …).

    Exits 1 when an error is found."""
    problems = open_workspace().check()
    emit({"problems": problems}, as_json, lambda d: "\n".join(
        f"{p['severity']}: {p['path']}{':' + str(p['line']) if p['line'] else ''}: {p['message']}" for p in d["problems"]) or "no problems")
    if any(p["severity"] == "error" for p in problems):
        raise SystemExit(1)


@main.command()
@click.option("--path", "path", type=click.Path(file_okay=False), help="Where to create the demo workspace (default: a temp folder).")
def quickstart(path):
    """Create a demo workspace, write a few memories, and show and search them."""
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="giok-demo-"))
    os.environ.setdefault("GIOK_HOME", str(root / ".giok-home")) if not path else None
    ws, created = Workspace.init(root / "zeon", name="zeon-demo", lang="en", user="Seojun")
    click.echo(f"created workspace {ws.name} at {ws.root} ({len(created)} files, committed to git)")
    demo = [("I am Zeon, Seojun's first agent.", "M0"),
            ("Seojun prefers short answers with the result first.", "M365"),
            ("Decided to use SQLite with FTS5 for the memory index.", "M90"),
            ("First draft of the memory essay is done.", "M30")]
    for text, layer in demo:
        result = ws.remember(text, layer=layer)
        click.echo(f"remember [{layer}] {result.entry.id if result.entry else result.action}: {text}")
    ws.diary("Set up giok and wrote the first memories.")
    click.echo("")
    click.echo(_show_text(ws.show()))
    _quickstart_search(ws)
    click.echo(f"\nTry: giok -w {ws.root} show   |   git -C {ws.root} log --oneline")


def _quickstart_search(ws) -> None:
    search = getattr(ws, "search", None)
    if search is None:
        return
    query = "what database did we choose?"
    click.echo(f"\nsearch: {query}")
    for r in search(query, k=3):
        click.echo(f"  {r.score:.2f}  {r.path}:{r.start_line}  {r.text.splitlines()[0]}")
