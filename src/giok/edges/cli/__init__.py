"""The `giok` command line: a thin edge over the library. Each command opens a Workspace,
calls one library function and prints text or, with --json, one JSON document. Library
errors become one line on stderr and a non-zero exit."""

from __future__ import annotations

import importlib
import json
import sys

import click

from giok.errors import GiokError
from giok.settings import Settings, single_threaded_blas
from giok.store.home import Home
from giok.workspace import Workspace

single_threaded_blas()  # before any command imports numpy

# Command → the module that defines it. Modules are imported when their command runs, so
# `giok remember` does not pay for numpy, the index or the scheduler.
COMMAND_MODULES = {
    "memory": (
        "init",
        "workspaces",
        "remember",
        "forget",
        "diary",
        "lesson",
        "decide",
        "task",
        "state",
        "heartbeat",
        "show",
        "log",
        "check",
        "quickstart",
        "edit",
        "move",
    ),
    "search": ("search", "recall", "index"),
    "boot": ("boot", "history", "trace"),
    "routines": ("distill", "watch", "flush", "wake", "schedule"),
    "review": ("review",),
    "agents": ("crossview", "mcp"),
    "porting": ("export", "import", "doctor"),
    "hooks": ("hook",),
    "serve": ("serve", "web", "token"),
    "history": ("diff",),
    "sync": ("remote", "sync", "merge-driver"),
}
_MODULE_OF = {name: module for module, names in COMMAND_MODULES.items() for name in names}


class GiokGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(set(_MODULE_OF) | set(self.commands))

    def get_command(self, ctx, name):
        if name not in self.commands and name in _MODULE_OF:
            importlib.import_module(f"{__name__}.{_MODULE_OF[name]}")
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except GiokError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:
            ctx.exit(0)
        except OSError as exc:  # permissions, a full disk, a vanished folder: one line, no traceback
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"Error: {exc.strerror or exc}{where}", err=True)
            ctx.exit(1)


def _store_workspace(ctx, param, value):
    if value:
        values = value if isinstance(value, tuple) else (value,)
        obj = ctx.find_root().ensure_object(dict)
        obj.setdefault("workspaces", [])
        obj["workspaces"].extend(v for v in values if v)
    return value


def workspace_option(multiple: bool = False):
    """-w/--workspace NAME|PATH, accepted before or after the subcommand."""
    help_text = "Workspace name or path (default: $GIOK_WORKSPACE, else the one the current folder is in)."
    if multiple:
        help_text += " Repeat to search several."
    return click.option(
        "-w",
        "--workspace",
        "workspace_arg",
        multiple=multiple,
        expose_value=False,
        callback=_store_workspace,
        is_eager=True,
        metavar="NAME|PATH",
        help=help_text,
    )


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document (for agents).")(f)


def chosen_workspaces() -> list[str]:
    ctx = click.get_current_context()
    return list(ctx.find_root().ensure_object(dict).get("workspaces", []))


def open_workspace() -> Workspace:
    names = chosen_workspaces()
    if len(names) > 1:
        raise click.UsageError("this command takes one workspace; -w was given more than once")
    settings = Settings.from_env()  # the entry point reads the environment; the library is passed it
    return Workspace.open(names[0] if names else None, home=Home(settings=settings), settings=settings)


def emit(data, as_json: bool, text=None) -> None:
    """Print data as JSON, or as text via text(data) (or str)."""
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        out = text(data) if text else str(data)
        if out:
            click.echo(out)


def read_text_arg(text: str) -> str:
    """`-` reads the text from stdin."""
    return sys.stdin.read() if text == "-" else text


@click.group(cls=GiokGroup, context_settings={"help_option_names": ["-h", "--help"]})
@workspace_option(multiple=True)
@click.version_option(package_name="giok")
def main():
    """giok — long-term memory for AI agents.

    Each agent has a workspace: markdown files under git (SOUL, USER, AGENTS, MEMORY with
    layers M0/M365/M90/M30, daily diaries, lessons, state memo, tasks, decisions). giok
    writes them safely, commits every change at once, and searches them.

    Start with `giok quickstart` or `giok init PATH --name NAME`.
    """
