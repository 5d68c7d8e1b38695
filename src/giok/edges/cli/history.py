"""`giok diff DATE1 DATE2`: what the memory gained and lost between two moments, from git
history (giok.store.history)."""

from __future__ import annotations

import click

from giok.edges.cli import emit, json_option, main, open_workspace, style, workspace_option
from giok.store import clock, history

_TITLES = {
    "added": "added",
    "edited": "edited",
    "superseded": "superseded",
    "promoted": "promoted",
    "demoted": "moved to a shorter layer",
    "expired": "expired",
    "merged": "merged into another entry",
    "forgotten": "forgotten",
    "removed": "removed by hand",
}


@main.command("diff")
@click.argument("since", metavar="DATE1")
@click.argument("until", metavar="DATE2", required=False)
@workspace_option()
@json_option
def diff_cmd(since, until, as_json):
    """List the memories added, edited, superseded, promoted, expired and forgotten between
    DATE1 and DATE2 (default: now). A date means the end of that day; YYYY-MM-DDTHH:MM a moment.

    Forgotten entries are listed by id and reason, never by text.
    """
    ws = open_workspace()
    result = history.diff(ws, since, until if until is not None else clock.now())
    emit(result.to_dict(), as_json, _text)


def _text(d: dict) -> str:
    out = [
        f"since: {history.describe(d['since'])}",
        f"until: {history.describe(d['until'])}",
    ]
    for kind, title in _TITLES.items():
        rows = d[kind]
        if not rows:
            continue
        out.append(f"\n{style.heading(title)}: {len(rows)}")
        out += [f"  {_line(kind, r)}" for r in rows]
    if not any(d["counts"].values()):
        out.append("\nno memory changed")
    return "\n".join(out)


def _line(kind: str, r: dict) -> str:
    ident = style.ident(r["id"])
    if kind == "forgotten":
        return f"{ident} ({r.get('layer') or '?'})  reason: {r.get('reason') or '-'}"
    extra = {
        "promoted": f"  {r.get('from')}→{r.get('to')}",
        "demoted": f"  {r.get('from')}→{r.get('to')}",
        "superseded": f"  by {r.get('superseded_by')}" if r.get("superseded_by") else "",
        "merged": f"  into {r.get('merged_into')}" if r.get("merged_into") else "",
        "expired": f"  (expired {r.get('expires')}{'' if r.get('archived') else ', not archived yet'})",
        "edited": f"  (was: {r.get('before')})",
    }.get(kind, "")
    return f"{ident} [{r['layer']}] {r['text']}{style.dim(extra) if extra else ''}"
