"""`giok search`, `giok recall`, `giok index`: thin edges over giok.retrieval.search and
giok.retrieval.index."""

from __future__ import annotations

import contextlib
import json
import sys
import time

import click

from giok.edges.cli import chosen_workspaces, emit, json_option, main, style, workspace_option
from giok.errors import GiokError, InvalidInput, WorkspaceError
from giok.retrieval import index as index_mod
from giok.retrieval.search import MAX_QUERY, MIN_SCORE, MODES, RELATIVE_FLOOR, recall, search_full
from giok.store.home import Home
from giok.workspace import Workspace

MAX_BATCH = 1000  # queries in one --batch run
MAX_BATCH_LINE = 4 * MAX_QUERY + 2  # bytes read of one line (MAX_QUERY characters of UTF-8, CRLF)


def _asker_and_targets(as_name: str | None) -> tuple[Workspace, list[str]]:
    """The workspace asking (--as, else the current one, else the first -w) and the ones searched."""
    home = Home()
    names = chosen_workspaces()
    if as_name:
        asker = Workspace.open(as_name, home=home)
    else:
        try:
            asker = Workspace.open(None, home=home)
        except WorkspaceError:
            if not names:
                raise
            asker = Workspace.open(names[0], home=home)
    return asker, names


def _search_opts(
    k,
    min_score,
    mode,
    user,
    thread,
    superseded,
    as_name,
    names,
    all_scopes=False,
    system=False,
    relative=None,
) -> dict:
    opts = {
        "k": k,
        "min_score": min_score,
        "mode": mode,
        "user": user,
        "thread": thread,
        "include_superseded": superseded,
        "workspaces": tuple(names),
        "all_scopes": all_scopes,
    }
    if system:
        opts["include_system"] = True
    if relative is not None:  # a number, or "off"
        opts["relative"] = None if relative == "off" else float(relative)
    if as_name:
        opts["as_"] = as_name
    return opts


class RelativeFloor(click.ParamType):
    """A number in [0, 1] or the word `off`."""

    name = "FLOOR|off"

    def convert(self, value, param, ctx):
        if isinstance(value, float) or value == "off":
            return value
        try:
            number = float(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number in 0–1 nor 'off'", param, ctx)
        if not 0.0 <= number <= 1.0:
            self.fail(f"{number} is outside 0–1", param, ctx)
        return number


PROGRESS_AFTER = 2.0  # seconds: an index build that takes longer shows progress on stderr
PROGRESS_MIN_FILES = 20  # a sync of this many changed files shows it however fast it is


class _Progress:
    """Prints `indexing F/FT files, T/TT texts embedded` on stderr once a build has run for
    PROGRESS_AFTER seconds (or covers PROGRESS_MIN_FILES files): one updating line on a
    terminal, a line every 2 s otherwise, and always the last one."""

    def __init__(self) -> None:
        self.interactive = sys.stderr.isatty()
        self.started = time.monotonic()
        self.files = (0, 0)
        self.texts = (0, 0)
        self.shown = ""
        self.last = 0.0

    def __call__(self, files: int, files_total: int, texts: int, texts_total: int) -> None:
        if files_total:
            self.files = (files, files_total)
        if texts_total:
            self.texts = (texts, texts_total)
        (f, ft), (t, tt) = self.files, self.texts
        now = time.monotonic()
        due = now - self.started >= PROGRESS_AFTER or ft >= PROGRESS_MIN_FILES
        final = f == ft and t == tt
        if not due or (not final and now - self.last < (0.2 if self.interactive else 2.0)):
            return
        line = f"indexing {f}/{ft} files" + (f", {t}/{tt} texts embedded" if tt else "")
        if line == self.shown:
            return
        self.shown, self.last = line, now
        click.echo(("\r" + line) if self.interactive else line, err=True, nl=not self.interactive or final)


def _show_progress() -> None:
    """Index builds over ~2 s (a new workspace, an adopted folder, a model change) and syncs of
    many files report progress on stderr, with counts; stdout stays clean for --json."""
    from giok.retrieval.index import Index

    Index.progress = _Progress()


def _text(data: dict) -> str:
    lines = [f"{n}" for n in data.get("notes", [])]
    if not data["results"]:
        lines.append("no results above the cut-off")
    for r in data["results"]:
        where = f"{r['workspace']}:{r['path']}:{r['start_line']}" + (
            f"-{r['end_line']}" if r["end_line"] != r["start_line"] else ""
        )
        tag = " ".join(x for x in (r["layer"], r["date"], r["source"]) if x)
        body = r["text"] if len(r["text"]) <= 300 else r["text"][:299] + "…"
        lines.append(
            f"{style.good(format(r['score'], '.3f'))}  {style.name(where)}  {style.dim('[' + tag + ']')}"
        )
        lines.extend("       " + line for line in body.splitlines())
        if r.get("via"):
            lines.append("       " + style.dim(f"(found through {r['via']}, the entry it replaced)"))
    return "\n".join(lines)


@main.command("search")
@click.argument("query", required=False)
@workspace_option(multiple=True)
@click.option("-k", "--k", "k", type=int, default=5, show_default=True, help="How many results at most.")
@click.option(
    "--min-score",
    type=float,
    default=MIN_SCORE,
    show_default=True,
    help="Drop results scoring under this (0–1).",
)
@click.option(
    "--relative",
    type=RelativeFloor(),
    default=None,
    help=f"The store-relative floor: a result must score this much above the store's median "
    f"candidate (0–1, or 'off'; default {RELATIVE_FLOOR}, doubled when the query names the user).",
)
@click.option(
    "--mode", type=click.Choice(MODES), default="hybrid", show_default=True, help="Evidence to use."
)
@click.option(
    "--user",
    help="Search on behalf of this user (default: the name in USER.md); other users' entries are hidden.",
)
@click.option(
    "--thread", help="Search within this thread (default: none); other threads' entries are hidden."
)
@click.option(
    "--all-scopes",
    "all_scopes",
    is_flag=True,
    help="Every user's and thread's entries (the workspace owner's view).",
)
@click.option("--include-superseded", "superseded", is_flag=True, help="Also return superseded entries.")
@click.option(
    "--include-system",
    "system",
    is_flag=True,
    help="Also return the diary lines giok writes about itself "
    "(distill reports, flush markers, cross-view notes).",
)
@click.option(
    "--as", "as_name", metavar="NAME", help="Search as this workspace (permissions are checked for it)."
)
@click.option(
    "--batch",
    "batch",
    type=click.File("rb"),
    help=f"One query per line (- for stdin; UTF-8, at most {MAX_BATCH:,} queries); "
    "one JSON line out per query.",
)
@click.option(
    "--at",
    "at",
    metavar="DATE",
    help="Search the files as they were then (YYYY-MM-DD[THH:MM]), from git history.",
)
@json_option
def search_cmd(
    query,
    k,
    min_score,
    relative,
    mode,
    user,
    thread,
    all_scopes,
    superseded,
    system,
    as_name,
    batch,
    at,
    as_json,
):
    """Search memories: MEMORY.md entries, diaries, archive, lessons, decisions, other notes.

    Hybrid keyword (Korean-aware) + vector search; results under 0.35 (or under the
    store-relative floor) are dropped, so a question nothing stored is about gets none. Repeat
    -w to search several workspaces (the home config decides who may read whom).
    Entries scoped to a user show only for that user (default: USER.md's), a thread's only
    with --thread; --all-scopes shows them all.
    """
    _show_progress()
    asker, names = _asker_and_targets(as_name)
    opts = _search_opts(
        k, min_score, mode, user, thread, superseded, as_name, names, all_scopes, system, relative
    )
    if batch is not None:
        if query or at:
            raise click.UsageError("give either QUERY (with --at, if any) or --batch, not both")
        _batch(asker, batch, opts)
        return
    if query is None:
        raise click.UsageError("missing QUERY (or --batch FILE)")
    if at is not None:
        emit(_search_at(asker, names, at, query, opts), as_json, _text)
        return
    response = search_full(asker, query, **opts)
    emit(response.to_dict(), as_json, _text)


def _search_at(asker: Workspace, names: list[str], at: str, query: str, opts: dict) -> dict:
    """Search each workspace as it was at `at` (its snapshot and index, apart from the live
    ones); nothing is recorded as a reference."""
    from giok.store import history

    targets = [Workspace.open(n, home=asker.home) for n in names] or [asker]
    with contextlib.ExitStack() as stack:
        points = [history.point_at(t, at) for t in targets]
        thens = [stack.enter_context(history.at(t, p)) for t, p in zip(targets, points, strict=True)]
        for target, then in zip(targets, thens, strict=True):  # the live index's vectors, not embedded again
            index_mod.Index.local_for_workspace(then).seed_vectors(target.data_dir / index_mod.FILENAME)
        past = dict(opts, workspaces=tuple(thens) if names else (), record=None)
        data = search_full(asker if names else thens[0], query, **past).to_dict()
    data["at"] = {t.name: p.to_dict() for t, p in zip(targets, points, strict=True)}
    data["notes"] = [history.describe(p.to_dict()) for p in points] + data.get("notes", [])
    return data


def _batch(asker: Workspace, stream, opts: dict) -> None:
    """Each line → one JSON object; a bad query gets {"query", "error"} and the run goes on.
    Blank lines are skipped. Input that is not UTF-8, or more than MAX_BATCH queries, stops the
    run with one error (a file is counted before any search, a pipe when it gets there)."""
    if stream.seekable():
        count = sum(1 for _, line in _lines(stream) if line.strip())
        if count > MAX_BATCH:
            raise InvalidInput(
                f"--batch holds {count:,}+ queries; at most {MAX_BATCH:,} per run: split the file"
            )
        stream.seek(0)
    asked = 0
    for number, raw in _lines(stream):
        if not raw.strip():
            continue
        asked += 1
        if asked > MAX_BATCH:
            raise InvalidInput(f"--batch stopped at line {number:,}: at most {MAX_BATCH:,} queries per run")
        _answer(asker, _decode(raw, number), opts)


def _lines(stream):
    """(line number, bytes) for each line, a line longer than MAX_BATCH_LINE cut there (the rest
    is skipped): a huge line costs no memory and fails as "query too long"."""
    number = 0
    while True:
        line = stream.readline(MAX_BATCH_LINE)
        if not line:
            return
        number += 1
        if not line.endswith(b"\n"):
            while (rest := stream.readline(MAX_BATCH_LINE)) and not rest.endswith(b"\n"):
                pass
            if rest:
                line += b"..."
        yield number, line.rstrip(b"\r\n")


def _decode(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"--batch line {number:,} is not valid UTF-8 (byte {exc.start + 1}); "
            f"nothing after it was searched"
        ) from None


def _answer(asker: Workspace, query: str, opts: dict) -> None:
    started = time.perf_counter()
    try:
        data = search_full(asker, query, **opts).to_dict()
    except GiokError as exc:
        data = {"query": query if len(query) <= 200 else query[:200] + "…", "error": str(exc), "results": []}
    data["ms"] = round((time.perf_counter() - started) * 1000, 2)
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


@main.command("recall")
@click.argument("query")
@workspace_option(multiple=True)
@click.option("-k", "--k", "k", type=int, default=5, show_default=True, help="How many results at most.")
@click.option("--user", help="Recall on behalf of this user (default: the name in USER.md).")
@click.option("--thread", help="Recall within this thread (default: none).")
@click.option(
    "--all-scopes",
    "all_scopes",
    is_flag=True,
    help="Every user's and thread's entries (the workspace owner's view).",
)
@click.option("--as", "as_name", metavar="NAME", help="Recall as this workspace.")
@json_option
def recall_cmd(query, k, user, thread, all_scopes, as_name, as_json):
    """Agentic recall: decide whether QUERY needs memory at all; if so search, retry once
    with reformulated keywords when nothing passes the cut-off, else answer "no memory".
    Never more than two searches; --json shows the decision and both attempts."""
    _show_progress()
    asker, names = _asker_and_targets(as_name)
    opts = _search_opts(k, MIN_SCORE, "hybrid", user, thread, False, as_name, names, all_scopes)
    opts.pop("min_score"), opts.pop("mode")
    result = recall(asker, query, **opts)
    emit(result.to_dict(), as_json, _recall_text)


def _recall_text(data: dict) -> str:
    head = f"{data['decision']}: {data['reason']}"
    attempts = [
        f"  attempt {i}: {a['query']!r} → {a['kept']} result(s)" for i, a in enumerate(data["attempts"], 1)
    ]
    body = _text({"results": data["results"], "notes": []}) if data["results"] else data["answer"]
    return "\n".join([head, *attempts, body])


@main.command("index")
@click.argument("action", type=click.Choice(["sync", "status"]), default="sync", required=False)
@workspace_option()
@click.option(
    "--rebuild",
    is_flag=True,
    help="Drop the index and rebuild it from the files (needed after a model change).",
)
@click.option(
    "--backend",
    type=click.Choice(["sqlite", "postgres"]),
    default=None,
    help="Index into this backend (default: the home config's index.backend, else sqlite).",
)
@click.option("--dsn", default=None, help="PostgreSQL connection string for --backend postgres.")
@json_option
def index_cmd(action, rebuild, backend, dsn, as_json):
    """Bring the search index up to date (sync, the default), rebuild it, or show its status.

    The index lives in the workspace's ignored .giok/index.sqlite and is derived from the
    files; searches sync it automatically."""
    _show_progress()
    from giok.edges.cli import open_workspace

    ws = open_workspace()
    if backend == "postgres" or dsn:
        data = _pg_index(ws, action, rebuild, backend, dsn)
    elif action == "status" and not rebuild:
        data = index_mod.status(ws)
    else:
        stats = index_mod.rebuild(ws) if rebuild else index_mod.sync(ws)
        data = {**index_mod.status(ws), "sync": stats, "rebuilt": rebuild}
    emit(data, as_json, _index_text)


def _pg_index(ws, action: str, rebuild: bool, backend: str | None, dsn: str | None) -> dict:
    """`giok index --backend postgres --dsn ...`: sync and publish into the shared index."""
    from giok.errors import InvalidInput
    from giok.retrieval import pg

    if backend != "postgres":
        raise InvalidInput("--dsn goes with --backend postgres")
    dsn = dsn or pg.settings(ws).get("dsn")
    if not dsn:
        raise InvalidInput('--backend postgres needs --dsn (or "index": {"dsn": ...} in the home config)')
    index = pg.PgIndex.for_workspace(ws, dsn, index_mod.Index.local_for_workspace(ws))
    if action == "status" and not rebuild:
        return index.status()
    stats = index.rebuild() if rebuild else index.sync()
    return {**index.status(), "sync": stats, "rebuilt": rebuild}


def _index_text(data: dict) -> str:
    lines = [*data.get("notes", [])]
    if data.get("error"):
        lines.append(f"warning: {data['error']}")
    if "sync" in data:
        s = data["sync"]
        verb = "rebuilt" if data.get("rebuilt") else "synced"
        lines.append(
            f"{verb}: {s['changed']} file(s) changed, {s['removed']} removed, {s['embedded']} text(s) "
            f"embedded in {s['ms']} ms"
        )
    lines.append(
        f"{data['chunks']} chunks from {data['files']} files; model {data['model'] or '(none yet)'}; "
        f"{data['bytes']:,} bytes at {data['path']}"
    )
    if data.get("backend") == "postgres":
        lines.append(
            f"postgres: {data['pg_chunks']} chunks in {data['table']}, "
            f"{data['pg_bytes']:,} bytes at {data['dsn']}"
        )
    return "\n".join(lines)
