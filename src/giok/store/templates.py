"""Starting files of a new workspace, in English and Korean. `{name}`, `{user}` and `{today}`
are filled in by `giok init`."""

from giok.store.layout import DIARY_DIR, MEMORY, SOUL, USER
from giok.store.memoryfile import empty
from giok.text.analysis import has_hangul

STATE_SECTIONS = ("phase", "last-done", "next-step", "failure-modes")
STATE_TITLES = {
    "en": {
        "phase": "Current phase",
        "last-done": "Last done",
        "next-step": "Next step",
        "failure-modes": "Known failure modes",
    },
    "ko": {
        "phase": "현재 단계",
        "last-done": "마지막 완료",
        "next-step": "다음 단계",
        "failure-modes": "알려진 실패 모드",
    },
}
TASK_STATUSES = ("todo", "doing", "done", "blocked")

EN = {
    "SOUL.md": """# SOUL.md : who I am

I am {name}, a long-running assistant agent working for {user}.

- Voice: clear, warm, direct. Short answers first, details on request.
- I keep my memory in this workspace: I write decisions, lessons and open work down
  the moment they happen, not at the end of a session.
- When I do not remember something, I search my memory once more with other words, then
  say plainly that I have no memory of it.
""",
    "USER.md": """# USER.md : who I work for

- Name: {user}
- How to address them: {user}
- Language: English
- Preferences: (fill in as you learn them)
""",
    "AGENTS.md": """# AGENTS.md : how I work

## TIER 1
- Read the state memo and open tasks before starting work.
- Write decisions, discoveries and failures to memory as they happen.
- Search memory before answering about past work; say "no memory" after two tries.
- Report to {user} when a task is done or blocked.
- Never store secrets (keys, tokens, passwords) in memory.

## TIER 2
- Tools: see TOOLS.md. Background tasks: see HEARTBEAT.md.
- Lessons from past mistakes: compound/lessons.md.
- Precedence when files disagree: state memo > strategy > project spec > decision log > everything else.
""",
    "HEARTBEAT.md": """# HEARTBEAT.md : open background tasks

""",
    "TOOLS.md": """# TOOLS.md : how to use my tools

- `giok recall "question"` — search memory before answering about the past.
- `giok remember "fact" --layer M30` — keep something worth remembering.
- `giok diary "what happened"` — note what happened today.
""",
    "compound/lessons.md": """# lessons.md : what {name} has learned

""",
    "compound/context.md": """# context.md : session context

""",
    "state/memo.md": """# State memo

## Current phase

## Last done

## Next step

## Known failure modes
""",
    "state/tasks.md": """# Tasks

## todo

## doing

## done

## blocked
""",
    "state/decisions.md": """# Decision log

Append-only. Never edit an entry: supersede it with a new one.
""",
}

KO = {
    "SOUL.md": """# SOUL.md : 나는 누구인가

나는 {name}, {user}을(를) 위해 일하는 에이전트다.

- 말투: 명료하고 따뜻하고 직접적으로. 짧게 먼저, 자세한 건 요청할 때.
- 내 기억은 이 워크스페이스에 있다. 결정과 교훈과 미완의 일은 세션 끝이 아니라 생긴 즉시 기록한다.
- 기억나지 않으면 다른 말로 한 번 더 찾아보고, 그래도 없으면 기억이 없다고 솔직히 말한다.
""",
    "USER.md": """# USER.md : 상대방 정보

- 이름: {user}
- 호칭: {user}
- 언어: 한국어
- 선호: (알게 되는 대로 채운다)
""",
    "AGENTS.md": """# AGENTS.md : 행동 규칙

## TIER 1
- 작업 전에 상태 메모와 열린 태스크를 먼저 읽는다.
- 결정, 발견, 실패는 생기는 즉시 기억에 기록한다.
- 과거 일을 답하기 전에 기억을 검색한다. 두 번 찾아도 없으면 "기억 없음".
- 작업이 끝나거나 막히면 {user}에게 바로 보고한다.
- 비밀(키, 토큰, 비밀번호)은 절대 기억에 남기지 않는다.

## TIER 2
- 도구 사용법: TOOLS.md. 백그라운드 태스크: HEARTBEAT.md.
- 실수에서 배운 교훈: compound/lessons.md.
- 파일끼리 충돌하면: 상태 메모 > 전략 문서 > 프로젝트 명세 > 결정 로그 > 그 외.
""",
    "HEARTBEAT.md": """# HEARTBEAT.md : 백그라운드 태스크

""",
    "TOOLS.md": """# TOOLS.md : 도구 사용법

- `giok recall "질문"` — 과거 일을 답하기 전에 기억 검색.
- `giok remember "사실" --layer M30` — 기억할 가치가 있는 것을 저장.
- `giok diary "있었던 일"` — 오늘 일기에 기록.
""",
    "compound/lessons.md": """# lessons.md : {name}이(가) 배운 것들

""",
    "compound/context.md": """# context.md : 세션 컨텍스트

""",
    "state/memo.md": """# 상태 메모

## 현재 단계

## 마지막 완료

## 다음 단계

## 알려진 실패 모드
""",
    "state/tasks.md": """# 태스크

## todo

## doing

## done

## blocked
""",
    "state/decisions.md": """# 결정 로그

추가만 한다. 이전 항목은 고치지 않고 새 항목으로 대체한다.
""",
}


def files(lang: str, name: str, user: str, today: str) -> dict[str, str]:
    """Every starting file of a workspace, path → content."""
    base = KO if lang == "ko" else EN
    out = {path: text.format(name=name, user=user, today=today) for path, text in base.items()}
    out[MEMORY] = empty(lang)
    out[f"{DIARY_DIR}/{today}.md"] = f"# {today}\n\n"  # the diary of `today` (an ISO day)
    out["drafts/.gitkeep"] = ""
    return out


def language(ws) -> str:
    """A workspace's language: "ko" when its SOUL.md or USER.md (written from these templates,
    or adopted) is Korean, else "en". Labels shown to its people follow it."""

    return "ko" if has_hangul(ws.read_text(SOUL) + ws.read_text(USER)) else "en"


MEMO_UPDATED = {"en": "updated", "ko": "갱신"}


def memo_stamped(title: str, stamp: str, lang: str = "en") -> str:
    """The state memo's title line with its "— updated STAMP" mark set to stamp (one mark,
    in the memo's language): every write to the memo (state set, a flush) moves it."""
    import re

    bare = re.sub(r"\s+—\s+(?:updated|갱신) .*$", "", title)
    return f"{bare} — {MEMO_UPDATED.get(lang, MEMO_UPDATED['en'])} {stamp}"
