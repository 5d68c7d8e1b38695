"""A fixed set of everyday sentences and questions unrelated to any workspace, in English and
Korean. Their embedding centroids give each query and each chunk a baseline: how similar the
embedding model finds them to arbitrary text (e5 cosines crowd around 0.75–0.85 whatever the
meaning, Korean↔Korean pairs higher still, long structured chunks higher than short lines).
Search judges vector evidence by the margin over that baseline, not by the raw cosine."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import threading
import zipfile
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from giok.providers.embeddings import Embedder, Fused, fuse
from giok.store.fsutil import atomic_write

PASSAGES = {
    "en": [
        "The meeting was moved to Thursday afternoon.",
        "I bought groceries on the way home: eggs, bread and milk.",
        "The weather turned cold and it rained all evening.",
        "We watched a documentary about deep sea creatures.",
        "The train was delayed by twenty minutes this morning.",
        "She is learning to play the violin at a community school.",
        "The printer on the third floor is out of toner again.",
        "He repainted the fence in the backyard last weekend.",
        "Our team reviewed the quarterly budget spreadsheet.",
        "The library extended its opening hours for exam season.",
        "I need to renew my passport before the summer.",
        "The recipe calls for two cups of flour and a pinch of salt.",
        "They adopted a rescue puppy from the local shelter.",
        "The server logs showed a spike in traffic around noon.",
        "My neighbour plays the drums late at night.",
        "We hiked up the hill and had lunch at the top.",
        "The invoice was paid two days after the due date.",
        "Remember to water the plants on the balcony.",
        "The museum has a new exhibition of modern sculpture.",
        "I switched my phone plan to a cheaper provider.",
        "The kids built a sandcastle at the beach.",
        "The new intern starts on Monday in the design team.",
        "A pipe burst in the kitchen and flooded the floor.",
        "We celebrated my friend's birthday at an Italian restaurant.",
        "The car needs new tires before winter.",
        "The conference talk covered distributed database replication.",
        "I finished reading a novel about a lighthouse keeper.",
        "The cat knocked a glass off the table.",
        "Electricity prices went up again this month.",
        "He is training for a half marathon in October.",
        "The deployment script failed because of a missing environment variable.",
        "She painted a landscape of mountains at sunset.",
    ],
    "ko": [
        "회의가 목요일 오후로 옮겨졌다.",
        "퇴근길에 마트에서 우유와 빵을 샀다.",
        "저녁 내내 비가 오고 날씨가 추워졌다.",
        "주말에 친구들과 등산을 다녀왔다.",
        "아침 지하철이 이십 분 늦게 왔다.",
        "동생이 피아노 학원에 다니기 시작했다.",
        "사무실 프린터 토너가 또 떨어졌다.",
        "이번 분기 예산 보고서를 검토했다.",
        "여름 전에 여권을 갱신해야 한다.",
        "할머니 댁에 김장을 도우러 갔다.",
        "서버 로그에서 정오쯤 트래픽이 급증했다.",
        "새로 온 인턴은 월요일부터 출근한다.",
        "부엌 수도관이 터져서 바닥이 물에 잠겼다.",
        "친구 생일이라 이탈리아 식당에서 저녁을 먹었다.",
        "겨울이 오기 전에 자동차 타이어를 바꿔야 한다.",
        "등대지기에 관한 소설을 다 읽었다.",
        "이번 달 전기 요금이 또 올랐다.",
        "10월 하프 마라톤을 위해 훈련하고 있다.",
        "배포 스크립트가 환경 변수 누락으로 실패했다.",
        "해 질 녘 산 풍경을 그림으로 그렸다.",
        "아이들이 바닷가에서 모래성을 쌓았다.",
        "박물관에서 현대 조각 전시회가 열렸다.",
        "휴대폰 요금제를 더 싼 곳으로 바꿨다.",
        "베란다 화분에 물 주는 것을 잊지 말자.",
    ],
}

QUERIES = {
    "en": [
        "When is the next team meeting?",
        "What did I buy at the store?",
        "How was the weather yesterday?",
        "Which documentary did we watch?",
        "Why was the train late?",
        "What instrument is she learning?",
        "Who fixed the printer?",
        "What colour is the fence?",
        "How much is the quarterly budget?",
        "When does the library close?",
        "Where is my passport?",
        "How much flour goes in the recipe?",
        "What breed is the puppy?",
        "What caused the traffic spike?",
        "Where did we have lunch on the hike?",
        "Was the invoice paid on time?",
        "Which exhibition is at the museum?",
        "Who is the new intern?",
        "What happened in the kitchen?",
        "Where did we celebrate the birthday?",
        "What book am I reading?",
        "Why did the deployment fail?",
        "How is the marathon training going?",
        "What did she paint?",
    ],
    "ko": [
        "다음 회의는 언제야?",
        "마트에서 뭐 샀지?",
        "어제 날씨 어땠어?",
        "주말에 어디 다녀왔어?",
        "지하철이 왜 늦었어?",
        "동생이 무슨 학원에 다녀?",
        "프린터 누가 고쳤어?",
        "예산 보고서 검토했어?",
        "여권 언제 갱신해야 해?",
        "김장은 어디서 했어?",
        "트래픽이 왜 급증했어?",
        "새 인턴은 언제 출근해?",
        "부엌에 무슨 일이 있었어?",
        "생일 저녁은 어디서 먹었어?",
        "타이어는 언제 바꿔?",
        "요즘 무슨 소설 읽어?",
        "전기 요금 얼마나 올랐어?",
        "마라톤 훈련은 어때?",
        "배포가 왜 실패했어?",
        "무슨 그림 그렸어?",
        "아이들은 바닷가에서 뭐 했어?",
        "박물관 전시회는 뭐야?",
        "요금제 어디로 바꿨어?",
        "화분에 물 줬어?",
    ],
}


# -- the vectors, computed once per model ---------------------------------------------------------
# They depend only on the model and the sentences above, never on a workspace: embedded once per
# model identity and kept in the giok home (`<home>/models/baseline-<key>.npz`, every background
# vector), and their centroids in memory for the process. The file is derived data: a missing or
# unreadable one is recomputed and replaced. `Neutral` (below) moves its model's vectors: it
# embeds nothing of its own.
CACHE_DIR = "models"
Centroids = dict[tuple[str, str], np.ndarray]
Vectors = dict[tuple[str, str], np.ndarray]  # {(kind, lang): (n, dim)}
_MEMO: dict[str, Centroids] = {}
_MEMO_LOCK = threading.Lock()
_VECTORS: dict[str, Vectors] = {}  # the process's copy of each model's background vectors
_VECTORS_LOCK = threading.Lock()


@functools.cache
def passages_hash() -> str:
    """A hash of every background sentence: a change of the set invalidates every cached file."""
    blob = json.dumps({"passage": PASSAGES, "query": QUERIES}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def cache_key(embedder: Embedder) -> str:
    """Provider, model and dimensions (the embedder's identity) and the background set."""
    return f"{embedder.identity}|{embedder.dim}|{passages_hash()}|vectors"


def cache_path(home: Path, embedder: Embedder) -> Path:
    """The home's file of `embedder`'s background vectors (for `Neutral`, its model's)."""
    embedder = embedder.inner if isinstance(embedder, Neutral) else embedder
    digest = hashlib.sha256(cache_key(embedder).encode("utf-8")).hexdigest()[:20]
    return Path(home) / CACHE_DIR / f"baseline-{digest}.npz"


def models(embedder: Embedder) -> list[Embedder]:
    """The models whose background vectors `embedder`'s are made of: a view's (`Neutral`,
    `Fusion`) are moved or joined from its models', which alone are embedded and stored."""
    if isinstance(embedder, Fusion):
        return [m for view, _ in embedder.views for m in models(view)]
    if isinstance(embedder, Neutral):
        return [embedder.inner]
    return [embedder]


def texts() -> list[str]:
    """Every background text, passages and queries (what a first computation embeds)."""
    return [t for sets in (PASSAGES, QUERIES) for group in sets.values() for t in group]


def cached(embedder: Embedder, home: Path | None) -> bool:
    """Whether the background of `embedder` is at hand (in memory, a valid file in `home` or
    shipped with giok), for every model it is made of."""
    with _MEMO_LOCK:
        if cache_key(embedder) in _MEMO:
            return True
    return all(_cached(raw, home) for raw in models(embedder))


def _cached(raw: Embedder, home: Path | None) -> bool:
    with _MEMO_LOCK:
        if cache_key(raw) in _VECTORS:
            return True
    found = _read(cache_path(home, raw), cache_key(raw), raw.dim) if home is not None else None
    if found is not None:
        with _VECTORS_LOCK:  # kept: the search that asked reads them next (`vectors`)
            _VECTORS.setdefault(cache_key(raw), found)
        return True
    return _read(shipped_path(raw), cache_key(raw), raw.dim) is not None  # a few check texts only


def centroids(embedder: Embedder, home: Path | None = None) -> Centroids:
    """{(kind, lang): mean vector} of the background set for `embedder`: from memory, else from
    its vectors (`vectors`)."""
    key = cache_key(embedder)
    with _MEMO_LOCK:
        if key not in _MEMO:
            _MEMO[key] = {k: v.mean(axis=0).astype(np.float32) for k, v in vectors(embedder, home).items()}
        return _MEMO[key]


def vectors(embedder: Embedder, home: Path | None = None) -> Vectors:
    """Every background vector of `embedder`: the home's cache file, else embedded now (and
    written there atomically); for `Neutral`, its model's moved."""
    if isinstance(embedder, Neutral):
        return {k: embedder.transform(v, k[0]) for k, v in embedder.background().items()}
    if isinstance(embedder, Fusion):
        parts = [(vectors(view, home), w) for view, w in embedder.views]
        return {k: fuse([(found[k], w) for found, w in parts]) for k in parts[0][0]}
    key = cache_key(embedder)
    with _VECTORS_LOCK:
        found = _VECTORS.get(key)
        if found is None and home is not None:
            found = _read(cache_path(home, embedder), key, embedder.dim)
        if found is None:
            found = shipped(embedder)
            if found is None:
                found = embed_all(embedder)
            if home is not None:
                with contextlib.suppress(OSError):  # only a cache: a read-only home computes it again
                    write_vectors(cache_path(home, embedder), key, found)
        _VECTORS[key] = found
        return found


def embed_all(embedder: Embedder) -> Vectors:
    """Every background text embedded by `embedder` now (about 2.5 s of CPU for e5-small)."""
    return {
        (kind, lang): embedder.embed(group, kind)
        for kind, sets in (("passage", PASSAGES), ("query", QUERIES))
        for lang, group in sets.items()
    }


# The default model's background vectors ship with giok (providers/background/, written by
# tools/background.py), so the first search on a new machine does not spend seconds embedding
# them. A shipped file is taken only when its key names this model and background set and when
# the model, embedding a few of the texts now, gives the same vectors: a changed model build
# falls back to embedding everything.
SHIPPED_DIR = Path(__file__).with_name("background")
SHIPPED_CHECKS = (("passage", "en", 0), ("passage", "ko", 0), ("query", "ko", 0))


def shipped_path(embedder: Embedder) -> Path:
    digest = hashlib.sha256(cache_key(embedder).encode("utf-8")).hexdigest()[:20]
    return SHIPPED_DIR / f"{digest}.npz"


def shipped(embedder: Embedder, verify: bool = True) -> Vectors | None:
    """The packaged background vectors of `embedder`, when they match the model (see above;
    `verify=False` skips embedding the few texts: for a caller that trusts the model's build,
    as the judgement does, whose heads were trained on it)."""
    found = _read(shipped_path(embedder), cache_key(embedder), embedder.dim)
    if found is None or not verify:
        return found
    sets = {"passage": PASSAGES, "query": QUERIES}
    for kind, lang, i in SHIPPED_CHECKS:
        now = embedder.embed([sets[kind][lang][i]], kind)[0]
        if float(now @ found[(kind, lang)][i]) < 0.999:
            return None
    return found


def _read(path: Path, key: str, dim: int) -> Vectors | None:
    """The cached vectors, or None when the file is missing, unreadable or not this model's."""
    sizes = {("passage", lang): len(group) for lang, group in PASSAGES.items()}
    sizes.update({("query", lang): len(group) for lang, group in QUERIES.items()})
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key:
                return None
            out = {k: np.asarray(data[f"{k[0]}.{k[1]}"], dtype=np.float32) for k in sizes}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if any(v.shape != (sizes[k], dim) or not np.all(np.isfinite(v)) for k, v in out.items()):
        return None
    return out


def write_vectors(path: Path, key: str, found: Vectors) -> None:
    """`found` under `key` in one .npz file, written atomically."""
    buffer = io.BytesIO()
    arrays: dict[str, Any] = {f"{kind}.{lang}": v for (kind, lang), v in found.items()}
    np.savez(buffer, key=np.array(key), **arrays)
    atomic_write(path, buffer.getvalue())


# -- a language-neutral view of a multilingual model --------------------------------------------
# e5 puts every Korean text closer to every other Korean text than to its own English paraphrase:
# one direction of the space says "Korean", and a large common component says "text". In a store
# of both languages the first lets a Korean question find a Korean near-miss before the English
# fact that answers it (or the reverse); the second compresses every cosine. `Neutral` removes most
# of both (the "all-but-the-top" post-processing of embeddings, with the directions measured on the
# background set above, never on a workspace): v - BETA·(v·d)·d - LAMBDA·g, renormalised, where d is
# the Korean-minus-English direction (queries' and passages' averaged) and g the mean background
# vector of the text's kind. The index stores and searches the moved vectors; its identity names
# the transform, so a change re-embeds rather than mixing spaces.
NEUTRAL_BETA = 0.8
NEUTRAL_LAMBDA = 0.8
_NEUTRAL: dict[tuple[int, str], Neutral | Fusion] = {}


class Neutral(Embedder):
    """`inner` with its language direction and common mean removed (see above). Calibration
    constants are its own: the moved space spreads cosines wider than the raw one."""

    relative = True
    # Tuned on the dev split of bench/data/retrieval (bilingual and associative sets; see
    # docs/search.md): the margin over the baseline where evidence starts and the margin that
    # gives tanh(1) ≈ 0.76, for a same-language pair and for a cross-language one (narrower
    # margins: a lower ceiling). Unrelated cross-language pairs reach the same margins both ways
    # (dev p95 0.08-0.15), but an English question's related Korean memory sits higher than a
    # Korean question's related English one (median 0.19-0.28 vs 0.10-0.24): English→Korean can
    # afford a higher floor, which keeps near-misses such as "my cat's name" → the dog's name out.
    margin_floor = 0.14
    margin_ceil = 0.45
    cross_margin_floors: ClassVar[dict[str, float]] = {"en": 0.16, "ko": 0.14}
    cross_margin_ceil: float | None = 0.30

    def __init__(
        self,
        inner: Embedder,
        home: Path | None,
        beta: float = NEUTRAL_BETA,
        lam: float = NEUTRAL_LAMBDA,
        background: Vectors | None = None,
    ):
        self.inner = inner
        self.home = home
        self.beta = beta
        self.lam = lam
        self.name = inner.name
        self.dim = inner.dim
        self.batch_size = inner.batch_size
        self.note = inner.note
        self._raw: dict[tuple[str, str], np.ndarray] | None = background  # else read when first asked
        self._params: tuple[np.ndarray, dict[str, np.ndarray]] | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"{self.inner.identity}+neutral(b={self.beta},l={self.lam},{passages_hash()[:8]})"

    def background(self) -> dict[tuple[str, str], np.ndarray]:
        """The inner model's vectors of the background set (embedded once, kept in the home)."""
        with self._lock:
            if self._raw is None:
                self._raw = vectors(self.inner, self.home)
            return self._raw

    def _directions(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        if self._params is None:
            raw = self.background()
            mean = {key: v.mean(axis=0) for key, v in raw.items()}
            d = _unit(mean[("query", "ko")] - mean[("query", "en")]) + _unit(
                mean[("passage", "ko")] - mean[("passage", "en")]
            )
            common = {kind: (mean[(kind, "en")] + mean[(kind, "ko")]) / 2 for kind in ("query", "passage")}
            self._params = (_unit(d), common)
        return self._params

    def transform(self, vectors: np.ndarray, kind: str) -> np.ndarray:
        """Unit vectors of the inner model, moved to the neutral space (unit again)."""
        d, common = self._directions()
        moved = vectors - self.beta * np.outer(vectors @ d, d) - self.lam * common[kind]
        return (moved / np.maximum(np.linalg.norm(moved, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        return self.transform(self.inner.embed(texts, kind), kind)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)


def neutral(embedder: Embedder, home: Path | None) -> Embedder:
    """The language-neutral view of `embedder` when it asks for one (`Embedder.neutral`; for
    the fused models, `Fusion`), one object per model and home (the index caches by embedder
    identity); others unchanged."""
    if not getattr(embedder, "neutral", False) or isinstance(embedder, Neutral | Fusion):
        return embedder
    key = (id(embedder), str(home))
    with _MEMO_LOCK:
        found = _NEUTRAL.get(key)
        if found is None or found.inner is not embedder:
            found = _NEUTRAL[key] = (
                Fusion(embedder, home) if isinstance(embedder, Fused) else Neutral(embedder, home)
            )
        return found


# -- the two bundled models in one vector -------------------------------------------------------
class Fusion(Embedder):
    """What the index searches for `embeddings.Fused`: e5's language-neutral view (`Neutral`)
    beside USE's own vectors, USE's block scaled by √w (`embeddings.fuse`), so a cosine is
    (cos_e5_neutral + w·cos_use) / (1 + w) and a margin over the background the same weighted
    sum of the two models' margins. USE needs no neutral view: its Korean and English vectors
    of one meaning sit together (USE was trained on translation pairs). The background vectors
    are joined from each model's (stored and shipped per model), never embedded as a whole.
    Calibration constants tuned on the dev splits (docs/search.md, "Two models")."""

    relative = True
    # The fused margin averages e5's with USE's, which spread less: a lower floor and ceiling
    # than e5's alone (dev sweep of weight 0.15-1.0, floor 0.10-0.16, ceiling 0.35-0.50, cross
    # ceiling 0.25-0.30; 0.13 rather than 0.12 keeps "서준이 키우는 고양이 이름" from the dog's
    # entry at a cost of one colloquial dev question; docs/search.md "Two models").
    margin_floor = 0.13
    margin_ceil = 0.40
    cross_margin_floors: ClassVar[dict[str, float]] = {"en": 0.15, "ko": 0.13}
    cross_margin_ceil: float | None = 0.30

    def __init__(self, inner: Fused, home: Path | None):
        self.inner = inner
        self.home = home
        self.views: list[tuple[Embedder, float]] = [
            (Neutral(part, home) if part.neutral else part, w) for part, w in inner.parts()
        ]
        self.name = inner.name
        self.dim = inner.dim
        self.batch_size = inner.batch_size
        self.note = inner.note

    @property
    def identity(self) -> str:
        inner = "+".join(f"{w:g}*{view.identity}" for view, w in self.views)
        return f"fused({inner})"

    def embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        return fuse([(view.embed(texts, kind), w) for view, w in self.views])
