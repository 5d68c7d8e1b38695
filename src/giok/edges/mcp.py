"""The MCP server (Model Context Protocol, stdio): a thin edge over the library.

Each tool is one entry in TOOLS: a name, a description that tells a model when to use it,
a JSON input schema, read-only/destructive hints and a handler that calls the same library
function as the CLI command (never the CLI). `call()` runs a tool synchronously and is the
whole of the logic; `serve()` wraps it in the official `mcp` SDK (`pip install giok[mcp]`),
which is imported only here, when the server starts. A GiokError becomes a tool error whose
text is the CLI's line: `Error: <message>`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from giok.errors import GiokError, InvalidInput, NotFound
from giok.lifecycle.crossview import Bus
from giok.store import layout, refs
from giok.store.fsutil import confine
from giok.store.layout import MEMORY
from giok.text.lazy import lazy
from giok.workspace import Workspace
from giok.write.visibility import scoped_lines

if TYPE_CHECKING:
    from giok.retrieval.backend import SearchIndex

SERVER_NAME = "giok"
INSTRUCTIONS = (
    "giok is this agent's long-term memory: markdown files under git. Call memory_boot once at the "
    "start of a session. Before answering about past work, decisions, preferences or people, call "
    "memory_recall (it decides whether memory is needed and searches at most twice); an answer "
    '"still loading" means giok is still loading its index, not that nothing is remembered: ask again '
    "in a few seconds. Keep what must "
    "outlive the session with memory_remember / memory_decide / memory_lesson; when it changes "
    "something remembered (a move, a switch, no longer …), pass the old entry's id as supersedes. "
    "Before your context fills up, keep the session's gist with memory_flush. Track work with "
    "memory_task and memory_state. Messages from sibling agents arrive in crossview_inbox. To judge "
    "the nightly distillation yourself, call memory_distill_plan, decide, then memory_distill_apply. "
    "Memories that disagree wait in memory_review until the user says which holds."
)
MAX_GET_LINES = 2000
_ID_IN_TEXT = lazy(r"\bm-[0-9a-f]{6,12}\b")


@dataclass
class Tool:
    name: str
    description: str
    properties: dict
    handler: Callable[[Workspace, dict], object]
    required: tuple[str, ...] = ()
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    title: str = ""
    text: Callable[[Any], str] | None = field(default=None, repr=False)

    @property
    def schema(self) -> dict:
        return {
            "type": "object",
            "properties": self.properties,
            "required": list(self.required),
            "additionalProperties": False,
        }

    def annotations(self) -> dict:
        return {
            "title": self.title or self.name.replace("_", " "),
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


TOOLS: dict[str, Tool] = {}


def tool(name: str, description: str, properties: dict, required=(), text=None, **hints):
    def register(handler):
        TOOLS[name] = Tool(name, description, properties, handler, tuple(required), text=text, **hints)
        return handler

    return register


def _str(description: str, **extra) -> dict:
    return {"type": "string", "description": description, **extra}


def _int(description: str, minimum: int, maximum: int, **extra) -> dict:
    return {"type": "integer", "description": description, "minimum": minimum, "maximum": maximum, **extra}


# -- reading ------------------------------------------------------------------------------
@tool(
    "memory_boot",
    "Load this agent's boot context: TIER 1 rules, SOUL, USER, the state memo, open tasks, MEMORY.md "
    "(M0 always, then the other layers as the budget allows) and yesterday's and today's diary, within "
    "a token budget; what did not fit is listed, never cut silently. Call once at the start of a "
    "session, before anything else.",
    {
        "budget": _int(
            "Token budget (default: the workspace's boot_budget setting, else 4000).", 200, 200000
        ),
        "context": _str(
            "private (default) or group: a group chat leaves MEMORY.md and user-scoped entries out.",
            enum=["private", "group"],
        ),
        "user": _str("Whose session this is (default: the name in USER.md)."),
        "thread": _str("The thread id: that thread's entries are included, no other thread's."),
    },
    read_only=True,
    idempotent=True,
    text=lambda d: d["text"],
)
def _boot(ws: Workspace, args: dict):
    from giok.lifecycle.boot import build

    return build(
        ws,
        budget=args.get("budget"),
        context=args.get("context", "private"),
        user=args.get("user"),
        thread=args.get("thread"),
    ).to_dict()


_SIBLINGS = {
    "type": "array",
    "items": {"type": "string"},
    "minItems": 1,
    "description": "Search these workspaces of the home instead (e.g. a sibling agent's); the home "
    "config decides who may read whom. Default: this workspace.",
}
_USER = _str(
    "Answer on behalf of this user (default: the name in USER.md): memories scoped to other users are hidden."
)
_THREAD = _str("Within this thread (default: none): its memories are included, other threads' are hidden.")


def _search_schema(query: str) -> dict:
    """The parameters memory_recall and memory_search share; `query` describes the query."""
    return {
        "query": _str(query, minLength=1),
        "k": _int("How many results at most.", 1, 50, default=5),
        "workspaces": _SIBLINGS,
        "user": _USER,
        "thread": _THREAD,
    }


def _search_opts(args: dict) -> dict:
    opts = {"k": args.get("k", 5)}
    for key in ("user", "thread"):
        if args.get(key):
            opts[key] = args[key]
    if args.get("workspaces"):
        opts["workspaces"] = tuple(args["workspaces"])
    return opts


@tool(
    "memory_recall",
    "Answer 'do I remember anything about X?' with giok's agentic protocol: it first decides whether "
    "the question needs memory at all (greetings, instructions and general knowledge do not), searches, "
    "retries once with other keywords, and otherwise answers 'no memory' - never more than two searches. "
    "Use this before answering about past work, decisions, preferences or people. Right after the "
    "server starts it waits for the search index; if that takes too long it answers 'still loading' "
    "(not 'no memory'): call it again in a few seconds.",
    _search_schema("The question or topic, in the user's words (Korean or English)."),
    required=("query",),
    read_only=True,
)
def _recall(ws: Workspace, args: dict):
    from giok.retrieval.search import recall

    return recall(ws, args["query"], **_search_opts(args)).to_dict()


@tool(
    "memory_search",
    "Raw hybrid search (keywords + vectors) over this workspace's memory files, with the seed's "
    "cut-offs (scores under 0.35 are noise). Returns scored chunks with path, lines, layer, date and "
    "entry id; open one with memory_get. Prefer memory_recall for questions; use this to look up a "
    "term, browse, or read a sibling agent's memory (workspaces).",
    _search_schema("What to look for (Korean or English)."),
    required=("query",),
    read_only=True,
)
def _search(ws: Workspace, args: dict):
    from giok.retrieval.search import search_full

    return search_full(ws, args["query"], **_search_opts(args)).to_dict()


@tool(
    "memory_get",
    "Read a memory file, or a range of its lines, e.g. a search hit's path and line: every file "
    "memory_search can return opens (the workspace's .md files: MEMORY.md, SOUL.md, IDENTITY.md, memory/, "
    "compound/, state/, notes/, skills/*/SKILL.md ...; not .git/, .giok/ or other hidden folders). In "
    "MEMORY.md and the archive, entries scoped to another user or thread are shown as a `(hidden …)` line.",
    {
        "path": _str(
            "Path relative to the workspace, as memory_search returns it, e.g. MEMORY.md or "
            "memory/2026-03-01.md."
        ),
        "from": _int("First line, 1-based (default 1).", 1, 10_000_000),
        "lines": _int(f"How many lines (default: to the end, at most {MAX_GET_LINES}).", 1, MAX_GET_LINES),
        "user": _str(
            "Read on behalf of this user (default: the name in USER.md): other users' entries are hidden."
        ),
        "thread": _str("Within this thread: its entries are shown, other threads' are hidden."),
    },
    required=("path",),
    read_only=True,
    idempotent=True,
    text=lambda d: d["text"],
)
def _get(ws: Workspace, args: dict):
    rel = memory_path(ws, args["path"])
    data = (ws.root / rel).read_bytes()
    if rel == MEMORY or _ARCHIVE.match(rel):
        all_lines, shown_ids = _scoped_lines(ws, data, args.get("user"), args.get("thread"))
    else:
        all_lines, shown_ids = data.decode("utf-8", errors="replace").splitlines(), None
    start = args.get("from", 1)
    if (all_lines and start > len(all_lines)) or (not all_lines and start > 1):
        raise InvalidInput(f"line {start} is past the end of {rel} ({len(all_lines)} lines)")
    chosen = all_lines[start - 1 : start - 1 + args.get("lines", MAX_GET_LINES)]
    text = "\n".join(chosen)
    if rel == MEMORY and shown_ids is not None:  # MEMORY.md's lines are always scoped
        refs.record(ws, [i for i in _ID_IN_TEXT.findall(text) if i in shown_ids], "get")
    return {
        "path": rel,
        "from": start,
        "to": start + len(chosen) - 1,
        "total_lines": len(all_lines),
        "text": text,
    }


_ARCHIVE = lazy(r"^(memory/)?archive/")


def _scoped_lines(
    ws: Workspace, data: bytes, user: str | None, thread: str | None
) -> tuple[list[str], set[str]]:
    """The lines of a MEMORY.md-format file as this reader sees them (giok.write.visibility)."""
    from giok.lifecycle.boot import default_user

    return scoped_lines(data, default_user(ws.read_text("USER.md")) if user is None else user, thread)


def memory_path(ws: Workspace, path: str) -> str:
    """The workspace-relative path of a memory file the agent may read: a `.md` file the index
    reads (so every path memory_search returns opens), never a hidden or skipped folder's."""
    target = confine(ws.root, (path or "").strip())
    rel = target.relative_to(ws.root.resolve()).as_posix()
    if not layout.is_readable(rel):
        raise InvalidInput(
            f"{path!r} is not a memory file: use a .md file of the workspace (MEMORY.md, SOUL.md, "
            f"memory/…, a path memory_search returned), not one under .git/, .giok/ or a hidden folder"
        )
    if not target.is_file():
        raise NotFound(f"no file {rel} in workspace {ws.name}")
    return rel


# -- writing ------------------------------------------------------------------------------
@tool(
    "memory_remember",
    "Keep one fact, preference, decision or episode in MEMORY.md (committed to git at once). Use for "
    "what must outlive this session; giok refuses small talk and questions, redacts secrets and "
    "merges duplicates. Layers: M0 permanent (identity, core rules), M365 a year, M90 90 days, M30 30 "
    "days (default).",
    {
        "text": _str("The memory, one self-contained sentence.", minLength=1),
        "layer": _str(
            "M0, M365, M90 or M30 (default M30; an update keeps the layer of the entry it supersedes).",
            enum=["M0", "M365", "M90", "M30"],
        ),
        "type": _str(
            "What kind of memory.", enum=["preference", "fact", "workflow", "episode", "lesson", "decision"]
        ),
        "scope": _str("workspace (default), user:NAME, thread:ID or task:ID."),
        "source": _str("Where it came from (a session, message id or file)."),
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "description": "How sure, 0..1."},
        "expires": _str("Expiry date YYYY-MM-DD (default: today + the layer's days; never for M0)."),
        "date": _str(
            "When it happened, YYYY-MM-DD (default today; not in the future); expiry counts from today."
        ),
        "supersedes": _str(
            "The id (m-xxxxxx) of the memory this one replaces, when it changes something kept before "
            "(the user moved, switched, no longer …): find it with memory_recall first. The old entry "
            "stays in the file, marked superseded, and answers questions about the past.",
            pattern=r"^m-[0-9a-f]{6,12}$",
        ),
    },
    required=("text",),
)
def _remember(ws: Workspace, args: dict):
    return ws.remember(
        args["text"],
        layer=args.get("layer"),
        expires=args.get("expires"),
        type=args.get("type"),
        scope=args.get("scope"),
        source=args.get("source"),
        confidence=args.get("confidence"),
        via="mcp",
        date=args.get("date"),
        supersedes=args.get("supersedes"),
    ).to_dict()


@tool(
    "memory_decide",
    "Record a decision in the decision log (state/decisions.md) with its reason; earlier decisions "
    "are never edited, a new one may supersede one. Use when the user or you settle on an approach.",
    {
        "text": _str("The decision.", minLength=1),
        "why": _str("The reason.", minLength=1),
        "supersedes": _str("The decision it replaces, D-NNN.", pattern=r"^D-\d{3,}$"),
    },
    required=("text", "why"),
)
def _decide(ws: Workspace, args: dict):
    return {"id": ws.decide(args["text"], args["why"], supersedes=args.get("supersedes"))}


@tool(
    "memory_lesson",
    "Add a dated lesson (what went wrong or right, and what to do next time) to compound/lessons.md.",
    {
        "title": _str("Short title.", minLength=1),
        "body": _str("What was learned; one point per line.", minLength=1),
    },
    required=("title", "body"),
)
def _lesson(ws: Workspace, args: dict):
    return {"heading": ws.lesson(args["title"], args["body"]).heading}


_TASK_MOVES = {"start": "doing", "done": "done", "block": "blocked"}


# Reads and writes are separate tools, so that a client never asks permission to read
# (readOnlyHint) and the destructive hint marks only what replaces or removes something.
@tool(
    "memory_task_list",
    "List the tasks of state/tasks.md (id T-NNN, status, text, notes); change them with memory_task.",
    {"status": _str("Only tasks with this status.", enum=["todo", "doing", "done", "blocked"])},
    read_only=True,
    idempotent=True,
)
def _task_list(ws: Workspace, args: dict):
    return {"tasks": [t for t in ws.tasks() if not args.get("status") or t["status"] == args["status"]]}


@tool(
    "memory_task",
    "Change state/tasks.md: add creates a todo (returns T-NNN); start, done and block move a task (block "
    "with a note saying why). List tasks with memory_task_list.",
    {
        "action": _str("What to do.", enum=["add", "start", "done", "block"]),
        "text": _str("The task (for add)."),
        "id": _str("Task id T-NNN (for start/done/block)."),
        "note": _str("A note kept with the task."),
    },
    required=("action",),
)
def _task(ws: Workspace, args: dict):
    action = args["action"]
    if action == "add":
        return {"id": ws.task_add(_need(args, "text", action))}
    return ws.task_move(_need(args, "id", action), _TASK_MOVES[action], args.get("note"))


@tool(
    "memory_state_show",
    "The state memo (state/memo.md): where the work stands, by section (phase, last-done, next-step, "
    "failure-modes). Change a section with memory_state.",
    {},
    read_only=True,
    idempotent=True,
)
def _state_show(ws: Workspace, args: dict):
    return ws.state()


@tool(
    "memory_state",
    "Replace one section of the state memo (state/memo.md): phase, last-done, next-step or failure-modes. "
    "Update it before a long pause or when the context is about to be compacted; read it with "
    "memory_state_show.",
    {
        "section": _str("phase, last-done, next-step or failure-modes."),
        "text": _str("The section's new text."),
        "action": _str("set (optional; the only action, accepted from older callers).", enum=["set"]),
    },
    required=("section", "text"),
    destructive=True,
    idempotent=True,
)
def _state(ws: Workspace, args: dict):
    return ws.state_set(_need(args, "section", "set"), _need(args, "text", "set"))


@tool(
    "memory_heartbeat_list",
    "The open background items of HEARTBEAT.md, numbered, worked through when the agent wakes up.",
    {},
    read_only=True,
    idempotent=True,
)
def _heartbeat_list(ws: Workspace, args: dict):
    return {"items": ws.heartbeat()}


@tool(
    "memory_heartbeat",
    "Change HEARTBEAT.md's open background items: action=add appends one; done removes one (by its number "
    "from memory_heartbeat_list, or its text) once handled.",
    {
        "action": _str("add or done.", enum=["add", "done"]),
        "text": _str("The item (for add)."),
        "item": {
            "type": ["string", "integer"],
            "description": "Its number from memory_heartbeat_list, or its text (for done).",
        },
    },
    required=("action",),
    destructive=True,
)
def _heartbeat(ws: Workspace, args: dict):
    if args["action"] == "add":
        return {"added": ws.heartbeat_add(_need(args, "text", "add"))}
    return {"removed": ws.heartbeat_done(str(_need(args, "item", "done")))}


@tool(
    "memory_forget",
    "Delete one MEMORY.md entry for good, with a reason (kept in the git history). Only when the user "
    "asks to forget something or an entry is wrong; never to tidy up.",
    {
        "id": _str("The entry id, m-xxxxxx.", pattern=r"^m-[0-9a-f]{6,12}$"),
        "reason": _str("Why it must go.", minLength=1),
    },
    required=("id", "reason"),
    destructive=True,
)
def _forget(ws: Workspace, args: dict):
    return ws.forget(args["id"], args["reason"]).to_dict()


# -- the night ----------------------------------------------------------------------------
_DATE = _str("Distill as of this day, YYYY-MM-DD (default today).", pattern=r"^\d{4}-\d{2}-\d{2}$")


@tool(
    "memory_distill_plan",
    "Be the judge of tonight's distillation: lists, without writing, what the night would judge (new "
    "diary lines, entries near a promotion) with each item's key, text, evidence, allowed choices and "
    "the offline judge's suggestion, for a diary line the live entries it may replace (`may_replace`), "
    "a plan id, and instructions. Decide each item, then call "
    "memory_distill_apply with {plan, decisions}.",
    {"date": _DATE},
    read_only=True,
    idempotent=True,
)
def _distill_plan(ws: Workspace, args: dict):
    from giok.lifecycle import distill

    return distill.plan(ws, args.get("date"))


@tool(
    "memory_distill_apply",
    "Run tonight's distillation with your decisions on a plan from memory_distill_plan: adds the kept "
    "items to MEMORY.md or the lessons, promotes, expires and merges, and commits once. Items you leave "
    "out or answer invalidly are decided by the offline judge (the report's `fallback` names them); a "
    "plan made before MEMORY.md changed is refused: make a new one.",
    {
        "plan": _str("The plan id memory_distill_plan returned.", minLength=1),
        "decisions": {
            "type": "object",
            "description": 'Item key -> {"decision": one of the item\'s choices, "reason": short, '
            '"replaces": for a diary line kept, the id of the live entry it replaces (one of its '
            "`may_replace`, or any live entry), or null for none; left out, the write policy decides}; a "
            "bare decision string is read too.",
            "additionalProperties": {
                "oneOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "properties": {
                            "decision": {"type": "string"},
                            "reason": {"type": "string"},
                            "replaces": {"type": ["string", "null"]},
                        },
                        "required": ["decision"],
                    },
                ]
            },
        },
        "dry_run": {"type": "boolean", "default": False, "description": "Judge and report, write nothing."},
    },
    required=("plan", "decisions"),
    destructive=True,
)
def _distill_apply(ws: Workspace, args: dict):
    from giok.lifecycle import distill

    answer = {"plan": args["plan"], "decisions": args["decisions"]}
    return distill.apply(ws, answer, dry_run=args.get("dry_run", False)).to_dict()


@tool(
    "memory_flush",
    "Keep the gist of this session before the context fills up (or before it ends): you write the "
    "gist as lists of short sentences, and giok keeps each item in one place through the write "
    "policy (constraints, preferences, decisions and facts in MEMORY.md, a duplicate not written "
    "again, secrets redacted, dates resolved; pending work, discoveries and failures in the state "
    "memo), once per session and level. Put in: every constraint or rule the user set (word for "
    "word), every preference the user stated (style instructions too), decisions (and why), facts "
    "worth keeping (dated facts with their day, life events, allergies), discoveries, pending work, "
    "failures. Short sentences; no secrets. Pass the conversation too, and what you left out of "
    "the rules, preferences, decisions and facts is added from it.",
    {
        "gist": {
            "type": "object",
            "description": "The lists, each of short sentences (any may be left out).",
            "properties": {
                c: {"type": "array", "items": {"type": "string"}}
                for c in (
                    "constraints",
                    "preferences",
                    "decisions",
                    "facts",
                    "discoveries",
                    "pending",
                    "failures",
                )
            },
            "additionalProperties": False,
        },
        "conversation": _str("The conversation (plain text or JSONL messages), to complete the gist."),
        "session": _str("Session id (default: the workspace's session, else 'default')."),
        "level": _str("The crossing being flushed: soft (default) or hard.", enum=["soft", "hard"]),
    },
    required=("gist",),
)
def _flush(ws: Workspace, args: dict):
    from giok.lifecycle import watchdog

    return watchdog.flush(
        ws, args.get("conversation"), args.get("session"), args.get("level"), gist=args["gist"]
    ).to_dict()


# -- the review queue (giok.lifecycle.review) ----------------------------------------------
@tool(
    "memory_review",
    "The review queue: pairs of memories that may disagree (a contradiction, or a change giok is unsure "
    "of), raised once by the nightly distill and kept in state/review.md until resolved. Each item has an "
    "id (R-001), its two entries (id, date, text, oldest first) and why it was raised. Ask the user which "
    "holds, then resolve it with memory_review_resolve.",
    {"all": {"type": "boolean", "description": "Also list resolved and closed items (default: open ones)."}},
    read_only=True,
    idempotent=True,
)
def _review(ws: Workspace, args: dict):
    from giok.lifecycle import review

    return review.listing(ws, bool(args.get("all")))


@tool(
    "memory_review_resolve",
    "Resolve an open item of memory_review: choice=newer (the newer entry supersedes the older one), "
    "both (both are true; the pair is never raised again) or forget (forget `entry`, one of the item's "
    "two, for good; the other stays). Only when the user said which holds, or the conversation makes it "
    "plain.",
    {
        "id": _str("The item id, R-001.", pattern=r"^[Rr]-\d{3,}$"),
        "choice": _str("newer, both or forget.", enum=["newer", "both", "forget"]),
        "entry": _str("The entry to forget (with choice=forget), m-xxxxxx.", pattern=r"^m-[0-9a-f]{6,12}$"),
        "reason": _str("Why (kept in the commit message; the forget's reason with choice=forget)."),
    },
    required=("id", "choice"),
    destructive=True,
)
def _review_resolve(ws: Workspace, args: dict):
    from giok.lifecycle import review

    done = review.resolve(ws, args["id"], args["choice"], entry=args.get("entry"), reason=args.get("reason"))
    return done.to_dict()


# -- cross-view ---------------------------------------------------------------------------
@tool(
    "crossview_send",
    "Tell your sibling agents (the other workspaces of this home) what you posted or decided: a post "
    "goes to all of them, or to `to`. To answer a message from crossview_inbox, give reply_to: the "
    "answer goes to its sender only. Never relay a message you received, and never answer a reply: "
    "giok refuses both (loop rule).",
    {
        "text": _str("The message.", minLength=1),
        "to": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "Recipient workspace names (default: every other workspace).",
        },
        "reply_to": _str("The message id you answer, cv-NNNNNN."),
    },
    required=("text",),
    open_world=True,
)
def _cv_send(ws: Workspace, args: dict):
    return Bus(ws.home).send(args["text"], ws.name, to=args.get("to"), reply_to=args.get("reply_to"))


@tool(
    "crossview_inbox",
    "Messages your sibling agents sent you (tagged [단톡방 크로스뷰]), oldest first. Check it when you "
    "wake up; acknowledge handled ones with crossview_ack.",
    {
        "unread": {"type": "boolean", "default": True, "description": "Only messages not acked yet."},
        "limit": _int("At most this many (the newest).", 1, 500, default=50),
    },
    read_only=True,
)
def _cv_inbox(ws: Workspace, args: dict):
    return {
        "workspace": ws.name,
        "messages": Bus(ws.home).inbox(ws.name, unread=args.get("unread", True), limit=args.get("limit", 50)),
    }


@tool(
    "crossview_ack",
    "Mark inbox messages as handled: the given ids, or all unread ones when ids is omitted.",
    {"ids": {"type": "array", "items": {"type": "string"}, "description": "Message ids cv-NNNNNN."}},
    idempotent=True,
)
def _cv_ack(ws: Workspace, args: dict):
    return {"acked": Bus(ws.home).ack(ws.name, args.get("ids") or None)}


def _need(args: dict, key: str, action: str):
    value = args.get(key)
    if value is None or value == "":
        raise InvalidInput(f"{key} is required for action {action}")
    return value


# -- running ------------------------------------------------------------------------------
_LIBRARY_CHECKS = ("enum", "pattern", "minLength")
_OWN_CHOICES = ("action", "status")


def _loose(schema: dict) -> dict:
    """The schema minus the value checks the library makes itself (layer, ids, empty text),
    so that those errors carry the same message as the CLI's."""
    props = {
        k: (v if k in _OWN_CHOICES else {a: b for a, b in v.items() if a not in _LIBRARY_CHECKS})
        for k, v in schema["properties"].items()
    }
    return {**schema, "properties": props}


def check_arguments(spec: Tool, arguments: dict | None) -> dict:
    import jsonschema  # a dependency of the mcp SDK

    arguments = arguments or {}
    try:
        jsonschema.validate(arguments, _loose(spec.schema))
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise InvalidInput(
            f"invalid arguments for {spec.name}: {(where + ': ') if where else ''}{_schema_error(exc)}"
        ) from None
    return arguments


def _schema_error(exc) -> str:
    """A schema refusal in the client's terms (JSON's null and "text", not Python's None and 'text')."""
    seen = json.dumps(exc.instance, ensure_ascii=False, default=str)
    seen = seen if len(seen) <= 60 else seen[:57] + "..."
    if exc.validator == "type":
        wanted = exc.validator_value if isinstance(exc.validator_value, list) else [exc.validator_value]
        kinds = {
            "string": "a string",
            "integer": "an integer",
            "number": "a number",
            "boolean": "true or false",
        }
        kinds |= {"object": "an object", "array": "a list", "null": "null"}
        return f"{seen} is not {' or '.join(kinds.get(str(w), str(w)) for w in wanted)}"
    if exc.validator == "required":
        missing = [name for name in exc.validator_value if name not in (exc.instance or {})]
        return f"{', '.join(missing)} is required"
    if exc.validator == "enum":
        allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in exc.validator_value)
        return f"{seen} is not one of {allowed}"
    return exc.message


def call(ws: Workspace, name: str, arguments: dict | None = None) -> tuple[object, str]:
    """Run tool `name`; returns (structured result, text for the model). Raises GiokError."""
    spec = TOOLS.get(name)
    if spec is None:
        raise NotFound(f"unknown tool {name!r} (tools: {', '.join(TOOLS)})")
    result = spec.handler(ws, check_arguments(spec, arguments))
    text = spec.text(result) if spec.text else json.dumps(result, ensure_ascii=False, indent=1, default=str)
    return result, text


def _sdk():
    try:
        import anyio
        import mcp_types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError:
        raise GiokError(_missing_sdk()) from None
    return anyio, mcp_types, Server, stdio_server


def _missing_sdk() -> str:
    """mcp 1.x has no `mcp_types` and another lowlevel Server API: say which version is needed."""
    from importlib import metadata

    try:
        found = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return "the MCP server needs the mcp package: pip install 'giok[mcp]'"
    if found.split(".")[0].isdigit() and int(found.split(".")[0]) < 2:
        return f"the MCP server needs mcp>=2.0, not mcp {found}: pip install 'giok[mcp]' --upgrade"
    return "the MCP server needs the mcp package: pip install 'giok[mcp]'"


def unknown_tool(name) -> Exception:
    """An unknown tool name is a protocol error, JSON-RPC -32602 (MCP spec, tools: error handling);
    arguments that fail a known tool's schema stay a tool error the model can read and correct."""
    from mcp import MCPError
    from mcp_types import INVALID_PARAMS

    return MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name!r} (tools: {', '.join(TOOLS)})")


def protocol_error(exc: Exception):
    """The JSON-RPC error answering a line the SDK's stdio reader could not parse (it hands the
    pydantic error over instead of a message): -32700 for bad JSON, -32600 for JSON that is not
    a JSON-RPC message; id null, as JSON-RPC 2.0 says when the id cannot be read."""
    import mcp_types as types

    try:
        kinds = {e.get("type") for e in exc.errors()}  # type: ignore[attr-defined]  # pydantic.ValidationError
    except Exception:
        kinds = set()
    if "json_invalid" in kinds:
        code, message = types.PARSE_ERROR, "Parse error: the line is not valid JSON"
    else:
        code, message = types.INVALID_REQUEST, "Invalid Request: the line is not a JSON-RPC 2.0 message"
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))


async def _answer_unparseable(source, sink, write, seen: Callable[[object], None] | None = None) -> None:
    """Relay the client's messages to the server (showing each to `seen` first); answer each
    unparseable line with its JSON-RPC error (the SDK's server only logs and drops them)."""
    import anyio
    from mcp.shared.message import SessionMessage

    async with sink:
        async for item in source:
            if isinstance(item, Exception):
                try:
                    await write.send(SessionMessage(protocol_error(item)))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                continue
            if seen is not None:
                seen(item)
            await sink.send(item)


# Tools that read or change the search index: they wait for the warm-up. Once it is done,
# searches of one workspace run side by side (the index serialises its SQLite connection itself,
# `Index.lock`; the query's embedding and the scoring run outside it); the tools that change the
# index run one at a time (`WarmUp.run`).
INDEXED = frozenset({"memory_search", "memory_recall", "memory_forget", "memory_review_resolve"})
SEARCHES = frozenset({"memory_search", "memory_recall"})
KEYWORD_WHILE_WARMING = SEARCHES  # the name older callers import
FIRST_SEARCH_WAIT = 25.0  # seconds a search waits for the warm-up ($GIOK_MCP_WAIT; a client gives up at ~60)
STILL_LOADING = "still loading"
LOADING_LINE = (
    "giok memory is still loading (giok mcp started moments ago and is still building its search "
    "index or loading the embedding model): this answer used keywords only and may miss what giok "
    "holds. An empty answer here does NOT mean that giok holds nothing: try again in a few seconds."
)


class WarmUp:
    """Builds the index in a background thread, in two steps, so that no search pays for the
    embedding model past an MCP client's request timeout:

    1. rows and keyword terms of every file (`Index.defer_vectors`; well under a second for a
       new workspace). A tool in INDEXED waits for this step only.
    2. the embedding model, the vectors (`Index.embed_pending`, batch by batch, the model
       running outside the lock), the model-wide background baseline and the hub vectors.

    memory_search and memory_recall wait for step 2 too, up to `wait` seconds (the MCP server
    sends progress meanwhile); past that they answer from keywords and say plainly that memory is
    still loading (`"answer": "still loading"`, never "no memory"). `giok mcp` starts the thread
    once the client has its `initialize` answer, so the handshake never waits for the model.
    A failed warm-up is reported on stderr and the next search simply does the work itself."""

    def __init__(self, ws: Workspace, wait: float = FIRST_SEARCH_WAIT):
        self.ws = ws
        self.wait = wait
        self.lock = threading.Lock()
        self.started = threading.Event()
        self.ready = threading.Event()  # set once the vectors and the baseline are built
        self.seconds: float | None = None
        self.error: Exception | None = None
        self._index: SearchIndex | None = None
        self._held = False
        self._embedded = (0, 0)  # vectors built / to build by step 2, for progress messages

    def start(self) -> WarmUp:
        """Start the warm-up thread (once; a second call does nothing)."""
        if self.started.is_set():
            return self
        self.started.set()
        self.lock.acquire()
        self._held = True
        threading.Thread(target=self._run, name="giok-warm-up", daemon=True).start()
        return self

    def _release(self) -> None:
        if self._held:
            self._held = False
            self.lock.release()

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            from giok.providers import baseline
            from giok.retrieval.index import Index

            index = self._index = Index.for_workspace(self.ws)
            index.defer_vectors = True
            index.progress = self._count
            index.sync()
            self._release()  # keyword search works from here on
            index.embed_pending(self.lock)
            index.embedder.embed(["warm up"], "query")
            if index.embedder.relative:
                baseline.centroids(index.embedder, index.home)  # embedded outside the lock
            with self.lock:
                index.defer_vectors = False
                if index.embedder.relative and len(index.matrix()[0]):
                    index.baseline()
        except Exception as exc:  # never fatal: the next search syncs and reports for itself
            self.error = exc
            print(f"giok mcp: index warm-up failed: {exc}", file=sys.stderr)
        finally:
            if self._index is not None:
                self._index.defer_vectors = False
            self.seconds = round(time.perf_counter() - started, 2)
            self.ready.set()
            self._release()

    def _count(self, files: int, total_files: int, texts: int, total_texts: int) -> None:
        if total_texts:
            self._embedded = (texts, total_texts)

    def waits(self, ws: Workspace | None, name: str) -> bool:
        """Whether this call would be answered from a half-built index if it ran now."""
        return name in SEARCHES and ws is self.ws and not self.ready.is_set()

    def progress(self) -> str:
        """What the warm-up is doing, for a progress message (read without the lock)."""
        done, total = self._embedded
        doing = f"{done}/{total} texts embedded" if total and done < total else "loading the embedding model"
        return f"giok memory is still loading ({doing}); the search waits for it"

    def state(self) -> dict:
        """What a keyword-only answer tells the agent (call with the lock held)."""
        pending = self._index.pending_vectors() if self._index is not None else 0
        return {
            "vectors": "building",
            "pending_chunks": pending,
            "note": LOADING_LINE,
        }

    def run(self, fn, ws: Workspace, name: str, arguments: dict | None, wait: float | None = None):
        """Run tool `name` through `fn` once the index may answer it: a search waits for the
        warm-up up to `wait` seconds (default: self.wait), then answers from keywords, saying so.
        After the warm-up, searches run at once, beside each other and beside a write
        (`side_by_side`); a tool that changes the index takes the lock: one at a time."""
        if self.waits(ws, name):
            self.ready.wait(self.wait if wait is None else wait)
        if self.side_by_side(name):
            return fn(ws, name, arguments)
        with self.lock:
            if not self.waits(ws, name):
                return fn(ws, name, arguments)
            return self._keywords(name, arguments)

    def side_by_side(self, name: str) -> bool:
        """Whether this call is a search that may run beside others: the warm-up is done and left
        a local index (its connection is serialised by `Index.lock`); the shared PostgreSQL
        index keeps its searches one at a time."""
        from giok.retrieval.index import Index

        return name in SEARCHES and self.ready.is_set() and type(self._index) is Index

    def _keywords(self, name: str, arguments: dict | None) -> tuple[dict, str]:
        from giok.retrieval.search import recall, search_full

        args = check_arguments(TOOLS[name], arguments)
        find = recall if name == "memory_recall" else search_full
        result = find(self.ws, args["query"], **_search_opts(args), mode="keyword").to_dict()
        if name == "memory_recall" and result["answer"] == "no memory":
            result["answer"] = STILL_LOADING
        result["index"] = self.state()
        text = json.dumps(result, ensure_ascii=False, indent=1, default=str)
        return result, f"{LOADING_LINE}\n{text}"


async def wait_for_warm_up(warm: WarmUp, ctx, step: float = 1.0) -> None:
    """Wait (without holding a worker thread longer than `step`) until the warm-up is done or its
    bound has passed, telling a client that sent a progressToken how it goes every `step` s."""
    import anyio

    report = getattr(getattr(ctx, "session", None), "report_progress", None)  # a no-op without a token
    deadline = time.monotonic() + warm.wait
    while not warm.ready.is_set() and (left := deadline - time.monotonic()) > 0:
        if report is not None:
            try:
                await report(warm.wait - left, warm.wait, warm.progress())
            except Exception:  # progress is a courtesy: a client that cannot take it still gets the answer
                report = None
        await anyio.to_thread.run_sync(warm.ready.wait, min(step, left))


def build_server(
    ws: Workspace | None,
    warm: WarmUp | None = None,
    resolve: Callable[[object, Tool, dict | None], tuple[Workspace, WarmUp | None, dict | None]]
    | None = None,
    shown: Callable[[object, Tool], bool] | None = None,
):
    """An `mcp` lowlevel Server whose tools run `call()` in a worker thread. With `resolve`
    (giok serve), each call's workspace, warm-up and arguments come from resolve(request
    context, tool, arguments), which raises a GiokError (a tool error) for a caller that may
    not make that call; with
    `shown`, tools/list names only the tools shown(request context, tool) allows."""
    anyio, types, Server, _ = _sdk()
    from giok import __version__

    tools = [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.schema,
            annotations=types.ToolAnnotations.model_validate(t.annotations()),
        )
        for t in TOOLS.values()
    ]

    async def list_tools(ctx, params):
        if shown is None:
            return types.ListToolsResult(tools=tools)
        return types.ListToolsResult(tools=[t for t in tools if shown(ctx, TOOLS[t.name])])

    async def call_tool(ctx, params):
        if params.name not in TOOLS:
            raise unknown_tool(params.name)
        try:
            target, warmed, arguments = (
                resolve(ctx, TOOLS[params.name], params.arguments)
                if resolve
                else (ws, warm, params.arguments)
            )
            if warmed is not None and params.name in INDEXED:
                if warmed.waits(target, params.name):
                    await wait_for_warm_up(warmed, ctx)
                result, text = await anyio.to_thread.run_sync(
                    warmed.run, call, target, params.name, arguments, 0.0
                )
            else:
                result, text = await anyio.to_thread.run_sync(call, target, params.name, arguments)
        except GiokError as exc:
            return types.CallToolResult(content=[types.TextContent(text=f"Error: {exc}")], is_error=True)
        except Exception as exc:  # a bug, not bad input: say so, keep serving
            print(f"giok mcp: {params.name} failed: {exc!r}", file=sys.stderr)
            return types.CallToolResult(
                content=[types.TextContent(text=f"Error: internal error in {params.name}: {exc}")],
                is_error=True,
            )
        structured = (
            json.loads(json.dumps(result, default=str)) if isinstance(result, dict) else {"result": result}
        )
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(ws: Workspace) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection. `initialize` is
    answered before the SDK loads (`early_initialize`); the warm-up starts with the client's next
    message, so neither the handshake nor the SDK waits for the embedding model."""
    from giok.edges.hookline import enabled as hook_socket_enabled
    from giok.edges.hookserver import HookServer
    from giok.settings import first_search_wait

    first, early = early_initialize() if _sdk_present() else (b"", None)
    anyio, _, _, stdio_server = _sdk()
    warm = WarmUp(ws, first_search_wait(FIRST_SEARCH_WAIT))
    server = build_server(ws, warm)

    hook_server = None

    def seen(message) -> None:
        nonlocal hook_server
        if not warm.started.is_set() and _method(message) != "initialize":
            warm.start()
            if hook_socket_enabled(os.environ):  # the prompt hook asks this process (hookserver)
                hook_server = HookServer(ws, warm, os.environ).start()

    async def main():
        async with stdio_server() as (read, write):
            sink, source = anyio.create_memory_object_stream(0)
            out, answers = anyio.create_memory_object_stream(0)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_answer_unparseable, _after(first, read), sink, write, seen)
                tasks.start_soon(_without_early_answer, answers, write, early)
                await server.run(source, out, server.create_initialization_options())
                tasks.cancel_scope.cancel()
            await write.aclose()  # the SDK closed `out`, not this: its stdout writer ends here

    try:
        anyio.run(main)
    finally:
        if hook_server is not None:
            hook_server.close()


# -- the handshake before the SDK loads -----------------------------------------------------
# Importing the mcp SDK costs ~1 s of CPU (its pydantic models), which a client waiting for
# `initialize` felt (Claude Code: "version negotiation probe timed out"). The first line is read
# and answered by hand, as the SDK would answer it; the SDK, once loaded, is handed the same
# line (its state becomes initialized) and its own answer is dropped. Only a well-formed
# `initialize` for a protocol version every supported SDK negotiates as asked is answered early;
# anything else is left to the SDK.
EARLY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def _sdk_present() -> bool:
    from importlib.util import find_spec

    return find_spec("mcp") is not None and find_spec("mcp_types") is not None


def _read_line(fd: int = 0) -> bytes:
    """One line from `fd`, a byte at a time: nothing after it is consumed, so the SDK's reader
    (on a duplicate of the descriptor) gets every later message."""
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
    return bytes(line)


def initialize_answer(request: object) -> dict | None:
    """The JSON-RPC answer to the `initialize` request `request`, as the SDK gives it, or None
    when it is not one this module answers itself."""
    from giok import __version__

    if not isinstance(request, dict) or request.get("method") != "initialize":
        return None
    params, ident = request.get("params"), request.get("id")
    if not isinstance(params, dict) or not isinstance(ident, (str, int)) or isinstance(ident, bool):
        return None
    client = params.get("clientInfo")
    if (
        params.get("protocolVersion") not in EARLY_VERSIONS
        or not isinstance(params.get("capabilities"), dict)
        or not isinstance(client, dict)
        or not all(isinstance(client.get(k), str) for k in ("name", "version"))
    ):
        return None
    result = {
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "protocolVersion": params["protocolVersion"],
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def early_initialize(fd_in: int = 0, fd_out: int = 1) -> tuple[bytes, dict | None]:
    """Read the client's first line and, when it is an `initialize` this module answers
    (`initialize_answer`), answer it now. Returns (the line, the answer sent or None)."""
    line = _read_line(fd_in)
    try:
        answer = initialize_answer(json.loads(line))
    except ValueError:
        answer = None
    if answer is not None:
        os.write(fd_out, (json.dumps(answer, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
    return line, answer


async def _after(first: bytes, read):
    """The client's messages as the SDK's stdio reader gives them: the line read before it
    loaded, then the rest."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    if first.strip():
        try:
            yield SessionMessage(types.jsonrpc_message_adapter.validate_json(first, by_name=False))
        except Exception as exc:  # the SDK's reader hands a line it cannot parse over the same way
            yield exc
    async for item in read:
        yield item


async def _without_early_answer(answers, write, early: dict | None) -> None:
    """Pass the server's messages on, except its own answer to the `initialize` answered early
    (said on stderr if it differs from the early one: the client saw that one)."""
    async with answers:
        async for item in answers:
            message = getattr(item, "message", None)
            if early is not None and getattr(message, "id", object()) == early["id"]:
                sent: dict = early
                early = None
                dump = getattr(message, "model_dump_json", None)
                theirs = json.loads(dump(by_alias=True, exclude_unset=True)) if dump else None
                if not isinstance(theirs, dict) or theirs.get("result") != sent["result"]:
                    print(f"giok mcp: the SDK's own initialize answer differs: {theirs}", file=sys.stderr)
                continue
            await write.send(item)


def _method(message) -> str | None:
    """The JSON-RPC method of a message the stdio reader parsed (None for a response)."""
    inner = getattr(message, "message", message)
    return getattr(getattr(inner, "root", inner), "method", None)
