"""The one token counter giok uses everywhere (boot budgets, watchdog, reports).

`count(text)` uses tiktoken when both the package and its encoding file are already on
this machine (tiktoken's cache: $TIKTOKEN_CACHE_DIR, $DATA_GYM_CACHE_DIR or
<tmp>/data-gym-cache). It never triggers a download: when the encoding file is not cached,
a conservative estimate runs instead. The estimate is calibrated against cl100k_base and
o200k_base on English and Korean prose and over-counts rather than under-counts (better to
leave room than to overflow a context window).

`$GIOK_TOKENIZER` chooses: `auto` (default), `estimate`, or a tiktoken encoding name.
"""

from __future__ import annotations

import hashlib
import math
import os
from typing import Any

from giok import settings
from giok.text.lazy import lazy

_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
_encoder: Any = None  # a tiktoken Encoding, False when unavailable, None before the first look
_name = "estimate"

_LATIN = lazy(r"[A-Za-z]+")
_DIGITS = lazy(r"[0-9]+")
_HANGUL = lazy(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_CJK = lazy(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_KNOWN = lazy(r"[A-Za-z0-9\s\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")


def count(text: str) -> int:
    """Tokens in text: exact with a cached tiktoken encoding, else a conservative estimate."""
    if not text:
        return 0
    encoder = _load()
    if encoder:
        return len(encoder.encode(text, disallowed_special=()))
    return estimate(text)


def counter() -> str:
    """Which counter runs: `tiktoken:<encoding>` or `estimate`."""
    _load()
    return _name


def estimate(text: str) -> int:
    """Upper-leaning estimate: Latin words ~1 token per 4 letters (at least 1), digits 1 per
    3, capitals 1 per 2.5, Hangul 1.45 per syllable, other CJK 1.5 per character, other symbols
    1 per UTF-8 pair of bytes (at least 1), newlines 1 each; spaces ride with the next word."""
    total = 0.0
    for word in _LATIN.findall(text):
        total += max(1.0, len(word) / (2.5 if len(word) > 1 and word.isupper() else 4.2))
    for digits in _DIGITS.findall(text):
        total += math.ceil(len(digits) / 3)
    total += 1.45 * len(_HANGUL.findall(text)) + 1.5 * len(_CJK.findall(text)) + text.count("\n")
    for ch in _KNOWN.sub("", text):
        total += 1.0 if ch < "\x80" else max(1.0, len(ch.encode("utf-8", "surrogatepass")) / 2)
    return math.ceil(total * 1.05)


def _load() -> Any:
    global _encoder, _name
    if _encoder is not None:
        return _encoder
    _encoder = False
    wanted = settings.tokenizer()
    if wanted == "estimate":
        return _encoder
    for name in [wanted] if wanted != "auto" else list(_URLS):
        if name in _URLS and _cached(_URLS[name]):
            try:
                import tiktoken

                _encoder, _name = tiktoken.get_encoding(name), f"tiktoken:{name}"
                break
            except Exception:  # a broken cache file or package: the estimate is still right enough
                _encoder = False
    return _encoder


def _cached(url: str) -> bool:
    """Is tiktoken's cache already holding this encoding file (so no download happens)?"""
    cache_dir = settings.tiktoken_cache()
    key = hashlib.sha1(url.encode()).hexdigest()
    return os.path.isfile(os.path.join(cache_dir, key))


def reset() -> None:
    """Forget the chosen counter (tests, or after installing an encoding)."""
    global _encoder, _name
    _encoder, _name = None, "estimate"
