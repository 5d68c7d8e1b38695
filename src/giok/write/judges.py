"""Judges for nightly distillation. A judge takes items with their context and returns, per
item, a decision with a reason:

    diary item      drop | M30 | M90 | M365 | M0 | lesson
    existing entry  keep | a higher layer (M90, M365, M0)

Built in: `OfflineJudge`, deterministic rules over type, references, links, role relevance
and keywords, so distillation works with no key at all; `LLMJudge`, any chat endpoint from
`giok.providers.llm` (OpenAI-compatible or Anthropic). A `Panel` asks its judges in parallel and lets
one synthesizer make the final call from their answers, as the seed does with four models.
A judge that fails (timeout, HTTP error, nonsense) is left out and named in the notes; with
no usable answer the panel falls back to the offline judge, never failing the night.

Home config (a workspace's own entry overrides the home-wide key):

    "judges": {"panel": [{"provider": "openai", "model": "gpt-4o-mini"},
                         {"provider": "anthropic", "model": "claude-sonnet-4-5"}],
               "synthesizer": {"provider": "anthropic", "model": "claude-opus-4-1"},
               "timeout": 60, "batch": 20}
"""

from __future__ import annotations

import json
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from giok.errors import GiokError, InvalidInput, ProviderError
from giok.providers import llm
from giok.write import judgement, policy

DIARY_CHOICES = ("drop", "M30", "M90", "M365", "M0", "lesson")
ENTRY_CHOICES = ("keep", "M90", "M365", "M0")
RANK = {"drop": 0, "keep": 0, "M30": 1, "lesson": 2, "M90": 3, "M365": 4, "M0": 5}
_LAYER_RANK = {"M30": 1, "M90": 3, "M365": 4, "M0": 5}
# the layers whose lines may give a kept slot a new value, by the policy's reading or a judge's
# that read the pair: a fact of the day ("Mina is in Seoul this week") replaces nothing
LASTING = ("M90", "M365", "M0")


@dataclass
class Item:
    """One thing to judge. kind "diary" (a new diary line) or "entry" (a MEMORY.md entry
    that may deserve promotion). The numbers are the evidence the offline rules weigh."""

    key: str
    kind: str
    text: str
    day: str = ""
    layer: str | None = None
    type: str | None = None
    refs_14d: int = 0
    refs_30d: int = 0
    ref_days_30: int = 0
    refs_total: int = 0
    links: int = 0
    role: float = 0.0
    expired: bool = False
    # a diary line: the live entries it may give a new value, (id, layer, text), shown to a judge
    # that reads pairs (an LLM panel, the host agent), which may say which one it replaces
    rivals: tuple[tuple[str, str, str], ...] = ()

    def choices(self) -> tuple[str, ...]:
        if self.kind == "diary":
            return DIARY_CHOICES
        floor = _LAYER_RANK.get(self.layer or "M30", 1)
        return ("keep", *tuple(c for c in ENTRY_CHOICES[1:] if _LAYER_RANK[c] > floor))

    def describe(self) -> str:
        if self.kind == "diary":
            replaceable = "; ".join(f'{i} ({layer}) "{text}"' for i, layer, text in self.rivals)
            return f"diary {self.day}: {self.text}" + (
                f" [may replace: {replaceable}]" if replaceable else ""
            )
        return (
            f"entry in {self.layer} since {self.day}{' (expired)' if self.expired else ''}: {self.text} "
            f"[type {self.type or '?'}; refs 14d {self.refs_14d}, 30d {self.refs_30d} "
            f"on {self.ref_days_30} days, "
            f"total {self.refs_total}; links {self.links}; role {self.role:.2f}]"
        )


@dataclass
class Verdict:
    decision: str
    reason: str
    judge: str
    # the MEMORY.md entry a kept diary line replaces, as the judge says: an id, "" for none, or
    # None where the judge did not say (the write policy's compare decides: distill._in_context)
    replaces: str | None = None

    def why_replaced(self) -> str:
        """Why the entry `replaces` names is superseded, for the report and the commit."""
        return f"replaces {self.replaces} (said by the {self.judge}: {self.reason})"


@dataclass
class Decisions:
    verdicts: dict[str, Verdict]
    notes: list[str] = field(default_factory=list)


class Judge:
    """The one method a judge provides: decide(items, context) → {item key: Verdict}.
    It may leave items out; it raises ProviderError when it cannot answer at all."""

    name = "judge"

    def decide(self, items: list[Item], context: dict) -> dict[str, Verdict]:
        raise NotImplementedError


# -- the offline judge ------------------------------------------------------------------------
def guess_type(text: str) -> str:
    """The memory type a diary line most likely is, by the one judgement (giok.write.judgement;
    the keyword rules of policy.classify where the model cannot answer)."""
    judged = judgement.judge(text)
    return judged.type if judged.judge == "model" else policy.classify(text)


class OfflineJudge(Judge):
    """Deterministic rules; the same items always get the same decisions."""

    name = "offline"

    def decide(self, items: list[Item], context: dict) -> dict[str, Verdict]:
        """The verdict of every item (`context` is not used): diary lines judged in one batch."""
        diary = [i for i in items if i.kind == "diary"]
        judged = dict(zip((i.key for i in diary), judgement.judge_many([i.text for i in diary]), strict=True))
        return {
            item.key: Verdict(*self._diary(judged[item.key]), self.name)
            if item.kind == "diary"
            else Verdict(*self._entry(item), self.name)
            for item in items
        }

    def one(self, item: Item) -> Verdict:
        """The verdict of one item: a diary line by the one judgement (giok.write.judgement, the
        same answer `remember` gets), an entry by its layer, references and links."""
        return self.decide([item], {})[item.key]

    @staticmethod
    def _diary(judged: judgement.Judgement) -> tuple[str, str]:
        if not judged.keep:
            return "drop", judged.reason
        if judged.type == "lesson" and judged.layer != "M0":
            return "lesson", "a lesson learned from a mistake"
        return judged.layer, judged.reason

    def _entry(self, item: Item) -> tuple[str, str]:
        linked = item.links >= 2 or item.role >= 0.34
        weight = (
            (f"links {item.links}" if item.links >= 2 else f"role relevance {item.role:.2f}")
            if linked
            else ""
        )
        if item.layer == "M30":
            if item.refs_14d >= 3:
                return "M90", f"referenced {item.refs_14d} times in 14 days"
            if item.refs_14d >= 2 and linked:
                return "M90", f"referenced {item.refs_14d} times in 14 days, {weight}"
        if item.layer == "M90":
            if item.ref_days_30 >= 4 and item.refs_30d >= 6:
                return "M365", f"sustained: {item.refs_30d} references on {item.ref_days_30} days in 30"
            if item.ref_days_30 >= 3 and item.refs_30d >= 4 and linked:
                return "M365", f"sustained: {item.refs_30d} references on {item.ref_days_30} days, {weight}"
        return "keep", "not referenced enough to move"


# -- LLM judges ---------------------------------------------------------------------------------
SYSTEM = """You judge an AI agent's memories during its nightly distillation.
Memory layers: M0 = core, permanent (identity, lasting truths about the user; rare);
M365 = one year (projects, milestones); M90 = 90 days (decisions, preferences, recurring work);
M30 = 30 days (facts of the day worth a month); lesson = a pattern learned from a mistake
(goes to the lessons file); drop = not worth keeping (greetings, chatter, trivia, questions).
For an existing entry choose keep or a higher layer; choose M0 only when you are sure.
Weigh how often it was referenced, how linked it is to other memories and how close it is to
the agent's role. A diary line may give a kept memory a new value (a move, a switch, a new
number, "no longer"): where it lists what it may replace, say which one with "replaces": its id,
or null when it replaces none (two values that both hold, another person's, a passing state).
Answer with JSON only:
{"decisions": [{"item": 1, "decision": "M30", "reason": "short reason", "replaces": null}]}"""


def _prompt(items: list[Item], context: dict, opinions: dict[str, list[Verdict]] | None = None) -> str:
    lines = [f"Agent: {context.get('workspace', '')}. Today: {context.get('today', '')}."]
    if context.get("role"):
        lines += ["Role (SOUL/AGENTS excerpt):", context["role"][:1500]]
    lines.append("Items:")
    for n, item in enumerate(items, 1):
        lines.append(f"{n}. {item.describe()} — choose one of: {', '.join(item.choices())}")
        for verdict in (opinions or {}).get(item.key, []):
            said = {None: "", "": " (replaces nothing)"}.get(
                verdict.replaces, f" (replaces {verdict.replaces})"
            )
            lines.append(f"   - {verdict.judge} says {verdict.decision}{said}: {verdict.reason}")
    if opinions is not None:
        lines.append("You are the final judge: weigh the panel's answers above and decide each item.")
    return "\n".join(lines)


def parse_answer(text: str, items: list[Item], judge: str) -> dict[str, Verdict]:
    """Read a judge's JSON answer; keep only well-formed decisions allowed for their item.
    Nothing usable → ProviderError (the judge answered nonsense)."""
    data = json_in(text)
    rows = data.get("decisions") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise ProviderError(f"{judge}: answered without a decisions list")
    out = {}
    for row in rows:
        if not isinstance(row, dict):
            continue
        try:
            raw: Any = row.get("item", row.get("i", 0))  # None or nonsense: skipped below
            index = int(raw)
        except (TypeError, ValueError, OverflowError):  # 1e400 is infinity, which has no int
            continue
        if not 1 <= index <= len(items):
            continue
        item = items[index - 1]
        decision = normal_decision(row.get("decision"))
        if decision in item.choices():
            reason = " ".join(str(row.get("reason") or "").split())[:300]
            out[item.key] = Verdict(decision, reason, judge, replaced(item, row.get("replaces", ...)))
    if not out:
        raise ProviderError(f"{judge}: answered nonsense (no valid decision)")
    return out


RIVAL_CHARS = 300  # of an entry's text shown to a model beside a line


def shown(entries: list) -> tuple[tuple[str, str, str], ...]:
    """Entries as `Item.rivals`: (id, layer, text), the text redacted (an entry written by hand may
    hold a secret the write path would have caught) and cut to RIVAL_CHARS."""
    return tuple((e.id, e.layer or "", policy.redact(e.text)[0][:RIVAL_CHARS]) for e in entries)


def says_none(given: Any) -> bool:
    """Does a judge's `replaces` say the line replaces nothing (null, "", "none")?"""
    return given is None or (isinstance(given, str) and given.strip().lower() in ("", "none", "null"))


def replaced(item: Item, given: Any) -> str | None:
    """What a model says a diary line replaces, among the entries it was shown (`Item.rivals`):
    an id, "" for none (null), or None where it said nothing, or named no entry it was shown
    (the write policy decides then)."""
    if item.kind != "diary" or not item.rivals or given is ...:
        return None
    if says_none(given):
        return ""
    wanted = given.strip() if isinstance(given, str) else None
    return wanted if any(wanted == i for i, _, _ in item.rivals) else None


def json_in(text: str):
    """The JSON object or list in a model's answer (code fences and prose around it allowed);
    None without one."""
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip(), flags=re.M)
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if start != -1 and end > start:
            try:
                return json.loads(text[start : end + 1])
            except ValueError:
                continue
    return None


def normal_decision(value) -> str | None:
    """A decision as giok spells it ("m90" → "M90", "Drop." → "drop"); None when not a string."""
    if not isinstance(value, str):
        return None
    value = value.strip().strip(".").lower()
    return {"m0": "M0", "m30": "M30", "m90": "M90", "m365": "M365"}.get(value, value)


class LLMJudge(Judge):
    """A judge backed by one chat model (giok.providers.llm): asks it to decide a batch of
    items and reads its JSON answer; any failure is a ProviderError."""

    def __init__(self, client: llm.ChatClient):
        self.client = client
        self.name = client.name

    def decide(self, items: list[Item], context: dict) -> dict[str, Verdict]:
        """Ask the model about `items` in one request; its answer, item key → verdict."""
        answer = self.client.complete(SYSTEM, _prompt(items, context), schema=answer_schema(items))
        return parse_answer(answer, items, self.name)

    def synthesize(
        self, items: list[Item], opinions: dict[str, list[Verdict]], context: dict
    ) -> dict[str, Verdict]:
        """Decide `items` as the final judge, with the panel's `opinions` in the prompt."""
        answer = self.client.complete(SYSTEM, _prompt(items, context, opinions), schema=answer_schema(items))
        return parse_answer(answer, items, self.name)


def answer_schema(items: list[Item]) -> llm.Schema:
    """The structured output asked of an LLM judge: the shape `parse_answer` reads, with the
    decisions these items allow (strict: every field required, no others)."""
    choices = sorted({c for i in items for c in i.choices()}, key=lambda c: (RANK[c], c))
    row = {
        "type": "object",
        "properties": {
            "item": {"type": "integer", "description": "the item's number in the list"},
            "decision": {"type": "string", "enum": choices},
            "reason": {"type": "string", "description": "a short reason"},
            "replaces": {
                "type": ["string", "null"],
                "description": "a diary line kept: the id of the entry of its 'may replace' it gives a new"
                " value, or null",
            },
        },
        "required": ["item", "decision", "reason", "replaces"],
        "additionalProperties": False,
    }
    return llm.Schema(
        "record_decisions",
        "Record one decision, with a short reason, for every numbered item.",
        {
            "type": "object",
            "properties": {"decisions": {"type": "array", "items": row}},
            "required": ["decisions"],
            "additionalProperties": False,
        },
    )


# -- the panel ----------------------------------------------------------------------------------
class Panel:
    """Judges asked in parallel, a synthesizer deciding from their answers, the offline judge
    as the floor. With no panel it is just the offline judge."""

    def __init__(
        self,
        judges: list[Judge] | None = None,
        synthesizer: LLMJudge | None = None,
        batch: int = 20,
        workers: int = 8,
        notes: list[str] | None = None,
    ):
        self.judges = judges or []
        self.synthesizer = synthesizer
        self.batch = max(1, batch)
        self.workers = max(1, workers)
        self.offline = OfflineJudge()
        self.setup_notes = list(notes or [])
        # each diary line's rivals (by its text), kept across a night's retries
        self.rivals: dict[str, tuple[tuple[str, str, str], ...]] = {}

    @property
    def reads_pairs(self) -> bool:
        """Does a judge of this panel read a diary line beside the entries it may replace (the
        night then fills `Item.rivals`)? The LLM judges do; the offline judge does not."""
        return bool(self.judges)

    def saw(self, item: Item, replaces: Any) -> None:
        """The night's reading of a kept diary line: the entry it replaces (a MemoryEntry), or
        None. A panel that shows the night to someone keeps it (distill_plan.CapturePanel)."""

    @property
    def names(self) -> list[str]:
        """The judges that take part, the synthesizer marked as such."""
        return [j.name for j in self.judges] + (
            [f"{self.synthesizer.name} (synthesizer)"] if self.synthesizer else []
        )

    def decide(self, items: list[Item], context: dict) -> Decisions:
        """Every item's decision: the panel answers in batches (in parallel), the synthesizer weighs
        their answers, and the offline judge decides what no model answered; the notes say who
        was left out and why."""
        notes = list(self.setup_notes)
        if not items:
            return Decisions({}, notes)
        if not self.judges:
            return Decisions(self.offline.decide(items, context), notes)
        batches = [items[i : i + self.batch] for i in range(0, len(items), self.batch)]
        opinions = self._ask_panel(batches, context, notes)
        final = self._synthesize(batches, opinions, context, notes)
        missing = [item for item in items if item.key not in final]
        if missing:
            notes.append(f"no judge answered for {len(missing)} item(s): the offline judge decided them")
            final.update(self.offline.decide(missing, context))
        return Decisions(final, notes)

    def _ask_panel(self, batches, context, notes) -> dict[str, list[Verdict]]:
        jobs = [(judge, batch) for batch in batches for judge in self.judges]
        opinions: dict[str, list[Verdict]] = {}
        failures: dict[str, list] = {}
        with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
            futures = [(judge, batch, pool.submit(judge.decide, batch, context)) for judge, batch in jobs]
            for judge, batch, future in futures:
                try:
                    answer = future.result()
                except GiokError as exc:
                    failure = failures.setdefault(judge.name, [0, str(exc)])
                    failure[0] += len(batch)
                    continue
                for item in batch:
                    if item.key in answer:
                        opinions.setdefault(item.key, []).append(answer[item.key])
        notes += [f"left out {name} for {n} item(s): {message}" for name, (n, message) in failures.items()]
        return opinions

    def _synthesize(self, batches, opinions, context, notes) -> dict[str, Verdict]:
        final: dict[str, Verdict] = {}
        answered = [[i for i in batch if i.key in opinions] for batch in batches]
        answered = [b for b in answered if b]
        results, failed, message = [], 0, ""
        if self.synthesizer:
            with ThreadPoolExecutor(max_workers=min(self.workers, max(1, len(answered)))) as pool:
                futures = [
                    (b, pool.submit(self.synthesizer.synthesize, b, opinions, context)) for b in answered
                ]
                for batch, future in futures:
                    try:
                        results.append(future.result())
                    except GiokError as exc:
                        failed, message = failed + len(batch), message or str(exc)
        if failed:
            notes.append(f"synthesizer failed for {failed} item(s), the panel's vote decided them: {message}")
        for answer in results:
            final.update(answer)
        for batch in answered:
            for item in batch:
                if item.key not in final:
                    final[item.key] = self._vote(item, opinions[item.key], context)
        return final

    def _vote(self, item: Item, verdicts: list[Verdict], context: dict) -> Verdict:
        tally = Counter(v.decision for v in verdicts)
        best = max(tally.values())
        tied = [d for d, n in tally.items() if n == best]
        fallback = self.offline.one(item).decision
        pick = fallback if fallback in tied else min(tied, key=lambda d: RANK[d])
        reasons = "; ".join(f"{v.judge}: {v.reason}" for v in verdicts if v.decision == pick)
        said = {
            v.replaces for v in verdicts if v.decision == pick
        }  # the pick's judges all say the same, or no word
        replaces = said.pop() if len(said) == 1 else None
        return Verdict(pick, f"panel vote {best}/{len(verdicts)} — {reasons}"[:300], "panel", replaces)


def from_config(ws) -> Panel:
    """The panel configured for this workspace, or the offline judge alone. A judge whose
    spec is broken is left out with a note rather than failing the night."""
    spec = llm.configured(ws, "judges")
    if not spec:
        return Panel()
    if not isinstance(spec, dict):
        raise InvalidInput("home config `judges` must be an object with `panel` (a list) and `synthesizer`")
    timeout = spec.get("timeout", 60)
    judges: list[Judge] = []
    notes: list[str] = []
    for n, entry in enumerate(spec.get("panel") or [], 1):
        try:
            judges.append(LLMJudge(llm.client(entry, f"judge-{n}", timeout)))
        except GiokError as exc:
            notes.append(f"left out panel judge {n}: {exc}")
    synthesizer = None
    if spec.get("synthesizer"):
        try:
            synthesizer = LLMJudge(llm.client(spec["synthesizer"], "synthesizer", timeout))
        except GiokError as exc:
            notes.append(f"no synthesizer: {exc}")
    try:
        batch = int(spec.get("batch", 20))
    except (TypeError, ValueError):
        raise InvalidInput("home config judges.batch must be a whole number") from None
    return Panel(judges, synthesizer, batch=batch, notes=notes)
