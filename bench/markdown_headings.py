"""Headings: giok's hand-written grammar against markdown-it-py (docs/architecture.md).

    python -m venv .venv-md && .venv-md/bin/pip install markdown-it-py
    .venv-md/bin/python bench/markdown_headings.py [FOLDER...]

Reads every .md file under the folders (default: tests/data and docs), times the headings each
reader finds (mean of 3) and lists the files where they disagree."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("grammar", ROOT / "src/giok/store/grammar.py")
assert _spec and _spec.loader
grammar = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(grammar)
MD = MarkdownIt("commonmark")


def hand(text: str) -> set[tuple[int, int, str]]:
    return {(i, h.level, h.title) for i, line in enumerate(text.split("\n")) if (h := grammar.heading(line))}


def library(text: str) -> set[tuple[int, int, str]]:
    tokens = MD.parse(text)
    return {
        (t.map[0], int(t.tag[1]), tokens[k + 1].content)
        for k, t in enumerate(tokens)
        if t.type == "heading_open" and t.map
    }


def main() -> None:
    folders = [Path(a) for a in sys.argv[1:]] or [ROOT / "tests/data", ROOT / "docs"]
    files = sorted(p for f in folders for p in f.rglob("*.md"))
    texts = [p.read_text("utf-8", errors="replace") for p in files]
    for reader in (hand, library):
        start = time.perf_counter()
        for _ in range(3):
            for t in texts:
                reader(t)
        ms = (time.perf_counter() - start) / 3 * 1000
        print(f"{reader.__name__}: {ms:.1f} ms for {len(files)} files ({sum(map(len, texts)) // 1024} KiB)")
    differ = [p for p, t in zip(files, texts, strict=True) if hand(t) != library(t)]
    print(f"they disagree on {len(differ)} file(s): " + ", ".join(p.name for p in differ))


if __name__ == "__main__":
    main()
