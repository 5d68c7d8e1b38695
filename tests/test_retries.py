"""Retries with backoff for the LLM and embedding HTTP clients, against a local HTTP server
that follows a script: one step per request (a status with headers, or a stall past the
client's timeout), then 200s."""

from __future__ import annotations

import time
from collections.abc import Iterator
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from giok.errors import ProviderError
from giok.providers import embeddings, llm
from giok.providers.retry import Retry, retry_after
from stand_in import Reply, StandIn

FAST = Retry(attempts=3, backoff=0.01, max_wait=5.0, total=10.0)
STALL = 0.6  # seconds a "stall" step sleeps; the clients below time out after 0.2 s


class _Server(StandIn):
    """Follows `script`: one step per request, then 200s; `times` and `paths` of the requests."""

    def __init__(self) -> None:
        self.script: list[Any] = []
        super().__init__(self._step)

    @property
    def times(self) -> list[float]:
        return [r["time"] for r in self.requests]

    @property
    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def _step(self, request: dict[str, Any]) -> Reply:
        step = self.script.pop(0) if self.script else (200, {})
        if step == "stall":
            time.sleep(STALL)
            step = (200, {})
        status, headers = step
        if status != 200:
            return Reply({"error": {"message": f"scripted {status}"}}, status, headers=headers)
        return Reply(_answer(request["path"], request["body"]))


def _answer(path: str, body: dict[str, Any]) -> dict[str, Any]:
    if path.endswith("/chat/completions"):
        return {"choices": [{"message": {"role": "assistant", "content": "fine"}}]}
    if path.endswith("/messages"):
        return {"content": [{"type": "text", "text": "fine"}]}
    if path.endswith("/embeddings"):
        return {"data": [{"index": i, "embedding": [1.0, 0.0]} for i, _ in enumerate(body["input"])]}
    return {"embeddings": [[1.0, 0.0] for _ in body["input"]]}  # ollama /api/embed


@pytest.fixture
def server() -> Iterator[_Server]:
    with _Server() as srv:
        yield srv


def _chat(srv: _Server, provider: str = "openai", retry: Retry = FAST) -> llm.ChatClient:
    spec = {"provider": provider, "model": "m", "base_url": srv.url + "/v1", "timeout": 0.2}
    client = llm.client({**spec, "api_key_env": None})
    client.retry = retry
    return client


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_rate_limited_judge_waits_and_gets_its_answer(server, provider):
    server.script = [(429, {}), (529, {})]
    assert _chat(server, provider).complete("system", "prompt") == "fine"
    assert len(server.times) == 3


def test_retry_after_is_honoured(server):
    server.script = [(429, {"Retry-After": "1"})]
    assert _chat(server).complete("system", "prompt") == "fine"
    assert len(server.times) == 2
    assert server.times[1] - server.times[0] >= 0.95


def test_a_timeout_is_tried_again(server):
    server.script = ["stall"]
    assert _chat(server).complete("system", "prompt") == "fine"
    assert len(server.times) == 2


def test_a_permanent_error_is_not_retried(server):
    server.script = [(400, {})]
    with pytest.raises(ProviderError, match="HTTP 400"):
        _chat(server).complete("system", "prompt")
    assert len(server.times) == 1


def test_attempts_are_bounded_and_the_error_says_how_many(server):
    server.script = [(529, {})] * 5
    with pytest.raises(ProviderError, match=r"HTTP 529 .*\(3 tries\)"):
        _chat(server).complete("system", "prompt")
    assert len(server.times) == 3


def test_timeouts_are_bounded_too(server):
    server.script = ["stall"] * 5
    with pytest.raises(ProviderError, match=r"no answer within 0.2s \(3 tries\)"):
        _chat(server).complete("system", "prompt")
    assert len(server.times) == 3


def test_a_wait_past_the_total_time_gives_up_at_once(server):
    server.script = [(429, {"Retry-After": "60"})]
    start = time.monotonic()
    with pytest.raises(ProviderError, match="HTTP 429"):
        _chat(server, retry=Retry(attempts=5, backoff=0.01, max_wait=120.0, total=5.0)).complete("s", "p")
    assert time.monotonic() - start < 2
    assert len(server.times) == 1


def test_no_retries_when_the_spec_says_zero(server):
    server.script = [(429, {})]
    spec = {"provider": "openai", "model": "m", "base_url": server.url + "/v1", "api_key_env": None}
    with pytest.raises(ProviderError, match="HTTP 429"):
        llm.client({**spec, "retries": 0}).complete("s", "p")
    assert len(server.times) == 1


def test_the_spec_refuses_negative_retries():
    from giok.errors import InvalidInput

    with pytest.raises(InvalidInput, match="retries"):
        llm.client({"provider": "openai", "model": "m", "retries": -1})


def _openai_embedder(srv: _Server, monkeypatch: pytest.MonkeyPatch) -> embeddings.OpenAI:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return embeddings.OpenAI(model="e", url=srv.url + "/v1", dim=2, timeout=0.2, retry=FAST)


def test_openai_embeddings_retry_429_529_and_a_timeout(server, monkeypatch):
    server.script = [(429, {"retry-after-ms": "50"}), (529, {})]
    vectors = _openai_embedder(server, monkeypatch).embed(["a", "b"])
    assert vectors.shape == (2, 2)
    assert len(server.times) == 3
    server.script = ["stall"]
    assert _openai_embedder(server, monkeypatch).embed(["c"]).shape == (1, 2)
    assert len(server.times) == 5


def test_openai_embeddings_permanent_400_is_one_request(server, monkeypatch):
    server.script = [(400, {})]
    with pytest.raises(ProviderError, match="HTTP 400"):
        _openai_embedder(server, monkeypatch).embed(["a"])
    assert len(server.times) == 1


def test_ollama_embeddings_retry_and_give_up_with_a_provider_error(server):
    embedder = embeddings.Ollama(model="e", url=server.url, dim=2, timeout=0.2, retry=FAST)
    server.script = [(503, {})]
    assert embedder.embed(["a"]).shape == (1, 2)
    assert len(server.times) == 2
    server.script = ["stall"] * 3
    with pytest.raises(ProviderError, match="ollama embeddings: no answer within"):
        embedder.embed(["b"])
    assert len(server.times) == 5
    server.script = [(400, {})]
    with pytest.raises(ProviderError, match="HTTP 400"):
        embedder.embed(["c"])
    assert len(server.times) == 6


def test_an_unreachable_embedding_server_is_a_provider_error():
    embedder = embeddings.Ollama(model="e", url="http://127.0.0.1:9", dim=2, timeout=0.5, retry=FAST)
    with pytest.raises(ProviderError, match="cannot reach"):
        embedder.embed(["a"])


def test_retry_after_reads_seconds_milliseconds_and_dates():
    def answer(**headers: str) -> httpx.Response:
        return httpx.Response(429, headers=headers)

    now = time.time()
    from datetime import UTC, datetime

    fixed = datetime.fromtimestamp(now, UTC)
    later = format_datetime(datetime.fromtimestamp(now + 30, UTC), usegmt=True)
    assert retry_after(answer(**{"retry-after": "7"})) == 7
    assert retry_after(answer(**{"retry-after-ms": "250", "retry-after": "7"})) == 0.25
    assert 29 <= (retry_after(answer(**{"retry-after": later}), now=lambda: fixed) or 0) <= 30
    assert retry_after(answer(**{"retry-after": "soon"})) is None
    assert retry_after(answer()) is None
