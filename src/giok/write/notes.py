"""The notes beside MEMORY.md, written through the workspace's transaction: the diary, lessons,
decisions, tasks, the state memo and the heartbeat. Every text is validated and its secrets
redacted (giok.write.policy.redact) before it reaches a file or git."""

from __future__ import annotations

import datetime as dt
import re
from typing import NamedTuple

from giok.errors import InvalidInput, NotFound
from giok.store import templates
from giok.store.clock import now, today
from giok.store.fsutil import MAX_ENTRY_BYTES, clean_text
from giok.store.layout import DECISIONS, HEARTBEAT, LESSONS, MEMO, TASKS
from giok.store.sections import Doc, append_item
from giok.store.workspace import DECISION_RE, TASK_MARK, TASK_RE, Workspace, short, state_key
from giok.text.analysis import has_hangul
from giok.write.policy import redact


class Lesson(NamedTuple):
    """What `lesson` did: the lesson's heading; action added, appended or unchanged; the commit."""

    heading: str
    action: str
    commit: str | None


def safe_text(text: str, what: str, *, limit: int = MAX_ENTRY_BYTES, multiline: bool = False) -> str:
    """Validate text for a workspace file and redact secrets in it: no write path (diary,
    lessons, decisions, tasks, state memo, heartbeat) lets a key or password reach git."""
    return redact(clean_text(text, what, limit=limit, multiline=multiline))[0]


def diary(ws: Workspace, text: str, when: dt.datetime | None = None) -> str:
    """Append a timestamped line to today's diary; earlier lines are never rewritten."""
    text = safe_text(text, "diary text")
    when = when or now()
    rel = ws.diary_path(when.date())
    line = f"- {when:%H:%M} {text}"

    def change(old: str):
        head = old if old else f"# {when.date().isoformat()}\n\n"
        sep = "" if head.endswith("\n") else "\n"
        return head + sep + line + "\n", line

    ws.edit(rel, change, f"diary: {when.date().isoformat()} {short(text)}")
    return line


def lesson(ws: Workspace, title: str, body: str) -> Lesson:
    """Add a dated `## [YYYY-MM-DD] title` section to compound/lessons.md, or, when a lesson
    of that title (case and spacing aside) exists, append the body's new lines to it, dated
    when the day differs; lines it already holds are not repeated (no change, no commit).
    Returns the lesson's heading."""
    title = safe_text(title, "lesson title", limit=300)
    body = safe_text(body, "lesson body", multiline=True)
    day = today().isoformat()
    heading = f"## [{day}] {title}"
    lines = [ln if ln.lstrip().startswith(("-", "*")) else f"- {ln}" for ln in body.split("\n") if ln.strip()]
    wanted = " ".join(title.split()).casefold()

    def change(old: str):
        doc = Doc.parse(old or f"# lessons.md : {ws.name}\n")
        for section in doc.sections:
            m = re.match(r"^\[([^\]]+)\]\s*(.*)$", section.title.strip())
            if m and " ".join(m.group(2).split()).casefold() == wanted:
                held = {ln.strip() for ln in section.lines}
                dated = m.group(1) != day
                for line in lines:
                    if line.strip() not in held and (
                        not dated or f"- [{day}] {line.strip()[2:]}" not in held
                    ):
                        append_item(section, f"- [{day}] {line.strip()[2:]}" if dated else line)
                return doc.render(), (section.heading, "appended")
        base = old or f"# lessons.md : {ws.name}\n"
        base = base if base.endswith("\n") else base + "\n"
        return base + "\n" + heading + "\n" + "\n".join(lines) + "\n", (heading, "added")

    def message(result) -> str:
        shown, action = result
        return f"lesson: append to {shown.split('] ', 1)[-1]}" if action == "appended" else f"lesson: {title}"

    (heading, action), sha = ws.edit(LESSONS, change, message)
    return Lesson(heading, action if sha else "unchanged", sha)


def decide(ws: Workspace, text: str, why: str, supersedes: str | None = None) -> str:
    """Append D-NNN with date and reason; earlier entries are never edited."""
    text = safe_text(text, "decision")
    why = safe_text(why, "reason")

    def change(old: str):
        doc = Doc.parse(old or "# Decision log\n")
        known = [int(m.group(2)) for s in doc.sections if (m := DECISION_RE.match(s.heading))]
        ids = {f"D-{n:03d}" for n in known}
        if supersedes and supersedes not in ids:
            raise NotFound(
                f"no decision {supersedes} to supersede (known: {', '.join(sorted(ids)) or 'none'})"
            )
        did = f"D-{max(known, default=0) + 1:03d}"
        block = [f"## {did} [{today().isoformat()}] {text}", f"- why: {why}"]
        if supersedes:
            block.append(f"- supersedes: {supersedes}")
        base = old if old.endswith("\n") else old + "\n"
        return base + "\n" + "\n".join(block) + "\n", did

    did, _ = ws.edit(
        DECISIONS,
        change,
        lambda d: f"decision: {d} {short(text)}" + (f" (supersedes {supersedes})" if supersedes else ""),
    )
    return did


def task_add(ws: Workspace, text: str) -> str:
    text = safe_text(text, "task")

    def change(old: str):
        doc = Doc.parse(old or "# Tasks\n")
        numbers = [
            int(m.group(2)) for s in doc.sections for ln in s.lines if (m := TASK_RE.match(ln.strip()))
        ]
        tid = f"T-{max(numbers, default=0) + 1:03d}"
        append_item(doc.ensure("todo"), f"- {TASK_MARK['todo']} {tid} {text}")
        return doc.render(), tid

    tid, _ = ws.edit(TASKS, change, lambda t: f"task: add {t} {short(text)}")
    return tid


def task_move(ws: Workspace, task_id: str, status: str, note: str | None = None) -> dict:
    if status not in templates.TASK_STATUSES:
        raise InvalidInput(f"invalid task status {status!r}")
    task_id = task_id.strip().upper()
    if not re.match(r"^T-\d{3,}$", task_id):
        raise InvalidInput(f"malformed task id {task_id!r}: ids look like T-001")
    note = safe_text(note, "note", limit=1000) if note else None

    def change(old: str):
        doc = Doc.parse(old)
        for section in doc.sections:
            for i, line in enumerate(section.lines):
                m = TASK_RE.match(line.strip())
                if m and m.group(1) == task_id:
                    del section.lines[i]
                    text = m.group(3)
                    if note:
                        text = f"{re.sub(r' — .*$', '', text)} — {note}"
                    append_item(doc.ensure(status), f"- {TASK_MARK[status]} {task_id} {text}")
                    return doc.render(), {"id": task_id, "status": status, "text": text}
        raise NotFound(f"no task {task_id} in {TASKS}")

    task, _ = ws.edit(TASKS, change, lambda t: f"task: {status} {task_id} {short(t['text'])}")
    return task


def state_set(ws: Workspace, section: str, text: str) -> dict[str, str]:
    key = state_key(section)
    text = safe_text(text, "state text", multiline=True)

    def change(old: str):
        doc = Doc.parse(old or "# State memo\n")
        lang = "ko" if has_hangul(old) else "en"
        titles = [templates.STATE_TITLES[lg][key] for lg in ("en", "ko")]
        target = doc.find(*titles, key) or doc.ensure(templates.STATE_TITLES[lang][key])
        target.lines = ["", *text.split("\n"), ""]
        stamp = f"{now():%Y-%m-%d %H:%M}"
        if doc.preamble and doc.preamble[0].startswith("# "):
            doc.preamble[0] = templates.memo_stamped(doc.preamble[0], stamp, lang)
        return doc.render(), key

    ws.edit(MEMO, change, f"state: {key} — {short(text)}")
    return ws.state()


def heartbeat_add(ws: Workspace, text: str) -> str:
    text = safe_text(text, "heartbeat item")

    def change(old: str):
        base = old or "# HEARTBEAT.md\n\n"
        base = base if base.endswith("\n") else base + "\n"
        return base + f"- {text}\n", text

    ws.edit(HEARTBEAT, change, f"heartbeat: add {short(text)}")
    return text


def heartbeat_done(ws: Workspace, item: str) -> str:
    """Remove an open item, by its 1-based number or by its exact text."""
    item = clean_text(item, "heartbeat item")

    def change(old: str):
        lines = old.split("\n")
        items = [i for i, ln in enumerate(lines) if re.match(r"^\s*[-*]\s+\S", ln)]
        pick = None
        if item.isdigit() and 1 <= int(item) <= len(items):
            pick = items[int(item) - 1]
        else:
            matches = [i for i in items if lines[i].strip()[2:].strip() == item] or [
                i for i in items if item.lower() in lines[i].lower()
            ]
            if len(matches) > 1:
                raise InvalidInput(f"{item!r} matches {len(matches)} heartbeat items; give its number")
            pick = matches[0] if matches else None
        if pick is None:
            raise NotFound(f"no open heartbeat item {item!r}")
        removed = lines.pop(pick).strip()[2:].strip()
        return "\n".join(lines), removed

    removed, _ = ws.edit(HEARTBEAT, change, lambda r: f"heartbeat: done {short(r)}")
    return removed
