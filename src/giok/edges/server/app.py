"""`giok serve`: one ASGI app (Starlette, run by uvicorn) over a giok home.

- `/mcp/{workspace}`: MCP over streamable HTTP, the official SDK's transport and session
  manager, with the stdio server's tools (giok.edges.mcp.build_server; no tool logic here);
- `/api/...`: the JSON API (giok.edges.server.api);
- `/`: the web page (static files shipped in the package, no build step).

Every request but the page's static files carries `Authorization: Bearer <token>`. The
SDK's BearerAuthBackend reads the header and asks our verifier (giok.edges.server.tokens);
a token reaches only its workspaces, and a read token makes no change. A token also reads
for one user (`bind`): a request may not name another user, nor a workspace outside the
token's (`workspaces=`); only an owner token reads as anyone and sees the raw views.

In front of all of it, `limits.Guard` answers for Host, header size and body size, and the
uvicorn protocol of `limits.protocol` for slow clients (giok.edges.server.limits).
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from giok.edges import mcp as giok_mcp
from giok.edges.server.limits import Guard, Limits, protocol
from giok.edges.server.tokens import Token, Tokens, token_from
from giok.errors import GiokError, InvalidInput, NotFound, PermissionDenied
from giok.store import layout
from giok.store.home import Home
from giok.store.workspace import default_user
from giok.workspace import Workspace
from giok.write.policy import scope_name, visible

STATIC = Path(__file__).parent / "static"


class Refused(Exception):
    """An HTTP refusal: status and one line."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def refusal(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Verifier:
    """The SDK's TokenVerifier over the home's token file: scopes read (and write), the
    workspaces in the claims."""

    def __init__(self, tokens: Tokens):
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        found = self.tokens.verify(token)
        if found is None:
            return None
        scopes = ["read", "write"] if found.may_write() else ["read"]
        return AccessToken(
            token=token, client_id=found.id, scopes=scopes, claims={"giok_token": found.to_dict()}
        )


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


class WorkspaceGate:
    """In front of the MCP transport: the path's workspace must be one the token reaches
    (RequireAuthMiddleware, outside this, has already refused a missing or wrong token)."""

    def __init__(self, app: StreamableHTTPASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        conn = HTTPConnection(scope)
        workspace = conn.path_params.get("workspace", "")
        try:
            authorize(conn, workspace, write=False)
        except Refused as exc:
            await refusal(exc.status, str(exc))(scope, receive, send)
            return
        await self.app(scope, receive, send)


def mcp_resolver(served: Served):
    def resolve(
        ctx, spec: giok_mcp.Tool, args: dict | None
    ) -> tuple[Workspace, giok_mcp.WarmUp | None, dict]:
        request = getattr(ctx, "request", None)
        token = token_of(request) if request is not None else None
        workspace = request.path_params.get("workspace", "") if request is not None else ""
        if token is None or not token.reaches(workspace):
            raise PermissionDenied(f"this token does not reach workspace {workspace!r}")
        if not spec.read_only and not token.may_write():
            raise PermissionDenied(
                f"this token is read-only: {spec.name} makes a change; nothing was written"
            )
        ws = served.workspace(workspace)
        return ws, served.warm(ws), bind(token, served.home, ws, spec, args)

    return resolve


def may_use(ctx, spec: giok_mcp.Tool) -> bool:
    """tools/list for this request: a read token sees only the read-only tools."""
    request = getattr(ctx, "request", None)
    token = token_of(request) if request is not None else None
    return token is not None and (spec.read_only or token.may_write())


def build_app(home: Home | None = None, limits: Limits | None = None) -> Starlette:
    from giok.edges.server import api

    served = Served(home or Home())
    manager = StreamableHTTPSessionManager(
        app=giok_mcp.build_server(None, resolve=mcp_resolver(served), shown=may_use), json_response=False
    )
    mcp_app = RequireAuthMiddleware(WorkspaceGate(StreamableHTTPASGIApp(manager)), required_scopes=["read"])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    async def page(request):
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    app = Starlette(
        routes=[
            Route("/", page),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Mount("/api", routes=api.routes(served)),
            Route("/mcp/{workspace}", mcp_app),
        ],
        middleware=[
            Middleware(Guard, limits=limits or Limits()),
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(Verifier(served.tokens))),
        ],
        lifespan=lifespan,
    )
    app.state.served = served
    return app


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening (port 0: a free one); a port in use is one
    GiokError naming it, before anything is printed or made."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # "::" takes IPv4 too where the system can (the URL printed for it names 127.0.0.1)
    dual = host == "::" and socket.has_dualstack_ipv6()
    try:
        return socket.create_server((host, port), family=family, backlog=2048, dualstack_ipv6=dual)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise GiokError(
                f"{host}:{port} is already in use (another giok serve?): choose another --port"
            ) from None
        raise GiokError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def run(home: Home, sock: socket.socket, limits: Limits, log_level: str = "warning") -> None:
    """Serve on a listening socket (`listen`) until SIGINT or SIGTERM."""
    import uvicorn

    config = uvicorn.Config(
        build_app(home, limits),
        http=protocol(limits),
        h11_max_incomplete_event_size=limits.max_headers,
        log_level=log_level,
    )
    uvicorn.Server(config).run(sockets=[sock])
