"""Commands for many agents on one home: `crossview send|inbox|ack` and the `mcp` server."""

from __future__ import annotations

import click

from giok.edges.cli import emit, json_option, main, open_workspace, read_text_arg, workspace_option
from giok.errors import InvalidInput, LoopRefused
from giok.lifecycle.crossview import Bus
from giok.store.home import Home
from giok.workspace import Workspace


@main.group()
def crossview():
    """Cross-view messages between the agents of this home (the seed's [단톡방 크로스뷰]).

    A post goes to every other workspace (or --to some); a reply (--reply-to) goes to the
    original sender only and is never fanned out again; a reply to a reply, or a relay of
    a relayed message, is refused. Delivered messages are noted in the recipients' diaries.
    """


def _sender(from_: str | None) -> str:
    if from_:
        return Workspace.open(from_, home=Home()).name
    return open_workspace().name


@crossview.command("send")
@click.argument("text")
@click.option("--from", "from_", metavar="WS", help="Sending workspace (default: -w / the current one).")
@click.option(
    "--to", "to", metavar="WS,…", help="Recipients, comma-separated (default: every other workspace)."
)
@click.option("--all", "all_", is_flag=True, help="Send to every other workspace (the default for a post).")
@click.option("--reply-to", "reply_to", metavar="MSG", help="Answer message MSG: goes to its sender only.")
@workspace_option()
@json_option
def send(text, from_, to, all_, reply_to, as_json):
    """Send TEXT (`-` reads stdin) as a cross-view message; prints its id."""
    if to and all_:
        raise InvalidInput("give --to or --all, not both")
    if reply_to and (to or all_):
        raise LoopRefused("a reply goes to the original sender only (loop rule); drop --to/--all")
    recipients = [n for n in to.split(",") if n.strip()] if to else None
    bus = Bus()
    message = bus.send(read_text_arg(text), _sender(from_), to=recipients, reply_to=reply_to)
    emit(message, as_json, _sent_text)
    for name, outcome in message["transports"].items():
        if not outcome.get("ok"):
            click.echo(f"warning: {name}: {outcome.get('error')}", err=True)


def _sent_text(m: dict) -> str:
    skipped = m.get("skipped_missing")
    return f"{m['id']} → {', '.join(m['recipients'])}" + (
        f"\nskipped (folder gone): {', '.join(skipped)}; `giok workspaces remove NAME` unregisters it"
        if skipped
        else ""
    )


@crossview.command("inbox")
@click.option("--unread", is_flag=True, help="Only messages not acked yet.")
@click.option("-n", "--limit", default=50, show_default=True, help="At most this many (the newest).")
@workspace_option()
@json_option
def inbox(unread, limit, as_json):
    """List the cross-view messages delivered to this workspace, oldest first."""
    ws = open_workspace()
    items = Bus().inbox(ws.name, unread=unread, limit=limit)
    emit({"workspace": ws.name, "messages": items}, as_json, _inbox_text)


def _inbox_text(d: dict) -> str:
    lines = [
        f"{'  ' if m['acked'] else '* '}{m['id']}  {m['created'][:16]}  {m['rendered']}"
        for m in d["messages"]
    ]
    return "\n".join(lines) or "no messages"


@crossview.command("ack")
@click.argument("ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Mark every unread message read.")
@workspace_option()
@json_option
def ack(ids, all_, as_json):
    """Mark messages IDS (or --all unread ones) as read."""
    if not ids and not all_:
        raise InvalidInput("give message ids to ack, or --all")
    ws = open_workspace()
    done = Bus().ack(ws.name, list(ids) or None)
    emit(
        {"workspace": ws.name, "acked": done},
        as_json,
        lambda d: f"acked {len(d['acked'])}: {' '.join(d['acked'])}".rstrip(": "),
    )


@main.command("mcp")
@workspace_option()
def mcp_command():
    """Run the MCP server (Model Context Protocol, stdio) for this workspace.

    Tools: memory_boot, memory_recall, memory_search, memory_get, memory_task_list,
    memory_state_show, memory_heartbeat_list, memory_distill_plan, memory_review (read-only);
    memory_remember, memory_decide, memory_lesson, memory_task, memory_state, memory_heartbeat,
    memory_forget, memory_distill_apply, memory_flush, memory_review_resolve, crossview_send,
    crossview_inbox, crossview_ack. `initialize` is
    answered at once; the index warms up in the background after it.
    Needs `pip install giok[mcp]`.
    Claude Code: `claude mcp add giok -- giok mcp -w NAME`.
    """
    from giok.edges.mcp import serve  # imports the mcp SDK, with a clear error when it is missing

    serve(open_workspace())
