"""giok's hand-written text code beside well-kept libraries (docs/architecture.md, "Libraries measured").

    PYTHONPATH=src:DIR .venv/bin/python bench/text_libraries.py   # DIR holds snowballstemmer, detect_secrets

- English stemming: giok.text.analysis.stem_en vs snowballstemmer (English): recall (a query word
  finds the sentence with another form of it), false matches, words/s.
- Secrets: giok.write.policy.redact vs detect-secrets' default detectors (scan_line), on the 17
  kinds of tests/adversarial/test_secrets.py and its ordinary memories.
"""

from __future__ import annotations

import importlib.util
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (query word, sentence that holds another form of it, sentence that must not match); written
# by hand, not from either stemmer's rules. Even rows dev, odd rows test.
EN_ROWS = [
    ("meetings", "The meeting moved to Thursday", "The meal moved to Thursday"),
    ("running", "Seojun runs every morning", "Seojun rests every morning"),
    ("decided", "We decide on the vendor tomorrow", "We debate the vendor tomorrow"),
    ("deployments", "The deploy failed at noon", "The demo failed at noon"),
    ("studies", "She studied biology in Busan", "She started biology in Busan"),
    ("happily", "The team was happy with the release", "The team was hungry after the release"),
    ("connection", "The database connects over TLS", "The database compresses over TLS"),
    ("reviewer", "Minsu reviews every pull request", "Minsu rewrites every pull request"),
    ("flights", "Booked a flight to Osaka", "Booked a fight club ticket"),
    ("argued", "They argue about tabs", "They agree about tabs"),
    ("caching", "The cache sits in Redis", "The cart sits in Redis"),
    ("migrated", "The migration to Postgres is done", "The mission to Postgres is done"),
    ("generously", "A generous budget for travel", "A general budget for travel"),
    ("organization", "Seojun organizes the offsite", "Seojun orders the offsite"),
    ("children", "Her child starts school", "Her chair starts squeaking"),
    ("hiking", "We hiked up Bukhansan", "We hired a guide at Bukhansan"),
    ("invoices", "The invoice was paid late", "The invitation was paid late"),
    ("writes", "He wrote the report", "He read the report"),
    ("painted", "She paints landscapes", "She prints landscapes"),
    ("scheduling", "The schedule changed again", "The school changed again"),
]


def _hand() -> Callable[[str], str]:
    from giok.text.analysis import stem_en

    return stem_en.__wrapped__  # unmemoised, like snowballstemmer here


def _snowball() -> Callable[[str], str]:
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    return lambda w: str(stemmer.stemWord(w))


def stemmers() -> None:
    for name, make in (("hand", _hand), ("snowball", _snowball)):
        try:
            stem = make()
        except ImportError:
            print(f"{name}: not installed")
            continue

        def bag(text: str, stem: Callable[[str], str] = stem) -> set[str]:
            return {stem(w) for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2}

        for split, rows in (("dev", EN_ROWS[0::2]), ("test", EN_ROWS[1::2])):
            found = sum(stem(q) in bag(yes) for q, yes, _ in rows)
            wrong = sum(stem(q) in bag(no) for q, _, no in rows)
            print(f"stem {name:8} {split:4}: recall {found}/{len(rows)}, false matches {wrong}/{len(rows)}")
        words = [w for _, a, b in EN_ROWS for w in re.findall(r"[a-z]+", (a + " " + b).lower())] * 200
        start = time.perf_counter()
        for w in words:
            stem(w)
        elapsed = time.perf_counter() - start
        print(f"stem {name:8} speed: {len(words) / elapsed:,.0f} words/s (no memo)")


def _secret_cases() -> tuple[dict[str, tuple[str, str]], list[str]]:
    spec = importlib.util.spec_from_file_location(
        "secrets_matrix", ROOT / "tests/adversarial/test_secrets.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kinds = module.secret_kinds(random.Random(20261203))
    ordinary = [t if isinstance(t, str) else t[0] for t in module.ORDINARY]
    return kinds, ordinary


def secrets() -> None:
    from giok.write.policy import redact

    kinds, ordinary = _secret_cases()
    detectors: list[tuple[str, Callable[[str], bool]]] = [("giok", lambda t: bool(redact(t)[1]))]
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings

        entropy = {"Base64 High Entropy String", "Hex High Entropy String"}

        def ds(text: str) -> bool:
            with default_settings():
                return any(True for _ in scan_line(text))

        def ds_patterns(text: str) -> bool:  # scan_line flags every word by entropy: patterns only
            with default_settings():
                return any(s.type not in entropy for s in scan_line(text))

        detectors += [("detect-secrets", ds), ("ds-no-entropy", ds_patterns)]
    except ImportError:
        print("detect-secrets: not installed")
    for name, found in detectors:
        missed = [k for k, (text, _) in kinds.items() if not found(text)]
        false = [t for t in ordinary if found(t)]
        start = time.perf_counter()
        for _ in range(5):
            for text in [t for t, _ in kinds.values()] + ordinary:
                found(text)
        per = (time.perf_counter() - start) / (5 * (len(kinds) + len(ordinary))) * 1000
        print(
            f"secrets {name:14}: missed {len(missed)}/{len(kinds)} {missed}, "
            f"false positives {len(false)}/{len(ordinary)}, {per:.2f} ms per text"
        )
        for t in false[:6]:
            print(f"    false positive: {t[:80]}")


if __name__ == "__main__":
    stemmers()
    secrets()
