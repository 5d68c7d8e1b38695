"""The context watchdog: given the tokens used and the window, say ok, soft (≥ 70 %, the seed's
105,000 of 150,000: flush a summary, then start a fresh session) or hard (≥ 86.5 %: flush now,
whatever you are doing). `flush` writes the conversation's gist — decisions, discoveries,
pending work, failures — append-only to today's diary and the state memo.

One flush per crossing: state per session lives in .giok/watchdog.json (derived, local). A
session that already flushed at a level does nothing when asked again at that level; a higher
level, or a new session, flushes again.

Thresholds: home config (or the workspace's own entry) `"watchdog": {"soft": 0.7, "hard": 0.865}`.
Summary: an LLM when `"summarizer": {provider, model, ...}` is configured, else extractive."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from . import llm, policy, templates
from .chunks import OWN_MARK
from .clock import now
from .errors import GiokError, InvalidInput
from .fsutil import atomic_write, check_binary, file_lock, read_bytes
from .sections import Doc, append_item
from .workspace import MEMO

LEVELS = ("ok", "soft", "hard")
CATEGORIES = ("decisions", "discoveries", "pending", "failures")
MAX_CONVERSATION = 50 * 1024 * 1024
_CUES = {
    "decisions": r"\b(decided|decide to|decision|we('ll| will) (go with|use)|let's (go with|use)|chose|agreed|settled on|going with)\b|결정|하기로|정했",
    "failures": r"\b(failed|fails|failing|error|exception|broke|broken|doesn't work|didn't work|crash(ed|es)?|bug|timed? out)\b|실패|에러|오류|안 ?됨|버그|깨졌|깨짐",
    "discoveries": r"\b(found|turns out|discovered|realized|realised|learned|noticed|the cause|root cause)\b|발견|알고 보니|알게|원인",
    "pending": r"\b(todo|to do|next step|pending|still need|need to|needs to|remaining|left to|follow up|tomorrow)\b|다음에|해야|남은|나중에|할 일|내일",
}
_CUE_RE = {k: re.compile(v, re.I) for k, v in _CUES.items()}
_LABEL = {"decisions": "decision", "discoveries": "found", "pending": "pending", "failures": "failure"}
_MEMO_KEY = {"decisions": "last-done", "discoveries": "last-done", "pending": "next-step", "failures": "failure-modes"}


@dataclass(frozen=True)
class Thresholds:
    soft: float = 0.70
    hard: float = 0.865

    def __post_init__(self):
        if not (0 < self.soft < self.hard <= 1):
            raise InvalidInput(f"watchdog thresholds must satisfy 0 < soft < hard <= 1 (got soft {self.soft}, hard {self.hard})")

    def tokens(self, window: int) -> tuple[int, int]:
        """The first token counts at soft and hard, exactly (no float rounding)."""
        def at(fraction: float) -> int:
            return int((Decimal(repr(fraction)) * window).to_integral_value(ROUND_CEILING))
        return at(self.soft), at(self.hard)

    @classmethod
    def configured(cls, ws) -> "Thresholds":
        spec = llm.configured(ws, "watchdog") or {}
        try:
            return cls(float(spec.get("soft", cls.soft)), float(spec.get("hard", cls.hard)))
        except (TypeError, ValueError, AttributeError):
            raise InvalidInput("home config `watchdog` must be {\"soft\": 0.7, \"hard\": 0.865}") from None


def level(used: int, window: int, thresholds: Thresholds = Thresholds()) -> str:
    soft, hard = thresholds.tokens(window)
    return "hard" if used >= hard else "soft" if used >= soft else "ok"


@dataclass
class Status:
    level: str
    used: int
    window: int
    session: str
    soft_tokens: int
    hard_tokens: int
    flushed: str = "ok"
    flush: "FlushResult | None" = None

    @property
    def flush_due(self) -> bool:
        return LEVELS.index(self.level) > LEVELS.index(self.flushed)

    @property
    def action(self) -> str:
        if self.level == "ok":
            return "none: carry on"
        if not self.flush_due:
            return f"none: this session already flushed at {self.flushed}; start a fresh session"
        if self.level == "soft":
            return (f"soft: summarise now — pipe the conversation to `giok flush --session {self.session}` — "
                    "then start a fresh session")
        return (f"hard: stop and flush now — pipe the conversation to `giok flush --session {self.session}` — "
                "then start a fresh session before anything else")

    def to_dict(self) -> dict:
        return {"level": self.level, "used": self.used, "window": self.window, "session": self.session,
                "percent": round(100 * self.used / self.window, 2), "soft_tokens": self.soft_tokens,
                "hard_tokens": self.hard_tokens, "flushed": self.flushed, "flush_due": self.flush_due,
                "action": self.action, "flush": self.flush.to_dict() if self.flush else None}


@dataclass
class FlushResult:
    action: str                 # flushed | skipped
    level: str
    session: str
    gist: dict = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    summary_by: str = "extractive"
    commit: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


# -- state -------------------------------------------------------------------------------------
def session_id(session: str | None) -> str:
    value = (session or os.environ.get("GIOK_SESSION") or "default").strip()
    if not re.match(r"^[\w.:@-]{1,128}$", value):
        raise InvalidInput(f"invalid session id {value!r}: letters, digits and . _ : @ - only")
    return value


def _state_path(ws):
    return ws.data_dir / "watchdog.json"


def _load(ws) -> dict:
    try:
        data = json.loads(read_bytes(_state_path(ws)) or b"{}")
    except ValueError:
        data = {}  # derived state: a torn file only forgets which crossings were flushed
    return data if isinstance(data, dict) else {}


def _save(ws, data: dict) -> None:
    atomic_write(_state_path(ws), json.dumps(data, indent=1, sort_keys=True).encode())


def _lock(ws):
    return file_lock(ws.data_dir / "watchdog.lock")


# -- watch and flush ---------------------------------------------------------------------------
def watch(ws, used: int, window: int, session: str | None = None, thresholds: Thresholds | None = None) -> Status:
    """Where the session stands, and whether a flush is due. Records the highest level seen."""
    if isinstance(used, bool) or not isinstance(used, int) or used < 0:
        raise InvalidInput(f"used tokens must be a whole number >= 0 (got {used!r})")
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise InvalidInput(f"window must be a whole number of tokens > 0 (got {window!r})")
    thresholds = thresholds or Thresholds.configured(ws)
    session = session_id(session)
    soft, hard = thresholds.tokens(window)
    current = level(used, window, thresholds)
    with _lock(ws):
        data = _load(ws)
        state = data.setdefault("sessions", {}).setdefault(session, {"seen": "ok", "flushed": "ok"})
        if LEVELS.index(current) > LEVELS.index(state.get("seen", "ok")):
            state["seen"] = current
        state.update({"used": used, "window": window, "at": now().isoformat(timespec="seconds")})
        _save(ws, data)
    return Status(current, used, window, session, soft, hard, flushed=state.get("flushed", "ok"))


def flush(ws, conversation: str, session: str | None = None, level: str | None = None) -> FlushResult:
    """Write the conversation's gist to the diary and the state memo, once per crossing."""
    if level is not None and level not in ("soft", "hard"):
        raise InvalidInput(f"invalid flush level {level!r}: soft or hard")
    if conversation is None or not conversation.strip():
        raise InvalidInput("the conversation to flush is empty (pipe it on stdin)")
    check_binary(conversation, "the conversation")
    if len(conversation.encode("utf-8", "surrogatepass")) > MAX_CONVERSATION:
        raise InvalidInput(f"the conversation is over {MAX_CONVERSATION // (1024 * 1024)} MB; pass its recent part")
    session = session_id(session)
    with _lock(ws):
        data = _load(ws)
        state = data.setdefault("sessions", {}).setdefault(session, {"seen": "ok", "flushed": "ok"})
        level = level or (state.get("seen") if state.get("seen") in ("soft", "hard") else "soft")
        done = state.get("flushed", "ok")
        if LEVELS.index(done) >= LEVELS.index(level):
            return FlushResult("skipped", level, session, notes=[f"already flushed at {done} in session {session}"])
        result = _write_flush(ws, conversation, session, level)
        state.update({"flushed": level, "seen": max(level, state.get("seen", "ok"), key=LEVELS.index),
                      "flushed_at": now().isoformat(timespec="seconds")})
        _save(ws, data)
    return result


def _write_flush(ws, conversation: str, session: str, level: str) -> FlushResult:
    gist, by, notes = summarize(ws, conversation)
    stamp = now()
    diary_rel = ws.diary_path(stamp.date())
    planned: dict = {}

    def plan(read) -> dict[str, bytes]:
        """Called under the workspace lock, on the bytes as they are now: a writer that got
        the lock first is neither lost nor a conflict."""
        diary, memo = (read(rel).decode("utf-8", "surrogateescape") for rel in (diary_rel, MEMO))
        points = [(c, text) for c in CATEGORIES for text in gist[c] if f"{_LABEL[c]}: {text}\n" not in diary + memo]
        head = f"- {stamp:%H:%M} {OWN_MARK} context-flush: {level}, session {session} — " + \
            (", ".join(f"{sum(1 for k, _ in points if k == c)} {c}" for c in CATEGORIES) if points else "nothing new to keep")
        planned["head"], planned["lines"] = head, [head] + [f"- {stamp:%H:%M} {_LABEL[c]}: {text}" for c, text in points]
        old = diary or f"# {stamp.date().isoformat()}\n\n"
        old = old if old.endswith("\n") else old + "\n"
        writes = {diary_rel: (old + "\n".join(planned["lines"]) + "\n").encode("utf-8", "surrogateescape")}
        if points:
            writes[MEMO] = _memo_with(memo, points, stamp).encode("utf-8", "surrogateescape")
        return writes

    commit = ws.write_files(plan, lambda: f"watchdog: {level} flush, session {session}\n\n{planned['head'][2:]}")
    return FlushResult("flushed", level, session, gist, planned["lines"], by, commit, notes)


def _memo_with(old: str, points, stamp) -> str:
    doc = Doc.parse(old or "# State memo\n")
    lang = "ko" if re.search(r"[가-힣]", old) else "en"
    for category, text in points:
        key = _MEMO_KEY[category]
        titles = [templates.STATE_TITLES[l][key] for l in ("en", "ko")]
        section = doc.find(*titles, key) or doc.ensure(templates.STATE_TITLES[lang][key])
        append_item(section, f"- [{stamp:%Y-%m-%d %H:%M}] {_LABEL[category]}: {text}")
    return doc.render()


# -- the gist ----------------------------------------------------------------------------------
def messages(conversation: str) -> list[tuple[str, str]]:
    """(role, text) pairs from JSONL messages (OpenAI/Anthropic/Claude Code shapes), a JSON
    array of messages, or plain text (each line a message)."""
    stripped = conversation.strip()
    rows = None
    if stripped.startswith("["):
        try:
            rows = json.loads(stripped)
        except ValueError:
            rows = None
    if rows is None and stripped.startswith("{"):
        rows = []
        for line in stripped.splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    if isinstance(rows, list) and rows:
        parsed = [m for m in (_message(r) for r in rows) if m]
        if parsed:
            return parsed
    return [("text", line.strip()) for line in conversation.splitlines() if line.strip()]


def _message(row) -> tuple[str, str] | None:
    if not isinstance(row, dict):
        return None
    inner = row.get("message") if isinstance(row.get("message"), dict) else row
    role = str(inner.get("role") or row.get("type") or "text")
    content = inner.get("content")
    if isinstance(content, list):
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text")
    if not isinstance(content, str) or not content.strip() or role in ("system", "tool"):
        return None
    return role, content


def extract(conversation: str, per_category: int = 5) -> dict[str, list[str]]:
    """The extractive gist: sentences with decision / discovery / pending / failure cues, the
    latest ones first kept, secrets redacted."""
    gist: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    seen = set()
    for _, text in reversed(messages(conversation)):
        for sentence in reversed(re.split(r"(?<=[.!?。])\s+|\n+", text)):
            sentence = " ".join(sentence.split()).lstrip("-*• ").strip()
            if len(sentence) < 8 or sentence.lower() in seen:
                continue
            for category in ("decisions", "failures", "discoveries", "pending"):
                if _CUE_RE[category].search(sentence) and len(gist[category]) < per_category:
                    gist[category].insert(0, _clip(policy.redact(sentence)[0]))
                    seen.add(sentence.lower())
                    break
    return gist


def _clip(text: str, width: int = 240) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


SUMMARY_SYSTEM = """Summarise this agent conversation for its long-term memory. Keep only what a
future session needs: decisions (and why), discoveries, pending work, failures (and dead ends).
Short sentences, at most 5 per list, no secrets. Answer with JSON only:
{"decisions": [], "discoveries": [], "pending": [], "failures": []}"""


def summarize(ws, conversation: str) -> tuple[dict[str, list[str]], str, list[str]]:
    """(gist, who summarised, notes): the configured LLM, or the extractive summary."""
    spec = llm.configured(ws, "summarizer")
    if not spec:
        return extract(conversation), "extractive", []
    try:
        chat = llm.client(spec, "summarizer")
        answer = chat.complete(SUMMARY_SYSTEM, conversation[-60000:])
        return _parse_gist(answer, chat.name), chat.name, []
    except GiokError as exc:
        return extract(conversation), "extractive", [f"LLM summary failed, used the extractive one: {exc}"]


def _parse_gist(answer: str, name: str) -> dict[str, list[str]]:
    from .errors import ProviderError
    from .judges import _json_in
    data = _json_in(answer)
    if not isinstance(data, dict) or not any(isinstance(data.get(c), list) for c in CATEGORIES):
        raise ProviderError(f"{name}: the summary is not the JSON asked for")
    return {c: [_clip(policy.redact(" ".join(str(x).split()))[0]) for x in (data.get(c) or []) if str(x).strip()][:5]
            for c in CATEGORIES}


class Watchdog:
    """For agent loops that count tokens themselves:

        dog = Watchdog(ws, window=150_000, session="run-42")
        status = dog.update(used, conversation=lambda: transcript_text)
        if status.level != "ok": start_a_fresh_session()

    `update` flushes (once per crossing) when a flush is due and a conversation is given."""

    def __init__(self, ws, window: int, session: str | None = None, thresholds: Thresholds | None = None):
        self.ws, self.window, self.session = ws, window, session_id(session)
        self.thresholds = thresholds or Thresholds.configured(ws)

    def update(self, used: int, conversation=None) -> Status:
        status = watch(self.ws, used, self.window, self.session, self.thresholds)
        if status.flush_due and conversation is not None:
            text = conversation() if callable(conversation) else conversation
            status.flush = flush(self.ws, text, self.session, status.level)
            status.flushed = status.level if status.flush.action == "flushed" else status.flushed
        return status
