"""Boot context: what an agent must see when a session starts, within a token budget.

In the order an agent reads it:

1. a one-line precedence rule (state memo > strategy > project spec > decision log > the rest);
2. the always-injected tier: AGENTS.md `## TIER 1`, SOUL.md, IDENTITY.md (OpenClaw's, when
   present), USER.md (about 1,000 tokens);
3. the state memo and the first open tasks (state/tasks.md);
4. MEMORY.md (private context only): M0 always, then M365, M90, M30 as the budget allows, best
   first (score = log2(1 + refs) − age in days / 30); superseded, expired and other scopes never;
5. compound/context.md (private context only): the session context the last watchdog flush
   carried over (its constraints, preferences, decisions, pending work), first lines first;
6. yesterday's and today's diary, newest lines first when the budget is short; giok's own lines
   (distill reports, flush markers, cross-view notes, routine results: `chunks.is_own_line`) stay
   in the diary for search but are not injected;
7. unread cross-view messages (the inbox of `<home>/crossview.db`), newest first, at most
   MAX_INBOX: shown at every boot until acked (`giok ack`), instead of once per recipient's
   diary note.

The tier, the precedence line, the state memo and M0 are always included (a warning says when
they alone exceed the budget); the rest fills the budget in the order: tasks, session context,
unread messages, today's diary, yesterday's diary, M365, M90, M30. Nothing is cut silently:
`left_out` lists what did not fit, and the text ends with a "not included" line. Each injected
MEMORY.md entry is noted in the reference log with weight 0 (`refs.record(ws, ids, "boot")`):
being shown is not being used, so boot alone never promotes anything (docs/distill.md). boot
keeps no cache of its own.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import functools
import hashlib
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field

from giok.errors import GiokError, InvalidInput
from giok.lifecycle import slots
from giok.retrieval.chunks import is_own_line
from giok.store import refs, templates
from giok.store.clock import today
from giok.store.fsutil import atomic_write, read_regular
from giok.store.layout import MEMO, MEMORY, TASKS
from giok.store.memoryfile import LAYERS
from giok.store.workspace import default_user, tier1_rules
from giok.text import token_count as tokens
from giok.text.analysis import has_hangul
from giok.write import policy

CONTEXT = "compound/context.md"
DEFAULT_BUDGET = 4000
ALWAYS_TARGET = 1000
MAX_TASKS = 10
MAX_INBOX = 10  # unread cross-view messages shown at boot, newest first
CONTEXTS = ("private", "group")
PRECEDENCE = {
    "en": (
        "Precedence when sources disagree: "
        "state memo > strategy > project spec > decision log > everything else."
    ),
    "ko": "출처가 충돌하면: 상태 메모 > 전략 문서 > 프로젝트 명세 > 결정 로그 > 그 외 모든 것.",
}
TITLES = {
    "en": {
        "rules": "Rules (AGENTS.md TIER 1)",
        "soul": "Who I am (SOUL.md)",
        "identity": "Identity (IDENTITY.md)",
        "user": "Who I work for (USER.md)",
        "memo": "State memo",
        "tasks": "Open tasks",
        "memory": "Memory (MEMORY.md)",
        "diary": "Diary {day}",
        "left": "Not included for lack of budget",
        "context": "Session context (compound/context.md)",
        "inbox": "Unread messages (giok inbox; `giok ack` once handled)",
    },
    "ko": {
        "rules": "규칙 (AGENTS.md TIER 1)",
        "soul": "나는 누구인가 (SOUL.md)",
        "identity": "정체성 (IDENTITY.md)",
        "user": "상대방 (USER.md)",
        "memo": "상태 메모",
        "tasks": "열린 태스크",
        "memory": "기억 (MEMORY.md)",
        "diary": "일기 {day}",
        "left": "예산이 모자라 빠진 것",
        "context": "세션 맥락 (compound/context.md)",
        "inbox": "읽지 않은 메시지 (giok inbox; 처리하면 `giok ack`)",
    },
}


@dataclass
class Section:
    name: str
    title: str
    lines: list[str] = field(default_factory=list)
    ids: list[str | None] = field(default_factory=list)  # an item without an id (a task line) has None
    always: bool = False

    def render(self) -> str:
        return f"## {self.title}\n" + "\n".join(self.lines) if self.lines else ""


@dataclass
class Item:
    section: str
    line: str
    id: str | None = None
    cost: int = 0


@dataclass
class Boot:
    workspace: str
    day: dt.date
    budget: int
    context: str
    user: str | None
    thread: str | None
    lang: str
    sections: list[Section]
    left_out: list[dict]
    warnings: list[str]
    always_tokens: int
    text: str = ""

    def to_dict(self) -> dict:
        """The boot as JSON-ready data (`giok boot --format json`)."""
        return {
            "workspace": self.workspace,
            "date": self.day.isoformat(),
            "budget": self.budget,
            "context": self.context,
            "user": self.user,
            "thread": self.thread,
            "counter": tokens.counter(),
            "tokens": tokens.count(self.text),
            "always_tier": {
                "tokens": self.always_tokens,
                "target": ALWAYS_TARGET,
                "over": self.always_tokens > ALWAYS_TARGET,
            },
            "sections": [
                {
                    "name": s.name,
                    "title": s.title,
                    "tokens": tokens.count(s.render()),
                    "items": len(s.lines),
                    "ids": s.ids,
                }
                for s in self.sections
                if s.lines
            ],
            "left_out": self.left_out,
            "warnings": self.warnings,
            "text": self.text,
        }

    def hook(self, event: str = "SessionStart") -> dict:
        """What a Claude Code hook for `event` prints on stdout (the event named must be the
        event answered, or Claude Code rejects it)."""
        return hook_answer(event, self.text)


HOOK_CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")  # the hook events whose answer may add context


def hook_answer(event: str, text: str) -> dict:
    """The answer of a Claude Code hook that adds `text` to the conversation (giok.edges.hooks)."""
    if event not in HOOK_CONTEXT_EVENTS:
        raise InvalidInput(
            f"hook event {event!r} takes no context: only {' and '.join(HOOK_CONTEXT_EVENTS)} do"
        )
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def build(
    ws,
    budget: int | None = None,
    context: str = "private",
    user: str | None = None,
    thread: str | None = None,
    record: bool = True,
) -> Boot:
    """The boot context of ws. `user` defaults to USER.md's name; `thread` shows that
    thread's entries; group context leaves MEMORY.md out."""
    if context not in CONTEXTS:
        raise InvalidInput(f"invalid context {context!r}: use private or group")
    budget = _budget(ws, budget)
    day = today()
    skipped = _unreadable(ws, day)
    if skipped:  # a symlink (or a folder) where a file should be, as a sync can bring: read as empty
        ws = _without(ws, skipped)
    user_md = ws.read_text("USER.md")
    user = user or default_user(user_md)
    lang = templates.language(ws)
    t = TITLES[lang]
    fixed = _fixed_sections(ws, t, user_md)
    always_tokens = sum(tokens.count(s.render()) for s in fixed if s.always)
    open_tasks = [x for x in ws.tasks() if x["status"] != "done"]
    pools = {
        "tasks": _task_items(open_tasks),
        "inbox": _inbox_items(ws, lang),
        **_diary_items(ws, day),
        **(
            {}
            if context == "group" or MEMORY in skipped
            else _memory_items(ws, day, user, thread, {x["id"] for x in open_tasks})
        ),
    }
    if context != "group":
        pools["context"] = [Item("context", line) for line in _body(ws.read_text(CONTEXT)) if line.strip()]
    boot = Boot(ws.name, day, budget, context, user, thread, lang, [], [], [], always_tokens)
    head = f"# Boot context: {ws.name} ({day.isoformat()})\n{PRECEDENCE[lang]}"
    used = tokens.count(head) + sum(tokens.count(s.render()) + 1 for s in fixed)
    chosen, left = _fill(pools, budget - used - _RESERVE)
    boot.sections = _assemble(fixed, chosen, t, day)
    boot.left_out = left
    boot.warnings = _warnings(always_tokens, used, budget, ws) + list(skipped.values())
    boot.warnings += _redact_secrets(boot.sections)
    boot.text = _render(head, boot.sections, left, t, budget)
    if record:
        refs.record(ws, [i for s in boot.sections if s.name.startswith("M") for i in s.ids], "boot")
    return boot


# -- what another machine's push can put in the files: links, secrets --------------------------
def _unreadable(ws, day: dt.date) -> dict[str, str]:
    """The files boot reads that are symlinks (or go through a symlinked folder) or are not
    regular files: rel → the warning that says so. Git carries symlinks; boot follows none."""
    rels = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", MEMO, TASKS, MEMORY, CONTEXT]
    rels += [ws.diary_path(day - dt.timedelta(days=n)) for n in (0, 1)]
    out = {}
    for rel in rels:
        path, mode = ws.root, None
        for part in rel.split("/"):
            path = path / part
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                mode = None
                break
            if stat.S_ISLNK(mode):
                target = os.readlink(path)
                out[rel] = (
                    f"{rel} is a symlink (to {target}): boot skipped it; replace the link with the file"
                )
                break
        if rel not in out and mode is not None and not stat.S_ISREG(mode):
            out[rel] = f"{rel} is not a regular file: boot skipped it"
    return out


def _without(ws, skipped: dict[str, str]):
    """A copy of ws that reads the skipped files as empty (nothing else changes)."""
    from giok.store.memoryfile import MemoryFile

    view = copy.copy(ws)
    read = ws.read_text
    view.read_text = lambda rel: "" if str(rel) in skipped else read(rel)
    if MEMORY in skipped:
        view.memory = lambda: MemoryFile.parse(b"")
    return view


def _redact_secrets(sections: list[Section]) -> list[str]:
    """Secrets in the lines boot shows (giok never writes one; a teammate's push or a hand edit
    can), redacted by the write policy's detector; one warning naming the sections."""
    where = []
    for section in sections:
        for n, line in enumerate(section.lines):
            if policy.secrets_in(line):
                section.lines[n] = policy.redact(line)[0]
                where.append(section.name)
    if not where:
        return []
    return [
        f"{len(where)} line(s) holding a secret redacted ({', '.join(dict.fromkeys(where))}): "
        "`giok check` names them"
    ]


def _budget(ws, budget) -> int:
    if budget is None:
        settings = ws.home.workspaces().get(ws.name, {})
        budget = settings.get("boot_budget", ws.home.setting("boot_budget", DEFAULT_BUDGET))
    try:
        value = int(budget)
    except (TypeError, ValueError):
        raise InvalidInput(f"invalid budget {budget!r}: a number of tokens") from None
    if value < 100:
        raise InvalidInput(f"budget {value} is too small: give at least 100 tokens")
    return value


def _fixed_sections(ws, t: dict, user_md: str) -> list[Section]:
    rules = tier1_rules(ws.read_text("AGENTS.md"))
    identity = _body(ws.read_text("IDENTITY.md"))  # OpenClaw's name, vibe and emoji
    out = [
        Section("rules", t["rules"], rules, always=True),
        Section("soul", t["soul"], _body(ws.read_text("SOUL.md")), always=True),
        *([Section("identity", t["identity"], identity, always=True)] if "".join(identity).strip() else []),
        Section("user", t["user"], _body(user_md), always=True),
    ]
    memo = [f"### {title}\n{text}" for title, text in _memo(ws) if text.strip()]
    out.append(Section("memo", t["memo"], memo))
    return out


def _memo(ws) -> list[tuple[str, str]]:
    from giok.store.templates import STATE_TITLES

    lang = "ko" if has_hangul(ws.read_text(MEMO)) else "en"
    return [(STATE_TITLES[lang][k], v) for k, v in ws.state().items()]


def _body(text: str) -> list[str]:
    """A file's lines without its `# ` title and surrounding blank lines."""
    lines = text.strip("\n").split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    while lines and not lines[0].strip():
        lines.pop(0)
    return [ln.rstrip() for ln in lines] if any(ln.strip() for ln in lines) else []


def _task_items(open_tasks: list[dict]) -> list[Item]:
    order = {"doing": 0, "blocked": 1, "todo": 2}
    ranked = sorted(open_tasks, key=lambda x: order.get(x["status"], 3))[:MAX_TASKS]
    return [Item("tasks", f"- {x['id']} [{x['status']}] {x['text']}", x["id"]) for x in ranked]


def _inbox_items(ws, lang: str) -> list[Item]:
    """The workspace's unread cross-view messages, newest first; none when the home has no bus."""
    home = getattr(ws, "home", None)
    if home is None or not (home.path / "crossview.db").is_file():
        return []
    from giok.lifecycle import crossview

    try:
        unread = crossview.Bus(home).inbox(ws.name, unread=True, limit=MAX_INBOX)
    except GiokError:  # a workspace outside the home's registry, a locked or broken bus
        return []
    tag = crossview.TAG if lang == "ko" else crossview.TAGS[1]
    out = []
    for m in reversed(unread):
        head = f"{m['sender']} ↩ {m['reply_to']}" if m.get("reply_to") else m["sender"]
        when = str(m.get("created") or "")[:16].replace("T", " ")
        out.append(Item("inbox", f"- {when} {tag} {head}: {' '.join(m['text'].split())} ({m['id']})"))
    return out


def _diary_items(ws, day: dt.date) -> dict[str, list[Item]]:
    """Diary lines, newest first (the budget keeps the most recent), without giok's own lines."""
    out = {}
    for name, when in (("today", day), ("yesterday", day - dt.timedelta(days=1))):
        text = ws.read_text(ws.diary_path(when))
        lines = [
            ln.rstrip() for ln in text.splitlines() if re.match(r"^\s*[-*]\s+\S", ln) and not is_own_line(ln)
        ]
        out[f"diary:{name}"] = [Item(f"diary:{name}", ln) for ln in reversed(lines)]
    return out


CACHE = "boot-memory.json"  # in .giok/: MEMORY.md's boot lines, sorted and counted
_CACHE_VERSION = 3  # 2: keyed on a digest of MEMORY.md's bytes; 3: and on the index (slots.state)
CACHE_MAX = 64 << 20  # bytes: a larger file is not one boot wrote


def _memory_items(ws, day: dt.date, user, thread, open_tasks: set[str]) -> dict[str, list[Item]]:
    """MEMORY.md's lines for boot, per layer, best first, with their token costs. Kept in
    .giok/ keyed on a digest of the file's bytes and on everything else they depend on (day,
    reader, open tasks, token counter): a command that boots again skips the parse."""
    index = slots.state(ws)  # one slot's entries fold by the index's vectors (slots.newest)
    key = _cache_key(ws, day, user, thread, open_tasks, index)
    path = ws.layout.derived(CACHE)  # not created here: a read-only boot writes nothing it must
    raw = read_regular(path, CACHE_MAX) if key else None
    try:
        data = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):  # not JSON (UnicodeDecodeError is one), or nested too deep
        data = None
    if isinstance(data, dict) and data.get("key") == key:
        items = data.get("items") or {}
        return {layer: [Item(layer, *row) for row in items.get(layer, [])] for layer in LAYERS}
    out = _parse_memory_items(ws, day, user, thread, open_tasks, index[0] if index else None)
    counter = tokens.counter()
    counted = _counted(data, counter)  # a line's cost depends on nothing else: the last boot's
    for items in out.values():
        for item in items:
            cost = counted.get(item.line)
            item.cost = cost if cost is not None else _tokens(counter, item.line) + 1
    if key:
        rows = {layer: [[i.line, i.id, i.cost] for i in items] for layer, items in out.items()}
        with contextlib.suppress(OSError, InvalidInput):  # a cache: a planted link is not written through
            path.parent.mkdir(exist_ok=True)
            # ASCII JSON: its \\u escapes keep the lone surrogates of a line that is not UTF-8
            atomic_write(path, json.dumps({"key": key, "items": rows}).encode("ascii"))
    return out


def _counted(data: object, counter: str) -> dict[str, int]:
    """The token cost of each line in a boot cache of another key (MEMORY.md changed, or the day)
    made with the same counter; {} for anything else (a cache is no input to trust: a row that
    is not (text, id, whole number) makes the lot ignored)."""
    key = data.get("key") if isinstance(data, dict) else None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(key, list) or key[:1] != [_CACHE_VERSION] or key[-1:] != [counter]:
        return {}
    if not isinstance(items, dict):
        return {}
    counted: dict[str, int] = {}
    for rows in items.values():
        if not isinstance(rows, list):
            return {}
        for row in rows:
            if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)):
                return {}
            if type(row[2]) is not int or row[2] < 1:  # a cost is a count of tokens + 1
                return {}
            counted[row[0]] = row[2]
    return counted


def _cache_key(
    ws, day: dt.date, user, thread, open_tasks: set[str], index: list | None = None
) -> list | None:
    """What the kept lines depend on; MEMORY.md by a digest of its bytes, not its time stamps:
    an edit that keeps the size, the inode and the modification time is still seen; the index's
    model and generation (`slots.state`), whose vectors decide which entries fold."""
    try:
        data = (ws.root / MEMORY).read_bytes()
    except OSError:
        return None
    digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()  # a cache key; sha1 is the fastest here
    return [
        _CACHE_VERSION,
        digest,
        day.isoformat(),
        user,
        thread,
        sorted(open_tasks),
        index,
        tokens.counter(),
    ]


def _parse_memory_items(
    ws, day: dt.date, user, thread, open_tasks: set[str], model: str | None = None
) -> dict[str, list[Item]]:
    """The live entries this reader may see, per layer, best first. Where two or more fill one
    slot (`slots.newest`, with the index's `model`), the newest's line carries the earlier ones
    as history and stands where the best placed of them stood (the first layer in fill order,
    the best score); the earlier ones have no line of their own."""
    mf = ws.memory()
    live = [
        e
        for e in mf.entries()
        if not (e.superseded or e.expired(day) or not policy.visible(e.scope, user, thread, open_tasks))
    ]
    earlier = slots.newest(ws, live, model) if model else {}
    folded = {e.id for group in earlier.values() for e in group}
    lang = templates.language(ws) if earlier else "en"
    pools: dict[str, list] = {layer: [] for layer in LAYERS}
    for e in live:
        if e.id in folded:
            continue
        group = [e, *earlier.get(e.id, [])]
        layer = min((g.layer or "M30" for g in group), key=_ORDER.index)
        score = max(_score(g, day) for g in group)
        line = _entry_line(e) + _history(group[1:], lang)
        pools[layer].append((score, Item(layer, line, e.id)))
    out = {}
    for layer, scored in pools.items():
        scored.sort(key=lambda x: x[0], reverse=True)
        out[layer] = [item for _, item in scored]
    return out


HISTORY = {"en": "earlier", "ko": "이전"}  # the label of an entry's earlier values (slots.newest)
_LABELS = "|".join(HISTORY.values())
_HISTORY_RE = re.compile(rf" \((?:{_LABELS}), \d{{4}}-\d{{2}}-\d{{2}}: .*$", re.M)


def _history(older: list, lang: str) -> str:
    """` (earlier, 2026-01-10: TEXT, m-a1; 2025-11-02: TEXT, m-c3)`: what the slot held before."""
    if not older:
        return ""
    parts = "; ".join(f"{e.date.isoformat()}: {e.text}, {e.id}" for e in older)
    return f" ({HISTORY.get(lang, HISTORY['en'])}, {parts})"


def without_history(text: str) -> str:
    """Boot text without the earlier values folded into a line (`_history`): what it shows as
    current."""
    return _HISTORY_RE.sub("", text)


def _score(entry, day: dt.date) -> float:
    age = (day - entry.date).days if entry.date else 0
    return math.log2(1 + entry.refs) - age / 30


def _entry_line(entry) -> str:
    date = f"[{entry.date.isoformat()}] " if entry.date else ""
    return f"- {date}{entry.text} ({entry.id})"


@functools.lru_cache(maxsize=1 << 16)
def _tokens(counter: str, line: str) -> int:
    """Tokens of one boot line by `counter` (tokens.counter()); kept per process (a server
    boots the same lines again)."""
    return tokens.count(line)


_RESERVE = 80  # the closing "not included" line
_HEADING = 16  # a section heading and the blank lines around it
_ORDER = ("M0", "tasks", "context", "inbox", "diary:today", "diary:yesterday", "M365", "M90", "M30")


def _fill(pools: dict[str, list[Item]], room: int) -> tuple[dict[str, list[Item]], list[dict]]:
    """Greedy fill in priority order; M0 is taken whole. Returns chosen items and left_out."""
    counter = tokens.counter()
    chosen: dict[str, list[Item]] = {}
    left: list[dict] = []
    for name in _ORDER:
        items = pools.get(name, [])
        heading = _HEADING
        taken: list[Item] = []
        dropped: list[Item] = []
        for item in items:
            item.cost = item.cost or _tokens(counter, item.line) + 1
            extra = item.cost + (heading if not taken else 0)
            if name == "M0" or (not dropped and extra <= room):
                taken.append(item)
                room -= extra
            else:
                dropped.append(item)
        chosen[name] = taken
        if dropped:
            left.append(
                {
                    "section": name,
                    "count": len(dropped),
                    "tokens": sum(i.cost for i in dropped),
                    "ids": [i.id for i in dropped if i.id],
                }
            )
    return chosen, left


def _assemble(fixed: list[Section], chosen: dict[str, list[Item]], t: dict, day: dt.date) -> list[Section]:
    out = list(fixed)
    out.append(
        Section(
            "tasks",
            t["tasks"],
            [i.line for i in chosen.get("tasks", [])],
            [i.id for i in chosen.get("tasks", [])],
        )
    )
    out.append(Section("context", t["context"], [i.line for i in chosen.get("context", [])]))
    out.append(Section("inbox", t["inbox"], [i.line for i in chosen.get("inbox", [])]))
    for layer in LAYERS:
        items = chosen.get(layer, [])
        out.append(Section(layer, f"{t['memory']} — {layer}", [i.line for i in items], [i.id for i in items]))
    for name, when in (("yesterday", day - dt.timedelta(days=1)), ("today", day)):
        items = list(reversed(chosen.get(f"diary:{name}", [])))
        out.append(Section(f"diary:{name}", t["diary"].format(day=when.isoformat()), [i.line for i in items]))
    return out


def _warnings(always_tokens: int, used: int, budget: int, ws) -> list[str]:
    out = []
    if always_tokens > ALWAYS_TARGET:
        out.append(
            f"the always-injected tier (TIER 1 + SOUL.md + IDENTITY.md + USER.md) is {always_tokens} tokens, "
            f"over the {ALWAYS_TARGET}-token target: shorten SOUL.md or USER.md"
        )
    rules = tier1_rules(ws.read_text("AGENTS.md"))
    if len(rules) > 7:
        out.append(f"TIER 1 has {len(rules)} rules; keep it to 7 or fewer")
    if used > budget:
        out.append(f"the parts always included take {used} tokens, over the budget of {budget}")
    return out


def _render(head: str, sections: list[Section], left: list[dict], t: dict, budget: int) -> str:
    parts = [head] + [s.render() for s in sections if s.lines]
    if left:
        ko = t is TITLES["ko"]
        what = ", ".join(_left_label(d, ko) for d in left)
        parts.append(
            f"_{t['left']} (예산 {budget} 토큰): {what}. `giok search`로 찾을 수 있다._"
            if ko
            else f"_{t['left']} ({budget} tokens): {what}. `giok search` reaches them._"
        )
    return "\n\n".join(parts) + "\n"


_LEFT_KO = {
    "tasks": "태스크",
    "context": "세션 맥락 줄",
    "inbox": "읽지 않은 메시지",
    "diary:today": "오늘 일기 줄",
    "diary:yesterday": "어제 일기 줄",
}


def _left_label(d: dict, ko: bool) -> str:
    """One part of the "not included" line: `3 M30 entries (~120 tokens)`, `M30 항목 3개 (~120 토큰)`."""
    if ko:
        what = f"{d['section']} 항목" if d["section"] in LAYERS else _LEFT_KO.get(d["section"], d["section"])
        return f"{what} {d['count']}개 (~{d['tokens']} 토큰)"
    return f"{d['count']} {_label(d['section'])} (~{d['tokens']} tokens)"


def _label(section: str) -> str:
    if section in LAYERS:
        return f"{section} entries"
    return {
        "tasks": "tasks",
        "context": "lines of the session context",
        "inbox": "unread messages",
        "diary:today": "lines of today's diary",
        "diary:yesterday": "lines of yesterday's diary",
    }.get(section, section)
