"""Boot and audit commands: boot, history, trace."""

from __future__ import annotations

import json

import click

from giok.edges.cli import emit, json_option, main, open_workspace, workspace_option
from giok.lifecycle import boot as bootlib
from giok.store import history as historylib
from giok.store import trace as tracelib


@main.command()
@click.option("--budget", type=int, help="Token budget (default: the boot_budget setting, else 4000).")
@click.option(
    "--context",
    type=click.Choice(bootlib.CONTEXTS),
    default="private",
    show_default=True,
    help="group leaves MEMORY.md and user-scoped entries out.",
)
@click.option(
    "--user", help="Whose session this is (default: the name in USER.md); other users' memories stay out."
)
@click.option("--thread", help="The thread id; that thread's entries are included, no other thread's.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "claude-hook"]),
    default="text",
    show_default=True,
    help="claude-hook prints the JSON a Claude Code hook returns, for the event named in the hook's "
    "input on stdin (SessionStart when there is none).",
)
@click.option("--no-record", is_flag=True, help="Do not count the injected entries as references.")
@click.option(
    "--at",
    "at",
    metavar="DATE",
    help="The boot of that day (YYYY-MM-DD[THH:MM]), from git history; records nothing.",
)
@workspace_option()
@json_option
def boot(budget, context, user, thread, fmt, no_record, at, as_json):
    """Print the context an agent must see at session start, within a token budget.

    Precedence rule, TIER 1 + SOUL.md + USER.md, state memo, open tasks, MEMORY.md (M0 always,
    then M365/M90/M30 as the budget allows), yesterday's and today's diary. What did not fit is
    listed, never cut silently (--json gives every section's token count).
    """
    if fmt == "claude-hook":
        _claude_hook(budget, context, user, thread, no_record)
        return
    if at is not None:
        _boot_at(at, budget, context, user, thread, as_json)
        return
    result = bootlib.build(
        open_workspace(), budget=budget, context=context, user=user, thread=thread, record=not no_record
    )
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    emit(result.to_dict(), as_json, lambda d: d["text"].rstrip("\n"))


def _boot_at(at, budget, context, user, thread, as_json) -> None:
    ws = open_workspace()
    point = historylib.point_at(ws, at)
    with historylib.at(ws, point) as then:
        result = bootlib.build(then, budget=budget, context=context, user=user, thread=thread, record=False)
    data = dict(result.to_dict(), at=point.to_dict())
    emit(data, as_json, lambda d: historylib.describe(d["at"]) + "\n" + d["text"].rstrip("\n"))


def _claude_hook(budget, context, user, thread, no_record) -> None:
    """As a Claude Code hook: answer the event the hook's input names, and never block it
    (a failure is a line on stderr and exit 0). Events that take no context get nothing."""
    from giok.edges import hooks
    from giok.edges.cli.hooks import hook_input

    event = "SessionStart"
    try:
        event = hook_input().get("hook_event_name") or event
        if event not in hooks.CONTEXT_EVENTS:
            click.echo(
                f"giok boot: a {event} hook takes no context; printed nothing (use `giok hook {event}`)",
                err=True,
            )
            return
        answer = hooks.session_start(
            open_workspace(),
            {},
            budget,
            event,
            context=context,
            user=user,
            thread=thread,
            record=not no_record,
        )
        click.echo(json.dumps(answer, ensure_ascii=False))
    except Exception as exc:  # memory never blocks the session
        click.echo(f"giok boot ({event} hook): {exc}", err=True)


@main.command()
@click.argument("entry_id")
@workspace_option()
@json_option
def history(entry_id, as_json):
    """Show the supersedes chain of memory ENTRY_ID, oldest first."""
    chain = tracelib.history(open_workspace(), entry_id)
    emit({"id": entry_id, "chain": chain}, as_json, _history_text)


def _history_text(d: dict) -> str:
    out = []
    for row in d["chain"]:
        if row.get("missing"):
            out.append(f"{row['id']}  (no longer in MEMORY.md: forgotten or archived)")
        else:
            mark = "*" if row["id"] == d["id"] else " "
            out.append(f"{mark} {row['id']}  [{row['date'] or '-'}] {row['status']:<10} {row['text']}")
    return "\n".join(out)


@main.command()
@click.argument("item_id")
@workspace_option()
@json_option
def trace(item_id, as_json):
    """Show why memory ITEM_ID exists (or why write r-… was refused): decision, reason, source."""
    emit(tracelib.lookup(open_workspace(), item_id), as_json, _trace_text)


def _trace_text(d: dict) -> str:
    out = []
    entry = d.get("entry")
    if entry:
        out.append(f"{entry['id']} [{entry['layer']}] {entry['text']}")
        out.append(f"  type {entry['type']}, scope {entry['scope']}, source {entry['source'] or '-'}")
    for e in d["events"]:
        if e["kind"] == "commit":
            out.append(f"{(e.get('at') or '')[:16]}  {e['commit']}  {e['message']}")
            for key in ("decision", "reason", "supersedes", "source", "via", "redacted", "forced"):
                if e.get(key):
                    out.append(f"    {key}: {e[key]}")
        elif e["kind"] == "decision":
            out.append(f"{(e.get('at') or '')[:16]}  {e['id']}  {e['action']}: {e['reason']}")
            if e.get("text"):
                out.append(f"    text: {e['text']}")
            else:  # refused writes keep no text, only what kind of text it was
                out.append(
                    f"    text not kept: {e.get('category') or 'refused'}, {e.get('length', '?')} characters"
                )
            for key in ("source", "via", "target"):
                if e.get(key):
                    out.append(f"    {key}: {e[key]}")
        else:
            out.append(f"note: {e['message']}")
    return "\n".join(out)
