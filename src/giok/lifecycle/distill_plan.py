"""The host agent as the night's judge (DESIGN.md part 13): `plan` lists what the night would
judge, without writing; the agent decides; `apply` runs the same night with its decisions.

    plan(ws, day)        → {"plan": ID, "items": [{key, kind, text, day, evidence, choices,
                            suggestion}], "instructions": …}
    the agent's answer   → {"plan": ID, "decisions": {KEY: {"decision": "M90", "reason": "…"}}}
    apply(ws, answer)    → the night's Report, judged by `RecordedJudge` (the answer) with the
                           offline judge for every item the answer left out or got wrong

The plan id is `DAY.DIGEST`: the day the night runs as of, and a digest of MEMORY.md and the
ledger (memory/distilled.txt) as the plan read them. `apply` checks the id against the same two
files in the snapshot the night plans from, so an answer to a stale plan (a remember, a forget or
another distill since) is refused with ConflictError, never applied to entries it did not see.
Diary lines appended since the plan do not make it stale (the diary is append-only and an
agent's own session keeps writing it): they are items the answer does not cover, decided by the
offline judge and named in the report's `fallback`. A diary item's key carries a digest of its
text (`key_of`), so a decision never lands on another line after a hand edit of the diary.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from typing import Any

from giok.errors import ConflictError, InvalidInput
from giok.store.layout import LEDGER, MEMORY
from giok.store.workspace import check_id
from giok.write import judges, policy

AGENT = "agent"
MAX_ANSWER = 20 * 1024 * 1024  # bytes: far more than any night's decisions

LAYERS = {
    "drop": "not worth keeping: greetings, chatter, trivia, questions, what is already known",
    "M30": "30 days: a fact of the day worth a month (a draft done, a meeting held)",
    "M90": "90 days: decisions, standing preferences, constraints, plans, recurring work",
    "M365": "one year: projects, milestones, life events",
    "M0": "core, permanent: identity and lasting truths about the user; rare — only when sure",
    "lesson": "a pattern learned from a mistake: goes to compound/lessons.md, not MEMORY.md",
    "keep": "(existing entries) stay in their layer",
}

INSTRUCTIONS = f"""You are judging your own memories for tonight's distillation (giok).
Each item is a new diary line (kind "diary") or a MEMORY.md entry the references put near a
promotion (kind "entry", with its evidence: references in the last 14 and 30 days, on how many
days, in total, links to other memories, closeness to your role 0..1). Choose for each item one
of its `choices`:
{chr(10).join(f"  {k}: {v}" for k, v in LAYERS.items())}
An entry can only stay (keep) or move up. `suggestion` is the offline judge's rule-based answer:
take it, or do better. Answer with one JSON object and nothing else, each item's `key` copied exactly:
  {{"plan": "<this plan's id>", "decisions": {{"<key>": {{"decision": "M90", "reason": "short"}}}}}}
A diary line you keep beyond a day (M90, M365, M0) may give a memory a new value (a move, a
switch, a new number, "no longer"): its `may_replace` lists the live entries nearest to it
(shared words, then meaning), the one the write policy found first. Say which one it replaces
with "replaces": "<id>" (any live entry of MEMORY.md; the old one stays, marked superseded), or
"replaces": null when it replaces none; leave `replaces` out to let the write policy decide
(`suggestion.replaces` is what it found). Two values that both hold (a second hobby, another
person's address) replace nothing; a fact of the day (M30) replaces nothing.
Give it to `giok distill --apply FILE` (or `-` for stdin) or the memory_distill_apply tool.
Items you leave out, or answer with a choice they do not allow, are decided by the offline judge,
and the report says which. If MEMORY.md changed since this plan, the answer is refused: make a
new plan."""


# -- the plan id --------------------------------------------------------------------------------
def plan_id(day: dt.date, memory: bytes, ledger: bytes) -> str:
    """`DAY.DIGEST` of the files the night's decisions depend on."""
    digest = hashlib.sha256()
    for part in (b"giok-plan-1", day.isoformat().encode(), memory, ledger):
        digest.update(len(part).to_bytes(8, "big") + part)
    return f"{day.isoformat()}.{digest.hexdigest()[:20]}"


def day_of(pid: str) -> dt.date:
    """The day a plan id was made for; InvalidInput when it is not a plan id."""
    head, _, digest = pid.partition(".")
    try:
        day = dt.date.fromisoformat(head)
    except ValueError:
        day = None
    if day is None or len(digest) != 20:
        raise InvalidInput(f"{pid!r} is not a plan id (DAY.DIGEST, as `giok distill --plan` prints it)")
    return day


def stale_check(pid: str):
    """A check for the night's snapshot: refuse to go on when it is not the state `pid` planned."""

    def check(snap) -> None:
        now = plan_id(day_of(pid), snap.read(MEMORY), snap.read(LEDGER))
        if now != pid:
            raise ConflictError(
                f"plan {pid} is stale: MEMORY.md or {LEDGER} changed since it was made "
                f"(now {now}); make a new plan with `giok distill --plan` and judge again"
            )

    return check


def key_of(item: judges.Item) -> str:
    """The key the agent answers by. A diary item's place in its day (`diary:DAY#N`) is followed
    by a digest of its text (`@1a2b3c`), so an answer never lands on another line when the diary
    was edited between the plan and the apply; an entry's id is enough (the plan id covers
    MEMORY.md)."""
    if item.kind != "diary":
        return item.key
    return f"{item.key}@{hashlib.sha256(item.text.encode('utf-8', 'surrogateescape')).hexdigest()[:6]}"


# -- the plan -----------------------------------------------------------------------------------
class CapturePanel(judges.Panel):
    """Records the items the night asks about and answers them as the offline judge would:
    its verdicts are the plan's suggestions."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[judges.Item] = []
        self.suggested: dict[str, judges.Verdict] = {}
        self.replaces: dict[str, Any] = {}  # diary item key → the entry the night replaced with it

    @property
    def reads_pairs(self) -> bool:
        """The host agent reads a diary line beside the entries it may replace."""
        return True

    def saw(self, item: judges.Item, replaces: Any) -> None:
        """What the write policy found a kept diary line replaces (the plan's suggestion)."""
        if replaces is not None:
            self.replaces[item.key] = replaces

    def decide(self, items: list[judges.Item], context: dict) -> judges.Decisions:
        """The offline judge's verdicts; `items` kept for the plan."""
        self.items += items
        self.suggested.update(self.offline.decide(items, context))
        return judges.Decisions({i.key: self.suggested[i.key] for i in items})


def render(ws, day: dt.date, snap, panel: CapturePanel, report) -> dict[str, Any]:
    """The plan as JSON-ready data: its id, the items with their suggestions, how to answer."""
    items = panel.items
    return {
        "plan": plan_id(day, snap.read(MEMORY), snap.read(LEDGER)),
        "workspace": ws.name,
        "date": day.isoformat(),
        "items": [describe(i, panel.suggested[i.key], panel) for i in items],
        "instructions": INSTRUCTIONS,
        "layers": LAYERS,
        "answer_schema": answer_schema(items),
        "offline_summary": report.summary(),
        "notes": report.notes,
    }


def describe(
    item: judges.Item, suggestion: judges.Verdict, panel: CapturePanel | None = None
) -> dict[str, Any]:
    """One item of the plan, as the agent reads it: a diary line with the entries it may
    replace (`may_replace`) and, in its suggestion, the one the write policy found."""
    out: dict[str, Any] = {"key": key_of(item), "kind": item.kind, "text": item.text, "day": item.day}
    if item.kind == "entry":
        out["layer"] = item.layer
        out["type"] = item.type
        out["evidence"] = {
            "refs_14d": item.refs_14d,
            "refs_30d": item.refs_30d,
            "ref_days_30": item.ref_days_30,
            "refs_total": item.refs_total,
            "links": item.links,
            "role": round(item.role, 2),
            "expired": item.expired,
        }
    out["choices"] = list(item.choices())
    out["suggestion"] = {"decision": suggestion.decision, "reason": suggestion.reason}
    if item.kind == "diary":
        found = panel.replaces.get(item.key) if panel is not None else None
        rivals = list(item.rivals)
        if found is not None:  # the one the write policy found, first
            rivals = [*judges.shown([found]), *(r for r in rivals if r[0] != found.id)]
        out["may_replace"] = [
            {"id": i, "layer": layer, "text": text}
            for i, layer, text in rivals[: policy.RIVALS + policy.RIVALS_NEAR]
        ]
        out["suggestion"]["replaces"] = found.id if found is not None else None
    return out


def answer_schema(items: list[judges.Item]) -> dict[str, Any]:
    """The JSON schema of an answer to this plan (one entry for all keys, so a night of many
    items does not repeat it per key)."""
    allowed = {c for i in items for c in i.choices()} or {*judges.DIARY_CHOICES, *judges.ENTRY_CHOICES}
    choice = {"type": "string", "enum": sorted(allowed, key=lambda c: (judges.RANK[c], c))}
    decision = {
        "type": "object",
        "properties": {
            "decision": choice,
            "reason": {"type": "string"},
            "replaces": {
                "type": ["string", "null"],
                "description": "a diary line kept: the id of the live entry it replaces, or null for none",
            },
        },
        "required": ["decision"],
    }
    return {
        "type": "object",
        "properties": {
            "plan": {"type": "string"},
            "decisions": {
                "type": "object",
                "description": "item key → decision; the keys are the items' `key`",
                "additionalProperties": {"oneOf": [decision, choice]},
            },
        },
        "required": ["plan", "decisions"],
    }


# -- the answer ---------------------------------------------------------------------------------
def read_answer(answer: Any) -> tuple[str, dict[str, Any]]:
    """(plan id, {key: decision}) from the agent's answer: JSON text or bytes, or the parsed
    object. One InvalidInput for anything that is not such an answer."""
    if isinstance(answer, bytes | bytearray):
        if len(answer) > MAX_ANSWER:
            raise InvalidInput(f"the answer is {len(answer):,} bytes: at most {MAX_ANSWER:,}")
        try:
            answer = answer.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InvalidInput("the answer is not UTF-8 text") from None
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"the answer is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            ) from None
    shape = '{"plan": ID, "decisions": {KEY: {"decision": ..., "reason": ...}}}'
    if not isinstance(answer, dict):
        raise InvalidInput(f"the answer must be a JSON object {shape}")
    pid = answer.get("plan")
    if not isinstance(pid, str) or not pid:
        raise InvalidInput(f"the answer has no plan id: give the `plan` the plan printed, as in {shape}")
    day_of(pid)
    decisions = answer.get("decisions")
    if isinstance(decisions, list):  # [{"key": …, "decision": …, "reason": …}] is read too
        rows = [r for r in decisions if isinstance(r, dict) and isinstance(r.get("key"), str)]
        decisions = {r["key"]: r for r in rows}
    if not isinstance(decisions, dict):
        raise InvalidInput(f"the answer has no `decisions` object: {shape}")
    return pid, decisions


class RecordedJudge(judges.Judge):
    """A judge whose answers were given beforehand: {item key: {"decision", "reason"} or a bare
    decision}. It answers the items it has a valid decision for and says why it left the others
    out (`why`)."""

    def __init__(self, decisions: dict[str, Any], name: str = AGENT):
        self.decisions = decisions
        self.name = name
        self.why: dict[str, str] = {}
        self.asked: set[str] = set()
        self.notes: list[str] = []  # answers used but for a part: said in the report

    def decide(self, items: list[judges.Item], context: dict) -> dict[str, judges.Verdict]:
        """The recorded verdict of every item it holds a valid decision for."""
        out = {}
        for item in items:
            self.asked.add(key_of(item))
            verdict = self._verdict(item)
            if verdict is not None:
                out[item.key] = verdict
        return out

    def _verdict(self, item: judges.Item) -> judges.Verdict | None:
        raw = self.decisions.get(key_of(item))
        if raw is None:
            moved = any(k.startswith(item.key + "@") for k in self.decisions)
            self.why[item.key] = "the diary changed at this place since the plan" if moved else "left out"
            return None
        row = raw if isinstance(raw, dict) else {"decision": raw}
        decision = judges.normal_decision(row.get("decision"))
        if decision not in item.choices():
            given = row.get("decision")
            self.why[item.key] = (
                f"invalid: {given!r} is not one of {', '.join(item.choices())}"
                if given is not None
                else "invalid: no decision given"
            )
            return None
        reason = " ".join(str(row.get("reason") or "").split())[:300] or f"decided by the {self.name}"
        return judges.Verdict(decision, reason, self.name, self._replaces(item, row))

    def _replaces(self, item: judges.Item, row: dict) -> str | None:
        """What the answer says a diary line replaces: an entry id, "" for none (`null`, "",
        "none"), or None where it says nothing or something that is no id (then the write policy
        decides; distill._said names an id that is no live entry in the report)."""
        if item.kind != "diary" or "replaces" not in row:
            return None
        given = row["replaces"]
        if judges.says_none(given):
            return ""
        if isinstance(given, str):
            with contextlib.suppress(InvalidInput):
                return check_id(given)
        self.notes.append(
            f"{key_of(item)}: replaces {repr(given)[:60]} is no entry id; the write policy decided"
        )
        return None

    def unknown(self) -> list[str]:
        """Keys of the answer that were not among the night's items."""
        return sorted(set(self.decisions) - self.asked)


class AgentPanel(judges.Panel):
    """The panel of one recorded judge, the offline judge deciding what it did not answer."""

    def __init__(self, judge: RecordedJudge):
        super().__init__()
        self.judge = judge
        self.fallback: dict[str, dict[str, str]] = {}

    @property
    def names(self) -> list[str]:
        """The recorded judge's name."""
        return [self.judge.name]

    def decide(self, items: list[judges.Item], context: dict) -> judges.Decisions:
        """The recorded verdicts, and the offline judge's for the rest (kept in `fallback`)."""
        verdicts = self.judge.decide(items, context)
        for item in items:
            if item.key not in verdicts:
                verdict = verdicts[item.key] = self.offline.one(item)
                self.fallback[item.key] = {
                    "key": key_of(item),
                    "text": item.text,
                    "why": self.judge.why.get(item.key, "left out"),
                    "decision": verdict.decision,
                    "reason": verdict.reason,
                }
        return judges.Decisions(verdicts)

    def account(self, report) -> None:
        """Say in the report which items the offline judge decided and which answers were unused."""
        report.fallback = list(self.fallback.values())
        decided = len(self.judge.asked) - len(self.fallback)
        report.notes.append(f"the {self.judge.name} decided {decided} item(s)")
        if self.fallback:
            left = sum(1 for f in report.fallback if f["why"] == "left out")
            report.notes.append(
                f"the offline judge decided {len(report.fallback)} item(s) the {self.judge.name} "
                f"left out ({left}) or answered invalidly ({len(report.fallback) - left}): see fallback"
            )
        report.notes += self.judge.notes
        unknown = self.judge.unknown()
        if unknown:
            names = ", ".join(unknown[:20])
            report.notes.append(
                f"ignored {len(unknown)} decision(s) for items not in tonight's plan: {names}"
            )
