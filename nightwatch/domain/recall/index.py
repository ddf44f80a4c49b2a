"""An inverted index over one set of lessons, scoring a query with BM25 over two fields.

The `text` field is the lesson itself. The `context` field is the text of the lessons recorded beside it in the same
interaction (same time and link, near it in the file): a lesson such as "Yes, and it failed again on Friday" says
little alone, and its neighbours say what "it" is. Context counts for less than the lesson's own words.

Built once per lesson set (Recall caches it), with numpy over (lesson, term, count) arrays: 10,000 lessons take a
hundred milliseconds or more, so a memory's read index keeps it as arrays beside the file (`arrays`, `from_arrays`).
Each term's posting list already holds both fields' weighted BM25 impact for each
lesson, so a query only adds up the postings of its own terms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays, take
from nightwatch.domain.models import Lesson


@dataclass(frozen=True)
class KeywordWeights:
    """BM25 parameters and field weights (measured with bench/retrieval.py)."""

    k1: float = 1.2
    b: float = 0.75
    context_weight: float = 0.8  # a neighbour's words count for less than the lesson's own
    context_window: int = 3  # neighbours on each side that lend their words as context
    query_saturation: float = 2.0  # a term repeated in a long query counts at most this many times
    max_query_terms: int = 32  # a long query (a whole thread) keeps its most telling terms: read time stays flat


Ints = NDArray[np.int64]
Floats = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class _Field:
    """One field as unique (lesson, term) rows with the term's count in that lesson."""

    docs: Ints
    terms: Ints
    counts: Floats

    @classmethod
    def of(cls, docs: Ints, terms: Ints, counts: Floats, vocabulary: int) -> _Field:
        """Rows summed per (lesson, term)."""
        keys, inverse = np.unique(docs * vocabulary + terms, return_inverse=True)
        summed: Floats = np.bincount(inverse, weights=counts, minlength=len(keys)).astype(np.float64)
        return cls(keys // vocabulary, keys % vocabulary, summed)

    def impacts(self, size: int, vocabulary: int, k1: float, b: float) -> tuple[Floats, Floats]:
        """Each row's saturated BM25 weight times its term's idf, and every term's idf in this field."""
        lengths = np.bincount(self.docs, weights=self.counts, minlength=size)
        average = lengths.mean() if size and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths[self.docs] / average)
        frequency = np.bincount(self.terms, minlength=vocabulary)
        idf = np.log(1.0 + (size - frequency + 0.5) / (frequency + 0.5))
        return self.counts * (k1 + 1.0) / (self.counts + norm) * idf[self.terms], np.where(frequency > 0, idf, 0.0)


def _context(own: _Field, pairs: tuple[Ints, Ints], size: int, vocabulary: int) -> _Field:
    """Each lesson's context field: the rows of its neighbours, moved to it."""
    starts = np.searchsorted(own.docs, np.arange(size + 1))  # own rows are sorted by lesson
    to, frm = pairs
    spans = starts[frm + 1] - starts[frm]
    rows = np.repeat(starts[frm] - np.cumsum(spans) + spans, spans) + np.arange(spans.sum())
    return _Field.of(np.repeat(to, spans), own.terms[rows], own.counts[rows], vocabulary)


def _built_with(weights: KeywordWeights) -> Floats:
    """The settings an index's arrays depend on (a query's own settings do not count)."""
    return np.array([weights.k1, weights.b, weights.context_weight, weights.context_window], dtype=np.float64)


def _neighbours(lessons: Sequence[Lesson], window: int) -> tuple[Ints, Ints]:
    """(lesson, neighbour) position pairs: lessons near each other recorded in the same interaction."""
    stamps = np.array([lesson.recorded_at.timestamp() for lesson in lessons])
    links: dict[str | None, int] = {}
    link = np.array([links.setdefault(lesson.link, len(links)) for lesson in lessons], dtype=np.int64)
    positions = np.arange(len(lessons), dtype=np.int64)
    found = []
    for offset in (*range(-window, 0), *range(1, window + 1)):
        mine = positions[max(0, -offset) : max(0, len(lessons) - max(0, offset))]
        theirs = mine + offset
        same = (stamps[mine] == stamps[theirs]) & (link[mine] == link[theirs])
        found.append(np.stack([mine[same], theirs[same]]))
    pairs = np.concatenate(found, axis=1) if found else np.zeros((2, 0), dtype=np.int64)
    order = np.lexsort((pairs[1], pairs[0]))
    return pairs[0][order], pairs[1][order]


class LessonIndex:
    """Per term, the lessons it occurs in (or near) and its weighted impact there; built once per lesson set."""

    def __init__(
        self,
        *,
        terms: Iterable[str],
        docs: NDArray[np.int32],
        impacts: NDArray[np.float32],
        starts: Ints,
        rarity: Floats,
        size: int,
        weights: KeywordWeights,
    ) -> None:
        self.weights = weights
        self.size = size
        self._vocabulary = {term: number for number, term in enumerate(terms)}
        self._docs = docs  # by term: the lessons it scores, each term's run from _starts[term] to _starts[term + 1]
        self._impacts = impacts
        self._starts = starts
        self._rarity = rarity  # a term's own-text idf when it has one

    @classmethod
    def build(
        cls, lessons: Sequence[Lesson], analysed: Sequence[Sequence[str]], weights: KeywordWeights
    ) -> LessonIndex:
        """The index of these lessons, given each one's terms (keywords.terms_of)."""
        size = len(lessons)
        pairs = _neighbours(lessons, weights.context_window)  # (lesson, neighbour) positions
        flat = list(chain.from_iterable(analysed))
        numbers = {term: number for number, term in enumerate(dict.fromkeys(flat))}
        vocabulary = max(len(numbers), 1)
        docs = np.repeat(np.arange(size, dtype=np.int64), [len(doc) for doc in analysed])
        terms = np.fromiter(map(numbers.__getitem__, flat), dtype=np.int64, count=len(flat))
        own = _Field.of(docs, terms, np.ones(len(docs)), vocabulary)
        near = _context(own, pairs, size, vocabulary)
        own_impacts, own_idf = own.impacts(size, vocabulary, weights.k1, weights.b)
        near_impacts, near_idf = near.impacts(size, vocabulary, weights.k1, weights.b)
        merged = _Field.of(
            np.concatenate([own.docs, near.docs]),
            np.concatenate([own.terms, near.terms]),
            np.concatenate([own_impacts, weights.context_weight * near_impacts]),
            vocabulary,
        )
        order = np.argsort(merged.terms, kind="stable")
        return cls(
            terms=numbers,
            docs=merged.docs[order].astype(np.int32),
            impacts=merged.counts[order].astype(np.float32),
            starts=np.searchsorted(merged.terms[order], np.arange(vocabulary + 1)).astype(np.int64),
            rarity=np.where(own_idf > 0, own_idf, near_idf),
            size=size,
            weights=weights,
        )

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The index as named arrays (see `from_arrays`)."""
        return {
            "terms": np.frombuffer("\n".join(self._vocabulary).encode("utf-8"), dtype=np.uint8),
            "docs": self._docs,
            "impacts": self._impacts,
            "starts": self._starts,
            "rarity": self._rarity,
            "size": np.array(self.size, dtype=np.int64),
            "built_with": _built_with(self.weights),
        }

    @classmethod
    def from_arrays(cls, arrays: Arrays, weights: KeywordWeights) -> LessonIndex:
        """The index `arrays()` gave; ValueError when they do not make one, or it was built with other weights.

        Checked so that no query can index outside them: terms unique, runs in order, lessons in range.
        """
        if not np.array_equal(take(arrays, "built_with", np.float64, (4,)), _built_with(weights)):
            raise ValueError("the index was built with other keyword weights")
        encoded = take(arrays, "terms", np.uint8, (None,))
        terms = encoded.tobytes().decode("utf-8").split("\n") if len(encoded) else []
        if len(set(terms)) != len(terms):
            raise ValueError("a term is listed twice")
        vocabulary = max(len(terms), 1)
        size = int(take(arrays, "size", np.int64, ()))
        docs = take(arrays, "docs", np.int32, (None,))
        impacts = take(arrays, "impacts", np.float32, docs.shape)
        starts = take(arrays, "starts", np.int64, (vocabulary + 1,))
        rarity = take(arrays, "rarity", np.float64, (vocabulary,))
        if size < 0 or starts[0] != 0 or starts[-1] != len(docs) or (np.diff(starts) < 0).any():
            raise ValueError("the term runs are out of order")
        if len(docs) and (int(docs.min()) < 0 or int(docs.max()) >= size):
            raise ValueError("a lesson position is out of range")
        if not (np.isfinite(impacts).all() and np.isfinite(rarity).all()):
            raise ValueError("a weight is not a number")
        return cls(terms=terms, docs=docs, impacts=impacts, starts=starts, rarity=rarity, size=size, weights=weights)

    def scores(self, query_terms: Iterable[str]) -> NDArray[np.float32]:
        """Relevance of each lesson (by position) to the query; 0.0 where they share no term."""
        result = np.zeros(self.size, dtype=np.float32)
        for term, repeat in self._telling_terms(query_terms):
            start, end = self._starts[term], self._starts[term + 1]
            result[self._docs[start:end]] += self._impacts[start:end] * np.float32(repeat)  # each lesson once
        return result

    def _telling_terms(self, query_terms: Iterable[str]) -> list[tuple[int, float]]:
        """The query's known terms with their (saturated) repeat counts, rarest first, at most max_query_terms."""
        saturation = self.weights.query_saturation
        known = [
            (self._vocabulary[term], min(float(count), saturation))
            for term, count in Counter(query_terms).items()
            if term in self._vocabulary
        ]
        known.sort(key=lambda pair: -pair[1] * float(self._rarity[pair[0]]))
        return known[: self.weights.max_query_terms]
