"""`giok serve` (MCP over HTTP, the JSON API and the web page), `giok web` and `giok token`."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import signal
import socket
import webbrowser

import click

from giok.edges.cli import emit, json_option, main
from giok.errors import GiokError, InvalidInput, NotFound
from giok.store.home import Home

WEB_TOKEN_HOURS = 12  # the bound on a token left by a `giok web` killed outright


def _server_deps():
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401

        from giok.edges.server import app
    except ImportError as exc:
        raise GiokError(
            f"giok serve needs the server packages ({exc.name}): pip install 'giok[serve]'"
        ) from None
    return app


def _host_warning(host: str, pinned: bool) -> None:
    from giok.edges.server.limits import LOOPBACK  # loaded with the server (_server_deps)

    if host not in LOOPBACK:
        click.echo(
            f"warning: listening on {host}, not loopback: tokens travel in clear unless a TLS proxy "
            "is in front"
            + ("" if pinned else "; any Host is answered (--allowed-host NAME pins it)")
            + " (docs/serve.md)",
            err=True,
        )


def _start(home: Home, host: str, port: int, allowed: tuple[str, ...]):
    """The server module, the home's limits and a socket listening on host:port: a busy port or
    a bad `serve` setting is one error here, before any URL is printed or token made."""
    app = _server_deps()
    from giok.edges.server.limits import Limits

    limits = Limits.of(home.setting("serve"), host, allowed)
    sock = app.listen(host, port)
    _host_warning(host, bool(limits.hosts) and "*" not in limits.hosts)
    return app, limits, sock


class _Stopped(Exception):
    """SIGTERM or SIGINT once the server has stopped: a normal end, after the cleanup."""


def _stop(signum, frame) -> None:
    raise _Stopped


def _serve_until_stopped(app, home: Home, limits, sock) -> None:
    """Serve until SIGINT or SIGTERM. uvicorn stops on either and then raises it again through
    the handler it found, so installing ours first turns both into a normal return (and the
    `finally` of the caller runs: `giok web` revokes its token there)."""
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        app.run(home, sock, limits)
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _shown(host: str) -> str:
    """The host a URL names for a server bound to `host` ("::" takes IPv4 too where the
    system can: app.listen)."""
    if host == "::" and not socket.has_dualstack_ipv6():
        return "::1"
    return "127.0.0.1" if host in ("0.0.0.0", "::") else host


def _url(host: str, sock) -> str:
    shown = _shown(host)
    return f"http://{f'[{shown}]' if ':' in shown else shown}:{sock.getsockname()[1]}/"


ALLOWED_HOST = click.option(
    "--allowed-host",
    "allowed",
    multiple=True,
    metavar="NAME",
    help="A Host name the server answers to (repeat; '*' for any). Default: the home config's "
    "serve.allowed_hosts, else loopback names when bound to loopback.",
)


@main.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default)."
)
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: a free one)."
)
@ALLOWED_HOST
def serve(host, port, allowed):
    """Serve this home over HTTP: MCP at /mcp/WORKSPACE, the JSON API at /api, the web page at /.

    Every request needs `Authorization: Bearer TOKEN` (`giok token create`)."""
    home = Home()
    app, limits, sock = _start(home, host, port, allowed)
    click.echo(f"giok serve: listening on {_url(host, sock)}  (home {home.path}; Ctrl-C stops)", err=True)
    _serve_until_stopped(app, home, limits, sock)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: a free one)."
)
@ALLOWED_HOST
@click.option("--read-only", is_flag=True, help="The page's token may only read.")
@click.option("--no-open", is_flag=True, help="Print the URL, do not open a browser.")
def web(host, port, allowed, read_only, no_open):
    """Start `giok serve` and open the web page, logged in with a fresh token.

    The token (scope write unless --read-only, every workspace of the home) rides in the URL's
    #fragment, which the browser never sends to a server; the page keeps it in sessionStorage
    and drops it from the address bar. It lives as long as this command: revoked when it stops
    (Ctrl-C, SIGTERM), and expiring after 12 hours if the process is killed outright. It is an
    owner token: whoever runs the home sees every user's entries and the git history, as the
    files show them."""
    from giok.edges.server.tokens import Tokens

    home = Home()
    names = sorted(home.workspaces())
    if not names:
        raise InvalidInput("this home has no workspaces yet: `giok init PATH --name NAME` first")
    app, limits, sock = _start(home, host, port, allowed)
    if not limits.answers_to(_shown(host)):  # the page's own URL is answered, pinned or not
        limits = dataclasses.replace(limits, hosts=(*limits.hosts, _shown(host)))
    tokens = Tokens(home)
    secret, record = tokens.create(
        names,
        "read" if read_only else "write",
        name="web",
        ttl=dt.timedelta(hours=WEB_TOKEN_HOURS),
        owner=True,
    )
    try:
        url = f"{_url(host, sock)}#token={secret}"
        click.echo(f"giok web: {url}")
        click.echo(f"giok web: listening (home {home.path}; Ctrl-C stops and revokes this token)", err=True)
        if not no_open:
            webbrowser.open(url)
        _serve_until_stopped(app, home, limits, sock)
    finally:
        with contextlib.suppress(NotFound):
            tokens.revoke(record.id)


@main.group()
def token():
    """Access tokens for `giok serve`: the home keeps only their hash."""


@token.command("create")
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    required=True,
    metavar="NAME",
    help="A workspace it reaches (repeat).",
)
@click.option("--scope", type=click.Choice(["read", "write"]), default="read", show_default=True)
@click.option("--name", default=None, help="A name to recognise it by in `giok token list`.")
@click.option("--hours", type=click.IntRange(1, None), default=None, help="Expires after this many hours.")
@click.option(
    "--user",
    default=None,
    metavar="NAME",
    help="The user it reads for (default: the name in each workspace's USER.md).",
)
@click.option(
    "--owner", is_flag=True, help="The owner's token: reads as any user, sees the git history and review."
)
@json_option
def token_create(workspaces, scope, name, hours, user, owner, as_json):
    """Create a token and print it, once: it cannot be shown again.

    A token reads for one user: their scoped entries and the workspace's, never another
    user's (a request naming another user is refused). Only an --owner token reads as anyone."""
    from giok.edges.server.tokens import Tokens

    secret, record = Tokens(Home()).create(
        list(workspaces),
        scope,
        name=name,
        ttl=dt.timedelta(hours=hours) if hours else None,
        user=user,
        owner=owner,
    )
    emit({**record.to_dict(), "token": secret}, as_json, lambda d: d["token"])
    if not as_json:
        click.echo(
            f"token {record.id} ({record.scope}, {', '.join(record.workspaces)}, "
            f"{'owner' if record.owner else 'for ' + (record.user or 'the USER.md user')}): "
            "shown once, keep it safe",
            err=True,
        )


@token.command("list")
@json_option
def token_list(as_json):
    """The tokens of this home (never the tokens themselves)."""
    from giok.edges.server.tokens import Tokens

    tokens = [t.to_dict() for t in Tokens(Home()).list()]

    def text(rows):
        if not rows:
            return "no tokens (giok token create --workspace NAME --scope read|write)"
        return "\n".join(
            f"{t['id']}  {t['scope']:<5}  {','.join(t['workspaces'])}  {t['name']}"
            + ("  owner" if t["owner"] else f"  user {t['user']}" if t["user"] else "")
            + (f"  expires {t['expires']}" if t["expires"] else "")
            for t in rows
        )

    emit(tokens, as_json, text)


@token.command("revoke")
@click.argument("key", metavar="ID|NAME")
@json_option
def token_revoke(key, as_json):
    """Revoke a token by its id or name: requests with it are refused at once."""
    from giok.edges.server.tokens import Tokens

    record = Tokens(Home()).revoke(key)
    emit(record.to_dict(), as_json, lambda d: f"revoked {d['id']} ({d['name']})")
