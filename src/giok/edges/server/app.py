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
from collections.abc import AsyncIterator
from pathlib import Path

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import FileResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from giok.edges import mcp as giok_mcp
from giok.edges.server import api
from giok.edges.server.access import Refused, Served, authorize, bind, refusal, token_of
from giok.edges.server.limits import Guard, Limits, protocol
from giok.edges.server.tokens import Tokens
from giok.errors import GiokError, PermissionDenied
from giok.store.home import Home
from giok.workspace import Workspace

STATIC = Path(__file__).parent / "static"


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
