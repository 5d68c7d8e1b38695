"""A small Korean/English retrieval set for giok search: memories, queries with the memory
that answers them (paraphrased, particles, mixed language, cross-language), and queries
that must return nothing."""

MEMORIES = {
    "coffee": "Seojun prefers dark roast coffee, black, no sugar.",
    "deploy": "배포는 매주 금요일 오후 3시에 한다.",
    "dog": "서준의 강아지 이름은 보리이고 진돗개다.",
    "allergy": "Seojun is allergic to peanuts; never suggest recipes with them.",
    "db": "We chose PostgreSQL over MySQL for the billing service because of JSONB support.",
    "zeon": "제온은 서준이 만든 첫 번째 에이전트이다.",
    "gym": "서준은 화요일과 목요일 아침에 헬스장에 간다.",
    "sister": "Seojun's sister Minji lives in Busan and works as a nurse.",
    "api": "OpenAI API 키는 환경변수 OPENAI_API_KEY에서 읽는다, never from files.",
    "essay": "The first draft of the memory essay was finished on March 5.",
    "laptop": "회사 노트북은 M3 MacBook Pro이고 메모리는 36GB다.",
    "language": "Seojun wants answers in Korean unless the code comments are in English.",
    "bug": "The login bug was caused by a timezone mismatch between the server (UTC) and the client (KST).",
    "trip": "다음 달에 제주도로 가족 여행을 간다.",
    "vibedojo": "VibeDojo v2 리팩터링을 하기로 결정했다 because the old router could not stream.",
}

# (query, key of the memory that answers it)
QUERIES = [
    ("What kind of coffee does Seojun drink?", "coffee"),
    ("서준은 커피를 어떻게 마셔?", "coffee"),
    ("배포 언제 해?", "deploy"),
    ("When do we ship releases?", "deploy"),
    ("강아지 이름이 뭐였지", "dog"),
    ("What's the name of Seojun's dog?", "dog"),
    ("Any food Seojun cannot eat?", "allergy"),
    ("땅콩 알레르기", "allergy"),
    ("Why did we pick Postgres for billing?", "db"),
    ("결제 서비스 데이터베이스는 뭘로 정했어?", "db"),
    ("제온", "zeon"),
    ("Who created Zeon?", "zeon"),
    ("운동은 언제 해?", "gym"),
    ("Where does Minji live?", "sister"),
    ("서준 여동생 직업", "sister"),
    ("API key는 어디서 읽어?", "api"),
    ("When was the essay draft done?", "essay"),
    ("회사 노트북 사양", "laptop"),
    ("Which language should replies be in?", "language"),
    ("로그인 버그 원인이 뭐였어?", "bug"),
    ("What caused the login problem?", "bug"),
    ("제주도 여행", "trip"),
    ("VibeDojo 리팩터링 이유", "vibedojo"),
    ("Why refactor VibeDojo?", "vibedojo"),
]

# Queries about things never remembered: the search must return nothing above the cut-off.
NEGATIVES = [
    "What is the boiling point of mercury?",
    "양자역학의 불확정성 원리",
    "Kubernetes pod autoscaling thresholds",
    "고양이 사료 브랜드 추천",
    "the score of last night's baseball game",
]
