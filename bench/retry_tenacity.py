"""The providers' retry loop written with tenacity, to measure it against the hand-written
giok.providers.retry.post on the same tests. Not used by giok; needs tenacity on the path:

    python -m pip install --target .venv-retry tenacity==9.2.1
    PYTHONPATH=src:.venv-retry:bench python -m pytest -q -p retry_tenacity tests/test_retries.py
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
import tenacity

from giok.errors import ProviderError
from giok.providers import embeddings, llm
from giok.providers.retry import RETRY_STATUS, Retry, retry_after


class _Again(Exception):
    def __init__(self, failure: str, asked: float | None) -> None:
        super().__init__(failure)
        self.failure, self.asked = failure, asked


def post(
    http: httpx.Client, url: str, *, who: str, timeout: float, retry: Retry, **kwargs: Any
) -> httpx.Response:
    backoff = tenacity.wait_random_exponential(multiplier=retry.backoff, max=retry.max_wait)

    def wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = exc.asked if isinstance(exc, _Again) else None
        if asked is not None and asked > retry.max_wait:
            raise ProviderError(f"{who}: {exc}")  # the server asks for longer than we wait
        return backoff(state) if asked is None else asked

    start = time.monotonic()

    def once() -> httpx.Response:
        left = retry.total - (time.monotonic() - start)
        try:
            response = http.post(url, timeout=max(min(timeout, left), 0.01), **kwargs)
        except httpx.TimeoutException:
            raise _Again(f"no answer within {timeout:g}s", None) from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"{who}: cannot reach {url}: {exc}") from None
        if response.status_code in RETRY_STATUS:
            detail = " ".join(response.text.split())[:200]
            raise _Again(f"HTTP {response.status_code} from {url}: {detail}", retry_after(response))
        return response

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(retry.attempts) | tenacity.stop_before_delay(retry.total),
        wait=wait,
        retry=tenacity.retry_if_exception_type(_Again),
        reraise=True,
    )
    try:
        return retrying(once)
    except _Again as exc:
        n = retrying.statistics.get("attempt_number", 1)
        raise ProviderError(f"{who}: {exc.failure} ({n} {'try' if n == 1 else 'tries'})") from None


@pytest.fixture(autouse=True)
def _tenacity_post(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm, "post", post)
    monkeypatch.setattr(embeddings, "post", post)
