"""Ranking and packing of lessons under a token budget.

`Recall.rank` orders the live lessons for a query (the topic and the recent thread); `Recall.select` packs the best
of them into a token budget, pinned lessons first, never over it. A lesson's score is its keyword relevance (BM25
over stemmed terms, see lesson_index.py), fused with dense similarity when an Embedder is given, plus small shares
for recency and use, so relevance dominates and recency and use order lessons the query cannot tell apart.
Stale (superseded) lessons are never returned.

The index of a lesson set is built once and cached, keyed by the lessons' ids, so a read before each turn only
scores the query. Counts and pins may change without a rebuild: they are read from the lessons on every call.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from nightwatch.domain.keywords import terms
from nightwatch.domain.lesson_index import KeywordWeights, LessonIndex
from nightwatch.domain.models import Lesson
from nightwatch.domain.ports import Embedder

_DAY_SECONDS = 86400.0
_MISSES_BEFORE_GIVING_UP = 64  # consecutive lessons too big for what is left of the budget


@dataclass(frozen=True)
class Scored:
    lesson: Lesson
    score: float


@dataclass(frozen=True)
class RecallWeights:
    """How the parts of a score combine. Relevance is scaled to 0..1 per query; the others are in 0..1 too."""

    keyword: KeywordWeights = field(default_factory=KeywordWeights)
    dense: float = 0.5  # share of dense similarity in relevance, when an Embedder is given
    recency: float = 0.1
    usage: float = 0.05
    injected_share: float = 0.25  # an injection says less about worth than being recorded again


@dataclass
class _Prepared:
    """What a lesson set costs to build once: its keyword index and, with an Embedder, unit vectors."""

    index: LessonIndex
    vectors: list[list[float]] | None = None


class Recall:
    """Orders lessons by how much they matter for a query, and packs the best into a token budget."""

    def __init__(
        self,
        *,
        half_life_days: float = 30.0,
        encoder: Embedder | None = None,
        weights: RecallWeights | None = None,
        cache_size: int = 32,
    ) -> None:
        self.half_life_days = half_life_days
        self.encoder = encoder
        self.weights = weights or RecallWeights()
        self._cache: OrderedDict[tuple[str, ...], _Prepared] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def rank(self, lessons: Sequence[Lesson], query: str, now: datetime) -> list[Scored]:
        """Live lessons, best first, with their scores."""
        return [Scored(lessons[i], score) for score, i in self._order(lessons, query, now)]

    def select(
        self,
        lessons: Sequence[Lesson],
        query: str,
        now: datetime,
        budget_tokens: int,
        cost: Callable[[Lesson], int],
    ) -> list[Lesson]:
        """The lessons to inject: pinned first, then by rank, while their summed `cost` fits `budget_tokens`."""
        order = [lessons[i] for _, i in self._order(lessons, query, now)]
        pinned = [lesson for lesson in order if lesson.pinned]
        return _pack([*pinned, *(lesson for lesson in order if not lesson.pinned)], budget_tokens, cost)

    def _order(self, lessons: Sequence[Lesson], query: str, now: datetime) -> list[tuple[float, int]]:
        """(score, position) of each live lesson, best first; ties go to the later lesson in the file."""
        if not lessons:
            return []
        prepared = self._prepare(lessons)
        relevance = self._relevance(prepared, lessons, query)
        scored = [
            (relevance.get(i, 0.0) + self._prior(lesson, now), i)
            for i, lesson in enumerate(lessons)
            if lesson.superseded_by is None
        ]
        scored.sort(reverse=True)
        return scored

    def _relevance(self, prepared: _Prepared, lessons: Sequence[Lesson], query: str) -> dict[int, float]:
        """Position -> relevance in 0..1: keyword score over the best one, fused with dense similarity if any."""
        keyword = _scaled(prepared.index.scores(terms(query)))
        if prepared.vectors is None or self.encoder is None or not query.strip():
            return keyword
        dense = _dense_scores(prepared.vectors, self.encoder, query)
        share = self.weights.dense
        return {
            i: (1.0 - share) * keyword.get(i, 0.0) + share * dense[i]
            for i in range(len(lessons))
            if i in keyword or dense[i] > 0.0
        }

    def _prior(self, lesson: Lesson, now: datetime) -> float:
        """What recency and use add to a lesson's score, whatever the query."""
        age_days = max(0.0, (now - lesson.recorded_at).total_seconds() / _DAY_SECONDS)
        recency = 0.5 ** (age_days / self.half_life_days) if self.half_life_days > 0 else 0.0
        uses = max(0, lesson.seen - 1) + self.weights.injected_share * max(0, lesson.injected)
        return self.weights.recency * recency + self.weights.usage * (uses / (uses + 3.0))

    def _prepare(self, lessons: Sequence[Lesson]) -> _Prepared:
        """The cached index of this lesson set, built when the set is new."""
        key = tuple(lesson.id for lesson in lessons)
        with self._lock:
            prepared = self._cache.get(key)
            if prepared is not None:
                self._cache.move_to_end(key)
                return prepared
        prepared = _Prepared(LessonIndex(lessons, [terms(lesson.text) for lesson in lessons], self.weights.keyword))
        if self.encoder is not None:
            prepared.vectors = [_unit(vector) for vector in self.encoder.embed([lesson.text for lesson in lessons])]
        with self._lock:
            self._cache[key] = prepared
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return prepared


def _scaled(scores: dict[int, float]) -> dict[int, float]:
    """Scores divided by the best one, so a query's relevance lies in 0..1 whatever its length."""
    best = max(scores.values(), default=0.0)
    if best <= 0.0:
        return {}
    return {i: score / best for i, score in scores.items()}


def _dense_scores(vectors: list[list[float]], encoder: Embedder, query: str) -> list[float]:
    """Cosine similarity of each lesson to the query, min-max scaled to 0..1."""
    probe = _unit(encoder.embed([query])[0])
    cosines = [sum(map(float.__mul__, probe, vector)) for vector in vectors]
    low, high = min(cosines), max(cosines)
    spread = high - low
    if spread <= 0.0:
        return [0.0] * len(cosines)
    return [(value - low) / spread for value in cosines]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(value * value for value in vector))
    return [float(value) / norm for value in vector] if norm > 0.0 else [0.0 for _ in vector]


def _pack(ordered: Sequence[Lesson], budget_tokens: int, cost: Callable[[Lesson], int]) -> list[Lesson]:
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
