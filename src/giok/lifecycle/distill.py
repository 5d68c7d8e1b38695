"""Nightly distillation: the agent's sleep. One run

1. reads every diary day not yet distilled (a missed night is caught up) and the reference
   log since the last run;
2. asks the judges about each new diary item (drop, M30, M90, M365, M0, lesson) and about the
   entries whose references, links and role relevance make them candidates for promotion;
3. expires what is past its date into memory/archive/YYYY-MM.md (searchable, never injected);
4. review pass: merges duplicates (the copy goes to the archive, marked merged_into); a new
   reading of a number (battery, steps) or a change the rules and the judgement agree on
   supersedes the older entry; contradictions and unsure changes are raised once into the
   review queue state/review.md (giok.lifecycle.review); stale workflow state is flagged;
5. writes the reference totals into the entries, a report line into the diary, the ledger
   memory/distilled.txt, and makes ONE commit `nightly-distill: YYYY-MM-DD`.

The ledger is the truth about what was judged: `YYYY-MM-DD N` says the first N diary items of
that day were judged, so items appended after a run are judged the next night, and a rerun
with nothing new changes nothing. All files are written in one `Workspace.write_files`
transaction (each file by atomic rename, archive first, MEMORY.md before the ledger; one
commit; a failed commit restores them), so a crash halfway leaves every file valid; the
journal rolls the half-done run back (giok.store.journal) and the next run does it again, without
duplicating entries. Planning happens outside the lock
(judges may be slow); when writers keep changing the files meanwhile, the last try plans
under the lock."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field

from giok.errors import DirtyFileError, GiokError, InvalidInput
from giok.lifecycle import crossview, review
from giok.providers import llm
from giok.retrieval.chunks import OWN_MARK, is_own_line, is_turn_log
from giok.store import layout, refs, templates
from giok.store.clock import now, parse_date, today
from giok.store.fsutil import read_bytes
from giok.store.memoryfile import LAYER_DAYS, Heading, MemoryEntry, MemoryFile, RawLine, empty, new_id
from giok.store.reviewfile import ReviewFile
from giok.store.sections import parse_diary
from giok.store.workspace import LESSONS, MEMO, MEMORY
from giok.text import analysis, likeness
from giok.text.lazy import lazy
from giok.write import judges, policy

LEDGER = layout.LEDGER
REVIEW = layout.REVIEW
ARCHIVE_DIR = layout.ARCHIVE_DIR
OWN_PATHS = layout.OWN_PATHS  # MEMORY.md, lessons, memory/ (diaries, ledger, archive), the review queue


# -- small text tools ------------------------------------------------------------------------
def tokens(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z][a-z0-9_-]{2,}|[가-힣]{2,}|\d{2,}", text.lower())
    return frozenset(
        analysis.stem_ko(w) if w[0] >= "가" else w for w in words if w not in analysis.STOP_WORDS
    )


def similar(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def diary_items(text: str) -> list[tuple[str | None, str]]:
    """The (HH:MM or None, text) items of a diary day, in file order: giok's timed lines and
    the plain bullets and paragraphs of adopted notes, read as search reads them."""
    return [(item.time, item.text) for item in parse_diary(text)]


# -- the ledger -------------------------------------------------------------------------------
@dataclass
class Ledger:
    days: dict[str, int] = field(default_factory=dict)
    refs_until: dt.datetime | None = None

    @classmethod
    def parse(cls, text: str) -> Ledger:
        ledger = cls()
        for line in text.splitlines():
            m = re.match(r"^(\d{4}-\d{2}-\d{2})\s+(\d+)\b", line.strip())
            if m:
                ledger.days[m.group(1)] = int(m.group(2))
            m = re.match(r"^refs-read-until:\s*(\S+)", line.strip())
            if m:
                with contextlib.suppress(ValueError):
                    ledger.refs_until = dt.datetime.fromisoformat(m.group(1))
        return ledger

    def render(self) -> str:
        lines = [
            "# giok distillation ledger: `DAY N` = the first N items of memory/DAY.md were judged.",
            "# Delete a day's line to have it judged again.",
        ]
        if self.refs_until:
            lines.append(f"refs-read-until: {self.refs_until.isoformat(timespec='seconds')}")
        lines += [f"{day} {n}" for day, n in sorted(self.days.items())]
        return "\n".join(lines) + "\n"


# -- the report -------------------------------------------------------------------------------
# The summary line, in the workspace's language. Its fixed start, "nightly-distill: N day(s)" /
# "nightly-distill: N일", is also how older diary lines without OWN_MARK are recognised
# (retrieval.chunks).
SUMMARY = {
    "en": {
        "line": "nightly-distill: {days} day(s), {judged} item(s) judged → {kept} kept, {lessons} lesson(s), "
        "{dropped} dropped; promoted {promoted}, expired {expired}, merged {merged}, flagged {flagged}",
        "review": "; review: {new} new, {open} open",
    },
    "ko": {
        "line": "nightly-distill: {days}일, 항목 {judged}개 판단 → {kept}개 보관, 교훈 {lessons}개, "
        "{dropped}개 버림; 승격 {promoted}, 만료 {expired}, 병합 {merged}, 표시 {flagged}",
        "review": "; 검토: 새 항목 {new}개, 열린 항목 {open}개",
    },
}


LASTING = judges.LASTING  # the layers whose lines may give a kept slot a new value


@dataclass
class Report:
    workspace: str
    date: str
    dry_run: bool = False
    commit: str | None = None
    days: list[dict] = field(default_factory=list)
    judged: int = 0
    decisions: Counter = field(default_factory=Counter)
    added: list[dict] = field(default_factory=list)
    lessons: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    promoted: list[dict] = field(default_factory=list)
    expired: list[dict] = field(default_factory=list)
    merged: list[dict] = field(default_factory=list)
    flagged: list[dict] = field(default_factory=list)
    review: dict = field(default_factory=dict)  # review.Night: raised, closed, superseded, open
    superseded: list[dict] = field(default_factory=list)  # {id, by, why}: a diary line's change
    refs_written: dict[str, int] = field(default_factory=dict)
    judges: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    changed: bool = False
    fallback: list[dict] = field(default_factory=list)  # apply: items the offline judge decided
    lang: str = "en"  # the workspace's language (templates.language): the summary's words

    def summary(self) -> str:
        """One line for the log and the report, in the workspace's language (`lang`): days read,
        items judged, what was kept, promoted, expired, merged and flagged."""
        kept = sum(self.decisions[k] for k in ("M0", "M365", "M90", "M30"))
        words = SUMMARY.get(self.lang, SUMMARY["en"])
        line = words["line"].format(
            days=len(self.days),
            judged=self.judged,
            kept=kept,
            lessons=self.decisions["lesson"],
            dropped=self.decisions["drop"],
            promoted=len(self.promoted),
            expired=len(self.expired),
            merged=len(self.merged),
            flagged=len(self.flagged),
        )
        if self.review.get("raised") or self.review.get("open"):
            line += words["review"].format(new=len(self.review["raised"]), open=self.review["open"])
        return line

    def to_dict(self) -> dict:
        """Every field as JSON-ready data, with the decision counts and the summary line."""
        data = dict(self.__dict__.items())
        data["decisions"] = dict(self.decisions)
        data["summary"] = self.summary()
        return data


# -- the run ----------------------------------------------------------------------------------
class _Snapshot:
    """The bytes of every file the plan read, to check nothing changed before writing."""

    def __init__(self, ws):
        self.ws = ws
        self.seen: dict[str, bytes] = {}

    def read(self, rel: str) -> bytes:
        if rel not in self.seen:
            self.seen[rel] = read_bytes(self.ws.root / rel)
        return self.seen[rel]

    def text(self, rel: str) -> str:
        return self.read(rel).decode("utf-8", errors="surrogateescape")


def distill(
    ws, day: dt.date | str | None = None, panel: judges.Panel | None = None, dry_run: bool = False
) -> Report:
    """Distil the workspace as of `day` (default today), then send the report over the
    configured transports when the run committed something. Returns the report; writes nothing
    when dry_run or when there is nothing to do."""
    report = _distill_files(ws, day, panel, dry_run)
    if report.commit and not dry_run:
        send_report(ws, report)
    return report


def plan(ws, day: dt.date | str | None = None) -> dict:
    """What the night as of `day` (default today) would judge, for the host agent to decide:
    the items with their evidence, choices and the offline judge's suggestion, a plan id tied to
    MEMORY.md and the ledger, and how to answer (giok.lifecycle.distill_plan). Writes nothing."""
    from giok.lifecycle import distill_plan

    day = _the_day(day)
    snap = _Snapshot(ws)
    panel = distill_plan.CapturePanel()
    report, _ = _Run(ws, snap, day, panel, {}).plan()
    return distill_plan.render(ws, day, snap, panel, report)


def apply(ws, answer, dry_run: bool = False) -> Report:
    """Run the night a plan described, judged by the agent's `answer` ({"plan": ID, "decisions":
    {KEY: {"decision", "reason"}}}, as JSON text or parsed): items it left out or answered
    invalidly are decided by the offline judge (report.fallback); a stale plan is a ConflictError."""
    from giok.lifecycle import distill_plan

    pid, decisions = distill_plan.read_answer(answer)
    panel = distill_plan.AgentPanel(distill_plan.RecordedJudge(decisions))
    report = _distill_files(ws, distill_plan.day_of(pid), panel, dry_run, check=distill_plan.stale_check(pid))
    panel.account(report)
    if report.commit and not dry_run:
        send_report(ws, report)
    return report


def _the_day(day: dt.date | str | None) -> dt.date:
    day = parse_date(day) if isinstance(day, str) else (day or today())
    if day > today():
        raise InvalidInput(f"cannot distill {day}: it is in the future (today is {today()})")
    return day


def _distill_files(
    ws, day: dt.date | str | None, panel: judges.Panel | None, dry_run: bool, check=None
) -> Report:
    """The run itself: plan, then one commit (retried when someone wrote meanwhile). `check`
    sees each snapshot the run plans from and may refuse it (a stale agent plan)."""
    day = _the_day(day)
    panel = panel or judges.from_config(ws)
    cache: dict[str, judges.Verdict] = {}
    for _ in range(3):
        snap = _Snapshot(ws)
        run = _Run(ws, snap, day, panel, cache)
        if check:
            check(snap)
        report, writes = run.plan()
        report.dry_run = dry_run
        if dry_run:
            return report
        if not writes:
            if _finish_interrupted(ws, day):
                continue  # an interrupted run was rolled back: plan again from committed files
            return report
        try:
            report.commit = ws.write_files(
                writes,
                f"nightly-distill: {day.isoformat()}\n\n{report.summary()}",
                before=snap.seen,
                also=OWN_PATHS,
            )
            return report
        except DirtyFileError:
            continue  # someone wrote meanwhile: plan again (verdicts are cached)
    return _distill_locked(ws, day, panel, cache, check)


def _distill_locked(ws, day: dt.date, panel, cache, check=None) -> Report:
    """The last try, for a busy workspace: plan under the workspace lock, so nobody can write
    in between. Verdicts from the earlier tries are cached; only items that arrived since are
    judged while other writers wait."""
    planned: dict[str, Report] = {}

    def plan_locked(_read):
        snap = _Snapshot(ws)
        run = _Run(ws, snap, day, panel, cache)
        if check:
            check(snap)
        report, writes = run.plan()
        planned["report"] = report
        return writes

    commit = ws.write_files(
        plan_locked,
        lambda: f"nightly-distill: {day.isoformat()}\n\n{planned['report'].summary()}",
        also=OWN_PATHS,
    )
    planned["report"].commit = commit
    return planned["report"]


def _finish_interrupted(ws, day: dt.date) -> bool:
    """Settle a run (or any write) a crash interrupted: its journal is rolled back, or found
    committed (giok.store.journal). True when files changed, so the plan must be made again."""
    if not ws.layout.journal.exists():
        return False
    settled = ws.recover()
    return bool(settled and settled["restored"])


# -- the references watermark, kept in MEMORY.md next to the counts it describes ---------------
REFS_MARK_RE = lazy(r"^<!--\s*giok:refs-counted-until\s+(\S+)\s*-->$")


def refs_mark(mf: MemoryFile) -> dt.datetime | None:
    """Until when the reference log has been added into the entries' `refs` fields."""
    for line in mf.lines:
        m = isinstance(line, RawLine) and REFS_MARK_RE.match(line.raw.strip())
        if m:
            try:
                return dt.datetime.fromisoformat(m.group(1))
            except ValueError:
                return None
    return None


def set_refs_mark(mf: MemoryFile, at: dt.datetime) -> None:
    mark = RawLine(f"<!-- giok:refs-counted-until {at.isoformat(timespec='seconds')} -->")
    for n, line in enumerate(mf.lines):
        if isinstance(line, RawLine) and REFS_MARK_RE.match(line.raw.strip()):
            mf.lines[n] = mark
            return
    first = mf.lines[0] if mf.lines else None
    mf.insert_line(1 if isinstance(first, Heading) and first.layer is None else 0, mark)


ARCHIVE_HEADING = {  # the first line of memory/archive/YYYY-MM.md, in the workspace's language
    "en": "# Archive {month} : memories that left MEMORY.md (searchable, never injected)\n",
    "ko": "# 보관 {month} : MEMORY.md에서 나간 기억 (검색은 되고 주입은 되지 않는다)\n",
}


def rivals(ws, mf: MemoryFile, text: str, day=None, index: policy.Index | None = None) -> list[MemoryEntry]:
    """The live entries of `mf` (the workspace's MEMORY.md) a line may give a new value, as a judge
    that reads pairs is shown them: `policy.rivals`, with the workspace's own search naming the
    entries nearest in meaning (`search.nearest_entries`)."""
    from giok.retrieval import search

    return policy.rivals(mf, text, "workspace", day, index, search.nearest_entries(ws, text))


class _Run:
    def __init__(self, ws, snap: _Snapshot, day: dt.date, panel: judges.Panel, cache: dict):
        self.ws, self.snap, self.day, self.panel, self.cache = ws, snap, day, panel, cache
        self.at = now() if day == today() else dt.datetime.combine(day, dt.time(23, 59, 59))
        self.report = Report(
            ws.name, day.isoformat(), judges=panel.names or ["offline"], lang=templates.language(ws)
        )
        self.ledger = Ledger.parse(snap.text(LEDGER))
        self.mf = MemoryFile.parse(snap.read(MEMORY) or empty().encode())
        self.archives: dict[str, MemoryFile] = {}
        self.lesson_blocks: list[str] = []
        self.touched_memory = False
        self.queue = ReviewFile()  # state/review.md, read by the review pass
        self.review_changed = False
        self.first_ids: set[str] = set()  # MEMORY.md's ids as the night found them (_with_rivals)
        self.policy_index: policy.Index | None = None  # built at the first compare
        self.indexed = False

    def plan(self) -> tuple[Report, dict[str, bytes]]:
        self._write_back_refs()
        diary = self._diary_items()
        if self.panel.reads_pairs:
            self._with_rivals(diary)
        candidates = self._candidates()
        decided = self._judge(diary + candidates)
        self._apply_diary(diary, decided)
        self._apply_promotions(candidates, decided)
        self._expire()
        self._review()
        return self.report, self._writes()

    # -- references ---------------------------------------------------------------------------
    def _write_back_refs(self) -> None:
        events30 = refs.used(self.ws, self.at - dt.timedelta(days=30), self.at)  # boot injections count 0
        self.window30: Counter[str] = Counter()
        self.window14: Counter[str] = Counter()
        for e in events30:
            self.window30[e["id"]] += refs.weight(e)
            if e["at"] >= self.at - dt.timedelta(days=14):
                self.window14[e["id"]] += refs.weight(e)
        self.days30 = Counter(i for i, _ in {(e["id"], e["at"].date()) for e in events30})
        since = refs_mark(self.mf) or self.ledger.refs_until
        if since and since >= self.at:
            return
        fresh = refs.counts(self.ws, since, self.at)
        for entry in self.mf.entries():
            if fresh.get(entry.id):
                entry.set("refs", entry.refs + fresh[entry.id])
                self.report.refs_written[entry.id] = entry.refs
                self.touched_memory = True

    # -- diary items --------------------------------------------------------------------------
    def _diary_items(self) -> list[judges.Item]:
        items = []
        for rel, day in self._diary_days():
            found = diary_items(self.snap.text(rel))
            start = self.ledger.days.get(day, 0)
            if len(found) <= start:
                continue
            new = [
                (n, policy.redact(text)[0])
                for n, (_, text) in enumerate(found[start:], start)
                if not is_own_line(text) and not is_turn_log(text)
            ]
            self.ledger.days[day] = len(found)
            if new:
                self.report.days.append({"day": day, "items": len(new)})
            items += [
                judges.Item(key=f"diary:{day}#{n}", kind="diary", text=text, day=day) for n, text in new
            ]
        return items

    def _with_rivals(self, items: list[judges.Item]) -> None:
        """Each diary line with the live entries it may give a new value (`rivals`), for a judge
        that reads pairs: MEMORY.md as the night found it."""
        self.first_ids = set(self.mf.ids())  # an entry this night adds has an id no plan can know
        for item in items:
            if item.text not in self.panel.rivals:  # a retry of the night asks the search no more
                found = rivals(self.ws, self.mf, policy.normalize(item.text), self.day, self._policy_index())
                self.panel.rivals[item.text] = judges.shown(found)
            item.rivals = self.panel.rivals[item.text]

    def _diary_days(self) -> list[tuple[str, str]]:
        return [
            (rel, day) for rel, day in layout.Layout(self.ws.root).diaries() if day <= self.day.isoformat()
        ]

    # -- promotion candidates -----------------------------------------------------------------
    def _candidates(self) -> list[judges.Item]:
        live = [e for e in self.mf.entries() if not e.superseded]
        self.token_of = {e.id: tokens(e.text) for e in self.mf.entries()}
        links = self._links(live)
        role = tokens(self.snap.text("SOUL.md") + "\n" + self.snap.text("AGENTS.md"))
        out = []
        for e in live:
            if e.layer not in ("M30", "M90", "M365") or is_own_line(e.text):
                continue  # giok's own lines are never promoted (an older run may have kept one)
            item = judges.Item(
                key=f"entry:{e.id}",
                kind="entry",
                text=e.text,
                day=e.date.isoformat() if e.date else "",
                layer=e.layer,
                type=e.type,
                refs_14d=self.window14.get(e.id, 0),
                refs_30d=self.window30.get(e.id, 0),
                ref_days_30=self.days30.get(e.id, 0),
                refs_total=e.refs,
                links=links.get(e.id, 0),
                role=len(self.token_of[e.id] & role) / max(1, len(self.token_of[e.id])),
                expired=e.expired(self.day),
            )
            if _worth_asking(item):
                out.append(item)
        return out

    def _links(self, live: list[MemoryEntry]) -> Counter:
        """How many other live entries share two or more words with each entry, plus explicit
        supersedes links."""
        postings: dict[str, list[str]] = {}
        for e in live:
            for t in self.token_of[e.id]:
                postings.setdefault(t, []).append(e.id)
        limit = max(5, len(live) // 5)
        links: Counter[str] = Counter()
        for e in live:
            shared = Counter(
                o for t in self.token_of[e.id] if len(postings[t]) <= limit for o in postings[t] if o != e.id
            )
            links[e.id] = sum(1 for n in shared.values() if n >= 2)
            for key in ("supersedes", "superseded_by"):
                if e.fields.get(key):
                    links[e.id] += 1
        return links

    # -- judging ------------------------------------------------------------------------------
    def _judge(self, items: list[judges.Item]) -> dict[str, judges.Verdict]:
        ask = [i for i in items if f"{i.key}|{i.text}|{i.layer}" not in self.cache]
        context = {
            "workspace": self.ws.name,
            "today": self.day.isoformat(),
            "role": (self.snap.text("SOUL.md") + "\n" + self.snap.text("AGENTS.md")).strip(),
        }
        decisions = self.panel.decide(ask, context)
        self.report.notes += decisions.notes
        for item in ask:
            self.cache[f"{item.key}|{item.text}|{item.layer}"] = decisions.verdicts[item.key]
        return {i.key: self.cache[f"{i.key}|{i.text}|{i.layer}"] for i in items}

    def _apply_diary(self, items: list[judges.Item], decided: dict) -> None:
        index = _DupIndex(self.mf)
        lessons_text = self.snap.text(LESSONS)
        for item in items:
            verdict, changes = self._in_context(item, decided[item.key])
            # a slot's new value; a line merely near another in its characters ("Priya's phone
            # battery at 96%" / "… watch battery at 95%") is left to the review pass
            replaced = changes[0] if changes is not None and changes[1].startswith("replaces ") else None
            if self.panel.reads_pairs and verdict.decision in LASTING:
                self.panel.saw(
                    item, replaced if replaced is not None and replaced.id in self.first_ids else None
                )
            self.report.judged += 1
            if verdict.decision == "drop":
                self.report.dropped.append({"day": item.day, "text": item.text, "reason": verdict.reason})
            elif verdict.decision == "lesson":
                if not self._add_lesson(item, verdict, lessons_text):
                    self.report.decisions["duplicate"] += 1
                    continue
            else:
                same = index.find(item.text)
                if same:
                    self.report.skipped.append({"day": item.day, "text": item.text, "duplicate_of": same})
                    self.report.decisions["duplicate"] += 1
                    continue
                entry = self._add_entry(item, verdict)
                index.add(entry)
                if changes is not None and replaced is not None and not replaced.superseded:
                    review.supersede(self.mf, replaced, entry, self.day)
                    self.report.superseded.append({"id": replaced.id, "by": entry.id, "why": changes[1]})
            self.report.decisions[verdict.decision] += 1

    def _in_context(
        self, item: judges.Item, verdict: judges.Verdict
    ) -> tuple[judges.Verdict, tuple[MemoryEntry, str] | None]:
        """The verdict on a line in the light of what is kept, and the entry the line changes,
        with why, as `remember` finds it (policy.compare, the one judgement of a change): a kept
        line that changes an entry replaces it ("Priya has started eating fish again, so she is
        pescatarian now" after "Priya is vegetarian"). Only a line kept beyond a day (LASTING)
        asks: a line the night drops stays dropped (unlike `remember`, which keeps a note it finds
        trivial when it changes a kept memory: there a person asked to keep it). Asking of
        dropped lines too found no change on the 90-day life or on LoCoMo conv-42 and replaced
        22 numbers that change by nature and 11 trivia lines on the 90-day life, for a fifth of
        the night's CPU on LoCoMo (docs/distill.md). The review pass reads the pairs the write
        policy does not settle."""
        if verdict.replaces is not None and verdict.decision in LASTING:
            said = self._said(item, verdict)
            if said is not None:
                return verdict, said or None
        if verdict.decision not in LASTING:
            return verdict, None  # dropped, a lesson, or a fact of the day: no lasting slot's new value
        text = policy.normalize(item.text)
        found, target, why = policy.compare(self.mf, text, "workspace", self.day, index=self._policy_index())
        if found != "supersede" or target is None:
            return verdict, None
        return verdict, (target, why)

    def _said(self, item: judges.Item, verdict: judges.Verdict) -> tuple[MemoryEntry, str] | tuple[()] | None:
        """The entry a judge that read the pair says a kept line replaces (`verdict.replaces`):
        (entry, why), () where it says none, or None where it names no live entry of MEMORY.md
        (then the write policy's compare decides, and the report says so)."""
        if not verdict.replaces:
            return ()
        live = [
            e for e in self.mf.entries() if e.id == verdict.replaces and policy.live(e, "workspace", self.day)
        ]
        if not live:
            self.report.notes.append(
                f"{verdict.judge}: {verdict.replaces!r} is no live entry of MEMORY.md; what "
                f'"{item.text[:60]}" replaces was left to the write policy'
            )
            return None
        return live[-1], verdict.why_replaced()

    def _policy_index(self) -> policy.Index | None:
        """The write policy's index of MEMORY.md as this run changes it (built at the first
        compare, told of every entry added): the same decisions as comparing every entry
        (policy.Index), for a few of them. None where an id is written twice (copied by hand):
        then every entry is compared, as `remember` does."""
        if not self.indexed:
            entries = self.mf.entries()
            unique = len({e.id for e in entries}) == len(entries)
            self.policy_index = policy.Index(self.mf) if unique else None
            self.indexed = True
        return self.policy_index

    def _add_entry(self, item: judges.Item, verdict: judges.Verdict) -> MemoryEntry:
        date = dt.date.fromisoformat(item.day)
        days = LAYER_DAYS[verdict.decision]
        entry = MemoryEntry(
            text=item.text,
            layer=verdict.decision,
            date=date,
            expires=date + dt.timedelta(days=days) if days else None,
        )
        if not hasattr(self, "taken"):
            self.taken = self.mf.ids()
        entry.fields = {
            "id": new_id(self.taken),
            "type": judges.guess_type(item.text),
            "scope": "workspace",
            "source": f"diary:{item.day}",
        }
        self.taken.add(entry.fields["id"])
        self.mf.add(entry)
        if self.policy_index is not None:
            self.policy_index.add(entry)
        self.touched_memory = True
        self.report.added.append({**entry.to_dict(), "reason": verdict.reason, "judge": verdict.judge})
        return entry

    def _add_lesson(self, item: judges.Item, verdict: judges.Verdict, existing: str) -> bool:
        line = f"- {item.text}"
        if line in existing.splitlines() or any(line in b for b in self.lesson_blocks):
            self.report.skipped.append({"day": item.day, "text": item.text, "duplicate_of": LESSONS})
            return False
        title = item.text if len(item.text) <= 60 else item.text[:59] + "…"
        self.lesson_blocks.append(f"## [{item.day}] {title}\n{line}\n- source: diary:{item.day}\n")
        self.report.lessons.append(
            {"day": item.day, "text": item.text, "reason": verdict.reason, "judge": verdict.judge}
        )
        return True

    def _apply_promotions(self, items: list[judges.Item], decided: dict) -> None:
        for item in items:
            verdict = decided[item.key]
            if verdict.decision == "keep" or verdict.decision not in item.choices():
                continue
            if verdict.decision == "M0" and verdict.judge == "offline":
                continue  # never to M0 without a judge's explicit decision
            entry_id = item.key.split(":", 1)[1]
            entry = self.mf.move(entry_id, verdict.decision)
            days = LAYER_DAYS[verdict.decision]
            entry.expires = self.day + dt.timedelta(days=days) if days else None
            self.touched_memory = True
            self.report.promoted.append(
                {
                    "id": entry_id,
                    "from": item.layer,
                    "to": verdict.decision,
                    "text": item.text,
                    "reason": verdict.reason,
                    "judge": verdict.judge,
                }
            )

    # -- expiry and review --------------------------------------------------------------------
    def _expire(self) -> None:
        for entry in list(self.mf.entries()):
            if entry.expired(self.day):
                assert entry.expires is not None  # only an entry with an expiry date expires
                where = self._archive(entry, status="expired")
                self.report.expired.append(
                    {
                        "id": entry.id,
                        "layer": entry.layer,
                        "text": entry.text,
                        "expires": entry.expires.isoformat(),
                        "archive": where,
                    }
                )

    def _archive(self, entry: MemoryEntry, status: str, **extra) -> str:
        month = (
            (entry.expires or self.day).strftime("%Y-%m")
            if status == "expired"
            else self.day.strftime("%Y-%m")
        )
        rel = f"{ARCHIVE_DIR}/{month}.md"
        if rel not in self.archives:
            header = ARCHIVE_HEADING[self.report.lang].format(month=month)
            self.archives[rel] = MemoryFile.parse(self.snap.read(rel) or header.encode())
        self.mf.remove(entry.id)
        self.touched_memory = True
        archive = self.archives[rel]
        if archive.find(entry.id) is None:  # a rerun after a crash does not archive twice
            entry.fields.setdefault("id", entry.id)
            entry.set("status", status)
            entry.set("archived", self.day.isoformat())
            for key, value in extra.items():
                entry.set(key, value)
            archive.add(entry)
        return rel

    def _review(self) -> None:
        live = [e for e in self.mf.entries() if not e.superseded]
        self.token_of.update({e.id: tokens(e.text) for e in live if e.id not in self.token_of})
        self._merge_duplicates(live)
        live = [e for e in self.mf.entries() if not e.superseded]
        self._flag_contradictions(live)
        self._flag_stale(live)

    def _merge_duplicates(self, live: list[MemoryEntry]) -> None:
        order = sorted(
            live, key=lambda e: (-judges.RANK.get(e.layer or "M30", 1), e.date or dt.date.min, e.line_no)
        )
        index = _DupIndex(None)
        for entry in order:
            keep_id = index.find(entry.text, entry.scope)
            if not keep_id:
                index.add(entry)
                continue
            keeper = self.mf.find(keep_id)
            assert keeper is not None  # the index holds only entries of this file
            keeper.set("refs", keeper.refs + entry.refs or None)
            self._archive(entry, status="merged", merged_into=keep_id)
            self.report.merged.append({"id": entry.id, "into": keep_id, "text": entry.text})

    def _flag_contradictions(self, live: list[MemoryEntry]) -> None:
        """The review queue (giok.lifecycle.review): a new reading or a change supersedes the
        older entry; a contradiction or an unsure change is raised into state/review.md once and
        flagged the night it is raised; open items whose entries are gone close."""
        self.queue = ReviewFile.parse(self.snap.text(REVIEW))
        pairs = _pairs(live, self.token_of, 0.2, min_tokens=2)
        night = review.settle(self.mf, self.queue, pairs, self.day)
        self.touched_memory |= bool(night.superseded)
        self.review_changed = night.queue_changed
        self.report.review = night.to_dict()
        for item in night.raised:
            self.report.flagged.append(
                {
                    "kind": item.kind,
                    "ids": item.ids,
                    "item": item.id,
                    "message": f"{item.id}: {' / '.join(repr(e.text) for e in item.entries)} may disagree "
                    f"({item.why}); `giok review resolve {item.id} --newer|--both|--forget ID`",
                }
            )

    def _flag_stale(self, live: list[MemoryEntry]) -> None:
        cutoff = self.day - dt.timedelta(days=14)
        for e in live:
            if e.type == "workflow" and e.date and e.date < cutoff:
                self.report.flagged.append(
                    {
                        "kind": "stale-workflow",
                        "ids": [e.id],
                        "message": f"{e.id} is workflow state from {e.date}: still true?",
                    }
                )
        m = re.search(r"updated (\d{4}-\d{2}-\d{2})", self.snap.text(MEMO))
        if m and m.group(1) < cutoff.isoformat():
            self.report.flagged.append(
                {
                    "kind": "stale-memo",
                    "ids": [],
                    "message": f"{MEMO} was last updated {m.group(1)}: review it",
                }
            )

    # -- output -------------------------------------------------------------------------------
    def _writes(self) -> dict[str, bytes]:
        r = self.report
        if not (r.days or self.touched_memory or self.lesson_blocks or self.review_changed):
            return {}
        r.changed = True
        writes: dict[str, bytes] = {rel: mf.render() for rel, mf in sorted(self.archives.items())}
        if self.review_changed:
            writes[REVIEW] = self.queue.render()
        if self.lesson_blocks:
            base = self.snap.text(LESSONS) or f"# lessons.md : {self.ws.name}\n"
            base = base if base.endswith("\n") else base + "\n"
            writes[LESSONS] = (base + "".join("\n" + b for b in self.lesson_blocks)).encode(
                "utf-8", "surrogateescape"
            )
        since = refs_mark(self.mf) or self.ledger.refs_until
        if not since or since < self.at:
            set_refs_mark(self.mf, self.at)  # in the same file, so the same atomic write, as the counts
        writes[MEMORY] = self.mf.render()
        rel = self.ws.diary_path(self.day)
        old = self.snap.text(rel) or f"# {self.day.isoformat()}\n\n"
        old = old if old.endswith("\n") else old + "\n"
        writes[rel] = (old + f"- {self.at:%H:%M} {OWN_MARK} {r.summary()}\n").encode(
            "utf-8", "surrogateescape"
        )
        self.ledger.days[self.day.isoformat()] = len(
            diary_items(writes[rel].decode("utf-8", "surrogateescape"))
        )
        self.ledger.refs_until = None  # older versions kept the watermark here; MEMORY.md holds it now
        writes[LEDGER] = self.ledger.render().encode()
        return writes


def _worth_asking(item: judges.Item) -> bool:
    """Entries the judges look at: those the references put near a promotion."""
    if item.layer == "M30":
        return item.refs_14d >= 2
    if item.layer == "M90":
        return item.ref_days_30 >= 3
    return item.refs_30d >= 8  # M365 → M0 only by an LLM judge's explicit decision


class _DupIndex:
    """Finds a live entry of the same scope that says the same thing, by the write policy's rule
    (giok.text.likeness: the same key, or a rewording with the same polarity, numbers and
    subject): "must ship" and "must not ship" are opposites, never duplicates."""

    def __init__(self, mf: MemoryFile | None):
        self.exact: dict[tuple[str, str], str] = {}
        self.postings: dict[str, list[tuple[str, likeness.Features, str]]] = {}
        for e in mf.entries() if mf else []:
            if not e.superseded:
                self.add(e)

    def add(self, entry: MemoryEntry) -> None:
        features = likeness.features(entry.text)
        self.exact[(features.key, entry.scope)] = entry.id
        for word in features.words:
            self.postings.setdefault(word, []).append((entry.id, features, entry.scope))

    def find(self, text: str, scope: str = "workspace") -> str | None:
        mine = likeness.features(text)
        hit = self.exact.get((mine.key, scope))
        if hit:
            return hit
        for word in sorted(mine.words, key=lambda w: len(self.postings.get(w, ())))[:3]:
            for entry_id, other, other_scope in self.postings.get(word, ()):
                if other_scope == scope and likeness.near_duplicate(mine, other):
                    return entry_id
        return None


def disagree(a: str, b: str) -> bool:
    """May these two live statements not both be true? The same claim with the opposite
    polarity in either language (policy.opposed), or one replaces the other by the write
    policy's rules (policy.contradicts: a changed preference, place or value)."""
    return policy.opposed(a, b) or policy.contradicts(a, b) or policy.contradicts(b, a)


def _pairs(entries: list[MemoryEntry], token_of: dict, threshold: float, min_tokens: int = 3):
    """Pairs of entries whose words overlap at least `threshold` (Jaccard)."""
    postings: dict[str, list[int]] = {}
    for n, e in enumerate(entries):
        for t in token_of[e.id]:
            postings.setdefault(t, []).append(n)
    seen = set()
    for n, e in enumerate(entries):
        for t in token_of[e.id]:
            for m in postings[t]:
                if m <= n or (n, m) in seen:
                    continue
                seen.add((n, m))
                if (
                    similar(token_of[e.id], token_of[entries[m].id]) >= threshold
                    and len(token_of[e.id]) >= min_tokens
                ):
                    yield e, entries[m]


# -- sending the report ------------------------------------------------------------------------
# The seed's last step: "마지막으로 Simon DM으로 요약 보고를 보낸다". Off unless configured, in the
# home config or the workspace's own entry, with cross-view's transports:
#   "distill_report": {"transports": ["telegram"], "telegram": {"chat_id": "12345"}}
#   "distill_report": {"transports": ["local"], "local": {"to": ["miyon"]}}
# telegram settings default to crossview.telegram's (token_env, base_url, timeout); local posts
# to those agents' inboxes on the cross-view bus. A run that committed something sends once; a
# failed delivery is a note in the report, never a failed distill.

REPORT_KEY = "distill_report"
REPORT_ITEMS = 5


def report_text(report: Report) -> str:
    """The short report sent to the user: the summary, then the first few of each change."""
    lines = [f"{report.workspace} {report.summary()}"]
    lines += [f"+ {a['layer']} {a['text']}" for a in report.added[:REPORT_ITEMS]]
    lesson_word = "교훈" if report.lang == "ko" else "lesson"
    lines += [f"+ {lesson_word}: {lesson['text']}" for lesson in report.lessons[:REPORT_ITEMS]]
    lines += [f"↑ {p['from']}→{p['to']} {p['text']}" for p in report.promoted[:REPORT_ITEMS]]
    lines += [f"! {f['message']}" for f in report.flagged[:REPORT_ITEMS]]
    text = "\n".join(lines)
    return text if len(text) <= 4000 else text[:3999] + "…"


def send_report(ws, report: Report) -> dict:
    """Deliver the report over the configured transports; {transport: outcome}. Outcomes and
    failures are also added to report.notes."""
    spec = llm.configured(ws, REPORT_KEY)
    if not spec:
        return {}
    names = spec.get("transports") if isinstance(spec, dict) else None
    if not isinstance(names, list) or not names:
        report.notes.append(f'report not sent: `{REPORT_KEY}` needs a list of transports, e.g. ["telegram"]')
        return {}
    shared = ws.home.setting("crossview", {}) or {}
    outcome: dict[str, dict] = {}
    for name in names:
        try:
            settings = {**(shared.get(name) or {}), **(spec.get(name) or {})}
            if name == "local":
                to = settings.get("to")
                if not to:
                    raise InvalidInput(
                        f"`{REPORT_KEY}.local.to` must name the agents whose inbox gets the report"
                    )
                sent = crossview.Bus(ws.home).send(
                    report_text(report), ws.name, [to] if isinstance(to, str) else list(to)
                )
                outcome[name] = {"ok": True, "message": sent["id"]}
            else:
                message = _ReportMessage(
                    f"report-{report.date}", ws.name, "post", report_text(report), report.date
                )
                outcome[name] = crossview.transport_class(name)(settings, ws.home).deliver(message, None)  # type: ignore[arg-type]  # no bus: not a reply
        except (GiokError, OSError) as exc:
            outcome[name] = {"ok": False, "error": str(exc)}
        except Exception as exc:  # a third-party transport's bug must not fail the night either
            outcome[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        ok = outcome[name].get("ok", True)
        report.notes.append(
            f"report sent over {name}" if ok else f"report not sent over {name}: {outcome[name].get('error')}"
        )
    return outcome


class _ReportMessage(crossview.Message):
    def render(self, tag: str = crossview.TAG) -> str:  # a direct message to the user: no tag
        return self.text
