"""The context watchdog: given the tokens used and the window, say ok, soft (≥ 70 %, the seed's
105,000 of 150,000: flush a summary, then start a fresh session) or hard (≥ 86.5 %: flush now,
whatever you are doing).

`flush` keeps what a person would keep from the conversation, each item in one place, so the
next boot injects it once: constraints, preferences (style instructions too), decisions and
facts (dated ones with their days resolved to ISO dates) go into MEMORY.md through the write
policy (`Workspace.remember`; a duplicate is not written again); pending work, discoveries and
failures into the state memo. Today's diary and compound/context.md get a line saying where
they went. Which sentences count is judgement's answer (`giok.write.judgement.judge`: no
greeting, question, guess or trivia), sorted by the flush's cue set (`_CUES`, `_CONSTRAINT_RE`,
`_PREFERENCE_RE`, documented in docs/routines.md).

One flush per crossing: state per session lives in .giok/watchdog.json (derived, local). A
session that already flushed at a level does nothing when asked again at that level; a higher
level, or a new session, flushes again.

Thresholds: home config (or the workspace's own entry) `"watchdog": {"soft": 0.7, "hard": 0.865}`.
Summary: an LLM when `"summarizer": {provider, model, ...}` is configured, else extractive."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from giok.errors import GiokError, InvalidInput
from giok.providers import llm
from giok.retrieval.chunks import OWN_MARK
from giok.retrieval.questions import asks_for
from giok.store import templates
from giok.store.clock import now, today
from giok.store.fsutil import atomic_write, check_binary, file_lock, read_bytes
from giok.store.sections import Doc, append_item
from giok.store.workspace import MEMO
from giok.text import analysis, dates
from giok.text.analysis import has_hangul
from giok.text.lazy import lazy
from giok.write import judgement, policy

LEVELS = ("ok", "soft", "hard")
CATEGORIES = ("constraints", "preferences", "decisions", "facts", "discoveries", "pending", "failures")
# The one home of each kind: rules, likings (style), decisions and facts are memory entries
# (MEMORY.md, written through the write policy); the rest is working state in the state memo.
KEPT = {"constraints": "preference", "preferences": "preference", "decisions": "decision", "facts": "fact"}
# What the flush reads is talk, so judgement reads it in its chat voice: an aside ("it's freezing
# today, my hands are numb lol") is no memory there, though the same words in a diary may be one.
VOICE = "chat"
KEPT_LAYER = "M90"  # constraints, preferences, decisions; a fact goes to the layer judgement gives it
MAX_KEPT = 50  # per kept category and flush: a guard, not a summary
CLIP = 240  # characters of one kept item
CONTEXT = "compound/context.md"
MAX_CONVERSATION = 50 * 1024 * 1024
# The flush's cue set: which of its categories a sentence that judgement keeps belongs to.
_CUES = {
    "decisions": r"\b(decided|decide to|decision|we('ll| will) (go with|use)"
    r"|let's (go with|use|keep|stick with)|chose|agreed|settled on|going with"
    r"|we're (dropping|switching|moving|going)|we are (dropping|switching))\b"
    r"|결정|하기로|기로 ?(했|하자|합의|정했)|정했|확정",
    "failures": r"\b(failed|fails|failing|error|exception|broke|broken|doesn't work|didn't work"
    r"|crash(ed|es)?|bug|timed? out)\b"
    r"|실패|에러|오류|안 ?됨|버그|깨졌|깨짐",
    "discoveries": r"\b(found|turns out|discovered|realized|realised|learned|noticed|the cause|root cause)\b"
    r"|발견|알고 보니|알게|원인",
    "pending": r"\b(todo|to do|next step|pending|still need|need to|needs to|have to|has to|remaining|left to"
    r"|follow up|remind me|tomorrow)\b"
    r"|다음에|해야|야 ?(해|돼|한다|된다|합니다|해요)(?=$|[\s.!,~])|남은|나중에|(^|\s)할 일|내일|아직 못",
    # a fact the user asks to be kept; what a person can't or won't eat; contact details
    "facts": r"\b(remember|don't forget|allerg\w*|address|phone number|birthday"
    r"|(can'?t|cannot|doesn'?t|does not|won'?t) (have|eat|drink|do))\b"
    r"|기억해|잊지 ?마|알레르기|응급실|못 먹|안 먹|주소|전화번호|생일|생신",
}
_CUE_RE = {k: lazy(v, re.I) for k, v in _CUES.items()}
_LABEL = {
    "constraints": "constraint",
    "preferences": "preference",
    "decisions": "decision",
    "facts": "fact",
    "discoveries": "found",
    "pending": "pending",
    "failures": "failure",
}
_MEMO_KEY = {
    "discoveries": "last-done",
    "pending": "next-step",
    "failures": "failure-modes",
}


@dataclass(frozen=True)
class Thresholds:
    soft: float = 0.70
    hard: float = 0.865

    def __post_init__(self):
        if not (0 < self.soft < self.hard <= 1):
            raise InvalidInput(
                f"watchdog thresholds must satisfy 0 < soft < hard <= 1 (got soft {self.soft}, hard "
                f"{self.hard})"
            )

    def tokens(self, window: int) -> tuple[int, int]:
        """The first token counts at soft and hard, exactly (no float rounding)."""

        def at(fraction: float) -> int:
            return int((Decimal(repr(fraction)) * window).to_integral_value(ROUND_CEILING))

        return at(self.soft), at(self.hard)

    @classmethod
    def configured(cls, ws) -> Thresholds:
        """The thresholds of the workspace's `watchdog` setting; InvalidInput when out of range."""
        spec = llm.configured(ws, "watchdog") or {}
        try:
            return cls(float(spec.get("soft", cls.soft)), float(spec.get("hard", cls.hard)))
        except (TypeError, ValueError, AttributeError):
            raise InvalidInput('home config `watchdog` must be {"soft": 0.7, "hard": 0.865}') from None


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
    flush: FlushResult | None = None

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
            return (
                f"soft: summarise now — pipe the conversation to `giok flush --session {self.session}` — "
                "then start a fresh session"
            )
        return (
            f"hard: stop and flush now — pipe the conversation to `giok flush --session {self.session}` — "
            "then start a fresh session before anything else"
        )

    def to_dict(self) -> dict:
        return {
            "level": self.level,
            "used": self.used,
            "window": self.window,
            "session": self.session,
            "percent": round(100 * self.used / self.window, 2),
            "soft_tokens": self.soft_tokens,
            "hard_tokens": self.hard_tokens,
            "flushed": None if self.flushed == "ok" else self.flushed,  # the highest level flushed, if any
            "flush_due": self.flush_due,
            "action": self.action,
            "flush": self.flush.to_dict() if self.flush else None,
        }


@dataclass
class FlushResult:
    action: str  # flushed | skipped
    level: str
    session: str
    gist: dict = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    summary_by: str = "extractive"
    commit: str | None = None
    notes: list[str] = field(default_factory=list)
    memories: list[dict] = field(default_factory=list)  # what the write policy did per kept item

    def to_dict(self) -> dict:
        return dict(self.__dict__)


# -- state -------------------------------------------------------------------------------------
def session_id(session: str | None, default: str | None = None) -> str:
    """The session given, else `default` (giok.settings: $GIOK_SESSION), else "default"."""
    value = (session or default or "default").strip()
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
def watch(
    ws, used: int, window: int, session: str | None = None, thresholds: Thresholds | None = None
) -> Status:
    """Where the session stands, and whether a flush is due. Records the highest level seen."""
    if isinstance(used, bool) or not isinstance(used, int) or used < 0:
        raise InvalidInput(f"used tokens must be a whole number >= 0 (got {used!r})")
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise InvalidInput(f"window must be a whole number of tokens > 0 (got {window!r})")
    thresholds = thresholds or Thresholds.configured(ws)
    session = session_id(session, ws.settings.session)
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


def flush(
    ws,
    conversation: str | None,
    session: str | None = None,
    level: str | None = None,
    gist: dict | None = None,
) -> FlushResult:
    """Write the conversation's gist to the diary and the state memo, once per crossing.
    `gist`: the gist as the agent wrote it (`GIST_INSTRUCTIONS`' JSON: the host agent as the
    summariser); the extractive one of `conversation`, when given, completes it."""
    if level is not None and level not in ("soft", "hard"):
        raise InvalidInput(f"invalid flush level {level!r}: soft or hard")
    if gist is not None:
        _checked(gist)  # a malformed gist is refused before anything is written or marked flushed
    conversation = conversation or ""
    if not conversation.strip() and gist is None:
        raise InvalidInput("the conversation to flush is empty (pipe it on stdin, or give the gist)")
    check_binary(conversation, "the conversation")
    if len(conversation.encode("utf-8", "surrogatepass")) > MAX_CONVERSATION:
        raise InvalidInput(
            f"the conversation is over {MAX_CONVERSATION // (1024 * 1024)} MB; pass its recent part"
        )
    session = session_id(session, ws.settings.session)
    with _lock(ws):
        data = _load(ws)
        state = data.setdefault("sessions", {}).setdefault(session, {"seen": "ok", "flushed": "ok"})
        level = level or (state.get("seen") if state.get("seen") in ("soft", "hard") else "soft")
        done = state.get("flushed", "ok")
        if LEVELS.index(done) >= LEVELS.index(level):
            return FlushResult(
                "skipped", level, session, notes=[f"already flushed at {done} in session {session}"]
            )
        result = _write_flush(ws, conversation, session, level, gist)
        state.update(
            {
                "flushed": level,
                "seen": max(level, state.get("seen", "ok"), key=LEVELS.index),
                "flushed_at": now().isoformat(timespec="seconds"),
            }
        )
        _save(ws, data)
    return result


def _write_flush(ws, conversation: str, session: str, level: str, given: dict | None) -> FlushResult:
    stamp = now()
    gist, by, notes = summarize(ws, conversation, stamp.date(), given)
    diary_rel = ws.diary_path(stamp.date())
    planned: dict = {}
    memories = keep(ws, gist, session)

    def plan(read) -> dict[str, bytes]:
        """Called under the workspace lock, on the bytes as they are now: a writer that got
        the lock first is neither lost nor a conflict."""
        diary, memo = (read(rel).decode("utf-8", "surrogateescape") for rel in (diary_rel, MEMO))
        memo_points = [
            (c, text) for c in _MEMO_KEY for text in gist.get(c, []) if f"{_LABEL[c]}: {text}\n" not in memo
        ]
        where = _where(memories, memo_points)
        head = f"- {stamp:%H:%M} {OWN_MARK} context-flush: {level}, session {session} — " + (
            "; ".join(where) if where else "nothing new to keep"
        )
        planned["head"], planned["lines"] = head, [head]
        old = diary or f"# {stamp.date().isoformat()}\n\n"
        old = old if old.endswith("\n") else old + "\n"
        writes = {diary_rel: (old + head + "\n").encode("utf-8", "surrogateescape")}
        if memo_points:
            writes[MEMO] = _memo_with(memo, memo_points, stamp).encode("utf-8", "surrogateescape")
        if any(gist.values()):
            writes[CONTEXT] = _context(
                read(CONTEXT).decode("utf-8", "surrogateescape"), where, session, level, stamp
            ).encode("utf-8")
        return writes

    commit = ws.write_files(
        plan, lambda: f"watchdog: {level} flush, session {session}\n\n{planned['head'][2:]}"
    )
    return FlushResult("flushed", level, session, gist, planned["lines"], by, commit, notes, memories)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _where(memories: list[dict], memo_points: list[tuple[str, str]]) -> list[str]:
    """Where the flush put what it kept, without the text: each item lives in one file only,
    and boot injects that file (the diary and the session context only point to it)."""
    written = [m for m in memories if m["action"] not in ("duplicate", "refuse")]
    out = []
    if written:
        kinds = [
            _count(sum(1 for m in written if m["kind"] == k), k)
            for k in dict.fromkeys(m["kind"] for m in written)
        ]
        out.append(f"{', '.join(kinds)} in MEMORY.md ({', '.join(m['id'] for m in written if m['id'])})")
    if memo_points:
        kinds = [
            _count(sum(1 for c, _ in memo_points if c == k), _LABEL[k])
            for k in dict.fromkeys(c for c, _ in memo_points)
        ]
        out.append(f"{', '.join(kinds)} in the state memo")
    return out


def keep(ws, gist: dict[str, list[str]], session: str) -> list[dict]:
    """Each constraint, preference, decision and fact of the gist into MEMORY.md through the
    write policy: asked first (policy.decide), so a duplicate or a refusal writes nothing, not
    even a trace; the rest is `Workspace.remember`ed with the flush as its source — rules,
    likings and decisions in M90, a fact in the layer judgement gives it (M30 a fact of the
    day, M365 a life event, M0 a lasting truth). The text says its kind (`constraint: …`), so
    the agent sees at boot that it is a rule; a fact is the sentence as said, its dates resolved.
    No point replaces another this flush kept: all were said in one talk (a correction is written
    into its point, `_corrects`; in the tuning sets' flushes every such replacement was wrong: a
    friend's wedding replaced by the toast's deadline, a dog's diabetes by a work trip)."""
    out = []
    written: list[str] = []  # this flush's own points: all said in one talk, none replaces another
    for category, kind in KEPT.items():
        for said in gist.get(category, []):
            text = said if category == "facts" else f"{_LABEL[category]}: {said}"
            layer = _fact_layer(said) if category == "facts" else KEPT_LAYER
            memory = ws.memory()
            decision = policy.decide(memory, text, kind, "workspace", today=today(), voice=VOICE)
            if decision.action in ("duplicate", "refuse"):
                target = decision.target.id if decision.target else None
                out.append(_kept(category, text, decision.action, target, decision.reason, layer))
                continue
            grown = _grown_from(memory, text, session)
            result = ws.remember(
                text,
                layer=layer,
                type=kind,
                source=f"flush:{session}",
                via="watchdog",
                supersedes=grown,
                voice=VOICE,
                apart=written,
            )
            entry = result.entry.id if result.entry else None
            if entry:
                written.append(entry)
            out.append(_kept(category, text, result.action, entry, result.reason, layer))
    return out


def _grown_from(memory, text: str, session: str) -> str | None:
    """The id of the live entry an earlier flush of this session kept that `text` completes: the
    same point with an answer or a correction said since written after it ("…on Saturday" →
    "…on Saturday. (What's her name? Pickle.)"), so the next boot shows it once."""
    for entry in reversed(memory.entries()):
        said = entry.text
        if entry.superseded or entry.fields.get("source") != f"flush:{session}" or len(said) >= len(text):
            continue
        if text.startswith(said.rstrip(".")) and text[len(said.rstrip(".")) :].lstrip(".").startswith(" ("):
            return entry.id
    return None


def _kept(category: str, text: str, action: str, id: str | None, reason: str, layer: str) -> dict:
    return {
        "kind": _LABEL[category],
        "text": text,
        "action": action,
        "id": id,
        "reason": reason,
        "layer": layer,
    }


def _fact_layer(text: str) -> str:
    verdict = judgement.judge(text, type="fact", voice=VOICE)
    return verdict.layer if verdict.keep and verdict.layer != "drop" else "M30"


def _context(old: str, where: list[str], session: str, level: str, stamp) -> str:
    """compound/context.md: where the last flushed session's gist went (the previous one stays
    in git history). It names the files, never repeats their text: boot injects those files,
    so each kept item reaches the next session once. The file's title line is kept."""
    title = next(
        (line for line in old.splitlines() if line.startswith("# ")), "# context.md : session context"
    )
    lang = "ko" if has_hangul(title) else "en"  # the workspace's language, from its template
    intro = (
        f"{session} 세션의 {level} 플러시 ({stamp:%Y-%m-%d %H:%M}): 이어받을 내용은 아래 파일에 한 번씩 있다."
        if lang == "ko"
        else f"Carried from session {session}, {level} flush at {stamp:%Y-%m-%d %H:%M}: "
        "what the next session picks up is in these files, once each."
    )
    lines = [f"- {line}" for line in where] or ["- nothing new to keep"]
    return f"{title}\n\n{intro}\n\n" + "\n".join(lines) + "\n"


def _memo_with(old: str, points, stamp) -> str:
    doc = Doc.parse(old or "# State memo\n")
    lang = "ko" if has_hangul(old) else "en"
    for category, text in points:
        key = _MEMO_KEY[category]
        titles = [templates.STATE_TITLES[lang][key] for lang in ("en", "ko")]
        section = doc.find(*titles, key) or doc.ensure(templates.STATE_TITLES[lang][key])
        append_item(section, f"- [{stamp:%Y-%m-%d %H:%M}] {_LABEL[category]}: {text}")
    if doc.preamble and doc.preamble[0].startswith("# "):
        doc.preamble[0] = templates.memo_stamped(doc.preamble[0], f"{stamp:%Y-%m-%d %H:%M}", lang)
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


def _message(row: object) -> tuple[str, str] | None:
    if not isinstance(row, dict):
        return None
    message = row.get("message")
    inner: dict[str, Any] = message if isinstance(message, dict) else row
    role = str(inner.get("role") or row.get("type") or "text")
    content = inner.get("content")
    if isinstance(content, list):
        content = "\n".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text"
        )
    if not isinstance(content, str) or not content.strip() or role in ("system", "tool"):
        return None
    return role, content


_SPEAKER_RE = lazy(
    r"^(user|human|me|assistant|agent|ai|bot|claude|사용자|나|에이전트|어시스턴트|비서)\s*:\s*", re.I
)
_AGENT_ROLES = ("assistant", "agent", "ai", "bot", "claude", "model", "에이전트", "어시스턴트", "비서")
# What the user states as a rule for the work (constraint) or as a liking (preference).
_LEAD = r"^((please|and|also|so|oh|ok|okay|btw|but|then|yes|wait)[,.]?\s+)*"
_CONSTRAINT_RE = lazy(
    _LEAD + r"(never|don'?t|do not|always|only|make sure|ensure|avoid|stop)\b"
    r"|^(from now on|going forward|in future|in the future),?\s+(?!(i|we|it|that|this|they|he|she)\b)\w"
    r"|\b(you|we)\s+(must|mustn'?t|must not|should never|should always|shouldn'?t|are not allowed to|may not|"
    r"have to always|always have to)\b"
    r"|\b(must|mustn'?t)\b|\b(general|new|house|hard) (rule|cap|limit)\b|\brule:"
    r"|\bnever\b(?!\s+(\w+ed|been|had|was|were|did|knew|saw|got|thought|heard)\b)"
    r"|" + _LEAD + r"no\s+(?!(one|idea|problem|worries|way|thanks|rush)\b)"
    r"(?!(that|thats|that's|this|it|its|it's|i|im|i'm|we|we're|you|he|she|they)\b)[a-z]\w+"
    r"|\b(not allowed|forbidden|under no circumstances|without (my|our) (review|approval|ok|sign-off))\b"
    r"|절대|반드시|무조건|금지|(^|\s)꼭\s|항상"
    r"|(?<!걱정하)(?<!신경 쓰)(?<!신경쓰)지 ?마(라|세요|요|십시오)?(?=$|[\s.!,~ㅋ])|지 말(자|고|것|아)"
    r"|(면|으면) 안 ?(돼|된다|됩니다|되요|돼요)",
    re.I,
)
# A standing request ("앞으로 커밋 메시지는 한국어로 써줘"): a rule, unless it is a liking.
_STANDING_KO = lazy(
    r"(^|\s)(앞으로는?|이제부터|다음부터는?)\s.*(줘|주세요|해요?|하세요|하자|할 것|써|마)[.!~]*$"
)
# "…해야 해" is a rule unless it is today's to-do ("내일 테스트를 더 해야 한다": pending).
_MUST_KO = lazy(r"야 ?(해|한다|합니다|돼|된다|해요)(?=$|[\s.!,~])")
_WHEN = lazy(
    r"내일|오늘|이따|나중에|다음 ?(주|달)|이번 ?(주|달)|모레|까지|월말|주말"
    r"|\b(today|tomorrow|later|tonight|by|before|until)\b",
    re.I,
)
_PREFERENCE_RE = lazy(
    r"\b(i|we)\s+(really\s+|much\s+)?(prefer|like|love|want|hate|dislike|enjoy)\b"
    r"|\bi'?d\s+(prefer|rather|like)\b|\bi would (prefer|rather|like)\b|\bmy (favou?rite|preferred)\b"
    r"|\b(call|address) me\b|\bcan'?t stand\b"
    r"|^(please\s+)?(reply|answer|respond|talk|speak|write to me)\b.*\bin (korean|english|\w+ish)\b"
    r"|선호|(?<!^)좋아(해|한다|요|합니다)?(?=$|[\s.!,~])|더 좋|싫어|편해|편하다|편합니다|좋겠"
    r"|불러 ?(줘|주세요|줘요)"
    r"|(으로|로) (답해|대답해|말해|얘기해)",
    re.I,
)
# A request to the agent about how to work ("숫자 비교는 표로 해주고", "링크 같이 줘", "부탁드려요"):
# a liking, when it is no standing rule.
_REQUEST_KO = lazy(r"(줘|주세요|주고|줘요|주실래요|부탁(해|드려|합니다|드립니다)(요)?)[.!~ㅋㅎ\s]*$")
_NOT_A_RULE = lazy(r"^(don'?t|do not) (worry|mind|bother)\b|^i (don'?t|do not) (care|know|mind)\b", re.I)
# An imperative reads as a question to the surface test when it has no full stop ("don't use
# bullet points with me"): it is judged with one.
_IMPERATIVE = lazy(_LEAD + r"(don'?t|do not|never|always|make sure|avoid|stop)\b", re.I)
# What the user asks of the agent is kept even when judgement's model, trained on facts, calls
# it trivia ("앞으로 존댓말 써 주세요"); a decision, failure or finding is kept only when judgement keeps it.
_INSTRUCTIONS = ("constraints", "preferences", "pending", "decisions")
_BY_TYPE = {"decision": "decisions", "preference": "preferences", "workflow": "pending"}
_REFUSED = ("greeting", "question", "speculation", "filler", "secret")


def _speaker(role: str, text: str, agent: str | None = None) -> tuple[str, str]:
    """(user | assistant | text, the text) of a message; a plain-text line's `user:` /
    `assistant:` / `<agent name>:` label says who spoke, and is taken off."""
    role = role.lower()
    if role == "text":
        m = _SPEAKER_RE.match(text) or (
            re.match(rf"^({re.escape(agent)})\s*:\s*", text, re.I) if agent else None
        )
        if m:
            label = m.group(1).lower()
            role = "assistant" if label in _AGENT_ROLES or (agent and label == agent.lower()) else "user"
            text = text[m.end() :]
    return ("assistant" if role in _AGENT_ROLES else "user" if role in ("user", "human") else "text"), text


def _rule_or_liking(sentence: str) -> str | None:
    if _NOT_A_RULE.search(sentence):
        return None
    if _CONSTRAINT_RE.search(sentence) or (_MUST_KO.search(sentence) and not _WHEN.search(sentence)):
        return "constraints"
    if _PREFERENCE_RE.search(sentence):
        return "preferences"
    if _STANDING_KO.search(sentence):
        return "constraints"
    if _REQUEST_KO.search(sentence):
        return "preferences"
    return None


def classify_sentence(
    sentence: str,
    speaker: str = "user",
    verdict: judgement.Judgement | None = None,
    day: dt.date | None = None,
) -> str | None:
    """The flush category of one sentence, or None. Judgement decides first (`judgement.judge`,
    the one every write path asks): a greeting, question, guess, filler or bare secret is never
    kept. Then the flush's cue set sorts what is left: rules and likings count only when the
    user said them (or the speaker is unknown): an agent repeating a rule back is not a new one;
    decisions, failures, discoveries and pending work from anyone. An instruction or a decision
    stands even where judgement calls it trivia (the model, trained on facts, reads "버그는
    재현이가 고치기로 했고" as small talk); a failure or finding does not. A sentence of the user with
    none of these cues is a fact when it names a day ("away next Monday") or asks to be
    remembered; where judgement's model answers, whatever it keeps, sorted by the type it gives
    (a decision, a preference, pending work, else a fact) — never what it calls trivia."""
    verdict = verdict or judgement.judge(_probe(sentence), voice=VOICE)
    if verdict.kind in _REFUSED:
        return None
    user = speaker != "assistant"
    if user and _for_now(sentence, day):
        return None
    category = _rule_or_liking(sentence) if user else None
    for cue in ("decisions", "failures", "discoveries", "pending"):
        if category is None and _CUE_RE[cue].search(sentence):
            category = cue
    if category in _INSTRUCTIONS or (category and verdict.keep):
        return category
    if category or not user:
        return None  # a failure or a finding that judgement calls trivia ("the coffee machine broke")
    if _CUE_RE["facts"].search(sentence):
        return "facts"
    if not verdict.keep:
        return None  # trivia, by judgement
    if dates.dated(sentence, day or today()):
        return "facts"
    if verdict.judge == "model":  # the model's type, where no cue spoke; a fact needs some words
        enough = 2 if has_hangul(sentence) else 3  # a Korean word carries its particle: "센터는 볼더하임이야"
        return _BY_TYPE.get(verdict.type, "facts") if len(analysis.key_words(sentence)) >= enough else None
    return "facts" if verdict.kind in ("life-event", "lasting") else None  # the rules' milestones


# How sure the request head must be that a sentence is a task for now (tools/train_requests.py),
# chosen on the flush's tuning sets (docs/routines.md, "A task for now is no memory").
ONE_OFF_AT = 0.5


def _for_now(sentence: str, day: dt.date | None) -> bool:
    """Whether the user asks for a task the agent does in this talk and that leaves nothing to
    remember ("이 문장 영어로 좀 바꿔주세요: '…'", "fix this sentence for me: '…'", "목차 좀 짜줘"),
    by the request head (`judgement.request`). Never a sentence with a standing cue ("never",
    "앞으로", "you must"), a decision's cue or a day in it: those say themselves that they hold."""
    if _CONSTRAINT_RE.search(sentence) or _PREFERENCE_RE.search(sentence) or _STANDING_KO.search(sentence):
        return False
    if (
        _MUST_KO.search(sentence)
        or _CUE_RE["decisions"].search(sentence)
        or dates.dated(sentence, day or today())
    ):
        return False
    read = judgement.request(_probe(sentence))
    return read is not None and read[0] == "oneoff" and read[1] >= ONE_OFF_AT


def _agent_cue(sentence: str) -> bool:
    """Whether an agent's sentence reports a decision, failure, finding or pending work."""
    return any(_CUE_RE[c].search(sentence) for c in ("decisions", "failures", "discoveries", "pending"))


def _probe(sentence: str) -> str:
    """The text judgement reads: an imperative without its full stop gets one."""
    if _IMPERATIVE.match(sentence) and not sentence.endswith(("?", "？", ".", "!")):
        return sentence + "."
    return sentence


def _turn(text: str) -> list[str]:
    """A turn's sentences, cleaned; a fragment ("plain paragraphs.", "빼줘", "이번 주 안에 해야
    돼", the "말티즈" of "5살. 말티즈") or a reminder that names nothing to be reminded of ("Remind
    me in January.", "1월에 알려줘") is read with the sentence before it in the same turn, unless
    that one is a greeting, a question or a guess, or the fragment is itself a guess ("퇴사하셨나
    봐": the point before it is kept without it). So is a sentence that opens with a Korean
    pronoun ("걔 신장 안 좋아서…" after "있지 고양이 깨순이."), when the one before says something.
    A sentence that asks whether it was told is its statement (`judgement.told`), and one that
    asks the agent to work some way from now on is that instruction (`judgement.standing_request`)."""
    out: list[str] = []
    for part in judgement.sentences(text):
        part = " ".join(part.split()).lstrip("-*• ").strip()
        if not part:
            continue
        # "did I tell you I'm allergic to sesame?": the statement; "could you … from now on?": the rule
        part = judgement.told(part) or judgement.standing_request(part) or part
        before = judgement.substance(out[-1])[1] if out else "none"
        leans = ((_fragment(part) or _BARE_REMINDER.search(part)) and before in ("", "filler")) or (
            _KO_HE_SHE.search(part) and before == ""
        )  # not onto a bare answer ("규리가.")
        if leans and not judgement.is_speculation(part):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


# A sentence that opens with a Korean pronoun for a person or a pet ("걔 신장 안 좋아서…", "그 사람
# 슬랙보다 전화를 더 좋아한대") is about whom the sentence before it names.
_KO_HE_SHE = lazy(r"^\W*(걔|쟤|얘|그\s?애|그\s?사람|그분|그녀|그\s?친구)(가|는|도|한테|랑|의|를)?\s")


# "remind me" with no "to …", "about …" or "that …" after it: of what the sentence before says.
_BARE_REMINDER = lazy(
    _LEAD
    + r"(can you |could you |pls |please )?remind me\b(?!\s+(to|about|that|of|when|how|what|where|who)\b)"
    r"|^[^을를]*(알려\s?줘|알려\s?주세요|리마인드\s?(해\s?줘|해\s?주세요)|상기시켜\s?줘)[.!~\s]*$",
    re.I,
)


def _fragment(sentence: str) -> bool:
    return len(analysis.key_words(sentence)) <= 3 or (has_hangul(sentence) and len(sentence) <= 14)


def extract(
    conversation: str, per_category: int = 5, agent: str | None = None, today: dt.date | None = None
) -> dict[str, list[str]]:
    """The extractive gist: the sentences judgement keeps, sorted into the flush's categories,
    secrets redacted and dates resolved against `today` ("next Monday" → "next Monday
    (2026-03-09)"). Every constraint, preference, decision and fact is kept (up to MAX_KEPT
    each), in the order said; of the others the latest `per_category`."""
    day = today or now().date()
    said: list[_Said] = []
    seen = set()
    talk = messages(conversation)
    context = _Referents(_speaker(role, text, agent)[1] for role, text in talk)  # without "user:"
    question: str | None = None  # the agent's last question in its turn that asks for a value
    for turn, (role, text) in enumerate(talk):
        speaker, text = _speaker(role, text, agent)
        sentences = _turn(text)
        parts = judgement.sentences(text)
        for n, sentence in enumerate(sentences):
            clean = policy.redact(policy.normalize(sentence))[0]
            answers = (
                question
                if n == 0
                and speaker != "assistant"
                and question
                and _fragment(parts[0])
                and not _empty(parts[0])
                else None
            )
            kept = context.resolve(clean) if speaker != "assistant" else clean
            context.read(clean, speaker, answer=answers is not None)
            if clean.lower() in seen or (speaker == "assistant" and not _agent_cue(clean)):
                continue  # the agent's own talk (most of a transcript) is judged only when it reports
            seen.add(clean.lower())
            said.append(_Said(speaker, clean, kept, turn, answers))
        asked = [q for q in map(policy.normalize, parts) if judgement.is_question(q) and asks_for(q)]
        question = asked[-1] if speaker == "assistant" and asked else None
    verdicts = judgement.judge_many([_probe(s.text) for s in said], voice=VOICE)
    # [category, text as kept, the turn it was said in, the speaker, the turn its last answer was said in]
    found: list[list] = []
    for item, verdict in zip(said, verdicts, strict=True):
        home = next((f for f in reversed(found) if f[0] and f[4] == item.turn - 2), None)
        if item.answers and home is not None:  # "What's her name?" "Pickle." completes the point asked about
            _beside(home, f"{item.answers} {item.kept}")
            home[4] = item.turn  # the agent's next question may ask on about it ("언제 가?" "누구랑 가?")
            continue
        if item.speaker != "assistant" and _corrects(item.text):
            wrong = next(
                (f for f in reversed(found) if f[0] and f[3] != "assistant" and _VALUE.search(f[1])), None
            )
            if wrong is not None:  # "1월 22일" … "아 잠깐, 22일 아니고 23일이다": one memory, corrected
                _beside(wrong, item.kept)
                continue
        category = classify_sentence(item.text, item.speaker, verdict, day)
        found.append([category, item.kept, item.turn, item.speaker, item.turn])
    gist: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for point in found:
        point[1] = dates.resolve(point[1], day)  # before the runs are joined: their length is what is kept
    for category, sentence, *_ in _points(found):
        if category:
            gist[category].append(_clip(sentence))
    return {c: items[:MAX_KEPT] if c in KEPT else items[-per_category:] for c, items in gist.items()}


# A sentence that opens another point of the same turn: "also …", "oh and …", "btw …", "아 그리고 …".
_NEW_POINT = lazy(
    r"^\W*(also|and also|oh,? and|oh|btw|by the way|another thing|anyway|"
    r"아\s*그리고|아\s*맞다|그리고|참|아\s*참|근데|암튼|아무튼)(?=\W|$)",
    re.I,
)


def _points(found: list[list]) -> list[list]:
    """One point per run of a user's sentences kept within one turn ("i handed in my notice at
    Halvorsen Logistics today. last day is dec 23."), so the sentence that says when is not kept
    apart from the one that says what, though the judgement filed them apart ("이사 날짜 잡았어,
    19일" a decision, "망원동에서 연희동으로 가" a fact; "their contact is Marisol" a fact, "she only
    does email" a rule): memory with memory, the state memo's kinds with theirs. The point keeps
    the kind it opened with, or a rule's where one joins it. A sentence that opens another point
    ("also …", "아 그리고 …") or a sentence not kept between them ends the run, and so does a point
    that would grow past CLIP characters (a whole biography in one turn is several points, none cut)."""
    points: list[list] = []
    for item in found:
        last = points[-1] if points else None
        joined = _then(last[1], item[1]) if last is not None else ""
        if (
            last is not None
            and item[0]
            and last[0]
            and (last[0] in KEPT) == (item[0] in KEPT)
            and last[2] == item[2]
            and item[3] != "assistant"
            and last[3] == item[3]
            and not _NEW_POINT.search(item[1])
            and len(joined) <= CLIP  # a long run is several points, none clipped
        ):
            last[1] = joined
            if item[0] == "constraints":  # a rule stays a rule; otherwise the point is what it opened with
                last[0] = item[0]
            continue
        points.append(item)
    return points


@dataclass
class _Said:
    speaker: str
    text: str  # as said (what judgement reads)
    kept: str  # as kept: what its pronoun stood for written in
    turn: int
    answers: str | None = None  # the agent's question it answers, when it is a short answer


def _beside(kept: list, more: str) -> None:
    """Write `more` into a kept point, in brackets after it."""
    kept[1] = _then(kept[1], f"({more})")


def _then(said: str, more: str) -> str:
    """`more` after `said`, a full stop between them where `said` has no end of its own."""
    end = "" if said.endswith((".", "!", "?", "。", "！", "？", ")")) else "."
    return f"{said}{end} {more}"


# A value said again, corrected by the user in the same talk: "Actually wait, no, hers is the 16th",
# "I mean the 23rd", "hmm wait, it's the 23rd not the 22nd", "아 잠깐, 22일 아니고 23일이다",
# "3시 말고 4시". With a number in it, it is written into the last point of the user's that holds a
# number, so no memory keeps the wrong value alone.
_CORRECTION = lazy(
    r"^\W*((hmm+|oh|ah|um+|uh|ok|okay)[,.]?\s+)?"
    r"(actually,? (wait|no)|wait|no wait|oops|sorry|i meant?|correction)\b"
    r"|^\W*(아\s*)?(잠깐|아니\s|정정)|\d\S*\s*(말고|아니고|아니라)\s+\S*\d"
    r"|\d\S*,?\s+not\s+(the\s+)?\d",
    re.I,
)
_VALUE = lazy(r"\d")


def _corrects(sentence: str) -> bool:
    return bool(_CORRECTION.search(sentence) and _VALUE.search(sentence))


def _empty(answer: str) -> bool:
    """An answer with nothing in it: a greeting or a bare yes, ok, thanks."""
    return judgement.substance(answer)[1] == "greeting" or not analysis.content_words(answer)


# -- who "he" is: a sentence kept on its own loses the turn it leans on ---------------------------
_NAME = lazy(r"(?<![\w'’])[A-Z][a-z]+(?=['’]s\b|\b)")
_FIRST_WORD = lazy(r"^\W*\w+")

_NOT_NAMES = frozenset(("i", "ok", "okay", *dates.DAYS_EN, *dates.MONTHS_EN))
_SUBJECT = lazy(_LEAD + r"(?P<who>he|she)(?P<verb>['’]s\s+(?:been|got|gone|had)\b|['’]s\b|\b)", re.I)
_HIS_HER = lazy(_LEAD + r"(?P<who>his|her)\s+(?=[a-z])", re.I)
_MINE = lazy(r"\b(mine|ours|hers|theirs)\b", re.I)


def _lower_words(sentence: str) -> list[str]:
    """The words of a sentence written in lower case, but its first word."""
    words = re.findall(r"\b\w+\b", sentence)
    return [w for w in words[1:] if re.fullmatch(r"[a-z]+", w)]


class _Referents:
    """What a pronoun of the user's stands for, read from the talk before it, so that a sentence
    kept on its own still says whom or what it is about: "he's on a grain-free diet" after "Seojun's
    dog Max …" / "Anything I should know about Max?" is kept as "Max is on a grain-free diet"; "mine
    expires in March" after "how long does a passport renewal take?" keeps that question's topic
    beside it.

    A name is a capitalised word that is not a function word ("Who's", "It"), not a weekday or a
    month, and never written in lower case in the talk but first in a sentence ("tamsin just sent
    me a meme" is a name typed in haste); the first word of a sentence counts only
    when it owns something ("Seojun's dog") or the sentence is a short answer ("Ines from ops.").
    "he" / "she" / "his" / "her" opening a sentence that names nobody stand for a name only when
    the talk so far names exactly one person who is not only an owner ("Seojun's dog Max": Max):
    with two ("my manager Calloway is leaving" … "it'll probably be Odalys") the pronoun is left
    as said, since a wrong name is worse than none. A possessive pronoun standing
    alone (mine, hers) gets the topic of the user's last question. English only: Korean leaves
    the subject out rather than saying a pronoun, and what it leaves out is not guessed."""

    def __init__(self, texts):
        # words the talk writes in lower case, but not first in a sentence: a name typed in
        # haste ("tamsin just sent me a meme") stays a name
        self.common = {w for t in texts for part in judgement.sentences(t) for w in _lower_words(part)}
        self.named: set[str] = set()  # the names said so far that do not only own something
        self.asked: str | None = None  # the topic of the user's last question

    def names(self, sentence: str, *, answer: bool = False) -> list[tuple[str, bool]]:
        """(name, whether it only owns something: "Seojun's") for each name in the sentence."""
        first = _FIRST_WORD.match(sentence)
        start = first.end() if first else 0
        out = []
        for m in _NAME.finditer(sentence):
            word = m.group()
            owner = sentence[m.end() : m.end() + 2] in ("'s", "’s")
            folded = word.casefold()
            if folded in _NOT_NAMES or folded in self.common or folded in analysis.STOP_WORDS:
                continue  # a weekday, a word the talk writes in lower case, "Who's", "It"
            if m.start() < start and not (owner or answer):
                continue  # a sentence's first word ("Congrats", "Also") unless it owns or answers
            out.append((word, owner))
        return out

    def read(self, sentence: str, speaker: str, *, answer: bool = False) -> None:
        self.named |= {name for name, owner in self.names(sentence, answer=answer) if not owner}
        if speaker != "assistant" and judgement.is_question(sentence):
            self.asked = _topic(sentence)

    def resolve(self, sentence: str) -> str:
        name = next(iter(self.named)) if len(self.named) == 1 and not self.names(sentence) else None
        if name and (m := _SUBJECT.match(sentence)):
            verb = m["verb"]  # "'s been" → " has been", "'s" → " is", "" (he can't) → ""
            if verb:
                verb = (" has" if verb[2:].strip() else " is") + verb[2:]
            return sentence[: m.start("who")] + name + verb + sentence[m.end() :]
        if name and (m := _HIS_HER.match(sentence)):
            return sentence[: m.start("who")] + name + "'s " + sentence[m.end() :]
        if self.asked and _MINE.search(sentence):
            return f"{sentence} (re: {self.asked})"
        return sentence


_DO_SUPPORT = lazy(r"\b(do|does|did|can|could|will|would|should|shall|may|might|must)\b", re.I)


def _topic(question: str) -> str | None:
    """What a question is about, as the longest run of its content words (the last of equal
    runs). After "do" / "does" / "can" … the run ends in the question's own verb, which is left
    out: "how long does a Korean passport renewal take?" → "Korean passport renewal"."""
    best: list[str] = []
    run: list[str] = []
    for word in [*analysis.key_words(question), ""]:
        if word and analysis.content_words(word):
            run.append(word)
            continue
        if len(run) >= len(best):
            best = run
        run = []
    before = question.split(best[0], 1)[0] if best else ""
    last = question.rstrip("?？ ").split()[-1:] or [""]
    if len(best) > 1 and _DO_SUPPORT.search(before) and best[-1] == last[0]:
        best = best[:-1]  # the question's own verb, after "does": not what it is about
    return " ".join(best) or None


def _clip(text: str, width: int = CLIP) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


SUMMARY_SYSTEM = """Summarise this agent conversation for its long-term memory. Keep only what a
future session needs: every constraint or rule the user set (word for word), every preference
the user stated (style instructions too), decisions (and why), facts worth keeping (dated
facts with their day, life events, allergies), discoveries, pending work, failures (and dead
ends). Short sentences, at most 5 per list except constraints, preferences, decisions and facts
(all of them), no secrets. Answer with JSON only:
{"constraints": [], "preferences": [], "decisions": [], "facts": [], "discoveries": [], "pending": [],
 "failures": []}"""


GIST_INSTRUCTIONS = SUMMARY_SYSTEM  # what the host agent writes for `flush(gist=…)`: the LLM's task


def summarize(
    ws, conversation: str, day: dt.date | None = None, given: dict | None = None
) -> tuple[dict[str, list[str]], str, list[str]]:
    """(gist, who summarised, notes): the gist the agent wrote (`given`), else the configured
    LLM, else the extractive summary. The agent's or the LLM's constraints, preferences,
    decisions and facts are completed by the extractive ones it left out (none similar to its
    own), so a terse summary drops no rule. Dates are resolved against `day` (the flush's)
    either way."""
    spec = llm.configured(ws, "summarizer")
    day = day or now().date()
    rules = (
        extract(conversation, agent=ws.name, today=day)
        if conversation.strip()
        else {c: [] for c in CATEGORIES}
    )
    if given is not None:
        gist, by = gist_of(given, day), "agent"
    elif not spec:
        return rules, "extractive", []
    else:
        try:
            chat = llm.client(spec, "summarizer")
            answer = chat.complete(SUMMARY_SYSTEM, conversation[-60000:])
            gist, by = _parse_gist(answer, chat.name, day), chat.name
        except GiokError as exc:
            return rules, "extractive", [f"LLM summary failed, used the extractive one: {exc}"]
    notes = []
    for category in KEPT:
        missed = [
            t for t in rules[category] if not any(policy.similarity(t, o) >= 0.5 for o in gist[category])
        ]
        if missed:
            gist[category] += missed
            notes.append(f"{len(missed)} {category} the summary left out were added from the conversation")
    return gist, by, notes


def _as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _parse_gist(answer: str, name: str, day: dt.date) -> dict[str, list[str]]:
    from giok.errors import ProviderError
    from giok.write.judges import json_in

    data = json_in(answer)
    if not isinstance(data, dict) or not any(isinstance(data.get(c), list) for c in CATEGORIES):
        raise ProviderError(f"{name}: the summary is not the JSON asked for")
    return _cleaned(data, day)


def _cleaned(data: dict, day: dt.date) -> dict[str, list[str]]:
    return {
        c: [
            _clip(dates.resolve(policy.redact(policy.normalize(str(x)))[0], day))
            for x in _as_list(data.get(c))
            if str(x).strip()
        ][: MAX_KEPT if c in KEPT else 5]
        for c in CATEGORIES
    }


def gist_of(data: object, day: dt.date | None = None) -> dict[str, list[str]]:
    """A gist the agent wrote (`GIST_INSTRUCTIONS`), checked and cleaned as an LLM's is: every
    key one of CATEGORIES, every value a list of strings; secrets redacted, dates resolved
    against `day`. InvalidInput says what is wrong, before anything is written."""
    return _cleaned(_checked(data), day or now().date())


def _checked(data: object) -> dict:
    """`data` if it is a gist's shape (every key one of CATEGORIES, every value a list of
    strings), else InvalidInput saying what is wrong."""
    if not isinstance(data, dict):
        raise InvalidInput(f"the gist must be a JSON object with the lists {', '.join(CATEGORIES)}")
    unknown = sorted(set(data) - set(CATEGORIES))
    if unknown:
        lists = ", ".join(CATEGORIES)
        raise InvalidInput(f"unknown gist list(s): {', '.join(unknown)}; the lists are {lists}")
    for category, items in data.items():
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise InvalidInput(f"the gist's {category} must be a list of strings")
        for text in items:
            check_binary(text, f"the gist's {category}")
    return data


class Watchdog:
    """For agent loops that count tokens themselves:

        dog = Watchdog(ws, window=150_000, session="run-42")
        status = dog.update(used, conversation=lambda: transcript_text)
        if status.level != "ok": start_a_fresh_session()

    `update` flushes (once per crossing) when a flush is due and a conversation is given."""

    def __init__(self, ws, window: int, session: str | None = None, thresholds: Thresholds | None = None):
        self.ws, self.window, self.session = ws, window, session_id(session, ws.settings.session)
        self.thresholds = thresholds or Thresholds.configured(ws)

    def update(self, used: int, conversation=None) -> Status:
        """Report `used` tokens; when a flush is due and `conversation` (text or a function
        returning it) is given, flush its gist and say so in the status."""
        status = watch(self.ws, used, self.window, self.session, self.thresholds)
        if status.flush_due and conversation is not None:
            text = conversation() if callable(conversation) else conversation
            status.flush = flush(self.ws, text, self.session, status.level)
            status.flushed = status.level if status.flush.action == "flushed" else status.flushed
        return status
