"""`giok remote add|list`, `giok sync`: a workspace on several machines through git remotes
(giok.store.remote), and `giok merge-driver`, the command git runs to merge memory files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from giok.edges.cli import emit, json_option, main, open_workspace, workspace_option
from giok.settings import Settings
from giok.store import remote as remotelib


@main.group()
def remote():
    """The git remotes a workspace syncs with (docs/teams.md)."""


@remote.command("add")
@click.argument("name")
@click.argument("url")
@workspace_option()
@json_option
def remote_add(name, url, as_json):
    """Add remote NAME at URL and register giok's merge driver for the memory files."""
    data = remotelib.add(open_workspace(), name, url)
    emit(data, as_json, lambda d: f"remote {d['remote']} → {d['url']}; merge driver registered")


@remote.command("list")
@workspace_option()
@json_option
def remote_list(as_json):
    """List the workspace's remotes."""
    data = remotelib.remotes(open_workspace())
    emit(data, as_json, lambda d: "\n".join(f"{k}\t{v}" for k, v in d.items()) or "no remote")


@main.command()
@click.option(
    "--remote", "remote_name", metavar="NAME", help="Which remote (default: origin, else the only one)."
)
@click.option(
    "--adopt-remote",
    is_flag=True,
    help="The remote's history was rewritten (forget --rewrite-history on another machine): take it, "
    "carrying this machine's writes since the last sync, and drop the old history here.",
)
@workspace_option()
@json_option
def sync(remote_name, adopt_remote, as_json):
    """Pull and push the workspace: merge the other machines' writes (memory files by id,
    never a conflict between different entries), then push ours. What the merge had to decide
    (an entry edited on both machines, a renumbered decision) is printed and kept in the merge
    commit's message. A remote whose history was rewritten is never merged: sync stops and
    names `--adopt-remote` (docs/teams.md, "How forgetting travels")."""
    ws = open_workspace()
    report = remotelib.sync(ws, remote_name, adopt_remote=adopt_remote)
    if (
        report.forgotten or report.purge_paths
    ):  # forgotten elsewhere: this machine's index and caches lose it too
        from giok.retrieval import index
        from giok.write.forget import scrub_derived

        texts = sorted({*report.forgotten.values(), *report.forgotten_texts})
        index.purge(ws, texts, ids=list(report.forgotten), paths=report.purge_paths)
        with ws.lock():  # no write of another giok process between a cache's read and its rewrite
            scrub_derived(ws, list(report.forgotten), texts)
    emit(report.to_dict(), as_json, _text)


def _text(d: dict) -> str:
    merged = {None: "nothing to merge", "fast-forward": "fast-forward"}.get(
        d["merge"], f"merged in {str(d['merge'])[:10]}"
    )
    out = [f"{d['workspace']} ⇄ {d['remote']}/{d['branch']}: {d['fetched']} in, {d['pushed']} out, {merged}"]
    out += [f"  {r['path']}: {r['detail']}" for r in d["reports"]]
    out += [f"  {n}" for n in d.get("notes", [])]
    return "\n".join(out)


@main.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("path")
def merge_driver(base, ours, theirs, path):
    """Git's merge driver for giok's memory files: `giok merge-driver %O %A %B %P`."""
    settings = Settings.from_env()  # giok sync hands the driver its values through git's environment
    for r in remotelib.run_driver(
        base, ours, theirs, path, their_commit=settings.merge_theirs, report=settings.merge_report
    ):
        click.echo(f"giok merge: {r['path']}: {r['detail']}", err=True)
    sys.exit(0)
