"""Retries with backoff for the providers' HTTP calls (LLM judges, embedding endpoints).

A rate limit (429), an overloaded or unavailable server (529, 503, 502, 504, 408) or a timeout
is tried again after a wait; anything else is the caller's to judge on the first answer. The
wait doubles from `Retry.backoff` with jitter, or is the server's `Retry-After` /
`retry-after-ms` when it sends one. Attempts and total time are bounded: no retry starts past
`Retry.total` seconds, each attempt's timeout is cut to the time left, and a server asking
for a longer wait than `Retry.max_wait` is taken at its word (giving up at once).

Hand-written rather than tenacity: see docs/architecture.md, "Libraries measured"."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from giok.errors import ProviderError

if TYPE_CHECKING:
    import httpx  # imported in post(): most giok commands never talk to a provider

# 408 request timeout, 429 rate limited, 502/503/504 gateway or server unavailable,
# 529 overloaded (Anthropic).
RETRY_STATUS = frozenset({408, 429, 502, 503, 504, 529})


@dataclass(frozen=True)
class Retry:
    """How hard to try: `attempts` in all (the first included), the first wait `backoff`
    seconds (doubling, with jitter), no single wait above `max_wait`, and nothing started
    past `total` seconds after the first try."""

    attempts: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0
    total: float = 120.0

    def wait(self, attempt: int) -> float:
        """The backoff before try `attempt + 1`: half to all of backoff·2^(attempt-1)."""
        return self.backoff * 2.0 ** (attempt - 1) * (0.5 + random.random() / 2)


NO_RETRY = Retry(attempts=1)


def retry_after(response: httpx.Response, now: Callable[[], datetime] | None = None) -> float | None:
    """The server's requested wait in seconds (`retry-after-ms`, then `Retry-After` as
    seconds or an HTTP date), or None when it names none or names it badly."""
    ms = response.headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime  # email and socket load only for an HTTP date

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or _utcnow)()).total_seconds(), 0.0)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _detail(response: httpx.Response) -> str:
    return " ".join(response.text.split())[:200]


def post(
    http: httpx.Client,
    url: str,
    *,
    who: str,
    timeout: float,
    retry: Retry,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    **kwargs: Any,
) -> httpx.Response:
    """POST with retries. Returns the first answer whose status is not retryable (the caller
    judges 2xx against 4xx); raises ProviderError naming `who` when the tries run out on a
    timeout or a retryable status, or when the server cannot be reached at all."""
    import httpx

    start = clock()
    attempt = 0
    while True:
        attempt += 1
        left = retry.total - (clock() - start)
        try:
            response = http.post(url, timeout=max(min(timeout, left), 0.01), **kwargs)
        except httpx.TimeoutException:
            failure, wait = f"no answer within {timeout:g}s", retry.wait(attempt)
        except httpx.HTTPError as exc:
            raise ProviderError(f"{who}: cannot reach {url}: {exc}") from None
        else:
            if response.status_code not in RETRY_STATUS:
                return response
            failure = f"HTTP {response.status_code} from {url}: {_detail(response)}"
            asked = retry_after(response)
            wait = retry.wait(attempt) if asked is None else asked
        tries = f" ({attempt} {'try' if attempt == 1 else 'tries'})" if retry.attempts > 1 else ""
        if attempt >= retry.attempts or wait > retry.max_wait or clock() - start + wait >= retry.total:
            raise ProviderError(f"{who}: {failure}{tries}")
        sleep(wait)
