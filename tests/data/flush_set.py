"""Build tests/data/flush_set.json: labelled conversations for the watchdog flush.

Written before the flush rules. Each case: id, lang, split (dev|test), messages (role, text;
role "text" = a plain-text line), and the labels: `constraint`, `preference`, `decision` are
lists of substrings, each naming one statement a flush must carry into memory. Every other
sentence is a distractor (greetings, questions, reports of the past, speculation, negated
status lines, the assistant repeating rules back)."""

import json
from pathlib import Path

U, A, T = "user", "assistant", "text"
CASES = [
    # ---------------- dev, English
    {
        "id": "en-01",
        "lang": "en",
        "split": "dev",
        "messages": [
            (U, "Hi! Quick one today."),
            (U, "Never push directly to main; open a pull request instead."),
            (A, "Understood. I found that CI takes 12 minutes on the arm64 runner."),
            (U, "I prefer short answers, bullet points are fine."),
            (A, "We decided to use SQLite WAL for the index."),
            (U, "Don't worry about the flaky test for now."),
        ],
        "constraint": ["Never push directly to main"],
        "preference": ["I prefer short answers"],
        "decision": ["decided to use SQLite WAL"],
    },
    {
        "id": "en-02",
        "lang": "en",
        "split": "dev",
        "messages": [
            (U, "Always run the full test suite before tagging a release."),
            (A, "Will do. The build failed yesterday because the cache was stale."),
            (U, "I don't know why the cache was stale, maybe disk pressure."),
            (U, "Please reply in Korean from now on."),
            (A, "Should I also translate the README?"),
            (U, "No, leave the README in English."),
        ],
        "constraint": ["Always run the full test suite"],
        "preference": ["reply in Korean from now on"],
        "decision": ["leave the README in English"],
    },
    {
        "id": "en-03",
        "lang": "en",
        "split": "dev",
        "messages": [
            (U, "Do not store customer emails in the logs."),
            (U, "It never worked with the old proxy anyway."),
            (A, "Noted: I must not store customer emails in the logs."),
            (U, "Let's go with Postgres for the team index."),
            (U, "How long will the migration take?"),
        ],
        "constraint": ["Do not store customer emails"],
        "preference": [],
        "decision": ["go with Postgres"],
    },
    {
        "id": "en-04",
        "lang": "en",
        "split": "dev",
        "messages": [
            (T, "user: good morning"),
            (T, "user: I'd rather you call me Seojun, not Mr. Kim."),
            (T, "assistant: Sure, Seojun. I noticed the deploy script still points at staging."),
            (T, "user: Make sure every migration has a rollback script."),
            (T, "user: we agreed to ship v2 on Monday"),
            (T, "assistant: I think the staging DB might be full."),
        ],
        "constraint": ["every migration has a rollback script"],
        "preference": ["call me Seojun"],
        "decision": ["agreed to ship v2 on Monday"],
    },
    {
        "id": "en-05",
        "lang": "en",
        "split": "dev",
        "messages": [
            (U, "Thanks for yesterday's summary."),
            (A, "You're welcome. The error was a timeout in the embedding call."),
            (U, "Can you check whether the nightly job ran?"),
            (A, "It ran at 03:00 and finished in 40 seconds."),
            (U, "Great, nothing else today."),
        ],
        "constraint": [],
        "preference": [],
        "decision": [],
    },
    {
        "id": "en-06",
        "lang": "en",
        "split": "dev",
        "messages": [
            (U, "From now on, use tabs instead of spaces in the Go code."),
            (U, "My favourite editor is Helix, so give Helix keybindings when you explain."),
            (A, "Settled on Helix keybindings for the docs."),
            (U, "Don't deploy on Fridays."),
            (A, "I didn't deploy anything today."),
        ],
        "constraint": ["use tabs instead of spaces", "Don't deploy on Fridays"],
        "preference": ["favourite editor is Helix"],
        "decision": ["Settled on Helix keybindings"],
    },
    # ---------------- dev, Korean
    {
        "id": "ko-01",
        "lang": "ko",
        "split": "dev",
        "messages": [
            (U, "안녕하세요"),
            (U, "절대 main에 직접 푸시하지 마."),
            (A, "알겠습니다. 빌드가 arm64에서 실패했어요."),
            (U, "앞으로는 한국어로 답해줘."),
            (A, "인덱스는 SQLite WAL로 하기로 했습니다."),
        ],
        "constraint": ["절대 main에 직접 푸시하지 마"],
        "preference": ["앞으로는 한국어로 답해줘"],
        "decision": ["SQLite WAL로 하기로"],
    },
    {
        "id": "ko-02",
        "lang": "ko",
        "split": "dev",
        "messages": [
            (U, "배포 전에 반드시 스테이징에서 테스트해야 해."),
            (U, "어제 로그는 확인했어?"),
            (A, "네, 타임아웃 에러가 세 번 있었어요."),
            (U, "나는 짧은 답변을 선호해."),
            (U, "걱정하지 마, 그건 내가 처리할게."),
        ],
        "constraint": ["반드시 스테이징에서 테스트"],
        "preference": ["짧은 답변을 선호"],
        "decision": [],
    },
    {
        "id": "ko-03",
        "lang": "ko",
        "split": "dev",
        "messages": [
            (T, "사용자: 고객 이메일은 로그에 남기면 안 돼"),
            (T, "에이전트: 확인했습니다. 원인은 프록시 설정이었어요."),
            (T, "사용자: 다음 주 월요일에 v2를 출시하기로 결정했어"),
            (T, "사용자: 아마 서버가 느린 것 같아"),
            (T, "사용자: 회의는 몇 시야?"),
        ],
        "constraint": ["고객 이메일은 로그에 남기면 안 돼"],
        "preference": [],
        "decision": ["출시하기로 결정"],
    },
    {
        "id": "ko-04",
        "lang": "ko",
        "split": "dev",
        "messages": [
            (U, "저를 서준님이라고 불러 주세요."),
            (U, "커밋 메시지는 항상 영어로 써."),
            (A, "알겠습니다. 테스트가 하나 깨졌는데 고치는 중이에요."),
            (U, "금요일에는 배포하지 말자."),
            (U, "오늘은 여기까지, 수고했어."),
        ],
        "constraint": ["커밋 메시지는 항상 영어로", "금요일에는 배포하지 말자"],
        "preference": ["서준님이라고 불러"],
        "decision": [],
    },
    {
        "id": "ko-05",
        "lang": "ko",
        "split": "dev",
        "messages": [
            (U, "어제 회의 어땠어?"),
            (A, "회의에서 일정 이야기를 했어요. 결론은 안 났습니다."),
            (U, "그렇구나, 고마워."),
            (A, "다음 단계로 벤치마크를 돌려야 해요."),
        ],
        "constraint": [],
        "preference": [],
        "decision": [],
    },
    {
        "id": "ko-06",
        "lang": "ko",
        "split": "dev",
        "messages": [
            (U, "다크 모드가 더 좋아."),
            (U, "비밀번호나 토큰은 절대 메모리에 저장하지 마세요."),
            (A, "알겠습니다. 임베딩 모델은 e5로 정했습니다."),
            (U, "응, 그걸로 가자."),
        ],
        "constraint": ["토큰은 절대 메모리에 저장하지 마"],
        "preference": ["다크 모드가 더 좋아"],
        "decision": ["e5로 정했"],
    },
    # ---------------- test, English
    {
        "id": "en-07",
        "lang": "en",
        "split": "test",
        "messages": [
            (U, "Hey there."),
            (U, "Please don't ever force-push to the release branch."),
            (A, "Got it. The integration test failed on Windows."),
            (U, "I prefer Korean from now on."),
            (U, "Did the backup finish?"),
        ],
        "constraint": ["don't ever force-push to the release branch"],
        "preference": ["I prefer Korean from now on"],
        "decision": [],
    },
    {
        "id": "en-08",
        "lang": "en",
        "split": "test",
        "messages": [
            (U, "You must ask me before deleting any branch."),
            (A, "Understood, I will ask before deleting branches."),
            (U, "I like dark mode better for screenshots."),
            (A, "We chose pnpm over npm for the workspace."),
            (U, "I don't care about the icon color."),
        ],
        "constraint": ["must ask me before deleting any branch"],
        "preference": ["I like dark mode better"],
        "decision": ["chose pnpm over npm"],
    },
    {
        "id": "en-09",
        "lang": "en",
        "split": "test",
        "messages": [
            (U, "Only use the staging database for experiments."),
            (U, "Probably the outage was DNS again."),
            (A, "I found the root cause: an expired certificate."),
            (U, "OK, let's use Let's Encrypt with auto-renewal."),
            (U, "What's the weather like in Seoul?"),
        ],
        "constraint": ["Only use the staging database"],
        "preference": [],
        "decision": ["use Let's Encrypt with auto-renewal"],
    },
    {
        "id": "en-10",
        "lang": "en",
        "split": "test",
        "messages": [
            (T, "user: morning!"),
            (T, "user: I want the weekly report on Mondays, not Fridays."),
            (T, "assistant: The report generator crashed on an empty week."),
            (T, "user: never send reports to the whole team without my review"),
            (T, "assistant: Next step is to add a guard for empty weeks."),
        ],
        "constraint": ["never send reports to the whole team"],
        "preference": ["weekly report on Mondays"],
        "decision": [],
    },
    {
        "id": "en-11",
        "lang": "en",
        "split": "test",
        "messages": [
            (U, "Is the API down?"),
            (A, "No, it's up. The dashboard was just slow."),
            (U, "Cool, thanks."),
            (A, "I noticed the disk is 80% full."),
        ],
        "constraint": [],
        "preference": [],
        "decision": [],
    },
    {
        "id": "en-12",
        "lang": "en",
        "split": "test",
        "messages": [
            (U, "Don't use emojis in commit messages."),
            (U, "We decided to drop Python 3.9 support."),
            (U, "I'd prefer that you write tests first."),
            (A, "The coverage job didn't work on the fork."),
        ],
        "constraint": ["Don't use emojis in commit messages"],
        "preference": ["write tests first"],
        "decision": ["decided to drop Python 3.9"],
    },
    # ---------------- test, Korean
    {
        "id": "ko-07",
        "lang": "ko",
        "split": "test",
        "messages": [
            (U, "안녕!"),
            (U, "프로덕션 DB는 절대 건드리지 마."),
            (A, "네. 어제 배포는 성공했어요."),
            (U, "나는 존댓말보다 반말이 편해."),
            (U, "지금 몇 시야?"),
        ],
        "constraint": ["프로덕션 DB는 절대 건드리지 마"],
        "preference": ["반말이 편해"],
        "decision": [],
    },
    {
        "id": "ko-08",
        "lang": "ko",
        "split": "test",
        "messages": [
            (U, "PR은 꼭 리뷰를 받고 머지해."),
            (A, "알겠습니다. 캐시 문제의 원인을 발견했어요."),
            (U, "문서는 마크다운으로 쓰는 걸 좋아해."),
            (U, "패키지 매니저는 uv로 하기로 했어."),
        ],
        "constraint": ["꼭 리뷰를 받고 머지"],
        "preference": ["마크다운으로 쓰는 걸 좋아해"],
        "decision": ["uv로 하기로"],
    },
    {
        "id": "ko-09",
        "lang": "ko",
        "split": "test",
        "messages": [
            (T, "사용자: 새벽에는 알림 보내지 마"),
            (T, "에이전트: 확인했습니다. 알림 서버가 재시작됐어요."),
            (T, "사용자: 아마 메모리 누수일지도 몰라"),
            (T, "사용자: 보고서는 표로 정리해 주는 게 좋겠어"),
        ],
        "constraint": ["새벽에는 알림 보내지 마"],
        "preference": ["표로 정리해 주는 게 좋겠어"],
        "decision": [],
    },
    {
        "id": "ko-10",
        "lang": "ko",
        "split": "test",
        "messages": [
            (U, "오늘 점심 뭐 먹었어?"),
            (A, "저는 먹지 않아요. 대신 로그를 정리했어요."),
            (U, "ㅋㅋ 알겠어."),
            (A, "테스트 하나가 실패해서 내일 다시 볼게요."),
        ],
        "constraint": [],
        "preference": [],
        "decision": [],
    },
    {
        "id": "ko-11",
        "lang": "ko",
        "split": "test",
        "messages": [
            (U, "API 키는 환경 변수로만 넘겨야 해."),
            (U, "이제 녹차를 더 좋아해."),
            (A, "배포 일정은 목요일로 결정했습니다."),
            (U, "그건 몰랐네."),
        ],
        "constraint": ["환경 변수로만 넘겨야 해"],
        "preference": ["녹차를 더 좋아해"],
        "decision": ["목요일로 결정"],
    },
    {
        "id": "ko-12",
        "lang": "ko",
        "split": "test",
        "messages": [
            (U, "앞으로 회의록은 반드시 한국어로 작성해 줘."),
            (U, "테스트 없이 머지하면 안 됩니다."),
            (A, "네, 지난번에는 테스트 없이 머지해서 버그가 났었죠."),
            (U, "라떼보다 아메리카노를 선호해요."),
        ],
        "constraint": ["회의록은 반드시 한국어로", "테스트 없이 머지하면 안 됩니다"],
        "preference": ["아메리카노를 선호"],
        "decision": [],
    },
]


def build() -> list[dict]:
    out = []
    for case in CASES:
        out.append(
            {
                "id": case["id"],
                "lang": case["lang"],
                "split": case["split"],
                "messages": [{"role": r, "content": t} for r, t in case["messages"]],
                "constraint": case["constraint"],
                "preference": case["preference"],
                "decision": case["decision"],
            }
        )
    return out


if __name__ == "__main__":
    path = Path(__file__).with_suffix(".json")
    path.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(CASES)} cases → {path}")
