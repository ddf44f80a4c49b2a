"""Ranking and packing of lessons under a token budget.

`Recall.rank` orders the live lessons for a query (the topic and the recent thread); `Recall.select` packs the best
of them into a token budget, pinned lessons first, never over it. A lesson's score is its keyword relevance (BM25
over stemmed terms, see index.py), fused with dense similarity when an Embedder is given, plus small shares
for recency and use, so relevance dominates and recency and use order lessons the query cannot tell apart.
Stale (superseded) lessons are never returned.

The index of a lesson set is built once and cached, keyed by the lessons' ids, so a read before each turn only
scores the query. Counts, pins and dates are read from the lessons themselves (worked out once per tuple of
lessons: a memory file's parse is one tuple until the file changes).
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from nightwatch.domain.models import Lesson
from nightwatch.domain.ports import Embedder
from nightwatch.domain.recall.index import KeywordWeights, LessonIndex
from nightwatch.domain.recall.keywords import terms

_DAY_SECONDS = 86400.0
_MISSES_BEFORE_GIVING_UP = 64  # consecutive lessons too big for what is left of the budget
_ANALYSED_TEXTS = 100_000  # texts whose terms are kept, so a file with one new lesson is not tokenised again


@dataclass(frozen=True)
class Scored:
    lesson: Lesson
    score: float


@dataclass(frozen=True)
class RecallWeights:
    """How the parts of a score combine. Relevance is scaled to 0..1 per query; the others are in 0..1 too."""

    keyword: KeywordWeights = field(default_factory=KeywordWeights)
    dense: float = 0.4  # share of dense similarity in relevance, when an Embedder is given
    recency: float = 0.1
    usage: float = 0.05
    injected_share: float = 0.25  # an injection says less about worth than being recorded again


class _Facts:
    """What the query does not change, per lesson: live or stale, pinned, recency base and use."""

    def __init__(self, lessons: Sequence[Lesson], weights: RecallWeights, half_life_days: float) -> None:
        self.source = lessons
        self.live = [i for i in range(len(lessons) - 1, -1, -1) if lessons[i].superseded_by is None]  # later first
        self.pinned = frozenset(i for i in self.live if lessons[i].pinned)
        self.stamps = [lesson.recorded_at.timestamp() for lesson in lessons]
        self.newest = max(self.stamps, default=0.0)
        self.rate = math.log(2.0) / (half_life_days * _DAY_SECONDS) if half_life_days > 0 else 0.0
        recency = weights.recency if half_life_days > 0 else 0.0
        # Recency relative to the newest lesson; one factor per query brings it to `now`.
        self.recency = [recency * math.exp(-self.rate * (self.newest - stamp)) for stamp in self.stamps]
        uses = [max(0, lesson.seen - 1) + weights.injected_share * max(0, lesson.injected) for lesson in lessons]
        # Saturating: the third repeat matters less than the first.
        self.usage = [weights.usage * u / (u + 3.0) for u in uses]

    def priors(self, now: datetime) -> list[float]:
        """What recency and use add to each lesson's score at `now`."""
        now_s = now.timestamp()
        if now_s >= self.newest:
            factor = math.exp(-self.rate * (now_s - self.newest))
            return [factor * r + u for r, u in zip(self.recency, self.usage, strict=True)]
        # A lesson dated after `now` (clock skew): count it as fresh rather than fresher than fresh.
        top = max(self.recency, default=0.0)
        return [
            min(top, r * math.exp(-self.rate * (now_s - self.newest))) + u
            for r, u in zip(self.recency, self.usage, strict=True)
        ]


@dataclass
class _Prepared:
    """What a lesson set costs to build once: its keyword index and, with an Embedder, unit vectors."""

    index: LessonIndex
    vectors: list[array[float]] | None = None
    facts: _Facts | None = None


class Recall:
    """Orders lessons by how much they matter for a query, and packs the best into a token budget."""

    def __init__(
        self,
        *,
        half_life_days: float = 30.0,
        encoder: Embedder | None = None,
        weights: RecallWeights | None = None,
        cache_size: int = 16,
    ) -> None:
        self.half_life_days = half_life_days
        self.encoder = encoder
        self.weights = weights or RecallWeights()
        self._cache: OrderedDict[tuple[str, ...], _Prepared] = OrderedDict()
        self._cache_size = cache_size
        self._analysed: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def rank(self, lessons: Sequence[Lesson], query: str, now: datetime) -> list[Scored]:
        """Live lessons, best first, with their scores."""
        order, totals, _ = self._order(lessons, query, now)
        return [Scored(lessons[i], totals[i]) for i in order]

    def select(
        self,
        lessons: Sequence[Lesson],
        query: str,
        now: datetime,
        budget_tokens: int,
        cost: Callable[[Lesson], int],
    ) -> list[Lesson]:
        """The lessons to inject: pinned first, then by rank, while their summed `cost` fits `budget_tokens`."""
        order, totals, pinned = self._order(lessons, query, now)
        first = sorted(pinned, key=totals.__getitem__, reverse=True)
        rest = (i for i in order if i not in pinned) if pinned else order
        return _pack((lessons[i] for group in (first, rest) for i in group), budget_tokens, cost)

    def _order(
        self, lessons: Sequence[Lesson], query: str, now: datetime
    ) -> tuple[list[int], list[float], frozenset[int]]:
        """Live positions best first (ties: later in the file first), every lesson's score, and the pinned ones."""
        if not lessons:
            return [], [], frozenset()
        prepared = self._prepare(lessons)
        facts = self._facts(prepared, lessons)
        relevance = self._relevance(prepared, query)
        totals = [r + p for r, p in zip(relevance, facts.priors(now), strict=True)]
        return sorted(facts.live, key=totals.__getitem__, reverse=True), totals, facts.pinned

    def _relevance(self, prepared: _Prepared, query: str) -> list[float]:
        """Each lesson's relevance in 0..1: keyword score over the best one, fused with dense similarity if any."""
        keyword = _scaled(prepared.index.scores(terms(query)))
        if prepared.vectors is None or self.encoder is None or not query.strip():
            return keyword
        probe = _unit(self.encoder.embed([query])[0])
        dense = _dense_scores(prepared.vectors, prepared.index.neighbours, probe, self.weights.keyword.context_weight)
        share = self.weights.dense
        return [(1.0 - share) * k + share * d for k, d in zip(keyword, dense, strict=True)]

    def _facts(self, prepared: _Prepared, lessons: Sequence[Lesson]) -> _Facts:
        """The query-free facts of these lessons; reused while the caller passes the same tuple (it cannot change)."""
        facts = prepared.facts
        if facts is not None and facts.source is lessons and isinstance(lessons, tuple):
            return facts
        facts = _Facts(lessons, self.weights, self.half_life_days)
        prepared.facts = facts
        return facts

    def _prepare(self, lessons: Sequence[Lesson]) -> _Prepared:
        """The cached index of this lesson set, built when the set is new."""
        with self._lock:
            for known in self._cache.values():
                if known.facts is not None and known.facts.source is lessons and isinstance(lessons, tuple):
                    return known  # the very tuple read last time: no need to build the key
            key = tuple([lesson.id for lesson in lessons])
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        prepared = _Prepared(LessonIndex(lessons, self._analyse(lessons), self.weights.keyword))
        if self.encoder is not None:
            vectors = self.encoder.embed([lesson.text for lesson in lessons])
            prepared.vectors = [array("f", _unit(vector)) for vector in vectors]  # a quarter of a list's memory
        with self._lock:
            self._cache[key] = prepared
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return prepared

    def _analyse(self, lessons: Sequence[Lesson]) -> list[list[str]]:
        """Each lesson's index terms, from the cache when its text was analysed before."""
        known = self._analysed
        if len(known) > _ANALYSED_TEXTS:
            known.clear()
        found = []
        for lesson in lessons:
            analysed = known.get(lesson.text)
            if analysed is None:
                analysed = known[lesson.text] = terms(lesson.text)
            found.append(analysed)
        return found


def _scaled(scores: list[float]) -> list[float]:
    """Scores divided by the best one, so a query's relevance lies in 0..1 whatever its length."""
    best = max(scores, default=0.0)
    if best <= 0.0:
        return [0.0] * len(scores)
    inverse = 1.0 / best
    return [score * inverse for score in scores]


def _dense_scores(
    vectors: Sequence[array[float]], neighbours: Sequence[Sequence[int]], probe: list[float], context_weight: float
) -> list[float]:
    """Cosine similarity to the query, plus a share of the neighbours' (as for keywords), min-max scaled to 0..1."""
    cosines = [sum(map(float.__mul__, probe, vector)) for vector in vectors]
    mixed = [
        cosine + context_weight * (sum(cosines[j] for j in near) / len(near) if near else 0.0)
        for cosine, near in zip(cosines, neighbours, strict=True)
    ]
    low, high = min(mixed), max(mixed)
    if high - low <= 0.0:
        return [0.0] * len(mixed)
    return [(value - low) / (high - low) for value in mixed]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(value * value for value in vector))
    return [float(value) / norm for value in vector] if norm > 0.0 else [0.0 for _ in vector]


def _pack(ordered: Iterable[Lesson], budget_tokens: int, cost: Callable[[Lesson], int]) -> list[Lesson]:
    """Greedy packing in order: take each lesson that still fits; stop once the budget is spent."""
    chosen: list[Lesson] = []
    spent = 0
    misses = 0
    for lesson in ordered:
        price = cost(lesson)
        if spent + price <= budget_tokens:
            chosen.append(lesson)
            spent += price
            misses = 0
        else:
            misses += 1
        if spent >= budget_tokens or misses >= _MISSES_BEFORE_GIVING_UP:
            break
    return chosen
