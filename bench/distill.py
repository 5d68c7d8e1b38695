"""Distillation and watchdog figures.

    .venv/bin/python bench/distill.py [--days 90] [--per-day 20]

Builds a workspace with DAYS days of diaries (PER_DAY items a day, a realistic mix of
decisions, facts, lessons, chatter in English and Korean) and a reference log, then times one
catch-up distillation of all of it: with the offline judge, and with a panel of three judges
plus a synthesizer against a local OpenAI/Anthropic-compatible test server (in-process, so
the figure is giok's own overhead, not a model's latency). Prints the watchdog levels for
the seed's 150,000-token window."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the local test LLM server

TEMPLATES = [
    "Decided to {verb} the {thing} before {when}",
    "Seojun prefers {thing} reviews in the {part}",
    "Lesson: the {thing} broke because we skipped the {check}",
    "Met {who} to discuss the {thing} plan, {n} open questions",
    "Shipped {thing} v{n}.{m} to staging",
    "hi",
    "ok thanks",
    "what time is the {thing} sync?",
    "Had coffee and lunch with {who}",
    "{who} launched the {thing} beta",
    "The {thing} benchmark took {n} seconds on {m} cores",
    "오늘 {thing} 초안을 {n}쪽 썼다",
    "서준은 {part}에 짧은 보고를 선호한다",
    "{thing} 배포를 월요일에 하기로 결정했다",
    "Found that the {thing} cache misses after {n} minutes",
    "Pending: write the {thing} migration notes",
]
WORDS = {
    "verb": ["refactor", "rewrite", "split", "freeze", "document"],
    "thing": [
        "parser",
        "index",
        "essay",
        "VibeDojo",
        "QRT pool",
        "blog sync",
        "release script",
        "memory essay",
        "crawler",
    ],
    "when": ["Friday", "the launch", "March", "the demo"],
    "part": ["morning", "evening", "afternoon"],
    "check": ["smoke test", "lint", "review", "dry run"],
    "who": ["Minsu", "Jiyoon", "Simon", "Sion", "Sano"],
}


def build(root: Path, days: int, per_day: int, end: dt.date):
    from giok import Home, Workspace
    from giok.store import git, refs

    ws, _ = Workspace.init(root, name="bench", user="Seojun", home=Home(root.parent / "home"))
    rng = random.Random(7)
    for offset in range(days, 0, -1):
        day = end - dt.timedelta(days=offset - 1)
        lines = [f"# {day.isoformat()}", ""]
        for n in range(per_day):
            words = {k: rng.choice(v) for k, v in WORDS.items()}
            text = rng.choice(TEMPLATES).format(n=rng.randint(2, 40), m=rng.randint(1, 9), **words)
            lines.append(f"- {8 + n * 12 // per_day:02d}:{rng.randint(0, 59):02d} {text} (#{offset}-{n})")
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines) + "\n")
    git.commit(root, ["memory"], "bench: diaries")
    os.environ["GIOK_NOW"] = f"{end.isoformat()}T12:00"
    for i in range(40):
        ws.remember(f"Standing fact number {i} about the {WORDS['thing'][i % 9]} project", layer="M30")
    ids = [e.id for e in ws.memory().entries("M30")]
    for i in range(300):
        refs.record(ws, [ids[i % 12]], "search")
    return ws


def timed(label, root: Path, base: Path, panel_factory=None):
    from giok import Home, Workspace
    from giok.lifecycle.distill import distill

    shutil.copytree(base, root, symlinks=True)
    home = Home(base.parent / "home")
    ws = Workspace(root, name="bench", home=home)
    panel = panel_factory() if panel_factory else None
    started = time.perf_counter()
    report = distill(ws, panel=panel)
    seconds = time.perf_counter() - started
    print(f"{label:<44} {seconds:7.2f} s  | {report.summary()}")
    for note in report.notes[:3]:
        print(f"{'':<44}   note: {note}")
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--per-day", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    tmp = Path(tempfile.mkdtemp(prefix="giok-bench-"))
    os.environ["GIOK_HOME"] = str(tmp / "home")
    end = dt.date(2026, 3, 31)
    os.environ["GIOK_NOW"] = f"{end.isoformat()}T23:00"
    base = tmp / "base"
    build(base, args.days, args.per_day, end)
    os.environ["GIOK_NOW"] = f"{end.isoformat()}T23:00"
    print(
        f"workspace: {args.days} days x {args.per_day} items = {args.days * args.per_day} diary items, "
        f"40 entries, 300 references; cpus {os.cpu_count()}"
    )

    timed("offline judge", tmp / "offline", base)
    from giok.providers import llm
    from giok.write.judges import LLMJudge, Panel
    from llm_server import FakeLLM

    with FakeLLM() as server:

        def panel():
            return Panel(
                [
                    LLMJudge(llm.client(server.spec("good-M30", name="gpt"))),
                    LLMJudge(llm.client(server.spec("good-M90", provider="anthropic", name="claude"))),
                    LLMJudge(llm.client(server.spec("good-drop", name="grok"))),
                ],
                synthesizer=LLMJudge(llm.client(server.spec("good-M30", provider="anthropic", name="opus"))),
            )

        timed("panel 3 judges + synthesizer (local server)", tmp / "panel", base, panel)
        print(f"{'':<44}   {len(server.requests)} HTTP requests")

        def degraded():
            return Panel(
                [
                    LLMJudge(llm.client(server.spec("good-M30", name="gpt"))),
                    LLMJudge(llm.client(server.spec("garbage", name="broken"))),
                    LLMJudge(llm.client(server.spec("error", name="down"))),
                ],
                synthesizer=LLMJudge(llm.client(server.spec("error", name="synth-down"))),
            )

        timed("panel, 2 of 3 judges + synthesizer failing", tmp / "degraded", base, degraded)

    from giok.lifecycle.watchdog import level

    print(
        "watchdog, window 150,000:",
        ", ".join(f"{u:,} → {level(u, 150_000)}" for u in (104_999, 105_000, 129_749, 129_750)),
    )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
