"""Claude Code hooks: what giok does on SessionStart, UserPromptSubmit, PreCompact and Stop.

Each handler takes the workspace and the hook's input (the JSON Claude Code writes on stdin)
and returns the JSON to print on stdout, or None for nothing. Only SessionStart and
UserPromptSubmit add context, and their answer names the event it answers
(`hookSpecificOutput.hookEventName`): Claude Code rejects an answer that names another event.
PreCompact (flush the transcript) and Stop (one diary line) print nothing on stdout. The CLI
edge (`giok hook EVENT`) turns every failure into a line on stderr and exit 0: memory must
never block the user's session or a compaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from giok.errors import InvalidInput
from giok.lifecycle.boot import HOOK_CONTEXT_EVENTS, hook_answer
from giok.text import token_count as tokens

EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop")
CONTEXT_EVENTS = HOOK_CONTEXT_EVENTS  # the events whose answer may add context
PROMPT_BUDGET = 300  # tokens of recalled memory a prompt may add
PROMPT_HITS = 3
DIARY_CHARS = 160
DIARY_TAG = "Claude Code"
MAX_PROMPT = 2000  # longer prompts are recalled by their start (search's own limit is on words)


context = hook_answer  # the answer of a hook that adds text to the conversation (one place: boot)


def parse_input(raw: str) -> dict:
    """The JSON object a hook got on stdin ({} for none); ValueError for anything else."""
    if not raw.strip():
        return {}
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the hook input is not a JSON object")
    return data


def respond(event: str, raw: str, budget, open_ws: Callable[[], Any]) -> tuple[str, str]:
    """What `giok hook EVENT` prints for the input `raw` (stdout, stderr), whether the CLI runs
    it or a running giok answers it for the CLI (giok.edges.hookserver). `open_ws` opens the
    workspace. Never raises: a failure is a line on stderr and, but for PreCompact, a
    `systemMessage` the user sees."""
    out: list[str] = []
    err: list[str] = []
    try:
        if budget is not None:  # checked here, not by click: a usage error would exit 2 and block
            if not str(budget).isdigit():
                raise ValueError(f"--budget must be a whole number of tokens, not {budget!r}")
            budget = int(budget)
        try:
            data = parse_input(raw)
        except ValueError as exc:
            raise ValueError(f"the hook input on stdin is not a JSON object ({exc})") from None
        event = served_event(event, data, err)
        if event not in EVENTS:
            err.append(f"giok hook: nothing to do for event {event!r} (giok handles {', '.join(EVENTS)})")
            return "", _lines(err)
        ws = open_ws()
        answer: dict | None = None
        if event == "SessionStart":
            answer = session_start(ws, data, budget)
        elif event == "UserPromptSubmit":
            answer = prompt_recall(ws, data, **({"budget": budget} if budget else {}))
        elif event == "PreCompact":
            result = pre_compact(ws, data)
            err.append(f"giok: {result.action} ({result.level}, session {result.session})")
        elif line := stop(ws, data):
            err.append(f"giok: diary {line}")
        if answer:
            out.append(json.dumps(answer, ensure_ascii=False))
    except Exception as exc:  # memory never blocks the session: report and let Claude Code go on
        err.append(f"giok hook {event}: {exc}")
        shown = failure(event, exc)  # the line the user sees
        if shown:
            out.append(json.dumps(shown, ensure_ascii=False))
    return _lines(out), _lines(err)


def served_event(event: str, data: dict, err: list[str] | None = None) -> str:
    """The event to answer: the one Claude Code sent in the input, else the one configured."""
    sent = data.get("hook_event_name")
    if sent and event and sent != event and err is not None:
        err.append(f"giok hook: configured as {event} but Claude Code sent {sent}; answering {sent}")
    return str(sent or event or "")


def _lines(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def session_start(
    ws, data: dict, budget: int | None = None, event: str = "SessionStart", **build: Any
) -> dict:
    """The boot context, after a start, /clear and a compaction alike; `giok boot --format
    claude-hook` answers through here too (`event`, and boot's own options). A resumed session
    (source "resume") has its boot context in the conversation it resumes: it gets a short note
    instead of the whole boot again."""
    from giok.lifecycle.boot import build as build_boot

    if data.get("source") == "resume":
        return context(event, RESUMED.format(name=ws.name))
    return context(event, build_boot(ws, budget=budget, **build).text)


RESUMED = (
    "giok: this session was resumed; the boot context of workspace {name} given at its start "
    "still holds (memory_boot gives it afresh, memory_recall what changed since)."
)


def failure(event: str, exc: BaseException) -> dict | None:
    """What a hook prints on stdout when giok failed: one line the user sees in Claude Code
    (`systemMessage`), since stderr of a hook that exits 0 shows only in the debug log. None
    for PreCompact: Claude Code hands what that hook prints to the summary as instructions."""
    if event == "PreCompact":
        return None
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if len(reason) > FAILURE_CHARS:
        reason = reason[: FAILURE_CHARS - 1].rstrip() + "…"
    return {"systemMessage": f"giok {event or 'hook'} failed: {reason}"}


FAILURE_CHARS = 300


def prompt_recall(ws, data: dict, budget: int = PROMPT_BUDGET) -> dict | None:
    """Only what this prompt needs: nothing for a greeting, an instruction or general knowledge
    (questions.needs_memory), nothing when recall finds nothing, else the hits within `budget`."""
    from giok.retrieval.questions import needs_memory  # no numpy, no index: most prompts stop here

    prompt = " ".join(str(data.get("prompt") or "").split())[:MAX_PROMPT]
    _keep_prompt(ws, data, prompt)
    if not prompt or not needs_memory(prompt)[0]:
        return None
    from giok.retrieval.search import DYNAMIC_GAP, recall

    # Shown unasked, so kept tight: the seed's gap rule, off for a search the agent asks for
    # (docs/search.md, "Cut-offs: the curve"), still drops what trails far behind the best
    # hit here. Not a use either (giok.store.refs).
    found = recall(ws, prompt, k=PROMPT_HITS + 2, record="inject", gap=DYNAMIC_GAP)
    mine = f"{DIARY_TAG} {_session(data)[:8]}:"  # this session's own diary lines: it has them already
    hits = [h for h in found.results if mine not in h.text][:PROMPT_HITS]
    head = f"giok memory that may bear on this prompt (workspace {ws.name}; memory_get opens a path):"
    lines, used = [head], tokens.count(head)
    for hit in hits:
        line = f"- {' '.join(hit.text.split())} ({hit.path}:{hit.start_line})"
        cost = tokens.count(line) + 1
        if used + cost > budget:
            break
        lines.append(line)
        used += cost
    return context("UserPromptSubmit", "\n".join(lines)) if len(lines) > 1 else None


def pre_compact(ws, data: dict):
    """Flush the transcript's gist (watchdog.flush, hard) once per compaction: the session key
    changes as the transcript grows. Raises when the transcript is missing or unreadable."""
    from giok.lifecycle.watchdog import flush

    path = data.get("transcript_path")
    if not path:
        raise InvalidInput("the PreCompact input names no transcript_path")
    try:
        text = Path(path).read_text("utf-8", errors="replace")
    except OSError as exc:
        raise InvalidInput(f"cannot read the transcript {path}: {exc.strerror or exc}") from None
    session = f"{_session(data)}-{text.count(chr(10))}"
    return flush(ws, text, session=session, level="hard")


def stop(ws, data: dict) -> str | None:
    """One diary line for the turn that ended: what was asked and what was answered, short.
    Nothing when a Stop hook already made Claude continue (stop_hook_active) or the turn is empty."""
    from giok.write.policy import redact

    if data.get("stop_hook_active"):
        return None
    asked = _last_prompt(data.get("transcript_path")) or _kept_prompt(ws, data)
    answered = str(data.get("last_assistant_message") or "")
    if not asked and not answered:
        return None
    parts = [f"{DIARY_TAG} {_session(data)[:8]}:"]
    if asked:
        parts.append(f"asked {_short(asked)!s}")
    if answered:
        parts.append(f"→ {_short(answered)}")
    return ws.diary(redact(" ".join(parts))[0])


def _prompt_file(ws, data: dict) -> Path:
    return ws.layout.prompt_file(_session(data))


def _keep_prompt(ws, data: dict, prompt: str) -> None:
    """The turn's prompt, for Stop when Claude Code keeps no transcript (--no-session-persistence)."""
    from giok.write.policy import redact

    try:
        path = _prompt_file(ws, data)
        path.parent.mkdir(parents=True, exist_ok=True)
        ws.layout.clean_prompts(keep=path)  # ended sessions' prompts (layout.PROMPT_MAX_AGE)
        path.write_text(redact(prompt[: DIARY_CHARS * 2])[0], "utf-8")
    except OSError:
        pass  # only a fallback for the diary line


def _kept_prompt(ws, data: dict) -> str:
    try:
        return _prompt_file(ws, data).read_text("utf-8")
    except OSError:
        return ""


def _session(data: dict) -> str:
    value = re.sub(r"[^\w.:@-]", "-", str(data.get("session_id") or "claude"))[:100]
    return value or "claude"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DIARY_CHARS else text[: DIARY_CHARS - 1].rstrip() + "…"


def _last_prompt(path) -> str:
    """The last prompt the user typed, from Claude Code's JSONL transcript ('' if none)."""
    if not path:
        return ""
    try:
        lines = Path(path).read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        message = row.get("message") if isinstance(row, dict) else None
        if row.get("type") != "user" or not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str) and content.strip():
            return content
        if isinstance(content, list):  # tool results come back as user messages: skip them
            texts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
            if any(t.strip() for t in texts):
                return " ".join(texts)
    return ""
