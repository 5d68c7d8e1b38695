"""Heartbeat wake-ups and cron routines: the rhythm that gives an agent a day.

A routine is a giok command + a workspace + a cron schedule. The seed's defaults: check-ins
at 09:30 and 21:30 (`giok wake`) and the nightly distillation at 23:00 (`giok distill`);
custom routines live in the home config under the workspace:

    "workspaces": {"zeon": {"path": "...", "routines": [
        {"name": "qrt", "schedule": "0 0,8,16 * * *", "command": "wake"},
        {"name": "checkin-evening", "enabled": false}]}}

`install` writes them into the user's real crontab, each line ending in the marker
`# giok:WORKSPACE:ROUTINE`, so giok only ever touches its own lines. A cron line calls
`giok schedule run --routine NAME -w WORKSPACE`, which runs the command and notes the run and
its result in the diary. `Scheduler` is the foreground alternative for machines without cron.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass

from croniter import croniter

from giok.errors import GiokError, InvalidInput, NotFound
from giok.settings import Settings, child_env
from giok.store.clock import now, today
from giok.store.fsutil import file_lock
from giok.store.home import Home
from giok.store.layout import MEMORY
from giok.store.memoryfile import MemoryFile
from giok.text.lazy import lazy

_NAME_RE = lazy(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MARK_RE = lazy(r"#\s*giok:([A-Za-z0-9._-]+):([A-Za-z0-9._-]+)\s*$")
_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_FIELD_RE = lazy(r"^[A-Za-z0-9*/,-]+$")


# The giok commands a routine may run (`giok -w WS <command> …`).
ROUTINE_COMMANDS = (
    "wake",
    "distill",
    "index",
    "check",
    "boot",
    "show",
    "log",
    "recall",
    "search",
    "diary",
    "heartbeat",
    "crossview",
    "watch",
    "task",
    "state",
    "sync",
)


@dataclass
class Routine:
    name: str
    schedule: str
    command: list[str]
    enabled: bool = True

    def check(self) -> Routine:
        """This routine if its name and schedule are valid, else InvalidInput naming the field."""
        if not _NAME_RE.match(self.name or ""):
            raise InvalidInput(f"invalid routine name {self.name!r}: letters, digits, '.', '_' or '-'")
        if not _valid_schedule(self.schedule):
            raise InvalidInput(
                f"invalid cron schedule {self.schedule!r} for routine {self.name}: five fields, e.g. '30 9 "
                "* * *'"
            )
        if not self.command or any(not a or "\n" in a for a in self.command):
            raise InvalidInput(f"routine {self.name} needs a giok command, e.g. 'wake' or 'distill'")
        if self.command[0] not in ROUTINE_COMMANDS:
            raise InvalidInput(
                f"routine {self.name}: {self.command[0]!r} is not a giok command a routine can run "
                f"(one of: {', '.join(ROUTINE_COMMANDS)})"
            )
        return self

    def next_run(self, after: dt.datetime) -> dt.datetime:
        """The first time after `after` that the cron schedule fires."""
        return croniter(self.schedule, after).get_next(dt.datetime)

    def to_dict(self) -> dict:
        """The routine as the JSON the CLI and MCP print."""
        return {
            "name": self.name,
            "schedule": self.schedule,
            "command": " ".join(self.command),
            "enabled": self.enabled,
        }


def _valid_schedule(schedule) -> bool:
    """Exactly five cron fields separated by spaces (or one @macro): croniter also takes a
    sixth (seconds) field, which cron would run as the start of the command."""
    if not isinstance(schedule, str):
        return False
    if schedule in _MACROS:
        return True
    fields = schedule.split(" ")
    return len(fields) == 5 and all(_FIELD_RE.match(f) for f in fields) and croniter.is_valid(schedule)


DEFAULTS = (
    Routine("checkin-morning", "30 9 * * *", ["wake"]),
    Routine("checkin-evening", "30 21 * * *", ["wake"]),
    Routine("nightly-distill", "0 23 * * *", ["distill"]),
)


def _parse_command(value) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value or ""))
    except ValueError as exc:
        raise InvalidInput(f"cannot read routine command {value!r}: {exc}") from None


def routines(ws, include_disabled: bool = False) -> list[Routine]:
    """The workspace's routines: the defaults, overridden or extended by its config."""
    by_name = {r.name: Routine(r.name, r.schedule, list(r.command)) for r in DEFAULTS}
    spec = ws.home.workspaces().get(ws.name, {})
    for row in spec.get("routines") or []:
        if not isinstance(row, dict) or "name" not in row:
            raise InvalidInput(f"routine {row!r} in the home config needs at least a name")
        base = by_name.get(row["name"])
        routine = Routine(
            str(row["name"]),
            str(row.get("schedule") or (base.schedule if base else "")),
            _parse_command(row["command"]) if "command" in row else (base.command if base else []),
            bool(row.get("enabled", True)),
        )
        by_name[routine.name] = routine.check()
    out = [r.check() for r in by_name.values()]
    return out if include_disabled else [r for r in out if r.enabled]


def find(ws, name: str) -> Routine:
    for routine in routines(ws, include_disabled=True):
        if routine.name == name:
            return routine
    known = ", ".join(r.name for r in routines(ws, include_disabled=True))
    raise NotFound(f"no routine {name!r} in {ws.name} (known: {known})")


def save(ws, routine: Routine) -> Routine:
    """Add or replace a custom routine in the home config."""
    routine.check()

    def change(config):
        spec = config["workspaces"].setdefault(ws.name, {"path": str(ws.root)})
        rows = [r for r in spec.get("routines") or [] if r.get("name") != routine.name]
        rows.append(
            {
                "name": routine.name,
                "schedule": routine.schedule,
                "command": " ".join(map(shlex.quote, routine.command)),
                "enabled": routine.enabled,
            }
        )
        spec["routines"] = rows

    ws.home.update(change)
    return routine


def forget(ws, name: str) -> None:
    """Drop a custom routine from the config (a default one is disabled instead)."""
    find(ws, name)
    default = any(r.name == name for r in DEFAULTS)

    def change(config):
        spec = config["workspaces"].setdefault(ws.name, {"path": str(ws.root)})
        rows = [r for r in spec.get("routines") or [] if r.get("name") != name]
        if default:
            rows.append({"name": name, "enabled": False})
        spec["routines"] = rows

    ws.home.update(change)


# -- the crontab -------------------------------------------------------------------------------
def _crontab_cmd(home: Home | None) -> list[str]:
    """The crontab command: the home's settings (GIOK_CRONTAB as the entry point read it)."""
    return shlex.split((home.settings if home is not None else Settings.from_env()).crontab)


def crontab_read(home: Home | None = None) -> str:
    try:
        proc = subprocess.run([*_crontab_cmd(home), "-l"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise GiokError(
            "crontab is not installed: install cron, or run `giok schedule run` in the foreground"
        ) from None
    if proc.returncode != 0:
        if "no crontab" in (proc.stderr + proc.stdout).lower():
            return ""
        raise GiokError(f"crontab -l failed: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def crontab_write(text: str, home: Home | None = None) -> None:
    try:
        proc = subprocess.run(
            [*_crontab_cmd(home), "-"], input=text, capture_output=True, text=True, timeout=30
        )
    except FileNotFoundError:
        raise GiokError(
            "crontab is not installed: install cron, or run `giok schedule run` in the foreground"
        ) from None
    if proc.returncode != 0:
        raise GiokError(f"crontab refused the new table: {proc.stderr.strip() or proc.returncode}")


def cron_line(ws, routine: Routine) -> str:
    logs = ws.home.path / "logs"
    command = (
        f"GIOK_HOME={shlex.quote(str(ws.home.path))} {shlex.quote(sys.executable)} -m giok schedule run "
        f"--routine {routine.name} -w {shlex.quote(ws.name)} >> {shlex.quote(str(logs / 'routines.log'))} "
        "2>&1"
    )
    return f"{routine.schedule} {command.replace('%', chr(92) + '%')} # giok:{ws.name}:{routine.name}"


def _ours(line: str, workspace: str | None = None, name: str | None = None) -> bool:
    m = _MARK_RE.search(line)
    return (
        m is not None
        and not line.lstrip().startswith("#")
        and (workspace is None or m.group(1) == workspace)
        and (name is None or m.group(2) == name)
    )


def installed(workspace: str | None = None, *, home: Home | None = None) -> list[dict]:
    """giok's lines in the crontab: {workspace, routine, schedule, line}."""
    out = []
    for line in crontab_read(home).splitlines():
        m = _MARK_RE.search(line)
        if m and _ours(line, workspace):
            out.append(
                {
                    "workspace": m.group(1),
                    "routine": m.group(2),
                    "schedule": " ".join(line.split()[:5]),
                    "line": line,
                }
            )
    return out


def _crontab_lock(home):
    """The home lock: two giok processes never interleave a crontab read-modify-write."""
    home.path.mkdir(parents=True, exist_ok=True)
    return file_lock(home.path / ".lock")


def install(ws, dry_run: bool = False, items: list[Routine] | None = None) -> dict:
    """Make the crontab hold exactly this workspace's enabled routines (other lines untouched).
    `items`: these routines instead of the configured ones. dry_run: change nothing, and return
    the whole crontab that would be written as `crontab`."""
    wanted = [cron_line(ws, r) for r in (routines(ws) if items is None else [r for r in items if r.enabled])]
    if dry_run:
        return _install(ws, wanted, dry_run=True)
    ws.home.path.joinpath("logs").mkdir(parents=True, exist_ok=True)
    with _crontab_lock(ws.home):
        return _install(ws, wanted)


def _install(ws, wanted: list[str], dry_run: bool = False) -> dict:
    lines = crontab_read(ws.home).splitlines()
    mine = [line for line in lines if _ours(line, ws.name)]
    kept = [line for line in lines if not _ours(line, ws.name)]
    table = "\n".join(kept + wanted) + "\n"
    if mine != wanted and not dry_run:
        crontab_write(table, ws.home)
    out = {
        "workspace": ws.name,
        "installed": wanted,
        "removed": [line for line in mine if line not in wanted],
        "changed": mine != wanted,
    }
    return {**out, "dry_run": True, "crontab": table} if dry_run else out


def uninstall(
    workspace: str | None = None, name: str | None = None, *, home: Home | None = None
) -> list[str]:
    """Remove giok's lines (of one workspace, one routine, or all); returns them."""
    home = home or Home()
    with _crontab_lock(home):
        return _uninstall(workspace, name, home)


def _uninstall(workspace: str | None, name: str | None, home: Home) -> list[str]:
    lines = crontab_read(home).splitlines()
    gone = [line for line in lines if _ours(line, workspace, name)]
    if gone:
        kept = [line for line in lines if not _ours(line, workspace, name)]
        crontab_write("\n".join(kept) + ("\n" if kept else ""), home)
    return gone


# -- running -----------------------------------------------------------------------------------
# Commands a routine runs often (a sync every 30 minutes) whose ordinary run is not worth a
# diary line: the diary gets one only when the run failed or reported something.
QUIET = ("sync",)


def run_routine(ws, routine: Routine, timeout: float = 3600) -> dict:
    """Run the routine's giok command in a subprocess; its run and result go to the diary (a
    quiet command's only when it failed or reported something: `diary` is None otherwise)."""
    env = child_env(GIOK_HOME=str(ws.home.path))
    quiet = routine.command[0] in QUIET
    extra = ["--json"] if quiet and "--json" not in routine.command else []
    argv = [sys.executable, "-m", "giok", "-w", str(ws.root), *routine.command, *extra]
    started = time.monotonic()
    stdout = ""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
        )
        code, stdout, output = proc.returncode, proc.stdout, (proc.stdout + proc.stderr).strip()
    except subprocess.TimeoutExpired:
        code, output = 124, f"timed out after {timeout:g}s"
    seconds = round(time.monotonic() - started, 2)
    said = _noteworthy(stdout) if quiet and code == 0 else None
    gist = " ".join((output if said is None else "; ".join(said)).split())
    gist = gist if len(gist) <= 300 else gist[:299] + "…"
    verdict = "ok" if code == 0 else f"failed (exit {code})"
    line = None
    if said is None or said:
        line = ws.diary(
            f"routine {routine.name} (giok {' '.join(routine.command)}): {verdict}"
            + (f" — {gist}" if gist else "")
        )
    return {
        "routine": routine.name,
        "command": routine.command,
        "exit": code,
        "seconds": seconds,
        "output": output,
        "diary": line,
    }


def _noteworthy(stdout: str) -> list[str]:
    """What a quiet command's JSON reported (`reports` details and `notes`); a reply that is not
    such JSON is noteworthy as it is."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return [stdout.strip() or "no output"]
    if not isinstance(data, dict):
        return [stdout.strip()]
    reports = [str(r.get("detail", r)) if isinstance(r, dict) else str(r) for r in data.get("reports") or []]
    return reports + [str(n) for n in data.get("notes") or []]


class Scheduler:
    """A foreground scheduler (croniter) for machines without cron. `clock` and `sleep` are
    the seams a test drives."""

    def __init__(self, ws, items: list[Routine], run=run_routine, clock=None, sleep=time.sleep):
        self.ws, self.items, self.run, self.sleep = ws, items, run, sleep
        self.clock = clock or (lambda: dt.datetime.now().replace(microsecond=0))
        start = self.clock()
        self.due = {r.name: r.next_run(start) for r in items}

    def next(self) -> tuple[dt.datetime, list[Routine]]:
        """The earliest due time and the routines due then."""
        when = min(self.due.values())
        return when, [r for r in self.items if self.due[r.name] == when]

    def loop(self, max_runs: int | None = None, on_result=None) -> int:
        """Run routines as they fall due (sleeping at most a minute at a time) until `max_runs`
        have run, or forever; `on_result` sees each result. Returns the number of runs."""
        if not self.items:
            raise InvalidInput(f"no enabled routines in {self.ws.name} to schedule")
        runs = 0
        while max_runs is None or runs < max_runs:
            when, batch = self.next()
            wait = (when - self.clock()).total_seconds()
            if wait > 0:
                self.sleep(min(wait, 60.0))
                continue
            for routine in batch:
                result = self.run(self.ws, routine)
                runs += 1
                if on_result:
                    on_result(result)
                self.due[routine.name] = routine.next_run(when)
        return runs


# -- wake --------------------------------------------------------------------------------------
def prompt(ws) -> dict:
    """What a wake-up hands the agent: the boot context plus the open HEARTBEAT items."""
    boot_text, source = _boot_text(ws)
    items = ws.heartbeat()
    lines = [
        f"# Wake-up: {ws.name} — {now():%Y-%m-%d %H:%M}",
        "",
        boot_text.rstrip(),
        "",
        "## Open HEARTBEAT items",
    ]
    if items:
        lines += [f"{n}. {item}" for n, item in enumerate(items, 1)]
        lines += [
            "",
            "Work through these items. When one is done, remove it with "
            f"`giok heartbeat done N -w {ws.name}` and note what you did with `giok diary`.",
        ]
    else:
        lines.append("(none: nothing is waiting; check in and go back to sleep)")
    return {"workspace": ws.name, "heartbeat": items, "boot": source, "prompt": "\n".join(lines) + "\n"}


def _boot_text(ws) -> tuple[str, str]:
    try:
        from giok.lifecycle.boot import build
    except ImportError:
        return _minimal_boot(ws), "minimal"
    return build(ws).text, "boot"


def _minimal_boot(ws) -> str:
    from giok.store.workspace import tier1_rules

    parts = [ws.read_text("SOUL.md").strip(), ws.read_text("USER.md").strip()]
    rules = tier1_rules(ws.read_text("AGENTS.md"))
    if rules:
        parts.append("## TIER 1 rules\n" + "\n".join(rules))
    mf = MemoryFile.parse(ws.read_text(MEMORY))
    core = [f"- {e.text}" for layer in ("M0", "M365") for e in mf.entries(layer) if not e.expired(today())]
    if core:
        parts.append("## Core memory\n" + "\n".join(core))
    parts.append("## State memo\n" + ws.read_text("state/memo.md").strip())
    return "\n\n".join(p for p in parts if p)


def wake(ws, run_agent: bool = True, timeout: float | None = None) -> dict:
    """Build the wake-up prompt; when the workspace has an `agent_command` configured, run it
    with the prompt on stdin and return its result too."""
    from giok.providers.llm import configured

    data = prompt(ws)
    command = configured(ws, "agent_command")
    data["agent"] = None
    if command and run_agent:
        argv = _parse_command(command)
        limit = float(timeout or configured(ws, "agent_timeout") or 1800)
        try:
            proc = subprocess.run(
                argv, input=data["prompt"], capture_output=True, text=True, timeout=limit, cwd=ws.root
            )
            data["agent"] = {
                "command": argv,
                "exit": proc.returncode,
                "output": proc.stdout[-4000:],
                "errors": proc.stderr[-2000:],
            }
        except FileNotFoundError:
            raise InvalidInput(f"agent_command {argv[0]!r} was not found on PATH") from None
        except subprocess.TimeoutExpired:
            data["agent"] = {
                "command": argv,
                "exit": 124,
                "output": "",
                "errors": f"timed out after {limit:g}s",
            }
    return data
