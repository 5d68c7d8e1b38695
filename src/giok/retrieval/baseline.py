"""A fixed set of everyday sentences and questions unrelated to any workspace, in English and
Korean. Their embedding centroids give each query and each chunk a baseline: how similar the
embedding model finds them to arbitrary text (e5 cosines crowd around 0.75–0.85 whatever the
meaning, Korean↔Korean pairs higher still, long structured chunks higher than short lines).
Search judges vector evidence by the margin over that baseline, not by the raw cosine."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from giok.providers.embeddings import Embedder
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


# -- the centroids, computed once per model ------------------------------------------------------
# They depend only on the model and the sentences above, never on a workspace: computed once per
# model identity and kept in the giok home (`<home>/models/baseline-<key>.npz`), and in memory for
# the process. The file is derived data: a missing or unreadable one is recomputed and replaced.
CACHE_DIR = "models"
Centroids = dict[tuple[str, str], np.ndarray]
_MEMO: dict[str, Centroids] = {}
_MEMO_LOCK = threading.Lock()


def passages_hash() -> str:
    """A hash of every background sentence: a change of the set invalidates every cached file."""
    blob = json.dumps({"passage": PASSAGES, "query": QUERIES}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def cache_key(embedder: Embedder) -> str:
    """Provider, model and dimensions (the embedder's identity) and the background set."""
    return f"{embedder.identity}|{embedder.dim}|{passages_hash()}"


def cache_path(home: Path, embedder: Embedder) -> Path:
    digest = hashlib.sha256(cache_key(embedder).encode("utf-8")).hexdigest()[:20]
    return Path(home) / CACHE_DIR / f"baseline-{digest}.npz"


def texts() -> list[str]:
    """Every background text, passages and queries (what a first computation embeds)."""
    return [t for sets in (PASSAGES, QUERIES) for group in sets.values() for t in group]


def cached(embedder: Embedder, home: Path | None) -> bool:
    """Whether the centroids for `embedder` are at hand (in memory or a valid file in `home`)."""
    key = cache_key(embedder)
    with _MEMO_LOCK:
        if key not in _MEMO and home is not None:
            found = _read(cache_path(home, embedder), key, embedder.dim)
            if found is not None:
                _MEMO[key] = found
        return key in _MEMO


def centroids(embedder: Embedder, home: Path | None = None) -> Centroids:
    """{(kind, lang): mean vector} of the background set for `embedder`: from memory, else the
    home's cache file, else embedded now (and written there atomically)."""
    key = cache_key(embedder)
    with _MEMO_LOCK:
        if key in _MEMO:
            return _MEMO[key]
        found = _read(cache_path(home, embedder), key, embedder.dim) if home is not None else None
        if found is None:
            found = _compute(embedder)
            if home is not None:
                _write(cache_path(home, embedder), key, found)
        _MEMO[key] = found
        return found


def _compute(embedder: Embedder) -> Centroids:
    out: Centroids = {}
    for kind, sets in (("passage", PASSAGES), ("query", QUERIES)):
        for lang, texts in sets.items():
            out[(kind, lang)] = embedder.embed(texts, kind).mean(axis=0).astype(np.float32)
    return out


def _read(path: Path, key: str, dim: int) -> Centroids | None:
    """The cached centroids, or None when the file is missing, unreadable or not this model's."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key:
                return None
            out = {
                (kind, lang): np.asarray(data[f"{kind}.{lang}"], dtype=np.float32)
                for kind, sets in (("passage", PASSAGES), ("query", QUERIES))
                for lang in sets
            }
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if any(v.shape != (dim,) or not np.all(np.isfinite(v)) for v in out.values()):
        return None
    return out


def _write(path: Path, key: str, found: Centroids) -> None:
    buffer = io.BytesIO()
    arrays: dict[str, Any] = {f"{kind}.{lang}": v for (kind, lang), v in found.items()}
    np.savez(buffer, key=np.array(key), **arrays)
    with contextlib.suppress(OSError):  # only a cache: a read-only home computes it again next time
        atomic_write(path, buffer.getvalue())
