"""What a search reads again, and what it never gets wrong for it (docs/search.md, "Speed"): the
rows of one index generation are read from SQLite once per process and reused by the next
searches; a row remembered for one reader is never shown to another who may not see it; any
write is seen by the next search; a library process multiplies the query by a large matrix on one
BLAS thread unless its environment names BLAS threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from giok.errors import IndexError_
from giok.retrieval.index import Index, Reader
from giok.retrieval.search import search_full

ROW_SELECT = "SELECT m.id, m.key, m.path"  # the statement `Index.rows` reads rows with


@pytest.fixture
def fake(giok_home):
    giok_home.update(lambda c: c.update(embeddings={"provider": "fake"}))


@pytest.fixture
def diary(ws, fake):
    lines = [f"- 09:{n:02d} Minji: the spare key number {n} hangs by the door" for n in range(12)]
    lines += ["- 10:00 Seojun: where is the blue umbrella?", "- 10:01 Minji: in the car boot"]
    (ws.root / "memory").mkdir(exist_ok=True)
    (ws.root / "memory" / "2026-11-02.md").write_text("# 2026-11-02\n\n" + "\n".join(lines) + "\n", "utf-8")
    return ws


class Statements:
    """The SQL statements the index's connection runs while counting."""

    def __init__(self, index: Index):
        self.seen: list[str] = []
        index.db.set_trace_callback(self.seen.append)

    def rows_read(self) -> int:
        return sum(1 for s in self.seen if s.startswith(ROW_SELECT))


def _answer(ws, query: str, **opts) -> list[dict]:
    return [r.to_dict() for r in search_full(ws, query, k=10, record=None, **opts).results]


def test_a_second_search_of_one_generation_reads_no_row_again_and_answers_the_same(diary):
    first = _answer(diary, "where is the umbrella")
    index = Index.for_workspace(diary)
    counted = Statements(index)
    second = _answer(diary, "where is the umbrella")
    assert counted.rows_read() == 0, "\n".join(counted.seen)
    assert second == first and any("car boot" in r["text"] for r in second)
    index.db.set_trace_callback(None)


def test_a_write_after_a_search_is_seen_by_the_next_one(diary):
    assert not _answer(diary, "green kettle", mode="keyword")
    diary.remember("The green kettle lives on the top shelf", layer="M90")
    assert any("green kettle" in r["text"] for r in _answer(diary, "green kettle", mode="keyword"))
    (hit,) = [e for e in diary.memory().entries() if "green kettle" in e.text]
    diary.forget(hit.fields["id"], "moved")
    assert not _answer(diary, "green kettle", mode="keyword")


def test_a_row_remembered_for_one_reader_is_not_shown_to_another(ws, fake):
    ws.remember("Minji keeps her passport in the desk drawer", layer="M90", scope="user:Minji")
    ws.remember("The office passport scanner is broken", layer="M90")
    index = Index.for_workspace(ws)
    index.sync()
    ids, _ = index.matrix()
    every = [int(i) for i in ids]
    assert len(index.rows(every, Reader(all_scopes=True))) == len(every)  # every row read once
    seen = index.rows(every, Reader("Seojun"))
    assert seen and not any("Minji keeps" in (r["text"] or "") for r in seen.values())
    assert any("Minji keeps" in (r["text"] or "") for r in index.rows(every, Reader("minji")).values())
    texts = [r["text"] for r in _answer(ws, "passport", user="Seojun")]
    assert any("scanner" in t for t in texts) and not any("drawer" in t for t in texts)


PROBE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from threadpoolctl import threadpool_info
    from giok.retrieval.index import Index

    class Probe:
        '''A query vector that notes numpy's BLAS threads when the index multiplies by it.'''
        threads = None
        def __array__(self, dtype=None, copy=None):
            Probe.threads = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
            return np.ones(384, dtype=dtype or np.float32)

    index = Index.__new__(Index)
    index.matrix = lambda: (np.arange(2000), np.ones((2000, 384), dtype=np.float32))
    index.cosines(Probe())
    print(json.dumps(Probe.threads))
    """
)


def _blas_threads_in_cosines(env: dict) -> list[int]:
    names = (
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "BLIS_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "OMP_NUM_THREADS",
    )
    clean = {k: v for k, v in os.environ.items() if k not in names}
    run = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS runs on one thread anyway")
def test_a_library_process_multiplies_the_query_on_one_blas_thread_unless_told_otherwise():
    threads = _blas_threads_in_cosines({})
    assert threads and set(threads) == {1}
    assert set(_blas_threads_in_cosines({"OPENBLAS_NUM_THREADS": "2"})) == {2}


# -- what a search opens and embeds ------------------------------------------------------------
HOUR_NS = 3600 * 10**9


def _settle(ws) -> None:
    """Every folder of the workspace and the home config an hour old (nothing changed lately),
    then a search: its full scan is one the next searches may trust (docs/search.md, "Freshness")."""
    paths = [ws.home.config_path]
    for base, dirs, _ in os.walk(ws.root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        paths.append(base)
    for path in paths:
        then = os.stat(path).st_mtime_ns - HOUR_NS
        os.utime(path, ns=(then, then))
    Index.for_workspace(ws).rescan = 3600.0
    _answer(ws, "settle")


class Opens:
    """The files of the workspace and of the home that Python code opens while counting."""

    def __init__(self, monkeypatch, *folders):
        import builtins
        import io

        self.paths: list[str] = []
        real = io.open
        roots = [str(f) for f in folders]

        def spy(file, *args, **kwargs):
            if isinstance(file, str | os.PathLike) and str(file).startswith(tuple(roots)):
                self.paths.append(os.path.relpath(str(file), roots[0]))
            return real(file, *args, **kwargs)

        monkeypatch.setattr(io, "open", spy)
        monkeypatch.setattr(builtins, "open", spy)


def test_a_search_while_nothing_changed_reads_neither_user_md_nor_the_home_config(diary, monkeypatch):
    _settle(diary)
    opened = Opens(monkeypatch, diary.root, diary.home.path)
    got = _answer(diary, "where is the umbrella")
    assert opened.paths == [os.path.join(".giok", "lock")]  # the stamp of the last giok write only
    assert any("car boot" in r["text"] for r in got)


def test_a_changed_user_md_or_home_config_is_seen_by_the_next_search(diary):
    diary.remember("Minji keeps the spare bike key in the blue tin", layer="M90", scope="user:Minji")
    _settle(diary)
    assert not any("blue tin" in r["text"] for r in _answer(diary, "spare bike key"))  # Seojun's view
    user_md = diary.root / "USER.md"
    swap = diary.root / ".USER.md.swp"  # an editor's safe save: a new file renamed over the old
    swap.write_text(user_md.read_text("utf-8").replace("Seojun", "Minji"), "utf-8")
    os.replace(swap, user_md)
    assert any("blue tin" in r["text"] for r in _answer(diary, "spare bike key"))  # now Minji's

    _settle(diary)
    before = Index.for_workspace(diary)
    diary.home.update(lambda c: c.update(embeddings={"provider": "fake", "dim": 16}))
    config = diary.home.config_path
    then = os.stat(config).st_mtime_ns - HOUR_NS  # even with a time stamp as old as the last one
    os.utime(config, ns=(then, then))
    assert Index.for_workspace(diary).embedder.identity != before.embedder.identity
    with pytest.raises(IndexError_, match="configured model is fake:16"):  # the new model, not the old
        _answer(diary, "spare bike key")


def test_a_search_of_two_workspaces_embeds_its_query_once(diary, tmp_path, giok_home, monkeypatch):
    from giok import Workspace
    from giok.providers import embeddings

    other, _ = Workspace.init(tmp_path / "mira", name="mira", user="Seojun", home=giok_home)
    other.remember("Mira keeps the deployment runbook in the wiki", layer="M90")
    _answer(diary, "warm up", workspaces=[diary.name, "mira"])
    asked: list[str] = []
    real = embeddings.Fake.embed_batch

    def counting(self, texts, kind):
        if kind == "query":
            asked.extend(texts)
        return real(self, texts, kind)

    monkeypatch.setattr(embeddings.Fake, "embed_batch", counting)
    got = _answer(diary, "where is the deployment runbook", workspaces=[diary.name, "mira"])
    assert any("runbook" in r["text"] for r in got) and {r["workspace"] for r in got} >= {"mira"}
    assert asked == ["where is the deployment runbook"]
