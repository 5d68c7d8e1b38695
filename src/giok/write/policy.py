"""The write policy (seed 001): should this be written, as what, for whom, and does it repeat,
update or contradict what is already there?

    event → should_write? → type + scope → normalize → redact → dedup / supersede → write

`decide(memory, text, ...)` returns a `Decision` (write, refuse, duplicate, supersede) with its
reason; `Workspace.remember` carries it out and records it (see trace.py). Everything here is
pure: no files, no git.

Scopes: `workspace` (default), `user:NAME`, `thread:ID`, `task:ID`. `visible(scope, ...)` is the
one rule for retrieval and boot: a user's memory is seen only by that user, a thread's only in
that thread, a task's only while that task is asked for.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from giok.store.memoryfile import MemoryEntry, MemoryFile
from giok.text import analysis, likeness
from giok.text import terms as tokenize
from giok.text.lazy import lazy
from giok.write import judgement

LOW_CONFIDENCE = 0.5  # speculation is kept only when marked with a type and at most this
NEAR_DUPLICATE = likeness.NEAR_DUPLICATE  # similarity at or above which a new entry updates an old one

# -- should_write: asked of the one judgement (giok.write.judgement) -----------------------------
_SPECULATION = judgement._SPECULATION  # the flush's cue for a guess (lifecycle.watchdog)


@dataclass
class Decision:
    """What the policy decided about one write."""

    action: str  # write, refuse, duplicate, supersede
    reason: str
    text: str = ""  # normalized and redacted
    type: str | None = None
    scope: str = "workspace"
    confidence: str | None = None
    target: MemoryEntry | None = None  # the existing entry (duplicate) or the one superseded
    also: list[MemoryEntry] = field(default_factory=list)  # older entries the new one replaces too
    redactions: list[str] = field(default_factory=list)
    forced: bool = False
    layer: str | None = None  # the judgement's layer for a kept text (None: refused)
    importance: float = 0.0
    judge: str = ""  # what judged it: surface, model, rules, tag

    def to_dict(self) -> dict:
        """The decision as JSON-ready data."""
        return {
            "action": self.action,
            "reason": self.reason,
            "type": self.type,
            "scope": self.scope,
            "confidence": self.confidence,
            "target": self.target.id if self.target else None,
            "redactions": list(self.redactions),
            "forced": self.forced,
            "layer": self.layer,
            "importance": round(self.importance, 3),
            "judge": self.judge,
        }


def should_write(text: str, type: str | None = None, confidence: float | None = None) -> tuple[bool, str]:
    """(True, why) for text worth keeping; (False, why) for greetings, thanks, questions,
    guesses, filler and trivia (giok.write.judgement). A guess passes only when the caller marks
    it with a type and low confidence."""
    verdict = judgement.judge(text, type=type, confidence=confidence)
    return verdict.keep, verdict.reason if not verdict.keep else "worth keeping"


# -- type and scope ----------------------------------------------------------------------------
# The one list of type keywords: `classify` for remember and judges.guess_type for distilled
# diary items. First match wins, in this order.
_TYPE_RULES = (
    (
        "decision",
        lazy(
            r"\b(decided|decides|decision|we chose|chose to|agreed to|settled on|going with|will use)\b|"
            r"결정|합의|하기로|정했",
            re.I,
        ),
    ),
    (
        "lesson",
        lazy(
            r"\b(lessons?|learned|learnt|never again|always (check|use|run)|next time|should have|"
            r"mistakes?|mistake was|root cause|post-?mortem|pattern:)|교훈|배운|배웠|다음부터|다음엔|실수",
            re.I,
        ),
    ),
    (
        "preference",
        lazy(
            r"\b(prefers?|preferred|likes?|loves?|hates?|dislikes?|wants?|favou?rite|"
            r"would rather|enjoys?)\b|선호|좋아|싫어|원한다|원함|즐겨",
            re.I,
        ),
    ),
    (
        "workflow",
        lazy(
            r"\b(pending|in progress|waiting (for|on)|blocked|next step|todo|to do|wip|"
            r"half[- ]done|unfinished|resume|awaiting)\b|진행 ?중|대기|다음 단계|미완|보류|재개",
            re.I,
        ),
    ),
    (
        "episode",
        lazy(
            r"\b(yesterday|today|this morning|last (week|night|month)|finished|completed|"
            r"shipped|released|launched|started|founded|joined|married|graduated|met|happened|did|"
            r"failed|broke|crashed)\b|어제|오늘|완료|했다|끝냈|출시|런칭|창업|합류|시작했|실패했|깨졌",
            re.I,
        ),
    ),
)


def classify(text: str) -> str:
    """The memory type a text most likely is (fact when nothing more specific fits)."""
    for name, pattern in _TYPE_RULES:
        if pattern.search(text):
            return name
    return "fact"


def scope_for(
    scope: str | None = None, user: str | None = None, thread: str | None = None, task: str | None = None
) -> str:
    """The scope string from explicit parts; an explicit scope wins; default workspace."""
    if scope:
        return scope
    if thread:
        return f"thread:{thread}"
    if task:
        return f"task:{task}"
    if user:
        return f"user:{scope_name(user)}"
    return "workspace"


def scope_name(name: str) -> str:
    """A user's name as a scope carries it: spaces become hyphens ("김 민수" → user:김-민수), so
    any name USER.md holds can own entries, and a read compares names the same way."""
    return re.sub(r"\s+", "-", name.strip())


def visible(
    scope: str | None,
    user: str | None = None,
    thread: str | None = None,
    tasks: tuple[str, ...] | list[str] | set[str] = (),
) -> bool:
    """May an entry of `scope` be returned or injected for this user, thread and tasks?"""
    scope = scope or "workspace"
    kind, _, name = scope.partition(":")
    if kind == "workspace":
        return True
    if kind == "user":
        return user is not None and name.casefold() == scope_name(user).casefold()
    if kind == "thread":
        return thread is not None and name == thread
    if kind == "task":
        return name in set(tasks)
    return False


# -- normalize ---------------------------------------------------------------------------------
def normalize(text: str) -> str:
    """NFC, one space between words, ISO dates (2026.3.5, 2026/03/05, 2026–03–05, 2026년 3월 5일)."""
    return analysis.canonical(text)


def key(text: str) -> str:
    """The comparison key: case-folded words without punctuation."""
    return likeness.features(text).key


def _words(text: str) -> list[str]:
    return analysis.key_words(text)


# -- secrets -----------------------------------------------------------------------------------
SECRET_PATTERNS = (
    (
        "private-key",
        lazy(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
    ),
    ("anthropic-key", lazy(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", lazy(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("stripe-key", lazy(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("github-token", lazy(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("gitlab-token", lazy(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", lazy(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("aws-access-key", lazy(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("google-api-key", lazy(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("jwt", lazy(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer-token", lazy(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/\-]{16,}=*")),
    ("url-password", lazy(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    # `password: x`, `DB_PASSWORD=x`, `password is x`: any value; after a Korean particle
    # (`비밀번호는 …`) a value with an ASCII character; after a bare space a value with a digit
    # or symbol, so that "password policy" and "비밀번호는 매달 바꾼다" stay as written.
    (
        "password",
        lazy(
            r"(?i)(?<![A-Za-z0-9])(?:password|passwd|passphrase|(?:pwd|pw)(?=\s*[:=])|비밀번호|비번|암호)"
            # "password for the router:"
            r"(?:\s+(?:for|of|to|on)\s+(?:(?:the|my|our|a|an)\s+)?[\w.\-]{1,40}"
            r"(?:\s+[\w.\-]{1,40})?(?=\s*[:=]))?"
            r"(?:\s*(?:=|:)\s*[\"'`]?(?P<value>[^\s\"'`,;]{4,})"
            # after "is"/"was" or a Korean particle, only what looks like a password: a digit or a
            # symbol in it ("password is hunter2", not "password is stored in 1Password")
            r"|\s+(?:is|was)\s+[\"'`]?(?P<said>(?=[^\s\"'`,;]*[0-9!#$%&*+/=?@^_~\-])[^\s\"'`,;]{4,})"
            r"|\s*(?:는|은|이|가)\s*[\"'`]?(?P<particle>(?=[^\s\"'`,;]*[0-9!#$%&*+/=?@^_~\-])[^\s\"'`,;]{4,})"
            r"|\s+[\"'`]?(?P<loose>(?=[^\s\"'`,;]*[0-9!#$%&*+/=?@^_~\-])[^\s\"'`,;]{4,}))"
        ),
    ),
    (
        "secret",
        lazy(
            r"(?i)(?<![\w])(?:api[_\- ]?key|secret(?:[_\- ]?key)?|access[_\- ]?(?:token|key)|"
            r"auth[_\- ]?token|"
            r"private[_\- ]?key|client[_\- ]?secret|token|토큰|키)"
            r"\s*(?:is|=|:|는|은)\s*[\"'`]?(?P<value>[A-Za-z0-9_\-./+=]{12,})"
        ),
    ),
)
# `NAME = value` / `NAME: value` where NAME (one token, at most 64 characters) names a secret:
# `aws_secret_access_key = …`, `GITHUB_TOKEN=…`, `client-secret: …`, when the value mixes letters
# and digits (`token_count: 120000` stays). The name is checked apart
# from the match, so no pattern nests quantifiers (redaction stays linear on any input).
_ASSIGNMENT = lazy(
    r"(?<![A-Za-z0-9_\-])(?P<name>[A-Za-z][A-Za-z0-9_\-]{0,63})\s*[=:]\s*[\"'`]?"
    r"(?P<value>[A-Za-z0-9_\-./+=]{12,})"
)
_SECRET_NAME = lazy(
    r"(?i)secret|token(?!i[sz])|passw|api[_\-]?key|access[_\-]?key|private[_\-]?key|credential"
)
# A generic key: 32+ key characters, mixed case, high entropy, character classes changing
# often and not made of words (at most GENERIC_MAX_WORDS of it in runs like `Word`, `word`,
# `WORD`). Hex hashes, UUIDs, CamelCase or snake_case identifiers, paths and ids like
# m-7f3a2c do not qualify. Measured on random keys: see docs/policy.md.
_TOKEN = lazy(r"(?<![A-Za-z0-9_\-+/=])[A-Za-z0-9_\-+/]{32,}={0,2}(?![A-Za-z0-9_\-+/=])")
GENERIC_MIN_ENTROPY = 4.0  # bits per character
GENERIC_MIN_SWITCHES = 0.3  # share of adjacent characters of different classes
GENERIC_MAX_WORDS = 0.75  # share of characters inside word-like runs
# JSON / JavaScript escapes a writer could hide a key behind (`"sk-\u0070roj-…"`, `\/`).
_ESCAPE = lazy(r"\\u([0-9a-fA-F]{4})|\\/")


def redact(text: str) -> tuple[str, list[str]]:
    """Replace secrets with `[REDACTED:kind]`; returns the new text and the kinds found.
    A text with `\\uXXXX` (or `\\/`) escapes is also read with them decoded: when that reveals
    more secrets, the decoded text is the one redacted and returned (JSON-equivalent: only
    letters, digits and key punctuation are decoded, never quotes, backslashes or controls)."""
    out, found = _redact(text)
    if "\\" in text:
        plain = _unescape(text)
        if plain != text:
            out_plain, found_plain = _redact(plain)
            if len(found_plain) > len(found):
                return out_plain, found_plain
    return out, found


def _redact(text: str) -> tuple[str, list[str]]:
    found: list[str] = []
    for kind, pattern in SECRET_PATTERNS:

        def swap(m: re.Match, kind=kind, pattern=pattern) -> str:
            found.append(kind)
            for group in ("value", "said", "particle", "loose"):
                if group in pattern.groupindex and m.group(group):
                    start, end = m.span(group)
                    return (
                        m.group(0)[: start - m.start()] + f"[REDACTED:{kind}]" + m.group(0)[end - m.start() :]
                    )
            return f"[REDACTED:{kind}]"

        text = pattern.sub(swap, text)

    def assignment(m: re.Match) -> str:
        value = m.group("value")
        if not _SECRET_NAME.search(m.group("name")) or not (
            re.search(r"[A-Za-z]", value) and re.search(r"\d", value)
        ):
            return m.group(0)
        found.append("secret")
        start, end = m.span("value")
        return m.group(0)[: start - m.start()] + "[REDACTED:secret]" + m.group(0)[end - m.start() :]

    text = _ASSIGNMENT.sub(assignment, text)

    def generic(m: re.Match) -> str:
        if not _random_looking(m.group(0)):
            return m.group(0)
        found.append("generic-key")
        return "[REDACTED:generic-key]"

    return _TOKEN.sub(generic, text), found


def _random_looking(token: str) -> bool:
    body = token.rstrip("=")
    if not (re.search(r"[A-Z]", body) and re.search(r"[a-z]", body)):
        return False
    counts: dict[str, int] = {}
    for ch in body:
        counts[ch] = counts.get(ch, 0) + 1
    entropy = -sum(c / len(body) * math.log2(c / len(body)) for c in counts.values())
    kind = [("u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s") for c in body]
    switches = sum(a != b for a, b in itertools.pairwise(kind)) / (len(body) - 1)
    words = sum(len(w) for w in re.findall(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}", body)) / len(body)
    return entropy >= GENERIC_MIN_ENTROPY and switches >= GENERIC_MIN_SWITCHES and words < GENERIC_MAX_WORDS


def _unescape(text: str) -> str:
    def one(m: re.Match) -> str:
        if m.group(1) is None:
            return "/"
        ch = chr(int(m.group(1), 16))
        return ch if (ch.isalnum() or ch in " -_.:/+=@!#$%&*?^~'") and ch.isprintable() else m.group(0)

    return _ESCAPE.sub(one, text)


# Every secret redact finds holds a run of 12+ key characters (so a word of 12+ characters), a
# PEM header, a URL with credentials, a password word, or a `\` escape it decodes first: a line
# with none of them holds no secret and is passed over without running the patterns.
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-./+=~]{12}")
_MAYBE_SECRET = ("pw", "pass", "://", "-----begin", "\\", "비밀번호", "비번", "암호")


def secrets_in(text: str) -> list[str]:
    """The kinds of secret in text, by redact's detector ([] at once for most lines)."""
    low = text.lower()
    if not any(k in low for k in _MAYBE_SECRET) and not any(
        len(word) >= 12 and _KEY_RUN.search(word) for word in text.split()
    ):
        return []
    return redact(text)[1]


# The files a teammate's push or a hand edit can put a secret in, past the write policy.
SCANNED = ("*.md", "memory/*.md", "memory/archive/*.md", "state/*.md", "compound/*.md")


def stored_secrets(root: Path) -> list[dict]:
    """Lines of the workspace's markdown files that hold a secret (giok never writes one: it came
    by git or a hand edit), as `check` findings {severity, path, line, message}; the secret is
    named by kind, never quoted. Symlinks are not followed (check reports them)."""
    found: list[dict] = []
    for pattern in SCANNED:
        for path in sorted(root.glob(pattern)):
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            text = path.read_bytes().decode("utf-8", "replace")
            for no, line in enumerate(text.split("\n"), 1):
                kinds = secrets_in(line)
                if kinds:
                    found.append(
                        {
                            "severity": "error",
                            "path": rel,
                            "line": no,
                            "message": _secret_message(line, kinds),
                        }
                    )
    return found


_ID_RE = re.compile(r"<!--[^>]*\bid:\s*(m-[0-9a-f]{6,12})\b")


def _secret_message(line: str, kinds: list[str]) -> str:
    kind = ", ".join(sorted(set(kinds)))
    what = f"holds a secret ({kind}), stored past giok's write policy (a hand edit or a push)"
    entry = _ID_RE.search(line)
    fix = f"`giok forget {entry.group(1)}` removes the entry" if entry else "remove it from the file"
    return f"{what}: boot leaves it out; {fix}, and rotate the secret"


# -- dedup, near-duplicates, contradictions ----------------------------------------------------
# A statement is read as subject + predicate + objects, with a polarity. The same rules hold in
# English and Korean (docs/policy.md, "Changes and contradictions in Korean"):
#   supersede      same subject, same predicate family and a change word in the new statement
#                  ("now", "no longer", "이제", "요즘", "더 이상"); a switch or a move ("switched to",
#                  "moved to", "바꿨다", "옮겼다", "이사했다") of the same subject; the same subject and
#                  object with the opposite leaning (likes / dislikes, 좋아한다 / 좋아하지 않는다); or
#                  the same claim negated together with a change word
#   contradiction  the same claim with the opposite polarity and no change word: both are kept,
#                  the nightly review flags them (`opposed`)
_KO_SWITCH = "바꿨|바꿈|바꾸었|바꿔|변경"  # switched (to)
_KO_VALUE_CHANGE = "늘었|늘어났|줄었|줄어들|올랐|올렸|내렸|내려갔|바뀌었|바뀜"  # went up / down, changed
_CHANGE_WORDS = lazy(
    r"\b(now|currently|actually|instead|anymore|these days|no longer|from now on|"
    r"switched|changed|moved|increased|decreased|raised|lowered|went up|went down|rose|dropped)\b|"
    rf"이제|요즘|지금은|현재는|더 이상|앞으로는|대신|{_KO_SWITCH}|옮겼|옮김|이사했|이사함|{_KO_VALUE_CHANGE}",
    re.I,
)
_PREDICATES = (
    (
        "prefer",
        lazy(
            r"\b(prefers?|preferred|would rather|likes?|loves?|enjoys?|favou?rite)\b|선호|좋아|즐기|즐긴",
            re.I,
        ),
    ),
    ("dislike", lazy(r"\b(hates?|dislikes?|can'?t stand)\b|싫어|싫다", re.I)),
    ("want", lazy(r"\b(wants?)\b|원한다|원함|원해", re.I)),
    ("switch", lazy(rf"\b(switched|changed|migrated) (over )?to\b|{_KO_SWITCH}", re.I)),
    ("move", lazy(r"\b(moved|relocated) to\b|이사|옮겼|옮김|이전했", re.I)),
    (
        "live",
        lazy(r"\b(lives? in|based in|located in|is in|are in)\b|산다|살고|살아|거주|에 있다|에 있음", re.I),
    ),
    (
        "use",
        lazy(
            r"\b(uses?|using|runs? on|deploys? to|works? (at|for))\b|사용|쓴다|쓰고|쓰지|쓴|돌린다|돌려|"
            r"일한다|일해|다닌다|근무",
            re.I,
        ),
    ),
    (
        "call",
        lazy(r"\b(call(s|ed)? (him|her|them|me)|address(es|ed)? as|goes by)\b|호칭|부른다|불러", re.I),
    ),
    (
        "change",
        lazy(
            r"\b(increased|decreased|raised|lowered|went (up|down)|rose|dropped|fell|cut|moved)"
            rf"( back)? to\b|{_KO_VALUE_CHANGE}",
            re.I,
        ),
    ),
    ("be", lazy(r"\b(is|are)\b|[가-힣]다$|입니다$|이에요$|예요$", re.I)),
)
# What a switch or a move replaces besides its own kind; the polarity of a leaning.
_SUPERSEDES = {"switch": {"use", "be", "prefer"}, "move": {"live", "use"}, "change": {"be", "use"}}
_LEANING = {"prefer": 1, "want": 1, "dislike": -1}
_VALUE_PREDICATES = {"use", "switch", "move", "live", "be", "change"}
_KO_TOPIC = lazy(r"..*(은|는|이|가|께서)$")
_KO_OBJECT = lazy(r"..*(을|를)$")
_KO_SELF = {"나", "저", "내", "제", "우리", "저희"}
_KO_LOCATIVE = lazy(r"..*(에서|에선)$")
# What a preference is about: two preferences of different aspects are two facts ("I prefer short
# answers" / "I prefer Korean from now on"); a preference of no known aspect may replace another.
_PREFERENCE_ASPECTS = (
    (
        "language",
        lazy(
            r"\b(korean|english|japanese|chinese|french|german|spanish)\b|한국어|영어|일본어|중국어|한글",
            re.I,
        ),
    ),
    (
        "length",
        lazy(r"\b(short|long|brief|concise|detailed|verbose|terse|lengthy)\b|짧|길게|간결|자세", re.I),
    ),
    ("format", lazy(r"\b(bullets?|markdown|tables?|lists?|prose|json)\b|표로|목록|마크다운", re.I)),
    ("tone", lazy(r"\b(formal|casual|polite|friendly)\b|존댓말|반말|격식", re.I)),
)
_STOP = {
    "the",
    "a",
    "an",
    "my",
    "our",
    "his",
    "her",
    "their",
    "now",
    "currently",
    "actually",
    "still",
    "also",
    "really",
    "very",
    "no",
    "longer",
    "instead",
    "these",
    "days",
    "이제",
    "요즘",
    "지금은",
    "현재는",
    "not",
    "never",
    "don",
    "doesn",
    "didn",
    "t",
    "더",
    "이상",
    "앞으로는",
    "대신",
    "가장",
    "안",
    "못",
}


class Statement(NamedTuple):
    who: str  # the subject ("seojun", "deploy day", "배포 요일"; "" for the speaker in Korean)
    predicate: str  # prefer, dislike, want, switch, move, live, use, call, be
    objects: frozenset  # the other words of the statement
    purpose: frozenset = frozenset()  # "for X" words: "use Redis for caching"
    where: frozenset = frozenset()  # Korean locatives: "회사에서 맥북을 쓴다" → {회사}


@functools.lru_cache(maxsize=1 << 15)
def subject(text: str) -> Statement | None:
    """(who or what, predicate, object words) of a statement like "Seojun prefers tea" or
    "서준은 차를 좋아한다"; None when no predicate is found or nothing names the subject."""
    for name, pattern in _PREDICATES:
        m = pattern.search(text)
        if not m:
            continue
        found = _subject_ko(text, m, name) if analysis.language(text) == "ko" else _subject_en(text, m, name)
        if found:
            return found
    return None


def _subject_en(text: str, m: re.Match, name: str) -> Statement | None:
    head = [w for w in _words(text[: m.start()].casefold()) if w not in _STOP]
    if not head:
        return None
    after = [w for w in _words(text[m.end() :].casefold()) if w not in _STOP]
    purpose = after[after.index("for") + 1 :] if "for" in after else []
    return Statement(" ".join(head[-3:]), name, frozenset(after), frozenset(purpose) - {"the", "a", "an"})


def _subject_ko(text: str, m: re.Match, name: str) -> Statement | None:
    head = [w for w in _words(text[: m.start()].casefold()) if w not in _STOP]
    marker = (
        _KO_OBJECT if name in ("switch", "move") and any(_KO_OBJECT.match(w) for w in head) else _KO_TOPIC
    )
    cut = next((i + 1 for i, w in enumerate(head) if marker.match(w)), 0)
    who = " ".join(analysis.stem_ko(w) for w in head[:cut])
    who = "" if who in _KO_SELF else who
    if name == "be" and not who:
        return None
    rest = head[cut:]
    where = frozenset(analysis.stem_ko(w) for w in rest if _KO_LOCATIVE.match(w))
    return Statement(who, name, frozenset(analysis.stem_ko(w) for w in rest), where=where)


def _same_subject(a: Statement, b: Statement) -> bool:
    """The same subject, or (for values and places) one statement names the other's subject among
    its words: "채팅에 더 이상 슬랙을 쓰지 않는다" is about "채팅은 슬랙을 쓴다"."""
    if a.who == b.who:
        return True
    if a.predicate not in _VALUE_PREDICATES or b.predicate not in _VALUE_PREDICATES:
        return False
    for x, y in ((a, b), (b, a)):
        named = set(y.who.split())
        if (
            named
            and (not x.who or x.predicate in _SUPERSEDES)
            and named <= set(x.objects) | set(x.who.split())
        ):
            return True
    return False


def changes(text: str) -> bool:
    """Does the text say something changed ("now", "no longer", "switched", "이제", "대신")?"""
    return bool(_CHANGE_WORDS.search(text))


def contradicts(new: str, old: str) -> bool:
    """Does `new` replace `old`: same subject and predicate family with a change word ("now",
    "이제", "no longer"), a switch or move of the same subject, or the same subject and object
    with the opposite leaning?"""
    a, b = subject(new), subject(old)
    if not a or not b or not _same_subject(a, b):
        return False
    if (a.purpose or b.purpose) and not a.purpose & b.purpose:
        return False  # "use Postgres for the database" / "now use Redis for caching"
    if a.where and b.where and not a.where & b.where:
        return False  # "회사에서 맥북을 쓴다" / "이제 집에서 윈도우를 쓴다": two places, two facts
    if a.predicate in _LEANING and b.predicate in _LEANING and _aspects(new) != _aspects(old):
        return False  # "I prefer short answers" / "I prefer Korean from now on"
    kin = a.predicate == b.predicate or b.predicate in _SUPERSEDES.get(a.predicate, ())
    if {a.predicate, b.predicate} <= {"be", "change", "move"} and _value_update(a, b, new, old):
        return True  # "budget went up to 60 h" / "budget is 40 h"; "is 80 h" after it
    if kin and _CHANGE_WORDS.search(new):
        if a.predicate in ("move", "change") and _value_kind(a) != _value_kind(b):
            return False  # the meeting moved to 9시 is no move of house
        return a.predicate != "be" or _same_kind_of_value(a, b)
    lean_a = _LEANING.get(a.predicate, 0) * (-1 if claim(new)[1] else 1)
    lean_b = _LEANING.get(b.predicate, 0) * (-1 if claim(old)[1] else 1)
    return lean_a * lean_b < 0 and bool(a.objects & b.objects)


def _aspects(text: str) -> frozenset[str]:
    """What a preference is about (language, length, format, tone), as far as the words say."""
    return frozenset(name for name, pattern in _PREFERENCE_ASPECTS if pattern.search(text))


_VALUE_KINDS = (
    ("weekday", lazy(r"\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|[월화수목금토일]요일")),
    ("time", lazy(r"\b\d{1,2}(\s\d{2})?\s?(am|pm)\b|\d+시|오전|오후|\b\d{1,2} \d{2}\b")),
    (
        "month",
        lazy(
            r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\b|\d+월"
        ),
    ),
    ("number", lazy(r"\d")),
)


_LINKS = {"at", "to", "on", "in", "by", "back"}


def _kind_of(text: str) -> str | None:
    """The first kind of value (weekday, time, month, number) the text holds, or None."""
    return next((k for k, rx in _VALUE_KINDS if rx.search(text)), None)


def _value_kind(x: Statement) -> str | None:
    """The kind of value among a statement's words (weekday, time, month, number), or None."""
    return next((k for k, rx in _VALUE_KINDS if any(rx.search(w) for w in x.objects)), None)


def _value_update(a: Statement, b: Statement, new: str, old: str) -> bool:
    """A new value of the same attribute: the same subject (checked by the caller), a value of the
    same kind (weekday, time, month, number) that differs, the same other words ("every weekday",
    "한 달에"), neither negated. "Standup moved to 09:30 every weekday" replaces "Standup is at
    10:00 every weekday"; "연구실 GPU 예산은 한 달에 80시간이다" replaces "…60시간으로 늘었다"."""
    if claim(new)[1] or claim(old)[1]:
        return False
    parts = []
    for x in (a, b):
        slots: dict[str, set] = {}
        rest = set(x.who.split())  # "서준은 아침 회의를" = "서준은 … 아침 회의"
        for w in x.objects:
            kind = _kind_of(w)
            if kind:
                slots.setdefault(kind, set()).add(re.sub(r"(?<=[a-z])s$", "", w))  # Mondays = Monday
            else:
                rest.add(w)
        parts.append((slots, rest - _LINKS))
    (slots_a, rest_a), (slots_b, rest_b) = parts
    if not slots_a or slots_a.keys() != slots_b.keys() or rest_a != rest_b:
        return False
    return sum(slots_a[k] != slots_b[k] for k in slots_a) == 1  # one value changed, not two


def _same_kind_of_value(a: Statement, b: Statement) -> bool:
    """ "X is Y" → "X is now Z" replaces only a value of the same kind (a weekday, a time, a month,
    a number), or, with no kind on either side, an attribute named in several words ("deploy day",
    "favourite food"): "Seojun is busy these days" does not replace "Seojun is a developer"."""
    if len(a.objects) > 3 or len(b.objects) > 3:
        return False
    kind_a, kind_b = _kind_of(" ".join(sorted(a.objects))), _kind_of(" ".join(sorted(b.objects)))
    if kind_a or kind_b:
        return kind_a == kind_b
    return len(a.who.split()) >= 2


_KO_ENDINGS = ("는다", "다", "지는", "지", "함", "해", "할")  # only on words tokenize.stem_ko left alone
_LIGHT_VERBS = {"하", "되", "이", "있", "수"}


@functools.lru_cache(maxsize=1 << 15)
def claim(text: str) -> tuple[frozenset, bool]:
    """(the words of the positive claim, negated?): "배포는 금요일에 하지 않는다" and "Deploys do not
    happen on Friday" become the words of "배포는 금요일에 한다" / "Deploys happen on Friday", True.
    Korean words are compared by stem (particles and endings off, last final consonant dropped:
    한다 / 하지 → 하, 돈다 / 돌지 → 도); English words by tokenize's stemmer; change words drop."""
    body, negated = analysis.positive(text)
    body = _CHANGE_WORDS.sub(" ", body)
    out = set()
    for word in _words(body):
        if word in _STOP:
            continue
        if re.match(r"[가-힣]", word):
            stem = _ko_claim_word(word)
            if stem not in _LIGHT_VERBS:
                out.add(stem)
        else:
            out.update(tokenize.terms(word))
    return frozenset(out), negated


def _ko_claim_word(word: str) -> str:
    stem = analysis.stem_ko(word)
    for ending in _KO_ENDINGS if stem == word else ():
        if stem.endswith(ending) and len(stem) > len(ending):
            stem = stem[: -len(ending)]
            break
    if len(stem) > 1 and stem.endswith("하"):
        stem = stem[:-1]
    last = ord(stem[-1]) - 0xAC00
    if 0 <= last < 11172 and last % 28:
        stem = stem[:-1] + chr(0xAC00 + last - last % 28)  # the final consonant off: 한 → 하, 돌 → 도
    return stem


def opposed(a: str, b: str) -> bool:
    """The same claim with the opposite polarity ("runs on Fridays" / "does not run on Fridays",
    "GPU가 있다" / "GPU가 없다"): a contradiction to flag, unless the newer one says it changed."""
    (wa, na), (wb, nb) = claim(a), claim(b)
    return na != nb and bool(wa) and bool(wb) and likeness.counterparts(set(wa), set(wb))


def similarity(a: str, b: str) -> float:
    """Dice similarity of character trigrams of the comparison keys (works for Korean too)."""
    return likeness.similarity(likeness.features(a), likeness.features(b))


def compare(
    memory: MemoryFile, text: str, scope: str, today=None, index: Index | None = None
) -> tuple[str, MemoryEntry | None, str]:
    """Against live entries of the same scope: ("duplicate"|"supersede"|"new", entry, why).
    The new text's features are computed once; an entry's are memoised by its text
    (giok.text.likeness), so each entry costs a few lookups. With `index` (an `Index` of
    `memory`) only the entries it names are compared: the same decision, found sooner."""
    mine_f = likeness.features(text)
    wanted = mine_f.key
    look = _Everything(memory, scope, today) if index is None else _Indexed(index, scope, today)
    for entry in look.live_with_key(wanted):
        return "duplicate", entry, f"same as {entry.id}"
    reverted = _reversion(look, wanted)
    if reverted:
        return reverted
    mine = subject(text)
    changed = bool(_CHANGE_WORDS.search(text))
    best, best_score = None, 0.0
    for entry in look.newest_first(text, mine, changed):
        if mine and contradicts(text, entry.text) and _confirmed(text, entry.text):
            return (
                "supersede",
                entry,
                f"replaces {entry.id} (same subject: {mine[0] or 'the speaker'}, {mine[1]}; changed)",
            )
        if changed and opposed(text, entry.text):
            return "supersede", entry, f"replaces {entry.id} (the same claim, now negated or restored)"
        other = likeness.features(entry.text)
        if likeness.near_duplicate(mine_f, other):
            score = likeness.similarity(mine_f, other)
            if score > best_score:
                best, best_score = entry, score
    if best is not None:
        return "supersede", best, f"near-duplicate of {best.id} (similarity {best_score:.2f})"
    return _learned_change(look, text, mine)


def _confirmed(new: str, old: str) -> bool:
    """Does the learned judgement agree that the rules' change is one? Yes where it cannot
    answer (the rules alone, as before); no where it is unsure or disagrees ("차를 테슬라로
    바꿨다" is no change of a tea preference): both stay, and the nightly review raises an
    unsure pair once (giok.lifecycle.review), as it does for the same pair in the diary."""
    found = judgement.change_score(new, old)
    return found is None or found.verdict == "change"


LEARNED_CANDIDATES = 12  # live entries the pair head reads for one new text, newest first


def _learned_change(look: _Everything | _Indexed, text: str, mine: Statement | None) -> tuple[str, Any, str]:
    """The pair head's reading (giok.write.judgement.change_score) where the rules found no
    change: among live entries that share a word or the subject with the text, the one whose
    slot the text most likely fills with a new value ("Seojun started at Kakao" replaces
    "Seojun works at Naver"). ("new", None, "") when none reaches the head's threshold."""
    if not judgement.available():
        return "new", None, ""
    best, best_p = None, 0.0
    for entry in look.learned_candidates(text, mine)[:LEARNED_CANDIDATES]:
        found = judgement.change_score(text, entry.text)
        if found is not None and found.verdict == "change" and found.p > best_p:
            best, best_p = entry, found.p
    if best is None:
        return "new", None, ""
    return "supersede", best, f"replaces {best.id} (the same slot with a new value; judged {best_p:.2f})"


def _is_live(entry: MemoryEntry, scope: str, today=None) -> bool:
    return not entry.superseded and entry.scope == scope and not (today and entry.expired(today))


def _live(memory: MemoryFile, scope: str, today=None) -> list[MemoryEntry]:
    return [e for e in memory.entries() if _is_live(e, scope, today)]


class Index:
    """Where `compare` looks in one parsed MEMORY.md, kept with the parse by the write path
    (giok.write.remember) so that a remember at 5,000 entries compares a handful of them:
    entries by comparison key and by id, `likeness.NearIndex` for near-duplicates and, built
    on first need, subjects for `contradicts` and claim words for `opposed`. Each lookup
    returns a superset of what the full pass accepts, and the candidates are checked by the
    same code in the same order, so decisions are the same. The index sees only what `add`
    tells it: add every entry put into `memory`; fields may change (they are read when asked),
    an entry's text may not."""

    def __init__(self, memory: MemoryFile):
        self.memory = memory
        self.entries: list[MemoryEntry] = []
        self._ids: dict[str, list[int]] = {}
        self._near = likeness.NearIndex()
        self._subjects: _Subjects | None = None
        self._claims: likeness.WordIndex | None = None
        for entry in memory.entries():
            self.add(entry)

    def add(self, entry: MemoryEntry) -> None:
        """File an entry just put into `memory`."""
        serial = len(self.entries)
        self.entries.append(entry)
        self._ids.setdefault(entry.id, []).append(serial)
        self._near.add(serial, likeness.features(entry.text))
        if self._subjects is not None:
            self._subjects.add(serial, entry.text)
        if self._claims is not None:
            self._claims.add(serial, claim(entry.text)[0])

    def ids(self) -> Collection[str]:
        """The ids of all entries (like `MemoryFile.ids`)."""
        return self._ids.keys()

    def with_id(self, entry_id: str) -> list[MemoryEntry]:
        """The entries with this id, in file order."""
        return self.in_order(self._ids.get(entry_id, ()))

    def with_key(self, key: str) -> list[MemoryEntry]:
        """The entries with this comparison key, in file order (the index read from disk keeps
        keys by their CRC: the candidates are checked)."""
        found = self.in_order(self._near.with_key(key))
        return [e for e in found if likeness.features(e.text).key == key]

    def in_order(self, serials: Iterable[int]) -> list[MemoryEntry]:
        return sorted((self.entries[s] for s in serials), key=lambda e: e.line_no)

    def near(self, f: likeness.Features) -> set[int]:
        return self._near.candidates(f)

    def same_subject(self, mine: Statement) -> set[int]:
        if self._subjects is None:
            self._subjects = _Subjects()
            for serial, entry in enumerate(self.entries):
                self._subjects.add(serial, entry.text)
        return self._subjects.candidates(mine)

    def same_claim(self, text: str) -> set[int]:
        if self._claims is None:
            self._claims = likeness.WordIndex()
            for serial, entry in enumerate(self.entries):
                self._claims.add(serial, claim(entry.text)[0])
        words = claim(text)[0]
        return self._claims.candidates(words) if words else set()

    # -- kept on disk (giok.write.remember: .giok/policy-index.json) --------------------------------
    def dump(self) -> dict[str, Any]:
        """The index as JSON-ready data: entries by id, what is built of the rest by serial."""
        return {
            "ids": [e.id for e in self.entries],
            "near": self._near.dump(),
            "subjects": None if self._subjects is None else self._subjects.dump(),
            "claims": None if self._claims is None else self._claims.dump(),
        }

    @classmethod
    def load(cls, memory: MemoryFile, data: object) -> Index | None:
        """The index `dump` gave of a parse of the same bytes as `memory`; None when `data` is no
        such index (not one, of other entries, or of a file with an id twice). Its buckets are
        read when asked for: one that is not what `dump` wrote raises `likeness.Stale` then."""
        if not isinstance(data, dict):
            return None
        entries = memory.entries()
        by_id = {e.id: e for e in entries}
        ids = data.get("ids")
        if not isinstance(ids, list) or len(ids) != len(entries) or len(by_id) != len(entries):
            return None
        try:
            mine = [by_id[entry_id] for entry_id in ids]
        except (KeyError, TypeError):  # an id not in the file, or not a string
            return None
        if len(set(ids)) != len(ids):
            return None
        index = object.__new__(cls)
        index.memory, index.entries = memory, mine
        index._ids = {entry_id: [serial] for serial, entry_id in enumerate(ids)}
        try:
            index._near = likeness.NearIndex.load(data.get("near"), len(mine))
            stored = data.get("subjects")
            index._subjects = None if stored is None else _Subjects.load(stored, len(mine))
            stored = data.get("claims")
            index._claims = None if stored is None else likeness.WordIndex.load(stored, len(mine))
        except likeness.Stale:
            return None
        return index


class _Subjects:
    """Entries by subject, for `contradicts` (see `_same_subject`): by who; for value
    predicates also by the first word of who, and by every word that may name another
    statement's subject."""

    def __init__(self) -> None:
        self._who: dict[str, set[int]] = {}
        self._first: dict[str, set[int]] = {}
        self._named: dict[str, set[int]] = {}

    def add(self, serial: int, text: str) -> None:
        found = subject(text)
        if found is None:
            return
        self._who.setdefault(found.who, set()).add(serial)
        if found.predicate in _VALUE_PREDICATES:
            who = found.who.split()
            if who:
                self._first.setdefault(who[0], set()).add(serial)
            if not found.who or found.predicate in _SUPERSEDES:
                for word in set(found.objects) | set(who):
                    self._named.setdefault(word, set()).add(serial)

    def dump(self) -> dict[str, dict[str, object]]:
        parts = (("who", self._who), ("first", self._first), ("named", self._named))
        return {name: likeness.dump_buckets(part) for name, part in parts}

    @classmethod
    def load(cls, data: object, serials: int) -> _Subjects:
        """What `dump` gave, of serials below `serials`; `likeness.Stale` when it is not that."""
        if not isinstance(data, dict):
            raise likeness.Stale("not an object")
        subjects = cls()
        subjects._who = likeness.Buckets(data.get("who"), serials)  # type: ignore[assignment]
        subjects._first = likeness.Buckets(data.get("first"), serials)  # type: ignore[assignment]
        subjects._named = likeness.Buckets(data.get("named"), serials)  # type: ignore[assignment]
        return subjects

    def candidates(self, mine: Statement) -> set[int]:
        out = set(self._who.get(mine.who, ()))
        if mine.predicate in _VALUE_PREDICATES:
            who = mine.who.split()
            if not mine.who or mine.predicate in _SUPERSEDES:
                for word in set(mine.objects) | set(who):
                    out |= self._first.get(word, set())
            if who:
                out |= self._named.get(who[0], set())
        return out


class _Everything:
    """`compare` over every entry (no index)."""

    def __init__(self, memory: MemoryFile, scope: str, today=None):
        self.memory = memory
        self.live = _live(memory, scope, today)
        self._by_id: dict[str, MemoryEntry] | None = None
        self._live_ids: set[str] | None = None

    def live_with_key(self, key: str) -> Iterator[MemoryEntry]:
        return (e for e in self.live if likeness.features(e.text).key == key)

    def superseded_with_key(self, key: str) -> Iterator[MemoryEntry]:
        return (e for e in self.memory.entries() if e.superseded and likeness.features(e.text).key == key)

    def by_id(self) -> dict[str, MemoryEntry]:
        if self._by_id is None:
            self._by_id = {e.id: e for e in self.memory.entries()}
        return self._by_id

    def live_id(self, entry_id: str) -> bool:
        if self._live_ids is None:
            self._live_ids = {e.id for e in self.live}
        return entry_id in self._live_ids

    def newest_first(self, text: str, mine: Statement | None, changed: bool) -> Iterable[MemoryEntry]:
        return reversed(self.live)

    def subject_candidates(self, mine: Statement) -> list[MemoryEntry]:
        return self.live

    def learned_candidates(self, text: str, mine: Statement | None) -> list[MemoryEntry]:
        return _sharing(self.live[::-1], text, mine)


@functools.lru_cache(maxsize=8192)
def _stems(text: str) -> frozenset[str]:
    return analysis.content_words(text)


def _sharing(entries: Iterable[MemoryEntry], text: str, mine: Statement | None) -> list[MemoryEntry]:
    """The entries that share a content word with the text, or its subject, newest first."""
    words = _stems(text)
    speaker = mine is not None and not mine.who
    out = []
    for entry in entries:
        if words & _stems(entry.text):
            out.append(entry)
        elif speaker and (other := subject(entry.text)) is not None and not other.who:
            out.append(entry)  # both about the speaker ("I switched to coffee" / "I prefer tea")
    return out


class _Indexed:
    """`compare` over the entries an `Index` names, live ones only, in file order."""

    def __init__(self, index: Index, scope: str, today=None):
        self.index, self.scope, self.today = index, scope, today

    def _live(self, entries: list[MemoryEntry]) -> list[MemoryEntry]:
        return [e for e in entries if _is_live(e, self.scope, self.today)]

    def live_with_key(self, key: str) -> list[MemoryEntry]:
        return self._live(self.index.with_key(key))

    def superseded_with_key(self, key: str) -> list[MemoryEntry]:
        return [e for e in self.index.with_key(key) if e.superseded]

    def by_id(self) -> _LastById:
        return _LastById(self.index)

    def live_id(self, entry_id: str) -> bool:
        return bool(self._live(self.index.with_id(entry_id)))

    def newest_first(self, text: str, mine: Statement | None, changed: bool) -> list[MemoryEntry]:
        serials = self.index.near(likeness.features(text))
        if mine:
            serials |= self.index.same_subject(mine)
        if changed:
            serials |= self.index.same_claim(text)
        return self._live(self.index.in_order(serials))[::-1]

    def subject_candidates(self, mine: Statement) -> list[MemoryEntry]:
        return self._live(self.index.in_order(self.index.same_subject(mine)))

    def learned_candidates(self, text: str, mine: Statement | None) -> list[MemoryEntry]:
        serials = self.index.near(likeness.features(text)) | self.index.same_claim(text)
        if mine:
            serials |= self.index.same_subject(mine)
        return _sharing(self._live(self.index.in_order(serials))[::-1], text, mine)


class _LastById:
    """`{e.id: e for e in entries}` of an index, without building it: the last entry of an id."""

    def __init__(self, index: Index):
        self.index = index

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and entry_id in self.index.ids()

    def __getitem__(self, entry_id: str) -> MemoryEntry:
        return self.index.with_id(entry_id)[-1]


def also_replaced(
    memory: MemoryFile, text: str, scope: str, target: MemoryEntry, today=None, index: Index | None = None
) -> list[MemoryEntry]:
    """Other live entries a change replaces besides `target`: "Seojun now prefers coffee" replaces
    both "Seojun prefers tea in the morning" and "Seojun likes green tea after lunch"."""
    mine = subject(text)
    if not mine:
        return []
    look = _Everything(memory, scope, today) if index is None else _Indexed(index, scope, today)
    return [
        e
        for e in look.subject_candidates(mine)
        if e is not target and contradicts(text, e.text) and _confirmed(text, e.text)
    ]


def _reversion(look: _Everything | _Indexed, wanted: str):
    """The text equals an entry that was superseded ("tea" → "now coffee" → "tea" again):
    the newest live entry of that chain is the one it replaces."""
    by_id = look.by_id()
    for old in look.superseded_with_key(wanted):
        current, seen = old, set()
        while current.fields.get("superseded_by") in by_id and current.id not in seen:
            seen.add(current.id)
            current = by_id[current.fields["superseded_by"]]
        if look.live_id(current.id):
            return "supersede", current, f"replaces {current.id} (back to the earlier value of {old.id})"
    return None


def decide(
    memory: MemoryFile,
    text: str,
    type: str | None = None,
    scope: str = "workspace",
    confidence: float | None = None,
    force: bool = False,
    today=None,
    index: Index | None = None,
    explicit: bool = False,
) -> Decision:
    """The whole write policy for one text against the current MEMORY.md (`index`: an `Index`
    of it, kept by the caller, for the same decision sooner). Keep or refuse, type and layer
    come from the one judgement (giok.write.judgement); `explicit`: the caller chose a layer
    or type, so what the model finds trivial is kept (greetings, questions and guesses are
    still refused)."""
    text = normalize(text)
    text, redactions = redact(text)
    judged = judgement.judge(text, type=type, confidence=confidence)
    text = judgement.bare(text)  # the tag has chosen the layer; a pasted "1. " is no part of it
    ok = judged.keep or (explicit and judged.kind == "trivia")
    why = "worth keeping" if judged.keep else judged.reason
    if ok and not judged.keep:
        why = f"kept as asked ({judged.reason})"
    conf = None if confidence is None else f"{float(confidence):g}"
    kind = type or (judged.type if judged.judge == "model" else classify(text))

    def made(action: str, reason: str, **more: Any) -> Decision:
        return Decision(
            action,
            reason,
            text=text,
            type=kind,
            scope=scope,
            confidence=conf,
            redactions=redactions,
            layer=judged.layer if judged.keep else (target.layer if ok and target is not None else None),
            importance=judged.importance,
            judge=judged.judge,
            **more,
        )

    verdict, target, because = compare(memory, text, scope, today, index) if ok or force else ("", None, "")
    if not ok and not force and judged.kind == "trivia":
        # in context: what changes a kept memory is worth keeping ("I now prefer coffee")
        verdict, target, because = compare(memory, text, scope, today, index)
        if verdict == "supersede" and target is not None:
            ok, why = True, f"kept: it changes {target.id} ({judged.reason})"
    if not ok and not force:
        return made("refuse", why)
    forced = not ok and force
    if verdict == "duplicate":
        return made("duplicate", f"exact duplicate: {because}; not written again", target=target)
    if forced:
        why = f"forced past the policy ({why})"
    if verdict == "supersede" and target is not None:
        also = also_replaced(memory, text, scope, target, today, index) if "same subject" in because else []
        return made("supersede", because, target=target, also=also, forced=forced)
    return made("write", why, forced=forced)
