"""Korean keyword matching: giok's hand-written suffix stripper vs kiwipiepy (if installed),
on recall (does a query word find the sentence that holds the same word in another form?),
false matches (does it find a sentence without it?) and speed (terms per second).

    PYTHONPATH=src .venv-kiwi/bin/python bench/korean_terms.py      # both (kiwipiepy installed)
    PYTHONPATH=src .venv/bin/python bench/korean_terms.py           # the hand stripper only

The set was written by hand, independently of the stripper's rules: (query, sentence that
answers it, sentence that must not match). Even rows are dev, odd rows test; only dev was
looked at while changing the stripper.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

ROWS = [
    ("서준이는", "서준은 부산 출신이다", "민수는 서울에 산다"),
    ("서준은", "서준이가 좋아하는 음식은 김치찌개다", "지우가 좋아하는 음식은 파스타다"),
    ("해운대에서", "해운대 근처 횟집이 맛있었다", "광안리 근처 카페가 조용했다"),
    ("민수한테", "민수가 보고서를 보냈다", "지우가 보고서를 보냈다"),
    ("회사에서", "회사 노트북은 맥북이다", "집 컴퓨터는 윈도우다"),
    ("제주도로", "작년에 제주도에 다녀왔다", "작년에 강릉에 다녀왔다"),
    ("지우랑", "지우와 같이 등산을 갔다", "하늘이와 같이 수영을 갔다"),
    ("서울까지", "서울에서 회의가 있었다", "대전에서 회의가 있었다"),
    ("등산을", "주말마다 등산하러 간다", "주말마다 낚시하러 간다"),
    ("배포는", "금요일에는 배포하지 않는다", "금요일에는 회의하지 않는다"),
    ("회의를", "회의가 두 시간 걸렸다", "점심이 두 시간 걸렸다"),
    ("커피는", "아침마다 커피를 마신다", "아침마다 녹차를 마신다"),
    ("예산이", "연구실 예산은 한 달에 40시간이다", "연구실 인원은 다섯 명이다"),
    ("결정했다", "API 버전을 고정하기로 결정", "API 버전을 바꾸기로 했다"),
    ("좋아한다", "서준은 매운 음식을 좋아해요", "서준은 매운 음식을 싫어해요"),
    ("이사했다", "작년에 부산으로 이사", "작년에 부산에서 여행"),
    ("하늘이가", "하늘은 고양이를 키운다", "바다는 강아지를 키운다"),
    ("부산에서", "부산 사투리를 쓴다", "대구 사투리를 쓴다"),
    ("고양이를", "고양이가 아프다", "강아지가 아프다"),
    ("검색이", "검색 속도를 개선했다", "배포 속도를 개선했다"),
    ("보고서는", "보고서를 매주 월요일에 보낸다", "일지를 매주 월요일에 쓴다"),
    ("김치찌개를", "김치찌개가 제일 맛있다", "된장찌개가 제일 맛있다"),
    ("서버가", "서버를 재시작했다", "라우터를 재시작했다"),
    ("노트북으로", "노트북이 느려졌다", "휴대폰이 느려졌다"),
    ("윤서에게", "윤서가 생일 선물을 받았다", "하은이가 생일 선물을 받았다"),
    ("강남역에서", "강남역 근처에서 만났다", "홍대입구 근처에서 만났다"),
    ("마라톤을", "마라톤 대회에 나갔다", "수영 대회에 나갔다"),
    ("데이터베이스는", "데이터베이스를 Postgres로 옮겼다", "캐시를 Redis로 옮겼다"),
    ("준호씨는", "준호씨가 발표를 맡았다", "은지씨가 발표를 맡았다"),
    ("도서관에서", "도서관 책을 반납했다", "서점 책을 샀다"),
    ("여자친구랑", "여자친구와 영화를 봤다", "동생과 영화를 봤다"),
    ("출장은", "다음 주에 출장을 간다", "다음 주에 휴가를 간다"),
    ("아버지께서", "아버지가 병원에 가셨다", "어머니가 시장에 가셨다"),
    ("피아노를", "피아노 레슨이 화요일이다", "기타 레슨이 화요일이다"),
    ("일본어로", "일본어 공부를 시작했다", "중국어 공부를 시작했다"),
    ("스테이징에서", "스테이징 서버에는 GPU가 있다", "운영 서버에는 GPU가 없다"),
    ("동생이랑", "동생과 부산에 갔다", "친구와 부산에 갔다"),
    ("한강에서", "한강 공원을 달렸다", "남산 공원을 걸었다"),
    ("면접을", "면접이 다음 주 화요일이다", "시험이 다음 주 화요일이다"),
    ("민지는", "민지가 이제 등산을 좋아한다", "수진이 이제 등산을 좋아한다"),
]


def hand() -> tuple[Callable[[str], set[str]], Callable[[str], set[str]]]:
    from giok.text.terms import query_terms, terms

    return (lambda q: set(query_terms(q))), (lambda d: set(terms(d)))


def kiwi() -> tuple[Callable[[str], set[str]], Callable[[str], set[str]]]:
    from kiwipiepy import Kiwi

    k = Kiwi()
    keep = ("NNG", "NNP", "NNB", "NR", "VV", "VA", "XR", "SL", "SN", "SH")

    def terms(text: str) -> set[str]:
        return {t.form for t in k.tokenize(text) if t.tag in keep}

    return terms, terms


def evaluate(name: str, pair: tuple[Callable[[str], set[str]], Callable[[str], set[str]]]) -> None:
    query, doc = pair
    for split, rows in (("dev", ROWS[0::2]), ("test", ROWS[1::2])):
        found = sum(bool(query(q) & doc(yes)) for q, yes, _ in rows)
        wrong = sum(bool(query(q) & doc(no)) for q, _, no in rows)
        print(
            f"{name:6} {split:4}: recall {found}/{len(rows)} = {found / len(rows):.2f}, "
            f"false matches {wrong}/{len(rows)}"
        )
    corpus = [s for _, yes, no in ROWS for s in (yes, no)] * 25
    words = sum(len(s.split()) for s in corpus)
    doc(corpus[0])  # load once
    start = time.perf_counter()
    for s in corpus:
        doc(s)
    elapsed = time.perf_counter() - start
    print(
        f"{name:6} speed: {words / elapsed:,.0f} words/s ({len(corpus)} sentences, {elapsed * 1000:.0f} ms)"
    )


def sync_share(files: int = 1000) -> float:
    """A first index sync of `files` diary files (fake embedder): total seconds, and the share
    spent in keyword terms (giok.text.terms.terms and grams). Returns the words indexed."""
    import os
    import random
    import tempfile
    from pathlib import Path

    tmp = Path(tempfile.mkdtemp(prefix="giok-kterms-"))
    os.environ["GIOK_HOME"] = str(tmp / "home")
    from giok import Home, Workspace
    from giok.text import terms as module

    Home(tmp / "home").update(lambda c: c.update(embeddings={"provider": "fake"}))
    ws, _ = Workspace.init(tmp / "ws", name="ws")
    rng = random.Random(7)
    sentences = [s for _, yes, no in ROWS for s in (yes, no)]
    for n in range(files):
        day = f"2025-{1 + n // 28 % 12:02d}-{1 + n % 28:02d}"
        lines = "".join(f"- 10:{m:02d} {rng.choice(sentences)} {rng.randrange(10**6)}\n" for m in range(10))
        path = ws.root / "memory" / f"{day}-{n}.md"
        path.write_text(f"# {day}\n\n{lines}", "utf-8")
    spent = [0.0]
    words = [0]
    original_terms, original_grams = module.terms, module.grams

    def timed(fn):  # type: ignore[no-untyped-def]
        def run(text, *args, **kw):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            out = fn(text, *args, **kw)
            spent[0] += time.perf_counter() - start
            if fn is original_terms:
                words[0] += len(text.split())
            return out

        return run

    module.terms, module.grams = timed(original_terms), timed(original_grams)
    start = time.perf_counter()
    ws.search("서준", mode="keyword")
    total = time.perf_counter() - start
    module.terms, module.grams = original_terms, original_grams
    print(
        f"sync of {files} files ({words[0]:,} words): {total:.2f} s, keyword terms {spent[0]:.2f} s "
        f"({spent[0] / total:.0%})"
    )
    return words[0]


def main() -> None:
    if "--sync" in sys.argv:
        sync_share()
        return
    evaluate("hand", hand())
    try:
        start = time.perf_counter()
        pair = kiwi()
        pair[0]("준비")
        print(f"kiwi   load: {time.perf_counter() - start:.2f} s")
    except ImportError:
        print("kiwipiepy not installed: hand stripper only")
        return
    evaluate("kiwi", pair)


if __name__ == "__main__":
    sys.exit(main())
