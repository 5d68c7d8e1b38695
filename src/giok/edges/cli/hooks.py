"""Claude Code hook command: `giok hook EVENT` (SessionStart, UserPromptSubmit, PreCompact, Stop)."""

from __future__ import annotations

import json
import select
import sys

import click

from giok.edges.cli import main, open_workspace, workspace_option


def hook_input(wait: float = 1.0) -> dict:
    """The JSON object a Claude Code hook gets on stdin; {} from a terminal or an empty stdin."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        ready, _, _ = select.select([sys.stdin], [], [], wait)
    except (OSError, ValueError):  # not a selectable stream (a file or a test's StringIO): just read it
        ready = [sys.stdin]
    raw = sys.stdin.read() if ready else ""
    if not raw.strip():
        return {}
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the hook input is not a JSON object")
    return data


@main.command("hook")
@click.argument("event", required=False, default="")
@click.option(
    "--budget", help="SessionStart: the boot budget; UserPromptSubmit: the recall budget (default 300)."
)
@workspace_option()
def hook(event, budget):
    """Run giok's part of Claude Code hook EVENT, reading the hook's JSON on stdin.

    SessionStart prints the boot context and UserPromptSubmit what memory the prompt needs
    (nothing when none is relevant), each as hookSpecificOutput for that event; PreCompact
    flushes the transcript's gist to the diary; Stop writes one diary line. Never blocks:
    any failure is one line on stderr and exit 0.
    """
    from giok.edges import hooks

    try:
        if budget is not None:  # checked here, not by click: a usage error would exit 2 and block
            if not str(budget).isdigit():
                raise ValueError(f"--budget must be a whole number of tokens, not {budget!r}")
            budget = int(budget)
        try:
            data = hook_input()
        except ValueError as exc:
            raise ValueError(f"the hook input on stdin is not a JSON object ({exc})") from None
        event = event or data.get("hook_event_name") or ""
        sent = data.get("hook_event_name")
        if sent and sent != event:
            click.echo(
                f"giok hook: configured as {event} but Claude Code sent {sent}; answering {sent}", err=True
            )
            event = sent
        if event not in hooks.EVENTS:
            click.echo(
                f"giok hook: nothing to do for event {event!r} (giok handles {', '.join(hooks.EVENTS)})",
                err=True,
            )
            return
        ws = open_workspace()
        out: dict | None
        if event == "SessionStart":
            out = hooks.session_start(ws, data, budget)
        elif event == "UserPromptSubmit":
            out = hooks.prompt_recall(ws, data, **({"budget": budget} if budget else {}))
        elif event == "PreCompact":
            result = hooks.pre_compact(ws, data)
            click.echo(f"giok: {result.action} ({result.level}, session {result.session})", err=True)
            out = None
        else:
            line = hooks.stop(ws, data)
            out = None
            if line:
                click.echo(f"giok: diary {line}", err=True)
        if out:
            click.echo(json.dumps(out, ensure_ascii=False))
    except Exception as exc:  # memory never blocks the session: report and let Claude Code go on
        click.echo(f"giok hook {event}: {exc}", err=True)
        shown = hooks.failure(event, exc)  # the line the user sees
        if shown:
            click.echo(json.dumps(shown, ensure_ascii=False))
