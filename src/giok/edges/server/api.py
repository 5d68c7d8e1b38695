"""The JSON API of `giok serve`, under /api. Each route calls the library function the CLI
command calls; where an MCP tool exists (boot, recall, search, remember, decide, task, state,
heartbeat, forget, crossview, review) the route runs that tool through giok.edges.mcp.call, so the
arguments, checks and results are the tool's. A route either reads (any token reaching the
workspace) or writes (a write token), always for the token's user (access.bind: a route that
takes `user=` refuses another name; show and entry leave other users' and threads' entries
out); the git history and the review queue need an owner token. Errors are one JSON line `{"error": "..."}`:
400 bad input, 401 no or bad token, 403 not this token's workspace or scope, 404 unknown,
409 a conflict (a lock held, a file edited meanwhile), 500 a bug.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from giok.edges.server.access import Refused, Served, authorize, check_user, refusal
from giok.edges.server.limits import BodyTooLarge
from giok.edges.server.tokens import Token
from giok.errors import ConflictError, GiokError, InvalidInput, NotFound, PermissionDenied
from giok.retrieval.search import can_read
from giok.store import git, history, layout, trace
from giok.store.clock import today
from giok.store.fsutil import read_bytes
from giok.store.memoryfile import MemoryEntry, MemoryFile
from giok.store.sections import parse_diary
from giok.store.workspace import MEMORY
from giok.workspace import Workspace
from giok.write.policy import visible

DIARY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
COMMIT_RE = re.compile(r"^[0-9a-f]{4,40}$")

Handler = Callable[[Workspace, dict, Token], object]
Plain = Callable[[Workspace, dict], object]


def _status(exc: GiokError) -> int:
    if isinstance(exc, PermissionDenied):
        return 403
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, ConflictError):
        return 409
    if isinstance(exc, InvalidInput):
        return 400
    return 500


def _json(data: object, status: int = 200) -> JSONResponse:
    return JSONResponse(json.loads(json.dumps(data, default=str, ensure_ascii=False)), status_code=status)


async def _arguments(request: Request) -> dict:
    args: dict[str, Any] = dict(request.query_params)
    if request.method == "POST":
        raw = await request.body()  # limits.Guard has cut a body over the limit as it came in
        if raw.strip():
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise Refused(400, "the body is not valid JSON") from None
            except RecursionError:
                raise Refused(400, "the body's JSON is nested too deep") from None
            if not isinstance(body, dict):
                raise Refused(400, "the body must be a JSON object")
            args.update(body)
    return args


def _endpoint(served: Served, handler: Handler, write: bool) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            name = request.path_params["ws"]
            token = authorize(request, name, write)
            args = await _arguments(request)
            args.update({k: v for k, v in request.path_params.items() if k != "ws"})
            ws = served.workspace(name)
            result = await anyio.to_thread.run_sync(handler, ws, args, token)
        except Refused as exc:
            return refusal(exc.status, str(exc))
        except BodyTooLarge:
            raise  # limits.Guard has sent the 413
        except ClientDisconnect:  # the client went, or a deadline cut it off (limits): nobody reads this
            return refusal(400, "the request body did not arrive")
        except GiokError as exc:
            return refusal(_status(exc), str(exc))
        except Exception as exc:  # a bug, not bad input: say so in one line, keep serving
            print(f"giok serve: {request.url.path} failed: {exc!r}", file=sys.stderr)
            return refusal(500, f"internal error: {exc}")
        return _json(result)

    return endpoint


def _tool(
    served: Served,
    name: str,
    ints: tuple[str, ...] = (),
    rename: dict | None = None,
    bools: tuple[str, ...] = (),
) -> Handler:
    """A handler that runs MCP tool `name`: query strings become the integers the schema wants,
    `rename` maps query names to the tool's (q → query)."""

    def handler(ws: Workspace, args: dict, token: Token) -> object:
        for old, new in (rename or {}).items():
            if old in args:
                args[new] = args.pop(old)
        for key in ints:
            if isinstance(args.get(key), str):
                try:
                    args[key] = int(args[key])
                except ValueError:
                    raise InvalidInput(f"{key} must be a whole number, not {args[key]!r}") from None
        for key in bools:
            if isinstance(args.get(key), str):
                args[key] = args[key].lower() in ("1", "true", "yes")
        if isinstance(args.get("workspaces"), str):
            args["workspaces"] = [w for w in args["workspaces"].split(",") if w]
        result, _ = served.call(ws, name, args, token)
        return result

    return handler


# -- time travel (giok.store.history) ----------------------------------------------------
def _past(handler: Handler) -> Handler:
    """A read that takes `at=DATE`: the handler runs over the workspace as it was then (the
    files of the commit at that moment, the clock frozen there); the result says which commit."""

    def run(ws: Workspace, args: dict, token: Token) -> object:
        when = args.pop("at", None)
        if not when:
            return handler(ws, args, token)
        point = history.point_at(ws, when)
        with history.at(ws, point) as then:  # the facade over the files of then
            result = handler(Workspace(then.root, name=then.name, home=then.home), args, token)
        if isinstance(result, dict):
            result = {**result, "at": point.to_dict()}
        return result

    return run


def _diff(ws: Workspace, args: dict) -> dict:
    if not args.get("since") or not args.get("until"):
        raise InvalidInput("since and until are required: two dates YYYY-MM-DD")
    return history.diff(ws, args["since"], args["until"]).to_dict()


# -- reads that are no MCP tool ------------------------------------------------------------
def _age(entry: dict, day: dt.date) -> dict:
    if entry.get("date"):
        entry["age_days"] = (day - dt.date.fromisoformat(entry["date"])).days
    if entry.get("expires"):
        entry["expires_in_days"] = (dt.date.fromisoformat(entry["expires"]) - day).days
    return entry


# -- what a token sees --------------------------------------------------------------------
def _owner(handler: Plain) -> Handler:
    """A raw view (git history: commit messages and diffs name every user's entries): an
    owner token's only."""

    def run(ws: Workspace, args: dict, token: Token) -> object:
        if not token.owner:
            raise PermissionDenied(
                "the git history and the review queue show every user's entries: they need an owner "
                "token (giok token create --owner)"
            )
        return handler(ws, args)

    return run


def _any(handler: Plain) -> Handler:
    """A read with nothing scoped in it (diary, tasks, decisions): every token reaching the workspace."""
    return lambda ws, args, token: handler(ws, args)


def _seen(ws: Workspace, args: dict, token: Token) -> Callable[[dict], bool]:
    """Which entries (as dicts) this token sees: its user's and the workspace's, the thread's
    it names; an owner token every entry."""
    if token.owner:
        return lambda e: True
    user = check_user(token, ws, args.get("user"))
    thread = args.get("thread") or None
    return lambda e: (
        str(e.get("scope") or "workspace").startswith("task:") or visible(e.get("scope"), user, thread)
    )


def _show(ws: Workspace, args: dict, token: Token) -> dict:
    data = ws.show()
    day = dt.date.fromisoformat(data["today"])
    seen = _seen(ws, args, token)
    for layer in data["layers"].values():
        layer["entries"] = [_age(e, day) for e in layer["entries"] if seen(e)]
        layer["count"] = len(layer["entries"])
    data["expiring_soon"] = [_age(e, day) for e in data["expiring_soon"] if seen(e)]
    data["expired"] = [_age(e, day) for e in data["expired"] if seen(e)]
    return data


def _all_entries(ws: Workspace) -> dict[str, tuple[str, MemoryEntry]]:
    """Every entry of MEMORY.md and the archive by id, with the file it is in."""
    found: dict[str, tuple[str, MemoryEntry]] = {}
    archive = sorted((ws.root / layout.ARCHIVE_DIR).glob("*.md"))
    for path in [ws.root / MEMORY, *archive]:
        rel = path.relative_to(ws.root).as_posix()
        try:
            mf = MemoryFile.parse(read_bytes(path))
        except (OSError, GiokError):
            continue
        for e in mf.entries():
            found.setdefault(e.id, (rel, e))
    return found


def _entry(ws: Workspace, args: dict, token: Token) -> dict:
    """One entry and its supersede chain, oldest first (MEMORY.md and the archive); an entry
    the token does not see is not there (404), nor in a chain."""
    seen = _seen(ws, args, token)
    entries = {i: (rel, e) for i, (rel, e) in _all_entries(ws).items() if seen(e.to_dict())}
    start = args["id"]
    if start not in entries:
        raise NotFound(f"no entry {start} in MEMORY.md or the archive")
    day = today()

    def item(entry_id: str) -> dict:
        rel, e = entries[entry_id]
        return {**_age(e.to_dict(), day), "file": rel}

    by_id = {entry_id: e for entry_id, (_, e) in entries.items()}
    chain = [i for i in trace.supersede_chain(by_id, start) if i in entries]
    return {"entry": item(start), "chain": [item(i) for i in chain]}


def _log(ws: Workspace, args: dict) -> dict:
    try:
        limit = max(1, min(int(args.get("limit", 30)), 500))
    except ValueError:
        raise InvalidInput("limit must be a whole number") from None
    return {"commits": ws.log(limit)}


def _commit(ws: Workspace, args: dict) -> dict:
    commit = args["commit"]
    if not COMMIT_RE.match(commit):
        raise InvalidInput(f"{commit!r} is not a commit id")
    kind = git.run(ws.root, "cat-file", "-t", commit, check=False)
    if kind.returncode != 0 or kind.stdout.strip() != "commit":  # a blob or a tree is no commit
        raise NotFound(f"no commit {commit} in workspace {ws.name}")
    fmt = "--format=%h%x1f%ad%x1f%B%x1e"
    proc = git.run(
        ws.root, "show", "--date=iso-strict", fmt, "--patch", commit, "--", *layout.LOGGED, check=False
    )
    if proc.returncode != 0:
        raise NotFound(f"no commit {commit} in workspace {ws.name}")
    head, _, diff = proc.stdout.partition("\x1e")
    short, date, message = [*head.split("\x1f"), "", ""][:3]
    return {"commit": short, "date": date, "message": message.strip(), "diff": diff.strip("\n")}


def _distills(ws: Workspace, args: dict) -> dict:
    """The last nightly-distill commits with their report (the commit message)."""
    if git.run(ws.root, "rev-parse", "HEAD", check=False).returncode != 0:
        return {"reports": []}
    fmt = "--format=%x1e%h%x1f%ad%x1f%B"
    proc = git.run(ws.root, "log", "-n5", "--date=iso-strict", "--grep=^nightly-distill:", fmt)
    reports = []
    for record in proc.stdout.split("\x1e")[1:]:
        short, date, message = [*record.split("\x1f"), "", ""][:3]
        title, _, body = message.strip().partition("\n")
        reports.append({"commit": short, "date": date, "title": title, "report": body.strip()})
    return {"reports": reports}


def _diary_days(ws: Workspace, args: dict) -> dict:
    return {"days": [day for _, day in reversed(ws.layout.diaries())]}


def _diary_day(ws: Workspace, args: dict) -> dict:
    day = args["day"]
    try:
        date = dt.date.fromisoformat(day) if DIARY_RE.match(day) else None
    except ValueError:
        date = None
    if date is None:
        raise InvalidInput(f"{day!r} is not a day YYYY-MM-DD")
    path = ws.root / layout.diary_path(date)
    if not path.is_file():
        raise NotFound(f"no diary for {day}")
    text = read_bytes(path).decode("utf-8", "replace")
    items = [
        {"line": i.start, "time": i.time, "heading": i.heading, "text": i.body} for i in parse_diary(text)
    ]
    return {"day": day, "items": items}


def _diary_write(ws: Workspace, args: dict) -> dict:
    text = args.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text is required: what to write in today's diary")
    return {"path": ws.diary(text)}


def _decisions(ws: Workspace, args: dict) -> dict:
    return {"decisions": ws.decisions()}


def routes(served: Served) -> list[Route]:
    def read(path: str, handler: Handler) -> Route:  # the handler decides what the token sees
        return Route(f"/w/{{ws}}{path}", _endpoint(served, handler, write=False), methods=["GET"])

    def write(path: str, handler: Handler) -> Route:
        return Route(f"/w/{{ws}}{path}", _endpoint(served, handler, write=True), methods=["POST"])

    async def workspaces(request: Request) -> Response:
        try:
            token = authorize(request, None, write=False)
        except Refused as exc:
            return refusal(exc.status, str(exc))
        home = served.home
        names = sorted(n for n in home.workspaces() if token.reaches(n))
        listed = [
            {"name": n, "readers": [o for o in names if o != n and can_read(home, o, n)]} for n in names
        ]
        return _json(
            {
                "token": {
                    "id": token.id,
                    "name": token.name,
                    "scope": token.scope,
                    "user": token.user,
                    "owner": token.owner,
                },
                "workspaces": listed,
                "features": {"history": True},
            }
        )

    q = {"q": "query"}
    return [
        Route("/workspaces", workspaces, methods=["GET"]),
        read("/show", _past(_show)),
        read("/entry/{id}", _entry),
        read("/boot", _past(_tool(served, "memory_boot", ints=("budget",)))),
        read("/search", _past(_tool(served, "memory_search", ints=("k",), rename=q))),
        read("/diff", _owner(_diff)),
        read("/recall", _tool(served, "memory_recall", ints=("k",), rename=q)),
        read("/log", _owner(_log)),
        read("/log/{commit}", _owner(_commit)),
        read("/distills", _owner(_distills)),
        read("/diary", _any(_diary_days)),
        read("/diary/{day}", _any(_diary_day)),
        read("/decisions", _any(_decisions)),
        read("/tasks", _tool(served, "memory_task_list")),
        read("/state", _tool(served, "memory_state_show")),
        read("/heartbeat", _tool(served, "memory_heartbeat_list")),
        read("/crossview", _tool(served, "crossview_inbox", ints=("limit",), bools=("unread",))),
        read("/review", _tool(served, "memory_review", bools=("all",))),
        write("/remember", _tool(served, "memory_remember")),
        write("/forget", _tool(served, "memory_forget")),
        write("/diary", _any(_diary_write)),
        write("/decide", _tool(served, "memory_decide")),
        write("/task", _tool(served, "memory_task")),
        write("/state", _tool(served, "memory_state")),
        write("/heartbeat", _tool(served, "memory_heartbeat")),
        write("/crossview", _tool(served, "crossview_send")),
        write("/review", _tool(served, "memory_review_resolve")),
    ]
