"""Hybrid search over one or more workspaces, and the seed's agentic recall.

Score. Each candidate gets two pieces of evidence in [0, 1]:
- vector: the provider's cosine, calibrated (`Embedder.calibrate`) so that unrelated text
  sits at 0 and a close paraphrase near 1;
- keyword: the IDF-weighted share of the query's terms the chunk contains (all of a query's
  rare words present → 1), lightly scaled by BM25 rank among the keyword hits.
They fuse as a noisy-OR, `1 - (1 - W_VEC·v)(1 - W_KW·k)`: either strong piece of evidence
alone passes the 0.35 noise floor (a keyword-only hit survives), and agreement lifts a result
above either. Then the cut-offs: results under MIN_SCORE (or the store-relative floor) are
noise, so a query whose best candidate is under it finds nothing ("no memory"); the seed's gap
rule (everything below a gap of DYNAMIC_GAP dropped) is off unless asked for (`gap=`): it cost
recall on every evaluation set and never decides whether anything is found (docs/search.md,
"Cut-offs: the curve"). Candidates are scored independently of k, so results are monotonic in k.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from giok.errors import GiokError, InvalidInput, PermissionDenied
from giok.retrieval.backend import SearchIndex
from giok.retrieval.chunks import is_own_line, successors
from giok.retrieval.index import Index, Reader
from giok.retrieval.questions import Question, needs_memory
from giok.store import refs
from giok.store.clock import today
from giok.store.fsutil import check_binary
from giok.store.layout import MEMORY
from giok.text.analysis import has_hangul, is_hangul, romanize
from giok.text.crossing import Crossing, query_alternatives
from giok.text.lazy import lazy
from giok.text.terms import inflected, language, query_terms, quote_fts
from giok.write import attributes, policy
from giok.write.statements import about_another

MIN_SCORE = 0.35
DYNAMIC_GAP = 0.15  # the seed's gap rule, when a search asks for it (`gap=DYNAMIC_GAP`); off by default
# The store-relative floor: a result must also score RELATIVE_FLOOR above what a typical
# chunk of this store scores for this query (the STORE_QUANTILE of the candidates' scores,
# once there are STORE_MIN of them), so that a word every entry shares — the user's name,
# a speaker — cannot carry a result on its own.
RELATIVE_FLOOR = 0.1
NAMED_RELATIVE = 0.2  # the relative floor when the query names the user (every entry does)
STORE_QUANTILE = 0.5
STORE_MIN = 8
# Language arbitration in a mixed store (`_by_lead`): weight of the difference between the two
# languages' leads (best minus runner-up) against the score gap of their best results.
LEAD = 0.5
LEAD_MIN = STORE_MIN
W_VEC = 0.80
W_KW = 0.60
NEIGHBOUR = 0.3  # weight of the better adjacent diary line
ASKED = 0.95  # factor on a diary line that is itself a question: its answer ranks before it
GAMMA = 0.7  # concave spread: keeps close results from being cut by DYNAMIC_GAP
POOL = 100
# Injected into every session by boot anyway: a low prior in search, left out of recall.
IDENTITY_FILES = frozenset({"SOUL.md", "USER.md", "AGENTS.md", "TOOLS.md"})
IDENTITY_PRIOR = 0.6
# Words too generic to carry a keyword hit on their own, whatever a small corpus's IDF says.
GENERIC = frozenset(
    [
        "name",
        "thing",
        "stuff",
        "way",
        "kind",
        "sort",
        "lot",
        "time",
        "day",
        "week",
        "month",
        "year",
        "people",
        "person",
        "something",
        "anything",
        "everything",
        "nothing",
        "one",
        "two",
        "first",
        "last",
        "new",
        "old",
        "good",
        "bad",
        "make",
        "made",
        "take",
        "use",
        "used",
        "want",
        "need",
        "think",
        "feel",
        "look",
        "come",
        "came",
        "give",
        "gave",
        "find",
        "found",
        "work",
        "thing",
        "really",
        "much",
        "many",
        "well",
        "back",
        "still",
        "even",
        "이름",
        "것",
        "거",
        "때",
        "일",
        "사람",
        "정도",
        "요즘",
    ]
)
GENERIC = GENERIC | frozenset(query_terms(" ".join(GENERIC)))
GENERIC_WEIGHT = 0.25
MAX_QUERY = 4000
MODES = ("hybrid", "keyword", "vector")
DATE_MISS = 0.6  # factor on a diary line of another date than the one(s) the query names
SPEAKER_MISS = 0.8  # factor on a diary line said by someone the query does not name, when it names a speaker
DATE_POOL = 400  # at most this many rows of a date the query names join the candidates
# Standing: what an entry is, beside what it says (`standing`, one factor on every score). At
# equal relevance a live entry outranks an archived (expired) or superseded one, a lasting layer
# a passing one and a fact an episode; the layer and type factors are small, so they reorder
# near-ties only. A question about the past (`questions.asks_past`) sets the status factors
# aside and is answered from the supersede chain (`_by_chain`).
STATUS = {"live": 1.0, "archived": 0.8, "superseded": 0.7}
LAYER_WEIGHT = {"M0": 1.0, "M365": 0.985, "M90": 0.97, "decision": 0.97, "lesson": 0.97, "M30": 0.955}
LAYER_OTHER = 0.94  # diary lines, the archive, other files
TYPE_WEIGHT = {"workflow": 0.985, "episode": 0.97}  # fact, preference, decision, lesson: 1.0
# A predicate asked in a spoken form weighs this share of its IDF: met through its written
# forms (산다 for 살지), a verb alone says less than a noun ("어느 은행 쓰니" is not "안경을 쓴다").
PREDICATE_WEIGHT = 0.5
# Question words (뭘, 무슨, 얼마, 몇, 어디서; `questions.Question.asking`) no memory holds: no
# weight, so a fact is not marked down for lacking them.
ASKING_WEIGHT = 0.0
# A query term met only through the other script (a name key, `부산` ↔ "Busan"; the lexicon,
# `녹차` ↔ "green tea": `giok.text.crossing`) counts this share of the term's weight.
CROSS_WEIGHT = 0.95
# A Korean noun with a particle counts where its stem is (`서준이는` in `서준은`: `terms.inflected`),
# at this share of its weight.
STEM_SHARE = 0.9
# A Korean noun that ends a compound the chunk holds (회사 in 게임회사: `_compound_head`) counts at
# this share of its weight.
COMPOUND_SHARE = 0.8
CHAIN_STEP = 1e-4  # how far the second of a chained pair sits below the first
# A question about the past presupposes a change: where a superseded entry is among its results, a
# live entry that no chain pairs scores this much of itself (docs/search.md, "A question about
# the past presupposes a change").
PAST_UNCHANGED = 0.9
# Two live memories of one slot (`_by_date`): near in meaning (the cosine of the entries' own
# vectors, neutral view) and in score, of different dates; chosen on a dev set of everyday
# changes the write policy does not link (bench/current_values.py, docs/search.md "Standing").
SLOT_NEAR = 0.55
SLOT_TIE = 0.2
SLOT_POOL = 20  # among the best this many results
# Slots (`giok.write.attributes`): when a question is about one attribute of a life (where
# someone lives, what they drink, a birthday: the head's top class at least SLOT_SURE, and not
# everyday trivia), the chance a row is about the same attribute counts as evidence: SLOT_BOOST
# of it joins the row's own (1 − (1 − e)(1 − SLOT_BOOST · agreement)), so the phone she has comes
# before her phone's battery. It orders; it does not decide whether anything is found: the noise
# floor judges the relevance without it (a row of the same slot is not an answer by that alone:
# "my cat's name" must not find the dog's). Chosen on the dev splits (docs/search.md, "Slots").
SLOT_BOOST = 0.5
SLOT_SURE = 0.5
# A returned hit counts as used (a reference, for promotion) only when the answer plausibly rests
# on it: a score of at least CONFIDENT and a content term of the query in its text.
CONFIDENT = 0.5
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DATE_RES = [
    lazy(rf"\b{_YEAR}-(?P<month>[01]?\d)-{_DAY}\b"),
    lazy(r"\b(?P<day>[0-3]?\d)\.(?P<month>[01]?\d)\.(?P<year>(?:19|20)\d\d)\b"),
    lazy(r"\b(?P<month>[01]?\d)/(?P<day>[0-3]?\d)/(?P<year>(?:19|20)\d\d)\b"),
    lazy(rf"\b{_DAY}(?: of)? {_MONTH},? ?{_YEAR}\b", re.I),
    lazy(rf"\b{_MONTH} {_DAY},? ?{_YEAR}\b", re.I),
    lazy(rf"{_YEAR}\s*년\s*(?P<month>[01]?\d)\s*월\s*(?:{_DAY}\s*일)?"),
    lazy(rf"\b{_MONTH},? {_YEAR}\b", re.I),
]


@dataclass
class Result:
    id: str
    workspace: str
    path: str
    start_line: int
    end_line: int
    layer: str | None
    date: str | None
    score: float
    text: str
    source: str | None
    priority: int = 0
    evidence: dict = field(default_factory=dict)
    relevance: float | None = None  # the score before `standing`: what the noise floor judges

    @property
    def relevant(self) -> float:
        return self.score if self.relevance is None else self.relevance

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "workspace": self.workspace,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "layer": self.layer,
            "date": self.date,
            "score": round(self.score, 4),
            "text": self.text,
            "source": self.source,
        }
        if via := self.evidence.get("via"):
            out["via"] = via  # found through the entry it replaced (`_forward`)
        return out


class SearchOptions(TypedDict, total=False):
    """The keyword options of `search`, `search_full` and `recall`, as `Options` takes them
    (`k` is a parameter of its own). Only what a caller gives is passed; `Options` has the
    defaults and refuses a name it does not know."""

    min_score: float
    relative: float | None
    gap: float | None
    mode: str
    user: str | None
    thread: str | None
    all_scopes: bool
    include_superseded: bool
    include_system: bool
    recency_days: float | None
    workspaces: Sequence[str]
    as_: str | None
    prefix: bool
    record: str | None
    identity: float


@dataclass
class Options:
    k: int = 5
    min_score: float = MIN_SCORE
    relative: float | None = RELATIVE_FLOOR  # a result must beat the store's typical score by this
    gap: float | None = None  # drop everything below a score gap this wide (the seed's: DYNAMIC_GAP)
    mode: str = "hybrid"
    user: str | None = None  # None: the asking workspace's user (USER.md)
    thread: str | None = None  # None: no thread (thread-scoped entries hidden)
    all_scopes: bool = False  # every scope, for the workspace's owner (no user/thread)
    include_superseded: bool = False
    include_system: bool = False  # giok's own diary lines (distill reports, flush markers, …)
    recency_days: float | None = None  # half-life for diary results; None = no decay
    workspaces: tuple = ()
    as_: str | None = None
    prefix: bool = False  # keyword terms as prefixes (recall's second attempt)
    record: str | None = "search"  # reference-log kind, None = do not log
    identity: float = IDENTITY_PRIOR  # score factor for SOUL/USER/AGENTS/TOOLS.md; 0 leaves them out

    @classmethod
    def make(cls, k=5, **opts) -> Options:
        if "as" in opts:
            opts["as_"] = opts.pop("as")
        unknown = set(opts) - set(cls.__dataclass_fields__)
        if unknown:
            raise InvalidInput(f"unknown search option(s): {', '.join(sorted(unknown))}")
        o = cls(k=k, **opts)
        o.check()
        return o

    def check(self) -> None:
        if not isinstance(self.k, int) or not 1 <= self.k <= 1000:
            raise InvalidInput(f"k must be a whole number from 1 to 1000, not {self.k!r}")
        if not 0.0 <= float(self.min_score) <= 1.0:
            raise InvalidInput(f"min score must be between 0 and 1, not {self.min_score!r}")
        if self.relative is not None and not 0.0 <= float(self.relative) <= 1.0:
            raise InvalidInput(f"relative floor must be between 0 and 1, not {self.relative!r}")
        if not 0.0 <= float(self.identity) <= 1.0:
            raise InvalidInput(f"identity prior must be between 0 and 1, not {self.identity!r}")
        if self.mode not in MODES:
            raise InvalidInput(f"unknown search mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.all_scopes and (self.user or self.thread):
            raise InvalidInput(
                "all_scopes (--all-scopes) shows every user's and thread's entries: "
                "give it without a user or thread"
            )


@dataclass
class Response:
    query: str
    results: list[Result]
    cut_noise: int = 0
    cut_gap: int = 0
    cut_noise_top: int = 0  # of the k best candidates, how many each rule removed
    cut_gap_top: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "results": [r.to_dict() for r in self.results],
            "cut": {
                "noise": self.cut_noise,
                "gap": self.cut_gap,
                "noise_top": self.cut_noise_top,
                "gap_top": self.cut_gap_top,
            },
            "notes": self.notes,
        }


def check_query(query) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("empty query: say what to search for")
    if len(query) > MAX_QUERY:
        raise InvalidInput(
            f"query too long ({len(query):,} characters; at most {MAX_QUERY:,}): search with a few key words"
        )
    check_binary(query, "the query")
    return " ".join(query.split())


# -- permissions ------------------------------------------------------------------------------
def can_read(home, reader: str, target: str) -> bool:
    """Default: workspaces of one home read each other. A workspace's config entry may say
    `private: true` (only itself) or `readers: [names]` (an explicit allow-list)."""
    if reader == target:
        return True
    spec = home.workspaces().get(target, {})
    readers = spec.get("readers")
    if readers is not None:
        return reader in readers or "*" in readers
    return not spec.get("private", False)


def _targets(ws, opts: Options) -> list:
    from giok.store.workspace import Workspace

    reader = opts.as_ or ws.name
    targets = [ws] if not opts.workspaces else []
    for spec in opts.workspaces:
        target = (
            spec
            if isinstance(spec, Workspace)
            else (ws if spec == ws.name else Workspace.open(spec, home=ws.home))
        )
        if not can_read(ws.home, reader, target.name):
            raise PermissionDenied(
                f"workspace {reader!r} may not read workspace {target.name!r} "
                f"(its config entry is private or lists other readers)"
            )
        if all(t.root != target.root for t in targets):
            targets.append(target)
    return targets


# -- search -----------------------------------------------------------------------------------
def search_full(ws, query: str, k: int = 5, **opts) -> Response:
    """Search ws (or opts.workspaces); Response carries results and what the cut-offs removed."""
    query = check_query(query)
    o = Options.make(k=k, **opts)
    response = Response(query, [])
    if not re.search(r"\w", query):
        response.notes.append("the query has no words to search for")
        return response
    synced = []
    for target in _targets(ws, o):
        index = Index.for_workspace(target)
        index.sync()
        response.notes += index.notes
        index.notes = []
        synced.append((target, index))
    if o.user is None and not o.all_scopes:
        o.user = default_user(ws, next((i for t, i in synced if t.root == ws.root), None))
    ranked: list[Result] = []
    vectors: dict = {}  # the query's vectors, per model, for this search's workspaces
    for target, index in synced:
        ranked += _score(index, target.name, query, o, root=target.root, vectors=vectors)
    ranked.sort(key=lambda r: (-round(r.score, 6), -r.priority, r.workspace, r.path, r.start_line))
    kept = _cut(ranked, o, response, bool(_name_terms(o.user, query_terms(query))))
    response.results = kept[: o.k]
    if o.record:
        _record(ws, response.results, o.record)
    return response


def nearest_entries(ws, text: str, k: int = 10) -> list[str]:
    """The ids of the workspace's MEMORY.md entries nearest to `text` by this search, best first,
    whatever their score (the candidates a judge that reads pairs is shown beside a line:
    giok.write.policy.rivals); no reference is recorded. Empty where the search cannot answer."""
    try:
        found = search_full(ws, text, k=k, min_score=0.0, relative=None, record=None).results
    except GiokError:
        return []
    return [r.id for r in found if r.path == MEMORY and r.workspace == ws.name and r.id]


def used(result: Result) -> bool:
    """Whether an answer plausibly rests on this hit: it scored CONFIDENT or more and holds a
    content word of the query (not only the user's name or a generic word)."""
    return result.score >= CONFIDENT and bool(result.evidence.get("shared"))


def search(ws, query: str, k: int = 5, **opts) -> list[Result]:
    return search_full(ws, query, k, **opts).results


def floor_of(ranked: list[Result], o: Options, named: bool = False) -> float:
    """The noise floor for this query: the absolute min_score, raised to the store's typical
    score plus o.relative (twice that, at least NAMED_RELATIVE, when the query names the user)
    when the store is big enough to have a typical score."""
    if o.relative is None or len(ranked) < STORE_MIN:
        return o.min_score
    scores = sorted(r.relevant for r in ranked)
    typical = scores[int(STORE_QUANTILE * (len(scores) - 1))]
    margin = max(o.relative, min(1.0, NAMED_RELATIVE * o.relative / RELATIVE_FLOOR)) if named else o.relative
    return max(o.min_score, typical + margin)


def _cut(ranked: list[Result], o: Options, response: Response, named: bool = False) -> list[Result]:
    floor = floor_of(ranked, o, named)
    kept = [r for r in ranked if r.relevant >= floor]
    response.cut_noise = len(ranked) - len(kept)
    response.cut_noise_top = min(o.k, len(ranked)) - min(o.k, len(kept))
    if o.gap:
        for i in range(len(kept) - 1):
            if kept[i].score - kept[i + 1].score >= o.gap - 1e-9:
                response.cut_gap = len(kept) - i - 1
                response.cut_gap_top = min(o.k, len(kept)) - min(o.k, i + 1)
                kept = kept[: i + 1]
                break
    return kept


def _record(ws, results: list[Result], kind: str) -> None:
    from giok.store.workspace import Workspace

    by_ws: dict[str, list[Result]] = {}
    for r in results:
        if r.path == MEMORY and r.source:
            by_ws.setdefault(r.workspace, []).append(r)
    for name, hits in by_ws.items():
        target = ws if name == ws.name else Workspace.open(name, home=ws.home)
        refs.record(target, [r.source for r in hits], kind, used=[used(r) for r in hits])


def _score(
    index: SearchIndex, ws_name: str, query: str, o: Options, *, root=None, vectors: dict | None = None
) -> list[Result]:
    """Every candidate of one index for the query, scored (unsorted, before the cut-offs).
    `vectors`: the query vectors this search has embedded, by embedder and text (a search of
    several workspaces embeds its query once per model)."""
    dates, undated = query_dates(query)
    question = Question.of(undated)
    crossing = query_alternatives(undated) if o.mode != "vector" else Crossing()
    groups = _phrased(question.groups(query_terms(undated)), crossing)
    terms = list(groups)
    reader = Reader(o.user, o.thread, o.all_scopes)  # the scope rule in SQL: unseen rows are never read
    ids, every = index.matrix()
    if not len(ids):
        return []
    cos_all = kw_hits = qvec = None
    if o.mode != "keyword":
        qvec = _query_vector(index.embedder, _without_user(undated, o.user) or query, vectors)
        cos_all = index.cosines(qvec, reader)
    if o.mode != "vector" and terms:
        kw_hits = index.keyword_search(_fts(groups, o.prefix, crossing.alternatives), POOL, reader)
    dated = _date_rows(index, dates, reader) if dates and o.mode != "vector" else {}
    candidates = _candidates(ids, cos_all, kw_hits, dated)
    near = sorted(set(candidates) | {c + d for c in candidates for d in (-1, 1)})
    rows = index.rows(near, reader)
    facts = {cid: _facts(row) for cid, row in rows.items()}
    names = _name_terms(o.user, terms)
    kw = _keyword_evidence(
        index, groups, facts, kw_hits, o.prefix, dated, names, question, crossing.alternatives, undated
    )
    vec = _vector_evidence(index, ids, cos_all, facts, language(query), qvec)
    content = frozenset(  # the query's content terms: a hit that shares one counts as used (`used`)
        a
        for t, alts in groups.items()
        if t not in GENERIC and t not in names and t not in question.asking
        for a in (*alts, *crossing.alternatives.get(t, ()))
    )
    scored = _Scored(rows, facts, vec, kw, o.mode)
    if qvec is not None:
        entries = [c for c in candidates if c in facts and facts[c].path == MEMORY]
        scored.slots = _slot_agreement(index, qvec, ids, every, entries)
    on_dates = {cid for day_ids in dated.values() for cid in day_ids}
    asked_of = _named_among(undated, terms, [fact.speaker for fact in facts.values()])
    chained = root is not None and (question.past or o.include_superseded)
    forward = root is not None and not chained
    out, langs, kept = scored.results(
        candidates, ws_name, o, question.past, on_dates, asked_of, content, forward=forward
    )
    if scored.replaced:
        _forward(out, scored.standings, scored.replaced, _successors(index, root))
    if o.mode != "keyword":
        _by_lead(out, langs)
        _by_date(out, kept, ids, every, question.past)
    if chained:
        _by_chain(out, _successors(index, root), past=question.past)
    return out


# index → (workspace root, index generation, successors), kept as long as the index object is
_CHAINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _successors(index: SearchIndex, root) -> dict[str, str]:
    """`chunks.successors(root)`, read again only when the index has changed since (its
    generation: the files it reads are the index's): a question about the present reads the
    chain whenever a replaced entry is among its candidates, and parsing MEMORY.md costs ~27 ms
    at 5,000 entries. Kept with the index object, as its rows are (`Index.rows`)."""
    changes = getattr(index, "generation", None)  # both indexes count their changes
    if changes is None:
        return successors(root)
    generation, where = int(changes()), str(root)
    try:
        kept = _CHAINS.get(index)
    except TypeError:  # an index that cannot be weakly referenced
        return successors(root)
    if kept is not None and kept[:2] == (where, generation):
        return kept[2]
    found = successors(root)
    _CHAINS[index] = (where, generation, found)
    return found


def _query_vector(embedder, text: str, vectors: dict | None) -> np.ndarray:
    """The query's vector, embedded once per search and model (`_score`'s `vectors`)."""
    if vectors is None:
        return embedder.embed([text], "query")[0]
    key = (id(embedder), text)
    if key not in vectors:  # the embedder is kept beside its vector, so its id stays its own
        vectors[key] = (embedder, embedder.embed([text], "query")[0])
    return vectors[key][1]


class _Scored:
    """The rows one search read, with their facts and evidence: each row's own score (the fused
    evidence) and, per candidate, its result (`results`)."""

    def __init__(self, rows: dict, facts: dict, vec: dict, kw: dict, mode: str):
        self.rows, self.facts, self.vec, self.kw = rows, facts, vec, kw
        self.slots: dict[int, float] = {}
        # A question about the present reads a superseded entry too, for the entry that replaced
        # it (`_forward`): its matches, by source id (score before standing, relevance, evidence).
        self.replaced: list[tuple[str, float, float, dict]] = []
        self.standings: list[float] = []  # each result's standing, beside `results`' list
        if mode == "hybrid":  # `_fuse`, written out: it runs for every row read
            self.own = {
                cid: 1.0 - (1.0 - W_VEC * vec.get(cid, 0.0)) * (1.0 - W_KW * kw.get(cid, 0.0)) for cid in rows
            }
        else:
            self.own = {cid: _fuse(vec.get(cid, 0.0), kw.get(cid, 0.0), mode) for cid in rows}

    def results(
        self,
        candidates: list[int],
        ws_name: str,
        o: Options,
        past: bool,
        on_dates: set[int],
        asked_of: set[str],
        content: frozenset[str],
        *,
        forward: bool = False,
    ) -> tuple[list[Result], list[str], list[int]]:
        """The candidates' results (visible ones only), their languages and their ids. With
        `forward`, the superseded rows go to `replaced` instead (`_forward`)."""
        rows, facts, vec, kw = self.rows, self.facts, self.vec, self.kw
        speakers = asked_of | {None}
        scopes: dict[str | None, bool] = {}
        out: list[Result] = []
        langs: list[str] = []
        kept: list[int] = []
        for cid in candidates:
            row = rows.get(cid)
            if row is None or not _visible(row, o, past or forward, scopes):
                continue
            fact = facts[cid]
            prior = o.identity if fact.identity else 1.0
            if not prior:
                continue
            recency = _recency(row, o) if o.recency_days else 1.0
            own = _with_neighbours(cid, facts, self.own) ** GAMMA
            factor = recency * prior
            if on_dates and fact.diary and cid not in on_dates:
                factor *= DATE_MISS
            if asked_of and fact.speaker not in speakers:
                factor *= SPEAKER_MISS
            relevance = own * factor  # what the noise floor judges
            slot = self.slots.get(cid, 0.0)  # orders only (SLOT_BOOST)
            score = (1.0 - (1.0 - own) * (1.0 - SLOT_BOOST * slot)) * factor if slot else relevance
            state = status(row)
            evidence = {"vector": vec.get(cid, 0.0), "keyword": kw.get(cid, 0.0), "status": state}
            evidence["shared"] = not fact.have.isdisjoint(content)
            if slot:
                evidence["slot"] = round(slot, 4)
            if forward and state == "superseded":
                if row["source"]:
                    self.replaced.append((row["source"], score, relevance, evidence))
                continue
            standing = _standing(state, fact.layer_weight, fact.type_weight, past)
            self.standings.append(standing)
            out.append(_result(row, ws_name, score * standing, evidence, relevance=relevance))
            langs.append("ko" if fact.ko else "en")
            kept.append(cid)
        return out, langs, kept


def _result(row: dict, ws_name: str, score: float, evidence: dict, relevance: float | None = None) -> Result:
    return Result(
        row["key"],
        ws_name,
        row["path"],
        row["start_line"],
        row["end_line"],
        row["layer"],
        row["date"],
        score,
        row["text"],
        row["source"],
        row["priority"] or 0,
        evidence,
        relevance,
    )


def _fts(
    groups: dict[str, tuple[str, ...]], prefix: bool, cross: dict[str, tuple[str, ...]] | None = None
) -> str:
    """The FTS5 query of the keyword terms: the query's own terms (as prefixes on recall's second
    attempt), the written forms of its predicates (`questions.Question`) and the other script's
    terms for them (`crossing`), exact."""
    cross = cross or {}
    extra = [
        a for t, alts in groups.items() for a in (*alts, *cross.get(t, ())) if a != t and a not in groups
    ]
    own = quote_fts(list(groups), prefix=prefix)
    return " OR ".join(x for x in (own, quote_fts(list(dict.fromkeys(extra)))) if x)


def status(row: dict) -> str:
    """live, archived (in the archive, or past its expiry and not moved there yet) or superseded."""
    if row["superseded"]:
        return "superseded"
    expires = row.get("expires")
    if row["layer"] == "archive" or (
        expires and row["layer"] in LAYER_WEIGHT and expires < today().isoformat()
    ):
        return "archived"
    return "live"


def standing(row: dict, past: bool = False) -> float:
    """The factor of what an entry is: its status (set aside for a question about the past),
    its layer and its type (STATUS, LAYER_WEIGHT, TYPE_WEIGHT)."""
    return _standing(status(row), _layer_weight(row), _type_weight(row), past)


def _standing(state: str, layer_weight: float, type_weight: float, past: bool) -> float:
    return (1.0 if past else STATUS[state]) * layer_weight * type_weight


def _layer_weight(row: dict) -> float:
    layer = row["layer"] if row["layer"] != "archive" else None
    return LAYER_WEIGHT.get(layer or "", LAYER_OTHER)


def _type_weight(row: dict) -> float:
    return TYPE_WEIGHT.get(row.get("category") or "", 1.0)


def _forward(
    results: list[Result],
    standings: list[float],
    replaced: list[tuple[str, float, float, dict]],
    successors: dict[str, str],
) -> None:
    """A question about the present, answered through the supersede chain: a replaced entry that
    matches the question ("하윤은 대전 유성구에 산다" for "하윤이 어디 살지?") says which slot is
    asked; the answer is the entry that now fills it ("하윤이 수원 광교로 이사했다"). The live
    end of the chain takes the replaced entry's score (before standing, times its own standing)
    and relevance where they are better than its own, with `via` naming the replaced entry; the
    replaced entry itself is not shown. The live end must bear on the question itself, however
    faintly (some evidence of its own: "Team standup is at 9:30", replaced, does not make "which
    football team does she support?" a question about the standup's new time), and be among the
    candidates; otherwise the question is answered, or not, without the chain."""
    by_source = {r.source: i for i, r in enumerate(results) if r.source}
    for source, score, relevance, evidence in replaced:
        head, seen = source, {source}
        while head not in by_source and head in successors and successors[head] not in seen:
            head = successors[head]
            seen.add(head)
        i = by_source.get(head)
        if i is None or not results[i].relevant > 0:
            continue
        current = results[i]
        lifted = score * standings[i]
        if lifted > current.score or relevance > current.relevant:
            current.evidence["via"] = source  # what the answer owes to the replaced entry
        current.score = max(current.score, lifted)
        current.relevance = max(current.relevant, relevance)
        current.evidence["shared"] = bool(current.evidence.get("shared")) or bool(evidence.get("shared"))


def _by_chain(results: list[Result], successors: dict[str, str], past: bool) -> None:
    """Pairs a superseded entry with the live entry that replaced it, both scoring the better
    of the two: for a question about the past the replaced entry first and the current one
    CHAIN_STEP after it; otherwise (include_superseded) the current one first, then what it
    replaced. A pair's relevance is the question's to either end: "where did he live before he
    moved?" finds the current address and, through it, the one before. For a question about the
    past with a superseded entry among the results, the live entries no chain pairs score
    PAST_UNCHANGED of themselves: the sister's address never changed, so it is no answer to
    "before she moved"."""
    by_source = {r.source: r for r in results if r.source}
    paired: set[int] = set()
    for old in results:
        new = by_source.get(successors.get(old.source or "", ""))
        if (
            old.evidence.get("status") != "superseded"
            or new is None
            or new.evidence.get("status") == "superseded"
        ):
            continue
        top, relevance = max(old.score, new.score), max(old.relevant, new.relevant)
        first, second = (old, new) if past else (new, old)
        first.score, second.score = top, top - CHAIN_STEP
        old.relevance = new.relevance = relevance
        paired.update((id(old), id(new)))
    if not past or not any(r.evidence.get("status") == "superseded" for r in results):
        return
    for r in results:
        if id(r) not in paired and r.layer in LAYER_WEIGHT and r.evidence.get("status") == "live":
            r.score *= PAST_UNCHANGED


def _by_date(results: list[Result], cids: list[int], ids, every, past: bool) -> None:
    """Two live memories of one slot written on different days: the newer is the likelier
    current value (a change the write policy did not link: "Seojun cycles to the office these
    days" after "Seojun takes the 7:40 bus"). Where two live MEMORY.md entries of different
    dates are near in meaning (SLOT_NEAR, the cosine of their own vectors: rows of `every`, the
    index's matrix) and their scores near-tie (within SLOT_TIE of the better), the newer takes
    the better score and the older sits CHAIN_STEP below it; for a question about the past the
    other way round. No score rises above what the pair had, so whether a query gets any result
    is unchanged. The shared PostgreSQL index keeps its vectors in the server: left alone."""
    if not isinstance(every, np.ndarray):
        return
    best = sorted(range(len(results)), key=lambda i: -results[i].score)[:SLOT_POOL]
    live = [
        i
        for i in best
        if results[i].layer in LAYER_WEIGHT
        and results[i].date
        and results[i].evidence.get("status") == "live"
    ]  # best first
    if len(live) < 2:
        return
    pos, found = _positions(ids, [cids[i] for i in live])
    mat = every[pos]
    norms = np.linalg.norm(mat, axis=1)
    if not bool(np.all(found) and np.all(norms > 0)):
        return
    near = (mat @ mat.T) / np.outer(norms, norms)
    for x in range(len(live)):
        for y in range(x + 1, len(live)):
            high, low = results[live[x]], results[live[y]]
            if near[x, y] < SLOT_NEAR or high.date == low.date or high.score - low.score > SLOT_TIE:
                continue
            if about_another(high.text, low.text, False) or about_another(low.text, high.text, False):
                continue  # "Priya's sister lives in Bristol" is no newer value of where Priya lives
            if (str(low.date) > str(high.date)) != past:  # the newer, or for the past the older
                low.score, high.score = high.score, high.score - CHAIN_STEP
                low.relevance = max(low.relevant, high.relevant)


def _positions(ids, wanted: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Where the chunk ids `wanted` sit in the index's sorted `ids`, and which are there."""
    want = np.array(wanted, dtype=np.int64)
    pos = np.clip(np.searchsorted(ids, want), 0, len(ids) - 1)
    return pos, ids[pos] == want


def _by_lead(results: list[Result], langs: list[str]) -> None:
    """Language arbitration in a store of two languages (issue 16): the best result of each
    language is judged by how far it stands out from its own language's runner-up too, not by
    score alone. e5 crowds a question's same-language near-misses together (several Korean
    entries about meetings for a Korean question about meetings) while the answer in the other
    language stands alone among its language's entries. When LEAD times the difference of the
    two leads exceeds the score gap, the other language's best takes the first place (the
    first's score, which drops by a hair): no score rises above the query's best, so whether a
    query gets any result at all is unchanged. Each language needs LEAD_MIN candidates."""
    by_lang: dict[str, list[Result]] = {}
    for r, lang in zip(results, langs, strict=True):
        by_lang.setdefault(lang, []).append(r)
    if len(by_lang) != 2 or any(len(group) < LEAD_MIN for group in by_lang.values()):
        return
    tops = []
    for group in by_lang.values():
        first, second = sorted(group, key=lambda r: -r.score)[:2]
        tops.append((first, first.score - second.score))
    (high, high_lead), (low, low_lead) = sorted(tops, key=lambda t: -t[0].score)
    if LEAD * (low_lead - high_lead) > high.score - low.score:
        low.score, high.score = high.score, high.score - 1e-4
        low.relevance = max(low.relevant, high.relevant)


def query_dates(query: str) -> tuple[list[str], str]:
    """The dates a query names ("on 16.01.2024", "8 May, 2023", "in August 2023", "2024년 1월
    16일") as ISO prefixes ("2024-01-16", "2023-08"), and the query with those spans removed
    (their words are not keywords: a diary carries its date in the file name, not the text)."""
    found: list[str] = []
    rest = query
    for pattern in _DATE_RES:
        for m in list(pattern.finditer(rest)):
            parts = m.groupdict()
            month = int(parts["month"]) if parts.get("month") else _MONTHS[parts["mon"].lower()]
            day = int(parts["day"]) if parts.get("day") else None
            try:
                when = dt.date(int(parts["year"]), month, day or 1)
            except ValueError:
                continue
            found.append(when.isoformat() if day else when.isoformat()[:7])
        rest = pattern.sub(" ", rest)
    return list(dict.fromkeys(found)), " ".join(rest.split())


def _date_rows(index: SearchIndex, dates: list[str], reader: Reader | None = None) -> dict[str, list[int]]:
    """Row ids per named date prefix (diaries carry the date of their file) the reader may see."""
    return {d: index.date_ids(d, DATE_POOL, reader) for d in dates}


def _vector_evidence(
    index: SearchIndex, ids, cos_all, facts: dict[int, _Facts], query_lang: str, qvec
) -> dict[int, float]:
    """Vector evidence per row in [0, 1]. For a `relative` provider (e5, searched through its
    language-neutral view `baseline.Neutral`): the cosine's margin over what this query scores
    against everyday unrelated text in the chunk's language (the background baseline, which
    absorbs e5's compressed cosines and what is left of Korean↔Korean inflation), over the pair's
    scale (cross-language margins stay narrower), saturating smoothly so that strong matches
    keep their order. Otherwise the calibrated cosine, shifted per language pair."""
    if cos_all is None:
        return {}
    order = sorted(facts)
    pos, found = _positions(ids, order)
    ko = np.array([facts[c].ko for c in order], dtype=bool)
    e = index.embedder
    if e.relative:
        base = index.baseline()
        ql = "ko" if query_lang == "ko" else "en"
        expected = {lang: float(qvec @ base[("passage", lang)]) for lang in ("en", "ko")}
        same = ko if ql == "ko" else ~ko
        cross_floor = e.cross_margin_floors.get(ql, e.margin_floor)
        cross_ceil = e.cross_margin_ceil or e.margin_ceil
        floor = np.where(same, e.margin_floor, cross_floor)
        scale = np.where(same, e.margin_ceil, cross_ceil) - floor
        margin = cos_all[pos] - np.where(ko, expected["ko"], expected["en"])
        cal = np.tanh(np.maximum(margin - floor, 0.0) / scale)
    else:
        shift = np.array([e.pair_shift(query_lang, "ko" if k else "en") for k in ko.tolist()])
        cal = e.calibrate(cos_all[pos] + shift)
    values = np.asarray(cal).tolist()
    if found.all():
        return dict(zip(order, values, strict=True))
    return {c: v for c, v, ok in zip(order, values, found.tolist(), strict=True) if ok}


def _slot_agreement(index: SearchIndex, qvec, ids, every, candidates: list[int]) -> dict[int, float]:
    """For each candidate (MEMORY.md entries: a memory fills a slot, a diary line is a turn of
    talk), the chance it is about the attribute the question asks for (SLOT_BOOST above): only
    when the question is surely about one that is not everyday trivia, and the index holds the
    vectors the head reads in this process (not the shared PostgreSQL index, whose vectors stay
    in the server, as for `_by_date`)."""
    if not SLOT_BOOST or not candidates or not isinstance(every, np.ndarray):
        return {}
    if not attributes.fits(getattr(index.embedder, "identity", "")):
        return {}
    q = attributes.distribution(np.asarray(qvec)[None, :], "query")[0]
    top = int(np.argmax(q))
    if q[top] < SLOT_SURE or attributes.classes()[top] == attributes.DAILY:
        return {}
    pos, found = _positions(ids, candidates)
    agree = attributes.distribution(np.asarray(every[pos], dtype=np.float32), "passage") @ q
    pairs = zip(candidates, agree.tolist(), found.tolist(), strict=True)
    return {cid: a for cid, a, ok in pairs if ok}


def _with_neighbours(cid: int, facts: dict[int, _Facts], own: dict) -> float:
    """A diary line next to a strong match is itself likely relevant: blend in the better
    neighbour in the same file. The line after a question is its answer: it scores at least
    what the question does (a question matches the query's words; its answer holds the fact),
    and the question itself a little less than its own evidence (ASKED), so the answer comes
    first."""
    fact = facts[cid]
    if not fact.diary:
        return own[cid]
    before, after = facts.get(cid - 1), facts.get(cid + 1)
    before_near = before is not None and before.path == fact.path and not before.system
    after_near = after is not None and after.path == fact.path and not after.system
    if before_near and after_near:
        best = max(own[cid - 1], own[cid + 1])
    else:
        best = own[cid - 1] if before_near else own[cid + 1] if after_near else 0.0
    mine = own[cid] * (ASKED if fact.asks else 1.0)
    blended = (mine + NEIGHBOUR * best) / (1 + NEIGHBOUR)
    if before is not None and before_near and before.asks:
        return max(blended, own[cid - 1])
    return blended


_SPEAKER = lazy(r"^(?:\d{1,2}:\d{2}\s+)?([^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*)?):\s")


@dataclass(frozen=True, slots=True)
class _Facts:
    """What scoring reads of a row beside its evidence, derived from the row's own fields once and
    kept in the row (`_facts`): a row of the local index is read once per generation and reused
    by the searches of that generation (`Index.rows`), so a regular expression's verdict or a
    term set is derived once."""

    path: str
    diary: bool
    system: bool  # `_system`
    asks: bool  # `_asks`
    speaker: str | None  # `_speaker`
    have: frozenset[str]  # the row's keyword terms
    ko: bool
    identity: bool  # one of IDENTITY_FILES
    layer_weight: float  # `standing`'s layer and type factors
    type_weight: float


def _facts(row: dict) -> _Facts:
    """The row's `_Facts`, derived on first need and kept in the row under "~facts"."""
    try:
        return row["~facts"]
    except KeyError:
        fact = row["~facts"] = _Facts(
            path=row["path"],
            diary=row["layer"] == "diary",
            system=_system(row),
            asks=_asks(row["text"]),
            speaker=_speaker(row),
            have=frozenset((row["terms"] or "").split()),
            ko=row["lang"] == "ko",
            identity=row["path"] in IDENTITY_FILES,
            layer_weight=_layer_weight(row),
            type_weight=_type_weight(row),
        )
        return fact


def _speaker(row: dict) -> str | None:
    """Who says a diary line written as a transcript ("HH:MM Name: text"), lower-cased."""
    if row["layer"] != "diary":
        return None
    m = _SPEAKER.match(row["text"] or "")
    return m.group(1).lower() if m else None


def _named_speakers(query: str, terms: list[str], rows: dict) -> set[str]:
    """The speakers of the diary lines at hand (a name that opens at least two lines) whom the
    question is about: a question about one of them is answered by what they said. Of two
    named ones, the first is the subject ("what did Gina tell Jon …") unless they are named
    together ("Jon and Gina", "both Jon and Gina": what either said)."""
    return _named_among(query, terms, [_speaker(row) for row in rows.values()])


def _named_among(query: str, terms: list[str], said_by: list[str | None]) -> set[str]:
    """`_named_speakers`, given who says each line at hand (None: nobody)."""
    said: dict[str, int] = {}
    for who in said_by:
        if who:
            said[who] = said.get(who, 0) + 1
    speakers = {who for who, n in said.items() if n >= 2}
    if len(speakers) < 2:  # no conversation: a label such as "Decision:" or "Note:" opens lines
        return set()
    asked = set(terms)
    # a label with no searchable word ("All", a stop word) is named by no question
    named = {who for who in speakers if (own := set(query_terms(who))) and own <= asked}
    if len(named) < 2:
        return named
    low = query.lower()
    at = sorted((m.start(), who) for who in named if (m := re.search(rf"\b{re.escape(who)}\b", low)))
    if len(at) < 2:
        return named
    (_, first), (_, second) = at[0], at[1]
    if re.search(rf"\b{re.escape(first)}\s+(?:and|&)\s+{re.escape(second)}\b", low):
        return named
    return {first}


def _asks(text: str | None) -> bool:
    """A diary line that asks a question (its answer is the next line)."""
    return bool(text) and (text or "").rstrip().rstrip("*_)]").rstrip().endswith("?")


def _candidates(ids: np.ndarray, cos_all, kw_hits, dated: dict[str, list[int]]) -> list[int]:
    found: dict[int, None] = {}
    if cos_all is not None:
        limit = min(POOL, len(ids))
        top = np.argpartition(-cos_all, limit - 1)[:limit]
        found.update(dict.fromkeys(ids[top].tolist()))
    for cid, _ in kw_hits or []:
        found[cid] = None
    for day_ids in dated.values():
        found.update((cid, None) for cid in day_ids)
    return sorted(found)


def _without_user(query: str, user: str | None) -> str:
    """A Korean query without the words that name the user (서준이는, 서준의): the embedding then
    judges what is asked about, not the name every one of the user's memories shares (in Korean
    it lifts them all alike). An English query keeps the name: without its subject ("what does
    drink") it embeds as noise. The keyword side always sees the name."""
    if not user or language(query) != "ko":
        return query
    return " ".join(w for w in query.split() if not _name_terms(user, query_terms(w)))


def _name_terms(user: str | None, terms: list[str]) -> set[str]:
    """The query's terms that are the user's name or an inflection of it (서준이, 서준의), in
    either script: a user registered as Seojun is named 서준 in a Korean question, and one
    registered as 서준 is named seojun in an English one (Revised Romanization)."""
    if not user:
        return set()
    names, latin = _user_names(user)
    return {
        t
        for t in terms
        if any(t == n or (t.startswith(n) and len(t) - len(n) <= 2) for n in names)
        or t in latin
        or (has_hangul(t) and any(romanize(t[:k]) in latin for k in range(max(2, len(t) - 2), len(t) + 1)))
    }


@functools.lru_cache(maxsize=64)
def _user_names(user: str) -> tuple[frozenset[str], frozenset[str]]:
    """The user's name terms (two or more letters) and their romanised forms, for `_name_terms`."""
    names = {t for t in query_terms(user) if len(t) >= 2}
    latin = {romanize(n) for n in names} | {"".join(romanize(n) for n in query_terms(user))}
    return frozenset(names), frozenset(latin)


def _keyword_evidence(
    index: SearchIndex,
    groups: dict[str, tuple[str, ...]],
    facts: dict[int, _Facts],
    kw_hits,
    prefix: bool,
    dated: dict[str, list[int]],
    names: Collection[str] = (),
    question: Question | None = None,
    cross: dict[str, tuple[str, ...]] | None = None,
    query: str = "",
) -> dict[int, float]:
    """IDF-weighted share of query terms present, times a mild BM25-rank factor. A term is
    present when any of its alternatives is (a question's predicate and its written forms,
    `questions.Question`; its document frequency is theirs together). A date the query names
    counts as one more term, present in the rows of that date; the user's name weighs like a
    generic word (most of a user's memories name them). A Korean word with a particle counts as
    its stem (`terms.inflected`); a term met only through the other script (`cross`) counts
    CROSS_WEIGHT of its weight."""
    if not kw_hits and not dated:
        return {}
    cross = cross or {}
    wanted = [a for t, alts in groups.items() for a in (*alts, *cross.get(t, ()))]
    df, total = index.doc_freq(list(dict.fromkeys(wanted)))
    if dated and not total:
        total = index.db.execute("SELECT count(*) FROM memories").fetchone()[0]
    groups = _predicates(groups, df, question)
    stems = _as_stems(groups, inflected(query), names)
    idf = {
        t: math.log(
            1 + (total + 1) / (min(total, sum(df.get(a, 0) for a in (*alts, *cross.get(t, ())))) + 0.5)
        )
        * _weight(t, alts, names, question.asking if question else ())
        for t, alts in groups.items()
    }
    on_day = {d: set(day_ids) for d, day_ids in dated.items()}
    day_idf = {d: math.log(1 + (total + 1) / (len(day_ids) + 0.5)) for d, day_ids in on_day.items()}
    whole = (sum(idf.values()) + sum(day_idf.values())) or 1.0
    rank = {cid: i for i, (cid, _) in enumerate(kw_hits or [])}
    weighed = [(t, w, groups[t], cross.get(t, ()), stems.get(t, ())) for t, w in idf.items()]
    out = {}
    for cid in set(rank).union(*on_day.values()):
        fact = facts.get(cid)
        if fact is None:
            continue
        have = fact.have
        hit = sum([w * _present(t, alts, have, prefix, other, stem) for t, w, alts, other, stem in weighed])
        if day_idf:
            hit += sum(w for d, w in day_idf.items() if cid in on_day[d])
        out[cid] = (hit / whole) * (1.0 - 0.15 * min(rank.get(cid, 20), 20) / 20)
    return out


def _predicates(
    groups: dict[str, tuple[str, ...]], df: dict, question: Question | None
) -> dict[str, tuple[str, ...]]:
    """The query's terms as keyword evidence counts them: a predicate in a question form whose
    written forms the store holds is one term (the word, its stem and those forms); any other
    word keeps its terms as they were (a noun that merely looks like a verb, 회의는, is unchanged)."""
    if question is None:
        return groups
    held = {t: tuple(a for a in alts[1:] if df.get(a)) for t, alts in groups.items()}
    out: dict[str, tuple[str, ...]] = {}
    for t in groups:
        if held[t]:
            out[t] = (t, *(s for s, word in question.stems.items() if word == t), *held[t])
        elif not held.get(question.stems.get(t, ""), ()):
            out[t] = (t,)
    return out


def _weight(
    term: str, alternatives: tuple[str, ...], names: Collection[str], asking: Collection[str]
) -> float:
    """A query term's share of its IDF: a generic word or the user's name GENERIC_WEIGHT, a
    question word ASKING_WEIGHT, a predicate met through its written forms PREDICATE_WEIGHT."""
    if term in asking:
        return ASKING_WEIGHT
    if term in GENERIC or term in names:
        return GENERIC_WEIGHT
    return PREDICATE_WEIGHT if len(alternatives) > 1 else 1.0


def _present(
    term: str,
    alternatives: tuple[str, ...],
    have: frozenset[str] | set[str],
    prefix: bool,
    cross: tuple[str, ...] = (),
    stem: tuple[str, ...] = (),
) -> float:
    """1 when the chunk holds the term or one of its alternatives, STEM_SHARE when it holds only
    the stem of a Korean word (another particle), CROSS_WEIGHT when it holds only the other
    script's term for it, else 0."""
    if prefix and any(h.startswith(term) for h in have):
        return 1.0
    if not have.isdisjoint(alternatives):
        return 1.0
    if stem and not have.isdisjoint(stem):
        return STEM_SHARE
    if cross and not have.isdisjoint(cross):
        return CROSS_WEIGHT
    return COMPOUND_SHARE if COMPOUND_SHARE and _compound_head(term, stem, have) else 0.0


def _compound_head(term: str, stem: tuple[str, ...], have: frozenset[str] | set[str]) -> bool:
    """Is the Korean noun (or its stem) the head of a compound the chunk holds: the end of a
    longer word (회사 of 게임회사, 교사 of 보건교사)? Korean compounds put their head last, so a
    게임회사 is a 회사; a word that only starts with the term (회사원) is another thing."""
    heads = [w for w in (term, *stem) if len(w) >= 2 and is_hangul(w)]
    return bool(heads) and any(len(h) > len(w) and h.endswith(w) for h in have for w in heads)


def _phrased(groups: dict[str, tuple[str, ...]], crossing: Crossing) -> dict[str, tuple[str, ...]]:
    """The query's terms with each lexicon phrase ("green tea") standing for its words: one term,
    in the place of its first word."""
    if not crossing.phrases:
        return groups
    taken = {w for words_ in crossing.phrases.values() for w in words_}
    first = {words_[0]: phrase for phrase, words_ in crossing.phrases.items()}
    out: dict[str, tuple[str, ...]] = {}
    for t, alts in groups.items():
        if t in first:
            out[first[t]] = (first[t],)
        if t not in taken:
            out[t] = alts
    return out


def _as_stems(
    groups: dict[str, tuple[str, ...]], stems: dict[str, str], names: Collection[str] = ()
) -> dict[str, tuple[str, ...]]:
    """word term → (its stem,) for a Korean noun with a particle whose stem is a term of the query
    too (`terms.inflected`; not a predicate with written forms, not the user's name, which every
    entry shares): the word counts present where its stem is (`서준이는` in `서준은`), with its own
    weight, so a word the store never wrote weighs what it weighed."""
    return {
        t: (stem,)
        for t, alts in groups.items()
        if alts == (t,) and t not in names and (stem := stems.get(t)) and stem in groups
    }


def _fuse(v: float, k: float, mode: str) -> float:
    if mode == "vector":
        return v
    if mode == "keyword":
        return k
    return 1.0 - (1.0 - W_VEC * v) * (1.0 - W_KW * k)


def _system(row: dict) -> bool:
    """A line giok wrote about itself; rows indexed before the "system" kind existed are
    recognised by their text."""
    return row["layer"] == "system" or (row["layer"] == "diary" and is_own_line(row["text"] or ""))


def default_user(ws, index: SearchIndex | None = None) -> str | None:
    """Whose memory a read sees when no user is named: the name in the workspace's USER.md
    (as boot does); None when it names nobody, and then no user-scoped entry is seen. With the
    workspace's own local index, just synced: read again only when that sync scanned the files
    (`Index.while_fresh`), so a search does not read USER.md while nothing in the workspace
    changed."""
    from giok.store.workspace import default_user as from_user_md

    def read() -> str | None:
        return from_user_md(ws.read_text("USER.md"))

    if isinstance(index, Index) and index.root == ws.root:
        return index.while_fresh("user", read)
    return read()


def _visible(row: dict, o: Options, past: bool = False, scopes: dict | None = None) -> bool:
    """Scopes by default: a user's entry only for that user (o.user, resolved to USER.md's
    user when not given), a thread's only in that thread; `workspace` and `task:` entries
    for everyone (a task scope says when boot injects, not who may read). all_scopes: all.
    Superseded entries with include_superseded, or for a question about the past."""
    if row["superseded"] and not (o.include_superseded or past):
        return False
    if not o.include_system and _facts(row).system:
        return False
    if scopes is not None:  # one search's verdicts, per scope (most rows share a few scopes)
        seen = scopes.get(row["scope"])
        if seen is None:
            seen = scopes[row["scope"]] = _visible_scope(row["scope"], o)
        return seen
    return _visible_scope(row["scope"], o)


def _visible_scope(scope: str | None, o: Options) -> bool:
    scope = scope or "workspace"
    if o.all_scopes or scope.startswith("task:"):
        return True
    return policy.visible(scope, o.user, o.thread)


def _recency(row: dict, o: Options) -> float:
    if not o.recency_days or row["layer"] != "diary" or not row["date"]:
        return 1.0
    try:
        age = (today() - dt.date.fromisoformat(row["date"])).days
    except ValueError:
        return 1.0
    return 0.7 + 0.3 * 0.5 ** (max(age, 0) / o.recency_days)


__all__ = [
    "DYNAMIC_GAP",
    "MIN_SCORE",
    "Options",
    "Response",
    "Result",
    "can_read",
    "default_user",
    "language",
    "search",
    "search_full",
]


# -- agentic recall ------------------------------------------------------------------------------
@dataclass
class Recall:
    query: str
    decision: str  # "search" or "skip"
    reason: str
    attempts: list[dict] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)

    @property
    def answer(self) -> str:
        if self.decision == "skip":
            return "not needed"
        return "found" if self.results else "no memory"

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "decision": self.decision,
            "reason": self.reason,
            "answer": self.answer,
            "attempts": self.attempts,
            "results": [r.to_dict() for r in self.results],
        }


def reformulate(query: str) -> str:
    """Keywords for the second attempt: stopwords and question words out, Korean particles
    stripped, each word kept with its stem (the query's own synonyms)."""
    return " ".join(query_terms(query))


def recall(ws, query: str, k: int = 5, **opts) -> Recall:
    """Decide, search, retry once with reformulated keywords, else "no memory" (≤ 2 searches)."""
    query = check_query(query)
    needed, why = needs_memory(query)
    result = Recall(query, "search" if needed else "skip", why)
    if not needed:
        return result
    opts.setdefault("record", "recall")
    opts.setdefault("identity", 0.0)  # boot injects the identity files already
    opts["include_system"] = False  # giok's own lines never answer a question
    first = search_full(ws, query, k, **opts)
    result.attempts.append({"query": query, "kind": "as asked", "kept": len(first.results)})
    result.results = first.results
    if first.results:
        return result
    second_query = reformulate(query)
    if not second_query or second_query == query:
        result.attempts.append(
            {"query": second_query, "kind": "reformulated", "kept": 0, "skipped": "nothing new to try"}
        )
        return result
    second = search_full(ws, second_query, k, prefix=True, **opts)
    result.attempts.append({"query": second_query, "kind": "reformulated", "kept": len(second.results)})
    result.results = second.results
    return result
