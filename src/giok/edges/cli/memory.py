"""Workspace and memory commands: init, workspaces, remember, forget, diary, lesson, decide,
task, state, heartbeat, show, log, check, quickstart."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from giok.edges.cli import emit, json_option, main, open_workspace, read_text_arg, style, workspace_option
from giok.errors import InvalidInput, WorkspaceError
from giok.store import history, templates
from giok.store.home import Home
from giok.store.layout import MEMORY
from giok.store.workspace import LESSONS, TYPES, check_layer, check_scope
from giok.workspace import Workspace


@main.command()
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--name", help="Workspace name in the home (default: the folder's name).")
@click.option(
    "--lang", type=click.Choice(["en", "ko"]), default="en", show_default=True, help="Template language."
)
@click.option("--user", "user", help="Who the agent works for (goes into USER.md).")
@click.option(
    "--openclaw/--no-openclaw",
    default=None,
    help="Write only giok's own files; SOUL/AGENTS/USER/TOOLS/HEARTBEAT.md are OpenClaw's "
    "(default: on when PATH looks like an OpenClaw workspace).",
)
@json_option
def init(path, name, lang, user, openclaw, as_json):
    """Create a workspace at PATH, or adopt an existing folder.

    Adds only the files that are missing (never overwrites), runs `git init`, ignores
    derived data (.giok/) and commits. Registers the workspace in the giok home.
    """
    from giok.store.workspace import OPENCLAW_FILES, is_openclaw

    if openclaw is None and Path(path).is_dir():
        openclaw = is_openclaw(Path(path))
    ws, created = Workspace.init(path, name=name, lang=lang, user=user, openclaw=bool(openclaw))
    data = {"workspace": ws.name, "path": str(ws.root), "created": created, "openclaw": bool(openclaw)}
    emit(
        data,
        as_json,
        lambda d: (
            f"workspace {d['workspace']} at {d['path']}\n"
            + (
                f"created: {', '.join(d['created'])}"
                if d["created"]
                else "nothing to add: every file was already there"
            )
            + (
                f"\nOpenClaw workspace: {', '.join(OPENCLAW_FILES)} are left to OpenClaw"
                if d["openclaw"]
                else ""
            )
        ),
    )


@main.group(invoke_without_command=True)
@json_option
@click.pass_context
def workspaces(ctx, as_json):
    """The workspaces registered in the giok home. Without a subcommand: list them.

    A workspace whose folder is gone (deleted or moved) is marked `missing`; `giok workspaces
    remove NAME` unregisters it.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(workspaces_list, as_json=as_json)


@workspaces.command("list")
@json_option
def workspaces_list(as_json):
    """List the workspaces, marking those whose folder is gone."""
    home = Home()
    gone = set(home.missing())
    rows = [{"name": n, **s, "missing": n in gone} for n, s in sorted(home.workspaces().items())]
    emit({"home": str(home.path), "workspaces": rows, "missing": sorted(gone)}, as_json, _workspaces_text)


def _workspaces_text(d: dict) -> str:
    if not d["workspaces"]:
        return "no workspaces yet"
    width = max(len(w["name"]) for w in d["workspaces"])
    lines = [
        f"{style.name(w['name'].ljust(width))}  {w['path']}"
        + (f"  {style.bad('(missing: folder gone)')}" if w["missing"] else "")
        for w in d["workspaces"]
    ]
    if d["missing"]:
        lines.append(f"{len(d['missing'])} missing: `giok workspaces remove NAME` unregisters it")
    return "\n".join(lines)


@workspaces.command("remove")
@click.argument("name")
@click.option(
    "--delete-files", is_flag=True, help="Also delete the workspace folder (asks first; see --yes)."
)
@click.option("--yes", is_flag=True, help="Do not ask before --delete-files.")
@json_option
def workspaces_remove(name, delete_files, yes, as_json):
    """Unregister workspace NAME from the home. Its folder and files stay unless --delete-files.

    Cross-view posts stop reaching it; its cron lines (`giok schedule install`) are taken out.
    """
    home = Home()
    spec = home.workspaces().get(name)
    if spec is None:
        home.unregister(name)  # raises the one clear error, with the known names
        return
    folder = Path(spec["path"])
    deleting = delete_files and folder.is_dir()
    if deleting:
        if not (folder / MEMORY).is_file():
            raise WorkspaceError(
                f"{folder} holds no MEMORY.md: not deleting a folder that is not a workspace"
            )
        if not yes:
            if not os.isatty(0):
                raise WorkspaceError(f"no terminal to confirm deleting {folder}: pass --yes to delete it")
            click.confirm(
                f"Delete {folder} and every file in it (git history included)?", abort=True, err=True
            )
    home.unregister(name)
    data = {"workspace": name, "path": str(folder), "files": "kept", "cron_removed": _uncron(name, home)}
    if deleting:
        shutil.rmtree(folder)
        data["files"] = "deleted"
    elif not folder.is_dir():
        data["files"] = "already gone"
    emit(
        data,
        as_json,
        lambda d: (
            f"removed {d['workspace']} from the home; files {d['files']}: {d['path']}"
            + "".join(f"\n  crontab: removed {line}" for line in d["cron_removed"])
        ),
    )


def _uncron(name: str, home: Home) -> list[str]:
    """Take the workspace's giok lines out of the crontab, if it has any (no crontab: nothing)."""
    from giok.errors import GiokError
    from giok.lifecycle import routines as routines_mod

    try:
        return routines_mod.uninstall(name, home=home)  # [] when it has none: one crontab read
    except GiokError:
        return []


@main.command()
@click.argument("text")
@click.option(
    "--layer",
    help="M0 (permanent), M365, M90 or M30 "
    "(default: M30; an update keeps the layer of the entry it supersedes).",
)
@click.option(
    "--expires", help="Expiry date YYYY-MM-DD (default: today + the layer's days; M0 never expires)."
)
@click.option(
    "--date",
    "date",
    help="When it happened, YYYY-MM-DD (default: today; not in the future). "
    "The expiry still counts from today.",
)
@click.option(
    "--type", "type_", help="preference, fact, workflow, episode, lesson or decision (default: guessed)."
)
@click.option("--scope", help="workspace (default), user:NAME, thread:ID or task:ID.")
@click.option("--user", help="Shorthand for --scope user:NAME (a memory only this user's sessions see).")
@click.option("--thread", help="Shorthand for --scope thread:ID (temporary state of one thread).")
@click.option("--source", help="Where this came from (a session, a message id, a file).")
@click.option(
    "--confidence",
    type=float,
    help="How sure, 0..1. A guess is kept only with --type and --confidence <= 0.5.",
)
@click.option(
    "--force", is_flag=True, help="Write even what the policy refuses (the trace records that it was forced)."
)
@click.option(
    "--supersedes",
    metavar="ID",
    help="The memory this one replaces (it changes what was kept: a move, a switch); the old entry "
    "stays, marked superseded.",
)
@workspace_option()
@json_option
def remember(
    text, layer, expires, date, type_, scope, user, thread, source, confidence, force, supersedes, as_json
):
    """Keep TEXT in MEMORY.md (`-` reads stdin) and commit at once. Prints the new id.

    The write policy decides first: greetings, thanks, questions and guesses are refused
    (with the reason); an exact duplicate is not written again; an update or contradiction of
    an entry of the same subject supersedes it; secrets are redacted. `giok trace ID` shows why.
    Where the policy does not see the change, `--supersedes ID` says what the new memory replaces.
    With an LLM panel configured (home config `judges`, as for the nightly distill), the panel is
    asked which nearby entry the text replaces, and its answer settles it (docs/distill.md).
    A refusal is a decision, not an error: it prints `refused: REASON` and exits 0 (`--json` gives the action:
    written, refused, duplicate or superseded).
    """
    ws = open_workspace()
    result = ws.remember(
        read_text_arg(text),
        layer=layer,
        expires=expires,
        type=type_,
        scope=scope,
        user=user,
        thread=thread,
        source=source,
        confidence=confidence,
        force=force,
        via="cli",
        date=date,
        supersedes=supersedes,
    )
    emit(result.to_dict(), as_json, _result_text)


def _result_text(d: dict) -> str:
    entry = d.get("entry") or {}
    if d["action"] in ("written", "superseded", "duplicate") and entry:
        lines = [style.ident(entry["id"])]
        if d["action"] != "written":
            lines.append(f"{d['action']}: {d['reason']}")
    else:
        lines = [f"{style.bad(d['action'])}: {d['reason']}"]
    lines += [f"note: {n}" for n in d.get("notes", [])]
    return "\n".join(lines)


@main.command()
@click.argument("entry_id", required=False)
@click.option("--reason", required=True, help="Why it must go; recorded in the commit message.")
@click.option(
    "--match", help="Instead of an id: forget every line (memory, diary, lessons, …) containing TEXT."
)
@click.option("--dry-run", is_flag=True, help="Show what would be removed; change nothing.")
@click.option(
    "--purge", is_flag=True, help="Also list the git commits that still hold the text, and how to remove it."
)
@click.option(
    "--rewrite-history",
    is_flag=True,
    help="Also remove it from every commit of git history (rewrites history).",
)
@workspace_option()
@json_option
def forget(entry_id, reason, match, dry_run, purge, rewrite_history, as_json):
    """Remove memory ENTRY_ID (or every line matching --match) for good, with a reason.

    It leaves the files, the search index, the embedding cache and giok's caches, in one
    commit. Nothing else deletes entries. --purge / --rewrite-history deal with git history.
    """
    result = open_workspace().forget(
        entry_id, reason, match=match, purge=purge, rewrite_history=rewrite_history, dry_run=dry_run
    )
    emit(result.to_dict(), as_json, _forget_text)


def _forget_text(d: dict) -> str:
    entry = d.get("entry")
    head = (
        f"forgot {entry['id']}: {entry['text']}"
        if entry and d["action"] == "removed"
        else ("dry run: nothing changed" if d["action"] == "unchanged" else "forgot the matching lines")
    )
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
@click.option(
    "--body",
    "bodies",
    required=True,
    multiple=True,
    help="What was learned (`-` reads stdin); repeat it for several lines, kept in order.",
)
@workspace_option()
@json_option
def lesson(title, bodies, as_json):
    """Add a dated lesson section to compound/lessons.md; a lesson of the same title gets
    the new lines appended (dated), never replaced."""
    if bodies.count("-") > 1:
        raise InvalidInput("--body - reads stdin once: give it at most once")
    ws = open_workspace()
    before = ws.read_text(LESSONS)
    heading = ws.lesson(title, "\n".join(read_text_arg(body).strip("\n") for body in bodies)).heading
    action = (
        "added"
        if heading not in before.splitlines()
        else "appended"
        if ws.read_text(LESSONS) != before
        else "unchanged (it holds these lines already)"
    )
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
        emit(
            open_workspace().task_move(task_id, status, note),
            as_json,
            lambda t: f"{t['id']} {t['status']}: {t['text']}",
        )

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
    emit(
        {"tasks": tasks},
        as_json,
        lambda d: (
            "\n".join(
                f"{style.ident(t['id'])}\t"
                f"{style.paint(t['status'], fg=_TASK_COLOUR.get(t['status']))}\t{t['text']}"
                for t in d["tasks"]
            )
            or "no tasks"
        ),
    )


_TASK_COLOUR = {"todo": None, "doing": "cyan", "done": "green", "blocked": "red"}


@main.group(invoke_without_command=True)
@workspace_option()
@json_option
@click.pass_context
def state(ctx, as_json):
    """The state memo (state/memo.md): phase, last-done, next-step, failure-modes.

    Without a subcommand: show."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(state_show, as_json=as_json)


@state.command("show")
@workspace_option()
@json_option
def state_show(as_json):
    """Print the state memo's sections, each under its title in the workspace's language and the
    key `state set` takes (`## 현재 단계 (phase)`); --json: {key: text}."""
    ws = open_workspace()
    titles = templates.STATE_TITLES[templates.language(ws)]

    def text(d: dict) -> str:
        return "\n".join(f"## {titles.get(k, k)} ({k})\n{v.strip() or '-'}\n" for k, v in d.items()).rstrip()

    emit(ws.state(), as_json, text)


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
    emit(
        {"items": items},
        as_json,
        lambda d: "\n".join(f"{i}. {t}" for i, t in enumerate(d["items"], 1)) or "nothing open",
    )


@heartbeat.command("done")
@click.argument("item")
@workspace_option()
@json_option
def heartbeat_done(item, as_json):
    """Remove ITEM (its number from `list`, or its text)."""
    emit({"removed": open_workspace().heartbeat_done(item)}, as_json, lambda d: f"done: {d['removed']}")


@main.command()
@click.argument("entry_id")
@click.argument("text")
@click.option("--reason", help="Why it changed; recorded in the commit message.")
@click.option(
    "--force", is_flag=True, help="Write even what the policy refuses (a greeting, a question, a guess)."
)
@workspace_option()
@json_option
def edit(entry_id, text, reason, force, as_json):
    """Replace the text of memory ENTRY_ID with TEXT (`-` reads stdin), keeping its id.

    The new text goes through the write policy, like `giok remember`: a greeting, question
    or guess is refused, a duplicate of another entry is refused, secrets are redacted. The
    layer, dates and fields stay; the old text stays in git history (`giok log`, `git log -p`).
    A refusal prints `refused: REASON` and exits 0 (`--json` gives the action: edited,
    refused, duplicate or unchanged).
    """
    result = open_workspace().edit_entry(entry_id, read_text_arg(text), reason=reason, force=force)
    emit(result.to_dict(), as_json, _changed_text)


@main.command()
@click.argument("entry_id")
@click.option("--layer", required=True, metavar="M0|M365|M90|M30", help="The layer to move it to.")
@click.option(
    "--reason", help="Why (promote: it proved lasting; demote: it matters less); in the commit message."
)
@workspace_option()
@json_option
def move(entry_id, layer, reason, as_json):
    """Move memory ENTRY_ID to another layer: promote (deeper) or demote, keeping its id and text.

    The expiry is recomputed for the new layer, from today (M365: a year, M90: 90 days, M30:
    30 days; M0 never expires). `--json` gives the action: promoted, demoted or unchanged.
    """
    result = open_workspace().move_entry(entry_id, layer, reason=reason)
    emit(result.to_dict(), as_json, _changed_text)


def _changed_text(d: dict) -> str:
    entry = d.get("entry") or {}
    if d["action"] in ("edited", "promoted", "demoted"):
        exp = (
            f" (expires {entry['expires']})"
            if entry.get("expires")
            else (" (permanent)" if entry.get("layer") == "M0" else "")
        )
        lines = [
            f"{style.good(d['action'])} {style.ident(entry['id'])} [{entry['layer']}]{exp} {entry['text']}"
        ]
        if d["action"] != "edited":
            lines.append(d["reason"])
    else:
        lines = [f"{style.bad(d['action']) if d['action'] != 'unchanged' else d['action']}: {d['reason']}"]
    return "\n".join(lines + [f"note: {n}" for n in d.get("notes", [])])


@main.command()
@click.option(
    "--layer", "layers", multiple=True, metavar="M0|M365|M90|M30", help="Only this layer (repeatable)."
)
@click.option("--scope", help="Only entries of this scope (workspace, user:NAME, thread:ID, task:ID).")
@click.option("--type", "type_", type=click.Choice(TYPES), help="Only entries of this type.")
@click.option("--at", "at", metavar="DATE", help="As it was then (YYYY-MM-DD[THH:MM]), from git history.")
@workspace_option()
@json_option
def show(layers, scope, type_, at, as_json):
    """Show MEMORY.md by layer, with what expires in the next 7 days.

    --layer, --scope and --type narrow it down (they combine); counts are of what is shown.
    --at DATE shows it as it was at the end of that day (docs/history.md).
    """
    ws = open_workspace()
    data = dict(ws.show() if at is None else history.show_at(ws, at), lang=templates.language(ws))
    emit(
        _filtered(data, [check_layer(layer) for layer in layers], scope and check_scope(scope), type_),
        as_json,
        _show_text if at is None else lambda d: f"{history.describe(d['at'])}\n{_show_text(d)}",
    )


def _filtered(data: dict, layers: list[str], scope: str | None, type_: str | None) -> dict:
    if not (layers or scope or type_):
        return data

    def keep(e: dict) -> bool:
        return (
            (not layers or e["layer"] in layers)
            and (not scope or e["scope"] == scope)
            and (not type_ or e["type"] == type_)
        )

    out = dict(data, filters={"layer": layers or None, "scope": scope, "type": type_})
    out["layers"] = {}
    for layer, info in data["layers"].items():
        if layers and layer not in layers:
            continue
        entries = [e for e in info["entries"] if keep(e)]
        out["layers"][layer] = {"count": len(entries), "entries": entries}
    out["expiring_soon"] = [e for e in data["expiring_soon"] if keep(e)]
    out["expired"] = [e for e in data["expired"] if keep(e)]
    return out


def _show_text(d: dict) -> str:
    t = style.labels(d.get("lang"))
    out = [f"{style.name(d['workspace'])} {style.dim('(' + d['path'] + ')')}"]
    for layer, info in d["layers"].items():
        out.append(f"\n{style.heading(_layer_title(layer, d.get('lang')))}: {info['count']}")
        for e in info["entries"]:
            date = f"[{e['date']}] " if e["date"] else ""
            exp = style.dim(f"  ({t['expires']} {e['expires']})") if e["expires"] else ""
            old = style.dim(f"  ({t['superseded']} {e['superseded_by']})") if e.get("superseded_by") else ""
            out.append(f"  {style.ident(e['id'])}  {date}{e['text']}{exp}{old}")
    if d["expiring_soon"]:
        out.append(f"\n{t['expiring']}: " + ", ".join(e["id"] for e in d["expiring_soon"]))
    if d["expired"]:
        out.append(f"{t['expired']}: " + ", ".join(e["id"] for e in d["expired"]))
    if d["problems"]:
        out.append(style.severity("warning", f"{d['problems']} {t['unreadable']}"))
    return "\n".join(out)


def _layer_title(layer: str, lang: str | None) -> str:
    """M90 in English (as it always was); M90 · 90일 기억 in a Korean workspace."""
    from giok.store.memoryfile import LAYER_TITLES

    if lang != "ko":
        return layer
    return f"{layer} · {LAYER_TITLES['ko'][layer].split(':', 1)[1].strip()}"


@main.command()
@click.option("-n", "--limit", default=30, show_default=True, help="How many commits.")
@workspace_option()
@json_option
def log(limit, as_json):
    """The memory timeline, from git history."""
    emit(
        {"commits": open_workspace().log(limit)},
        as_json,
        lambda d: "\n".join(
            f"{style.ident(c['commit'])} {style.dim(c['date'][:16])} {c['message'].splitlines()[0]}"
            for c in d["commits"]
        ),
    )


CHECK_EXIT = {"error": 1, "warning": 3}  # else 0: info-only findings are not problems


@main.command()
@workspace_option()
@json_option
def check(as_json):
    """Report problems in the workspace files (unreadable lines, duplicate ids, …).

    Exit status, for scripts and CI: 1 when an error is found (a missing file, a duplicate id,
    no git repository), 3 when there are warnings but no error (an unreadable line, an M0
    entry with an expiry, a long TIER 1, what a killed writer left), 0 otherwise — info
    findings (expired entries awaiting distill, adopted lines outside a layer) do not count.
    """
    ws = open_workspace()
    problems = ws.check()
    worst = next((s for s in CHECK_EXIT if any(p["severity"] == s for p in problems)), None)
    data = {
        "problems": problems,
        "exit": CHECK_EXIT.get(worst, 0) if worst else 0,
        "counts": {s: sum(p["severity"] == s for p in problems) for s in ("error", "warning", "info")},
    }
    emit(data, as_json, lambda d: _check_text(d, templates.language(ws)))
    if worst:
        raise SystemExit(CHECK_EXIT[worst])


def _check_text(d: dict, lang: str) -> str:
    t = style.labels(lang)
    width = max((len(t[p["severity"]]) + 1 for p in d["problems"]), default=0)
    lines = [
        f"{style.severity(p['severity'], (t[p['severity']] + ':').ljust(width))} "
        f"{p['path']}{':' + str(p['line']) if p['line'] else ''}: {p['message']}"
        for p in d["problems"]
    ]
    return "\n".join(lines) or style.good(t["no_problems"])


DEMO = "zeon-demo"
DEMO_MEMORIES = [
    ("I am Zeon, Seojun's first agent.", "M0"),
    ("Seojun prefers short answers with the result first.", "M365"),
    ("Decided to use SQLite with FTS5 for the memory index.", "M90"),
    ("First draft of the memory essay is done.", "M30"),
]


@main.command()
@click.option(
    "--path",
    "path",
    type=click.Path(file_okay=False),
    help="Where to create the demo workspace (default: a temp folder).",
)
@json_option
def quickstart(path, as_json):
    """Create a demo workspace (zeon-demo), write a few memories, and show and search them.

    Rerunnable: a demo that is still there is reused (its memories are duplicates the second
    time), one whose folder was deleted is replaced. Without --path and without $GIOK_HOME the
    demo gets a throwaway home of its own inside the temp folder.
    """
    if not path and "GIOK_HOME" not in os.environ:
        path = tempfile.mkdtemp(prefix="giok-demo-")
        os.environ["GIOK_HOME"] = str(Path(path) / ".giok-home")
    ws, created, notes = _demo_workspace(Home(), path)
    memories = []
    for text, layer in DEMO_MEMORIES:
        result = ws.remember(text, layer=layer, via="quickstart")
        memories.append(
            {
                "layer": layer,
                "text": text,
                "action": result.action,
                "id": result.entry.id if result.entry else None,
            }
        )
    ws.diary("Set up giok and wrote the first memories.")
    data = {
        "workspace": ws.name,
        "path": str(ws.root),
        "reused": created is None,
        "created": created or [],
        "notes": notes,
        "memories": memories,
        "show": ws.show(),
        "search": _quickstart_search(ws),
    }
    emit(data, as_json, _quickstart_text)


def _demo_workspace(home: Home, path: str | None) -> tuple[Workspace, list[str] | None, list[str]]:
    """The demo workspace: the registered one when its folder is still there (created None),
    else a new one at path (or in a fresh temp folder)."""
    notes = []
    gone = home.reclaim(DEMO)
    if gone:
        notes.append(f"the earlier demo at {gone} is gone: unregistered it and made a new one")
    spec = home.workspaces().get(DEMO)
    if spec:
        where = Path(spec["path"])
        if path and Path(path).expanduser().resolve() not in (where, where.parent):
            raise WorkspaceError(
                f"the demo workspace {DEMO!r} already lives at {where}: run quickstart without "
                f"--path to see it again, or `giok workspaces remove {DEMO}` first"
            )
        notes.append(f"the demo workspace already exists at {where}: running the demo on it again")
        return Workspace(where, name=DEMO, home=home), None, notes
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="giok-demo-"))
    try:
        ws, created = Workspace.init(root / "zeon", name=DEMO, lang="en", user="Seojun", home=home)
    except BaseException:
        if not path:
            shutil.rmtree(root, ignore_errors=True)
        raise
    return ws, created, notes


def _quickstart_text(d: dict) -> str:
    out = [f"note: {n}" for n in d["notes"]]
    if not d["reused"]:
        out.append(
            f"created workspace {d['workspace']} at {d['path']} ({len(d['created'])} files, committed to git)"
        )
    out += [
        f"remember [{m['layer']}] "
        f"{m['id'] if m['action'] == 'written' else m['action'] + ' ' + (m['id'] or '')}: "
        f"{m['text']}"
        for m in d["memories"]
    ]
    out += ["", _show_text(d["show"])]
    if d["search"] is not None:
        out.append(f"\nsearch: {d['search']['query']}")
        out += [f"  {r['score']:.2f}  {r['path']}:{r['line']}  {r['text']}" for r in d["search"]["results"]]
    out.append(f"\nTry: giok -w {d['path']} show   |   git -C {d['path']} log --oneline")
    return "\n".join(out)


def _quickstart_search(ws) -> dict | None:
    search = getattr(ws, "search", None)
    if search is None:
        return None
    query = "what database did we choose?"
    return {
        "query": query,
        "results": [
            {"score": r.score, "path": r.path, "line": r.start_line, "text": r.text.splitlines()[0]}
            for r in search(query, k=3)
        ],
    }
