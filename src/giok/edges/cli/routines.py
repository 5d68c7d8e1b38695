"""Nightly and rhythmic commands: distill, watch, flush, wake, schedule."""

from __future__ import annotations

import json
import shlex
import sys

import click

from giok.edges.cli import emit, json_option, main, open_workspace, workspace_option
from giok.errors import GiokError, InvalidInput
from giok.lifecycle import distill as distill_mod
from giok.lifecycle import distill_plan, watchdog
from giok.lifecycle import routines as routines_mod
from giok.store.clock import parse_date


@main.command()
@click.option("--date", "date_", metavar="YYYY-MM-DD", help="Distill as of this day (default: today).")
@click.option("--dry-run", is_flag=True, help="Judge and report, write nothing.")
@click.option(
    "--plan",
    "make_plan",
    is_flag=True,
    help="Write nothing; print as JSON what the night would judge, for an agent to decide.",
)
@click.option(
    "--apply",
    "answer",
    type=click.File("rb"),
    metavar="FILE|-",
    help="Run the night with an agent's decisions on a --plan (a JSON file, or - for stdin).",
)
@workspace_option()
@json_option
def distill(date_, dry_run, make_plan, answer, as_json):
    """Nightly distillation: judge new diary items, promote, expire, review, commit.

    Reads every diary day not yet distilled (memory/distilled.txt keeps track), asks the
    judges configured in the home config (the offline judge when none), moves expired
    entries to memory/archive/, merges duplicates, raises contradictions once into the review
    queue (`giok review`), and commits `nightly-distill: DATE` once. Running it again with
    nothing new changes nothing.

    The host agent can be the judge: `--plan` prints the items with the offline judge's
    suggestions and a plan id; the agent answers {"plan": ID, "decisions": {KEY:
    {"decision": ..., "reason": ...}}} and `--apply FILE` runs the night with it (items left
    out fall back to the offline judge; a stale plan is refused).
    """
    if make_plan and answer:
        raise click.UsageError("--plan and --apply go in two steps: plan first, then apply the answer")
    if answer and date_:
        raise click.UsageError("--apply takes the day from the plan: leave out --date")
    ws = open_workspace()
    if make_plan:
        emit(distill_mod.plan(ws, parse_date(date_) if date_ else None), True)
        return
    if answer:
        report = distill_mod.apply(ws, answer.read(distill_plan.MAX_ANSWER + 1), dry_run=dry_run)
    else:
        report = distill_mod.distill(ws, parse_date(date_) if date_ else None, dry_run=dry_run)
    emit(report.to_dict(), as_json, _distill_text)


# The text output's words, in the workspace's language (the report's `lang`).
DISTILL_WORDS = {
    "en": {
        "dry": " (dry run: nothing written)",
        "nothing": "nothing new to distill",
        "lesson": "lesson",
        "expired": "expired",
        "merged": "merged into",
        "superseded": "superseded by",
        "open": "review: {n} open item(s): `giok review`",
        "note": "note",
        "offline": "offline",
    },
    "ko": {
        "dry": " (시험 실행: 아무것도 쓰지 않음)",
        "nothing": "새로 정리할 것 없음",
        "lesson": "교훈",
        "expired": "만료",
        "merged": "병합 →",
        "superseded": "대체됨 →",
        "open": "검토: 열린 항목 {n}개: `giok review`",
        "note": "참고",
        "offline": "오프라인 판단",
    },
}


def _distill_text(d: dict) -> str:
    w = DISTILL_WORDS.get(d.get("lang", "en"), DISTILL_WORDS["en"])
    lines = [d["summary"] + (w["dry"] if d["dry_run"] else "")]
    if not d["changed"]:
        lines.append(w["nothing"])
    lines += [f"  + {a['layer']} {a['id']} {a['text']} ({a['reason']})" for a in d["added"]]
    lines += [f"  + {w['lesson']}: {les['text']}" for les in d["lessons"]]
    lines += [f"  ↑ {p['id']} {p['from']}→{p['to']} {p['text']} ({p['reason']})" for p in d["promoted"]]
    lines += [f"  ⌛ {e['id']} {w['expired']} {e['expires']} → {e['archive']}" for e in d["expired"]]
    lines += [f"  ⇉ {m['id']} {w['merged']} {m['into']}" for m in d["merged"]]
    lines += [
        f"  ⇢ {s['id']} {w['superseded']} {s['by']} ({s['kind']})" for s in d["review"].get("superseded", [])
    ]
    lines += [f"  ! {f['kind']}: {f['message']}" for f in d["flagged"]]
    if d["review"].get("open"):
        lines.append("  " + w["open"].format(n=d["review"]["open"]))
    lines += [f"  {w['note']}: {n}" for n in d["notes"]]
    lines += [f"  {w['offline']}: {f['key']} → {f['decision']} ({f['why']})" for f in d.get("fallback", [])]
    if d.get("commit"):
        lines.append(f"commit {d['commit']}")
    return "\n".join(lines)


@main.command()
@click.option("--used", type=int, required=True, help="Tokens used in the conversation so far.")
@click.option("--window", type=int, required=True, help="The model's context window in tokens.")
@click.option("--session", help="Session id (default: $GIOK_SESSION, else 'default').")
@click.option(
    "--exit-code",
    "exit_code",
    is_flag=True,
    help="Exit 10 when a soft flush is due, 11 when a hard one is (for shell hooks).",
)
@workspace_option()
@json_option
def watch(used, window, session, exit_code, as_json):
    """Context watchdog: ok, soft (>= 70 %) or hard (>= 86.5 %), and what to do.

    `flush_due` says whether this session still has to flush at this level; with
    --exit-code the answer is also the exit status (0 nothing to do, 10 soft, 11 hard).
    """
    ws = open_workspace()
    status = watchdog.watch(ws, used, window, session)
    emit(
        status.to_dict(),
        as_json,
        lambda d: (
            f"{d['level']} {d['percent']}% ({d['used']:,}/{d['window']:,}): {d['action']}"
            + f"\nflush due: {'yes' if d['flush_due'] else 'no'}"
        ),
    )
    if exit_code and status.flush_due:
        sys.exit(10 if status.level == "soft" else 11)


@main.command()
@click.option("--session", help="Session id (default: $GIOK_SESSION, else 'default').")
@click.option(
    "--level",
    type=click.Choice(["soft", "hard"]),
    help="The crossing being flushed (default: the level `giok watch` last saw, else soft).",
)
@click.option(
    "--gist",
    "gist_file",
    type=click.File("rb"),
    metavar="FILE",
    help="The gist as the agent wrote it (JSON, see --instructions); a conversation on stdin completes it.",
)
@click.option(
    "--instructions",
    is_flag=True,
    help="Print what the agent should write for --gist, and exit.",
)
@workspace_option()
@json_option
def flush(session, level, gist_file, instructions, as_json):
    """Keep the gist of the conversation on stdin (JSONL messages or plain text), each item in
    one place: constraints, preferences (style), decisions and facts (dated ones with ISO dates)
    in MEMORY.md through the write policy; pending work, discoveries and failures in the state
    memo. Today's diary and compound/context.md get a line saying where they went. Append-only;
    once per crossing and session.

    The host agent can write the gist itself: `--instructions` prints what to write (a JSON
    object of lists), `--gist FILE` keeps it through the same write policy, completed by the
    extractive gist of a conversation piped on stdin (nothing on stdin: the gist alone)."""
    if instructions:
        emit(
            {"instructions": watchdog.GIST_INSTRUCTIONS, "lists": list(watchdog.CATEGORIES)},
            as_json,
            lambda d: d["instructions"],
        )
        return
    gist = None
    if gist_file is not None:
        raw = gist_file.read(watchdog.MAX_CONVERSATION + 1)
        try:
            gist = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidInput(f"the gist is not JSON: {exc}") from None
    ws = open_workspace()
    if sys.stdin.isatty() and gist is None:
        raise InvalidInput("pipe the conversation on stdin: `... | giok flush --session ID`")
    conversation = "" if sys.stdin.isatty() else sys.stdin.read()
    result = watchdog.flush(ws, conversation, session, level, gist=gist)
    emit(
        result.to_dict(),
        as_json,
        lambda d: "\n".join(
            [f"{d['action']} ({d['level']}, session {d['session']}, summary: {d['summary_by']})"]
            + d["lines"]
            + [
                f"memory: {m['action']} {m['id'] or ''} ({m['layer']}) {m['text']}"
                for m in d.get("memories", [])
            ]
            + [f"note: {n}" for n in d["notes"]]
        ),
    )


@main.command()
@click.option(
    "--print",
    "print_only",
    is_flag=True,
    help="Only print the prompt, even when an agent_command is configured.",
)
@workspace_option()
@json_option
def wake(print_only, as_json):
    """What a cron wake-up hands the agent: boot context + open HEARTBEAT items.

    With `agent_command` set in the home config (for the workspace or home-wide), runs that
    command with the prompt on stdin and reports its result.
    """
    ws = open_workspace()
    data = routines_mod.wake(ws, run_agent=not print_only)
    agent = data.get("agent")
    emit(
        data,
        as_json,
        lambda d: (
            d["prompt"]
            if not agent
            else (
                f"ran {' '.join(agent['command'])}: exit {agent['exit']}\n{agent['output']}{agent['errors']}"
            ).rstrip()
        ),
    )
    if agent and agent["exit"] != 0:
        sys.exit(1)


@main.group()
def schedule():
    """Routines on a schedule: check-ins 09:30 and 21:30 (wake), distillation 23:00.

    `install` writes them into your crontab (lines marked `# giok:WORKSPACE:ROUTINE`; no other
    line is touched), `list` shows them, `remove` takes them out, `run` is a foreground
    scheduler for machines without cron.
    """


@schedule.command("install")
@click.option(
    "--add",
    "adds",
    nargs=3,
    multiple=True,
    metavar="NAME CRON COMMAND",
    help="Add or replace a custom routine, e.g. --add qrt '0 0,8,16 * * *' wake.",
)
@click.option(
    "--disable", multiple=True, metavar="NAME", help="Disable a routine (a default or a custom one)."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the crontab it would write (with --add/--disable applied); change nothing.",
)
@workspace_option()
@json_option
def schedule_install(adds, disable, dry_run, as_json):
    """Install the workspace's routines into the crontab (replacing its old giok lines)."""
    ws = open_workspace()
    if dry_run:
        result = routines_mod.install(ws, dry_run=True, items=_planned(ws, adds, disable))
        emit(
            result,
            as_json,
            lambda d: (
                d["crontab"].rstrip("\n")
                + ("" if d["changed"] else "\n# (dry run: the crontab already holds exactly these lines)")
            ),
        )
        return
    for name, cron, command in adds:
        routines_mod.save(ws, routines_mod.Routine(name, cron, shlex.split(command)))
    for name in disable:
        routines_mod.forget(ws, name)
    result = routines_mod.install(ws)
    emit(result, as_json, lambda d: "\n".join(d["installed"]) or "no routines enabled")


def _planned(ws, adds, disable) -> list:
    """The routines an install with these --add/--disable would leave, without saving them."""
    items = {r.name: r for r in routines_mod.routines(ws, include_disabled=True)}
    for name, cron, command in adds:
        items[name] = routines_mod.Routine(name, cron, shlex.split(command)).check()
    for name in disable:
        if name not in items:
            routines_mod.find(ws, name)  # the one clear error, with the known names
        items[name].enabled = False
    return list(items.values())


@schedule.command("list")
@workspace_option()
@json_option
def schedule_list(as_json):
    """The workspace's routines, their next run, and whether each is in the crontab."""
    ws = open_workspace()
    from giok.store.clock import now

    try:
        in_cron = {r["routine"] for r in routines_mod.installed(ws.name, home=ws.home)}
        cron_note = None
    except GiokError as exc:  # no crontab binary: still list the routines
        in_cron, cron_note = set(), str(exc)
    rows = [
        {
            **r.to_dict(),
            "next": r.next_run(now()).isoformat(timespec="minutes") if r.enabled else None,
            "installed": r.name in in_cron,
        }
        for r in routines_mod.routines(ws, include_disabled=True)
    ]
    data = {"workspace": ws.name, "routines": rows, "crontab": cron_note or "ok"}
    emit(
        data,
        as_json,
        lambda d: "\n".join(
            f"{r['name']:<18} {r['schedule']:<16} giok {r['command']:<12} "
            f"{'installed' if r['installed'] else ('disabled' if not r['enabled'] else 'not installed')}"
            + (f"  next {r['next']}" if r["next"] else "")
            for r in d["routines"]
        ),
    )


@schedule.command("remove")
@click.option("--routine", "name", help="Remove only this routine's line.")
@click.option("--all", "everything", is_flag=True, help="Remove giok's lines of every workspace.")
@workspace_option()
@json_option
def schedule_remove(name, everything, as_json):
    """Take giok's lines out of the crontab (this workspace's, one routine's, or --all)."""
    workspace = None if everything else open_workspace().name
    gone = routines_mod.uninstall(workspace, name)
    emit({"removed": gone}, as_json, lambda d: "\n".join(d["removed"]) or "no giok lines to remove")


@schedule.command("run")
@click.option("--routine", "name", help="Run this one routine now (what a cron line calls) and exit.")
@click.option("--max-runs", type=int, help="Stop after this many runs (default: run until interrupted).")
@workspace_option()
@json_option
def schedule_run(name, max_runs, as_json):
    """Run routines: one now (--routine), or all on their schedules in the foreground.

    Each run and its result are noted in the diary (`routine NAME (giok CMD): ok`); a sync only
    when it failed or reported something (a merge decision, a renumbering, a rollback).
    """
    ws = open_workspace()
    if name:
        result = routines_mod.run_routine(ws, routines_mod.find(ws, name))
        emit(result, as_json, _ran)
        sys.exit(0 if result["exit"] == 0 else 1)
    items = routines_mod.routines(ws)
    scheduler = routines_mod.Scheduler(ws, items)
    if not as_json:
        for when, batch in [scheduler.next()]:
            click.echo(
                f"scheduling {len(items)} routine(s) for {ws.name}; next: "
                f"{', '.join(r.name for r in batch)} at {when:%Y-%m-%d %H:%M}"
            )
    scheduler.loop(max_runs, on_result=lambda r: emit(r, as_json, _ran))


def _ran(d: dict) -> str:
    """A routine's run: its diary line, or (a quiet one with nothing to note) one line here only."""
    return d["diary"] or f"routine {d['routine']} (giok {' '.join(d['command'])}): ok, nothing to note"
