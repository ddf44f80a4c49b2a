"""Ranking and packing of lessons under a token budget.

`Recall.rank` orders the live lessons for a query (the topic and the recent thread); `Recall.select` packs the best
of them into a token budget, pinned lessons first, never over it. A lesson's score is its relevance (keywords by
BM25 over stemmed terms, see index.py, fused with meaning when the lessons have vectors, see fusion.py) plus small
shares for recency and use. Stale (superseded) lessons are never returned. Scoring is vectorised: a read scores
10,000 lessons in a few milliseconds.

The keyword index of a lesson set is built once and cached, keyed by the lessons' ids, so a read before each turn
only scores the query. Counts, pins and dates are each lesson's signals (prepared.py), worked out once per tuple of
lessons: a memory file's parse is one tuple until the file changes. A caller that keeps a set's index (a memory's
snapshot, or its read index on disk) passes it as `prepared`, and then only the lessons packed are looked at.
Lesson vectors are never computed here: the caller passes the stored ones; only the query is embedded.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall.fusion import RecallWeights, fuse, keyword_part, meaning_part
from nightwatch.domain.recall.index import LessonIndex
from nightwatch.domain.recall.keywords import terms, terms_of
from nightwatch.domain.recall.ports import Embedder, Succession
from nightwatch.domain.recall.prepared import RecallIndex, Signals
from nightwatch.domain.recall.succession import newer_first
from nightwatch.domain.vectors import LessonVectors, Matrix, unit_rows

log = logging.getLogger(__name__)

T = TypeVar("T")

_MISSES_BEFORE_GIVING_UP = 64  # consecutive lessons too big for what is left of the budget
_QUERIES_KEPT = 64
_ANALYSED_TEXTS = 100_000  # texts whose terms are kept, so a file with one new lesson is not tokenised again


@dataclass(frozen=True)
class ScoreParts:
    """Why a lesson ranks where it does: relevance by keywords and by meaning (0..1), recency and use."""

    keyword: float
    meaning: float
    recency: float
    use: float


@dataclass(frozen=True)
class Scored:
    lesson: Lesson
    score: float
    parts: ScoreParts
    similarity: float = 0.0  # the cosine of the lesson's vector and the query's (0 without vectors)


@dataclass(frozen=True, eq=False)
class _Ranking:
    order: NDArray[np.int64]  # live positions, best first
    totals: NDArray[np.float32]
    keyword: NDArray[np.float32]
    meaning: NDArray[np.float32]
    similarity: NDArray[np.float32]
    recency: NDArray[np.float32]
    usage: NDArray[np.float32]
    pinned: frozenset[int]
    superseded: frozenset[int] = frozenset()  # positions a newer lesson in the ranking updates (succession.py)


class Recall:
    """Orders lessons by how much they matter for a query, and packs the best into a token budget."""

    def __init__(
        self,
        *,
        half_life_days: float = 30.0,
        encoder: Embedder | None = None,
        weights: RecallWeights | None = None,
        cache_size: int = 16,
        succession: Succession | None = None,
    ) -> None:
        self.half_life_days = half_life_days
        self.encoder = encoder
        self.weights = weights or RecallWeights()
        self.succession = succession  # None: lessons are ranked on their own, without reading updates
        self._cache: OrderedDict[tuple[str, ...], RecallIndex] = OrderedDict()  # keyed by the lessons' ids
        self._cache_size = cache_size
        self._analysed: dict[str, list[str]] = {}
        self._queries: OrderedDict[str, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Matrix | None:
        """Unit vectors of these texts, or None without an encoder."""
        if self.encoder is None:
            return None
        return unit_rows(np.asarray(self.encoder.embed(list(texts)), dtype=np.float32))

    def rank(
        self,
        lessons: Sequence[Lesson],
        query: str,
        now: datetime,
        vectors: LessonVectors | None = None,
        *,
        about: str | None = None,
        prepared: RecallIndex | None = None,
    ) -> list[Scored]:
        """Live lessons, best first, with their scores and score parts.

        `about` is the text compared by meaning (the topic; by default the whole query): a long thread adds
        keywords, but its meaning is mostly talk, and embedding it would cost a read tens of milliseconds.
        `prepared` is the lessons' index when the caller keeps it (see `prepare`).
        """
        ranking = self._rank(lessons, query, now, vectors, about, prepared)
        return [
            Scored(
                lessons[i],
                float(ranking.totals[i]),
                ScoreParts(
                    float(ranking.keyword[i]),
                    float(ranking.meaning[i]),
                    float(ranking.recency[i]),
                    float(ranking.usage[i]),
                ),
                float(ranking.similarity[i]),
            )
            for i in ranking.order.tolist()
        ]

    def select(
        self,
        lessons: Sequence[Lesson],
        query: str,
        now: datetime,
        budget_tokens: int,
        cost: Callable[[Lesson], int],
        vectors: LessonVectors | None = None,
        *,
        about: str | None = None,
        prepared: RecallIndex | None = None,
    ) -> list[Lesson]:
        """The lessons to inject: pinned first, then by rank, while their summed `cost` fits `budget_tokens`.

        Only the lessons looked at for packing are taken from `lessons`, by position.
        """
        ranking = self._rank(lessons, query, now, vectors, about, prepared)
        pinned = ranking.pinned
        order = ranking.order.tolist()
        first = sorted(pinned, key=lambda i: -float(ranking.totals[i]))
        rest = [i for i in order if i not in pinned and i not in ranking.superseded]
        return pack((lessons[i] for group in (first, rest) for i in group), budget_tokens, cost)

    def _rank(
        self,
        lessons: Sequence[Lesson],
        query: str,
        now: datetime,
        vectors: LessonVectors | None,
        about: str | None,
        prepared: RecallIndex | None,
    ) -> _Ranking:
        empty = np.zeros(len(lessons), dtype=np.float32)
        if not len(lessons):
            return _Ranking(np.zeros(0, dtype=np.int64), empty, empty, empty, empty, empty, empty, frozenset())
        if prepared is None:
            prepared = self.prepare(lessons)
        elif prepared.size != len(lessons):
            raise ValueError(f"an index of {prepared.size} lessons was given with {len(lessons)} lessons")
        facts = prepared.facts(self.weights, self.half_life_days)
        keyword = keyword_part(prepared.index.scores(terms(query)), self.weights)
        wanted = query if about is None else about
        cosines = self._cosines(wanted, vectors) if vectors is not None and len(vectors.present) else None
        meaning = None if cosines is None or vectors is None else meaning_part(cosines, vectors.present, self.weights)
        relevance = fuse(keyword, meaning, self.weights)
        recency = facts.recency_at(now)
        totals = relevance.fused + recency + facts.usage
        # Ties keep the later lesson first: `live` is later-first and the sort is stable.
        order = facts.live[np.argsort(-totals[facts.live], kind="stable")]
        order, superseded = newer_first(lessons, order, vectors, self.succession, facts.pinned, query)
        similarity = cosines if cosines is not None else empty
        parts = (relevance.keyword, relevance.meaning, similarity, recency, facts.usage)
        return _Ranking(order, totals, *parts, facts.pinned, superseded)

    def _cosines(self, query: str, vectors: LessonVectors) -> NDArray[np.float32] | None:
        """Each lesson's cosine to the query (0 without a vector); None when there is no query or no encoder."""
        if not query.strip() or not vectors.present.any():
            return None
        probe = self._probe(query)
        return None if probe is None else vectors.cosines(probe)

    def _probe(self, query: str) -> Matrix | None:
        """The query's unit vector; the personas of one turn ask with the same query, so the last few are kept."""
        with self._lock:
            known = self._queries.get(query)
        if known is not None:
            return known
        try:
            vectors = self.embed([query])
        except NightWatchError as err:  # a damaged model file: keywords still answer
            log.warning("Recall goes on by keywords only: the sentence encoder failed (%s)", err)
            return None
        if vectors is None:
            return None
        probe: Matrix = vectors[0]
        with self._lock:
            self._queries[query] = probe
            while len(self._queries) > _QUERIES_KEPT:
                self._queries.popitem(last=False)
        return probe

    def prepare(self, lessons: Sequence[Lesson]) -> RecallIndex:
        """The keyword index and signals of these lessons, built when the set is new.

        Indexes are kept by the lessons' ids, so a file whose counts changed keeps its index; the very tuple passed
        last time is found without working out its ids.
        """
        with self._lock:
            for known in self._cache.values():
                if known.source is lessons and isinstance(lessons, tuple):
                    return known
            key = tuple([lesson.id for lesson in lessons])
            cached = self._cache.get(key)
        if cached is not None:
            index = cached.index
        else:
            index = LessonIndex.build(lessons, self._analyse(lessons), self.weights.keyword)
        prepared = RecallIndex(index, Signals.of(lessons), source=lessons)
        self._keep(key, prepared)
        return prepared

    def _keep(self, ids: tuple[str, ...], prepared: RecallIndex) -> None:
        with self._lock:
            self._cache[ids] = prepared
            self._cache.move_to_end(ids)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _analyse(self, lessons: Sequence[Lesson]) -> list[list[str]]:
        """Each lesson's index terms, from the cache when its text was analysed before."""
        known = self._analysed
        if len(known) > _ANALYSED_TEXTS:
            known.clear()
        new = [text for text in dict.fromkeys(lesson.text for lesson in lessons) if text not in known]
        known.update(zip(new, terms_of(new), strict=True))
        return [known[lesson.text] for lesson in lessons]


def pack(ordered: Iterable[T], budget_tokens: int, cost: Callable[[T], int]) -> list[T]:
    """Greedy packing in order: take each item that still fits; stop once the budget is spent (or after many misses)."""
    chosen: list[T] = []
    spent = 0
    misses = 0
    for item in ordered:
        price = cost(item)
        if spent + price <= budget_tokens:
            chosen.append(item)
            spent += price
            misses = 0
        else:
            misses += 1
        if spent >= budget_tokens or misses >= _MISSES_BEFORE_GIVING_UP:
            break
    return chosen
