"""`giok review`: the review queue (state/review.md) — memories that may disagree, raised once
by the nightly distill and kept until resolved (giok.lifecycle.review)."""

from __future__ import annotations

import click

from giok.edges.cli import emit, json_option, main, open_workspace, style, workspace_option
from giok.errors import InvalidInput
from giok.lifecycle import review as review_mod


@main.group(invoke_without_command=True)
@click.option("--all", "everything", is_flag=True, help="Also list resolved and closed items.")
@workspace_option()
@json_option
@click.pass_context
def review(ctx, everything, as_json):
    """List the open review items: pairs of memories that may disagree.

    The nightly distill raises a contradiction ("We deploy on Fridays" / "We do not deploy on
    Fridays") or a change it is unsure of once, as R-001, R-002 … in state/review.md, and keeps
    it there until it is resolved with `giok review resolve`. An item whose entries are gone
    (forgotten, superseded, expired) closes by itself.
    """
    if ctx.invoked_subcommand is not None:
        return
    ws = open_workspace()
    emit(review_mod.listing(ws, everything), as_json, _listing_text)


def _listing_text(d: dict) -> str:
    if not d["items"]:
        return f"no open review items in {d['workspace']}" + (f" ({d['total']} in all)" if d["total"] else "")
    out = [f"{d['open']} open review item(s) in {d['workspace']} ({d['path']})"]
    for item in d["items"]:
        out.append(f"\n{style.ident(item['id'])} {item['kind']} ({item['status']}), raised {item['raised']}")
        out += [f"  {style.ident(e['id'])} [{e['date'] or '?'}] {e['text']}" for e in item["entries"]]
        if item["why"]:
            out.append(style.dim(f"  why: {item['why']}"))
        if item["outcome"]:
            out.append(f"  {item['status']}: {item['outcome']}")
    if d["open"]:
        out.append("\nresolve: giok review resolve R-NNN --newer | --both | --forget ID")
    return "\n".join(out)


@review.command("resolve")
@click.argument("item_id", metavar="R-NNN")
@click.option("--newer", is_flag=True, help="The newer entry supersedes the older one.")
@click.option("--both", is_flag=True, help="Both are true: keep both, never raise this pair again.")
@click.option(
    "--forget", "entry", metavar="ID", help="Forget this entry (one of the item's), keep the other."
)
@click.option("--reason", help="Why (goes into the commit message; with --forget, the forget's reason).")
@workspace_option()
@json_option
def resolve(item_id, newer, both, entry, reason, as_json):
    """Resolve review item R-NNN: --newer, --both or --forget ID (exactly one).

    One commit: --newer marks the older entry superseded by the newer one (as `remember` does
    for an update); --both keeps both and the pair is never raised again; --forget forgets that
    entry (from the files, the index and the caches, as `giok forget`) and keeps the other.
    """
    chosen = [c for c, given in (("newer", newer), ("both", both), ("forget", entry)) if given]
    if len(chosen) != 1:
        raise InvalidInput("give exactly one of --newer, --both or --forget ID")
    ws = open_workspace()
    done = review_mod.resolve(ws, item_id, chosen[0], entry=entry, reason=reason)
    emit(
        done.to_dict(),
        as_json,
        lambda d: "\n".join(
            [f"{d['item']['id']} {d['item']['status']}: {d['item']['outcome']}"]
            + [f"note: {n}" for n in d["notes"]]
            + ([f"commit {d['commit']}"] if d["commit"] else [])
        ),
    )
