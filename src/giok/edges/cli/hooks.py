"""Claude Code hook command: `giok hook EVENT` (SessionStart, UserPromptSubmit, PreCompact, Stop)."""

from __future__ import annotations

import click

from giok.edges.cli import main, open_workspace, workspace_option


def hook_input(wait: float = 1.0) -> dict:
    """The JSON object a Claude Code hook gets on stdin; {} from a terminal or an empty stdin."""
    from giok.edges.hooks import parse_input

    return parse_input(read_hook_input(wait))


def read_hook_input(wait: float = 1.0) -> str:
    """What a Claude Code hook got on stdin ('' from a terminal, or when nothing comes within
    `wait` seconds): the front door's reader (giok.edges.hookline), which may have read it first."""
    from giok.edges.hookline import read_input

    return read_input(wait) or ""


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

    out, err = hooks.respond(event, read_hook_input(), budget, open_workspace)
    if err:
        click.echo(err, err=True, nl=False)
    if out:
        click.echo(out, nl=False)
