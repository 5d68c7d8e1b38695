"""What the MCP routes and the JSON API of `giok serve` share: the workspaces the process serves
(`Served`: opened once, one warm-up each) and what a request's token may reach (`authorize`:
the workspace and a write; `bind`, `check_user`, `reachable`: the user it reads for, the
workspaces it names, the owner-only tools), with the one HTTP refusal (`Refused`, `refusal`).
giok.edges.server.app builds the app over it; giok.edges.server.api's routes use it.
"""

from __future__ import annotations

import threading

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse

from giok.edges import mcp as giok_mcp
from giok.edges.server.tokens import Token, Tokens, token_from
from giok.errors import InvalidInput, NotFound, PermissionDenied
from giok.store import layout
from giok.store.home import Home
from giok.store.workspace import default_user
from giok.workspace import Workspace
from giok.write.policy import scope_name, visible


class Refused(Exception):
    """An HTTP refusal: status and one line."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def refusal(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Served:
    """What the process holds over the home: the workspaces opened so far and one warm-up
    (index lock) per workspace, shared by the MCP tools and the JSON API."""

    def __init__(self, home: Home):
        self.home = home
        self.tokens = Tokens(home)
        self._workspaces: dict[str, Workspace] = {}
        self._warm: dict[str, giok_mcp.WarmUp] = {}
        self._lock = threading.Lock()

    def workspace(self, name: str) -> Workspace:
        with self._lock:
            if name not in self._workspaces:
                if name not in self.home.workspaces():
                    raise NotFound(f"unknown workspace {name!r}")
                self._workspaces[name] = Workspace.open(name, home=self.home)
            return self._workspaces[name]

    def warm(self, ws: Workspace) -> giok_mcp.WarmUp:
        with self._lock:
            if ws.name not in self._warm:
                self._warm[ws.name] = giok_mcp.WarmUp(ws).start()
            return self._warm[ws.name]

    def call(self, ws: Workspace, name: str, args: dict | None, token: Token) -> tuple[object, str]:
        """Run an MCP tool as stdio does (indexed tools after the warm-up; searches side by
        side, the tools that change the index one at a time: `WarmUp.run`), with the arguments
        bound to the token (`bind`)."""
        args = bind(token, self.home, ws, giok_mcp.TOOLS[name], args) if name in giok_mcp.TOOLS else args
        if name in giok_mcp.INDEXED:
            return self.warm(ws).run(giok_mcp.call, ws, name, args)
        return giok_mcp.call(ws, name, args)


# Tools over entries of every user side by side (the review queue, the distill plan): over
# HTTP, for an owner token only.
OWNER_TOOLS = frozenset({"memory_review", "memory_review_resolve", "memory_distill_plan"})
OWNER_FILES = frozenset({layout.REVIEW})  # memory_get: copies of every user's entries


def reader(token: Token, ws: Workspace) -> str | None:
    """The user a token reads for in `ws`: its own, else the name in ws's USER.md."""
    return token.reads_as(default_user(ws.read_text("USER.md")))


def check_user(token: Token, ws: Workspace, asked: object) -> str | None:
    """The user a request reads for: the token's. Naming another one is refused (an owner
    token may name anyone)."""
    if asked is not None and not isinstance(asked, str):
        raise InvalidInput("user must be a name")
    if token.owner and asked:
        return asked
    own = reader(token, ws)
    if asked and (own is None or scope_name(asked).casefold() != scope_name(own).casefold()):
        raise PermissionDenied(
            f"this token reads for {own or 'no named user'}: it may not read as {asked!r} "
            "(a token for another user: giok token create --user NAME)"
        )
    return own


def reachable(token: Token, home: Home, names: object) -> list[str]:
    """`workspaces=` over the server: names of the home's workspaces that the token reaches,
    never a path (the local CLI takes paths; a token does not)."""
    known = home.workspaces()
    allowed = ", ".join(sorted(n for n in known if token.reaches(n))) or "none"
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InvalidInput(f"workspaces must be a list of workspace names (this token reaches: {allowed})")
    for name in names:
        if name not in known:
            raise InvalidInput(
                f"workspaces takes names of this home's workspaces that the token reaches ({allowed}), "
                f"not {name!r}"
            )
        if not token.reaches(name):
            raise PermissionDenied(f"this token does not reach workspace {name!r} (it reaches: {allowed})")
    return names


def bind(token: Token, home: Home, ws: Workspace, spec: giok_mcp.Tool, args: dict | None) -> dict:
    """A tool's arguments as this token may give them: `user` is the token's (another one is
    refused), `workspaces` only names the token reaches; an owner-only tool needs an owner."""
    args = dict(args or {})
    if not token.owner:
        _others(token, ws, spec.name, args)
    props = spec.schema["properties"]
    if "workspaces" in props and args.get("workspaces") is not None:
        args["workspaces"] = reachable(token, home, args["workspaces"])
    if "user" in props:
        user = check_user(token, ws, args.get("user"))
        args.pop("user", None)
        if user:
            args["user"] = user
    return args


def _others(token: Token, ws: Workspace, tool: str, args: dict) -> None:
    """Refuse what would show or touch another user's entries to a token that is no owner's."""
    if tool in OWNER_TOOLS:
        raise PermissionDenied(f"{tool} shows every user's entries: it needs an owner token")
    if tool == "memory_get" and giok_mcp.memory_path(ws, str(args.get("path", ""))) in OWNER_FILES:
        raise PermissionDenied(f"{args['path']} holds every user's entries: it needs an owner token")
    user = reader(token, ws)
    scope = str(args.get("scope") or "")
    if tool == "memory_remember" and scope.startswith("user:") and not visible(scope, user):
        raise PermissionDenied(f"this token writes for {user or 'no named user'}, not into {scope}")
    if tool == "memory_forget" and isinstance(args.get("id"), str):
        entry = ws.memory().find(args["id"])
        if entry is not None and not entry.scope.startswith("task:") and not visible(entry.scope, user, None):
            raise NotFound(f"no entry {args['id']} in MEMORY.md")


def token_of(conn: HTTPConnection) -> Token | None:
    user = conn.scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return None
    claims = user.access_token.claims or {}
    return token_from(claims["giok_token"])


def authorize(conn: HTTPConnection, workspace: str | None, write: bool) -> Token:
    """The request's token, if it may do this; else Refused (401: no or bad token; 403: not its
    workspace, or a write with a read token)."""
    token = token_of(conn)
    if token is None:
        has_header = "authorization" in conn.headers
        raise Refused(
            401, "invalid or revoked token" if has_header else "missing Authorization: Bearer <token>"
        )
    if workspace is not None and not token.reaches(workspace):
        raise Refused(403, f"this token does not reach workspace {workspace!r}")
    if write and not token.may_write():
        raise Refused(403, "this token is read-only: a change needs a write token")
    return token
