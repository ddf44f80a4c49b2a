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

    @classmethod
    def by_term(cls, docs: Ints, terms: Ints, counts: Floats, size: int) -> _Field:
        """Rows summed per (lesson, term), in term order, then lesson order: posting lists, one sort fewer."""
        span = max(size, 1)
        keys, inverse = np.unique(terms * span + docs, return_inverse=True)
        summed: Floats = np.bincount(inverse, weights=counts, minlength=len(keys)).astype(np.float64)
        return cls(keys % span, keys // span, summed)

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


def _neighbours(stamps: Floats, links: Ints, window: int) -> tuple[Ints, Ints]:
    """(lesson, neighbour) position pairs: lessons near each other recorded in the same interaction (time and link)."""
    count = len(stamps)
    positions = np.arange(count, dtype=np.int64)
    found = []
    for offset in (*range(-window, 0), *range(1, window + 1)):
        mine = positions[max(0, -offset) : max(0, count - max(0, offset))]
        theirs = mine + offset
        same = (stamps[mine] == stamps[theirs]) & (links[mine] == links[theirs])
        found.append(np.stack([mine[same], theirs[same]]))
    pairs = np.concatenate(found, axis=1) if found else np.zeros((2, 0), dtype=np.int64)
    order = np.lexsort((pairs[1], pairs[0]))
    return pairs[0][order], pairs[1][order]


def link_numbers(links: Sequence[str | None]) -> Ints:
    """Each lesson's link as a number: equal links get equal numbers (None is a link too)."""
    numbers: dict[str | None, int] = {}
    return np.array([numbers.setdefault(link, len(numbers)) for link in links], dtype=np.int64)


@dataclass(frozen=True, eq=False)
class LessonTerms:
    """Each lesson's own terms, in order with repeats, as numbers into `vocabulary` (numbered by first occurrence).

    Lesson i's terms are numbers[offsets[i]:offsets[i + 1]], where offsets are the running sums of `lengths`.
    """

    vocabulary: tuple[str, ...]
    numbers: NDArray[np.int32]
    lengths: NDArray[np.int32]

    @classmethod
    def of(cls, analysed: Sequence[Sequence[str]]) -> LessonTerms:
        """The terms of each lesson, given as text (keywords.terms_of)."""
        flat = list(chain.from_iterable(analysed))
        numbers = {term: number for number, term in enumerate(dict.fromkeys(flat))}
        return cls(
            tuple(numbers),
            np.fromiter(map(numbers.__getitem__, flat), dtype=np.int32, count=len(flat)),
            np.array([len(terms) for terms in analysed], dtype=np.int32),
        )

    def offsets(self) -> Ints:
        return np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(self.lengths, dtype=np.int64)])

    def gathered(self, rows: Ints, fresh: Sequence[Sequence[str]]) -> LessonTerms:
        """A new set: lesson i's terms are this set's lesson rows[i] where that is >= 0, else the next of `fresh`.

        Numbered anew by first occurrence, so it equals `LessonTerms.of` of the same lessons' terms.
        """
        known = {term: number for number, term in enumerate(self.vocabulary)}
        extra: dict[str, int] = {}
        fresh_numbers = [
            known[term] if term in known else extra.setdefault(term, len(known) + len(extra))
            for terms in fresh
            for term in terms
        ]
        pool = np.concatenate([self.numbers.astype(np.int64), np.array(fresh_numbers, dtype=np.int64)])
        new = rows < 0
        starts = np.zeros(len(rows), dtype=np.int64)
        lengths = np.zeros(len(rows), dtype=np.int64)
        starts[~new], lengths[~new] = self.offsets()[rows[~new]], self.lengths[rows[~new]]
        fresh_lengths = np.array([len(terms) for terms in fresh], dtype=np.int64)
        starts[new] = len(self.numbers) + np.cumsum(fresh_lengths) - fresh_lengths
        lengths[new] = fresh_lengths
        flat = pool[np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())]
        unique, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # unique terms in order of first occurrence
        renumbered = np.empty(len(order), dtype=np.int32)
        renumbered[order] = np.arange(len(order), dtype=np.int32)
        names = (*self.vocabulary, *extra)
        return LessonTerms(
            tuple(names[term] for term in unique[order].tolist()),
            renumbered[inverse.reshape(-1)],
            lengths.astype(np.int32),
        )


class LessonIndex:
    """Per term, the lessons it occurs in (or near) and its weighted impact there; built once per lesson set."""

    def __init__(
        self,
        *,
        terms: LessonTerms,
        docs: NDArray[np.int32],
        impacts: NDArray[np.float32],
        starts: Ints,
        rarity: Floats,
        weights: KeywordWeights,
    ) -> None:
        self.weights = weights
        self.terms = terms  # each lesson's own terms: what the index was built from
        self.size = len(terms.lengths)
        self._vocabulary = dict(zip(terms.vocabulary, range(len(terms.vocabulary)), strict=True))
        self._docs = docs  # by term: the lessons it scores, each term's run from _starts[term] to _starts[term + 1]
        self._impacts = impacts
        self._starts = starts
        self._rarity = rarity  # a term's own-text idf when it has one

    @classmethod
    def build(
        cls, lessons: Sequence[Lesson], analysed: Sequence[Sequence[str]], weights: KeywordWeights
    ) -> LessonIndex:
        """The index of these lessons, given each one's terms (keywords.terms_of)."""
        stamps = np.array([lesson.recorded_at.timestamp() for lesson in lessons], dtype=np.float64)
        links = link_numbers([lesson.link for lesson in lessons])
        return cls.of_terms(LessonTerms.of(analysed), stamps, links, weights)

    @classmethod
    def of_terms(cls, terms: LessonTerms, stamps: Floats, links: Ints, weights: KeywordWeights) -> LessonIndex:
        """The index of lessons with these terms, recorded at these times (POSIX seconds) with these link numbers."""
        size = len(terms.lengths)
        vocabulary = max(len(terms.vocabulary), 1)
        pairs = _neighbours(stamps, links, weights.context_window)  # (lesson, neighbour) positions
        docs = np.repeat(np.arange(size, dtype=np.int64), terms.lengths)
        own = _Field.of(docs, terms.numbers.astype(np.int64), np.ones(len(docs)), vocabulary)
        near = _context(own, pairs, size, vocabulary)
        own_impacts, own_idf = own.impacts(size, vocabulary, weights.k1, weights.b)
        near_impacts, near_idf = near.impacts(size, vocabulary, weights.k1, weights.b)
        merged = _Field.by_term(
            np.concatenate([own.docs, near.docs]),
            np.concatenate([own.terms, near.terms]),
            np.concatenate([own_impacts, weights.context_weight * near_impacts]),
            size,
        )
        return cls(
            terms=terms,
            docs=merged.docs.astype(np.int32),
            impacts=merged.counts.astype(np.float32),
            starts=np.searchsorted(merged.terms, np.arange(vocabulary + 1)).astype(np.int64),
            rarity=np.where(own_idf > 0, own_idf, near_idf),
            weights=weights,
        )

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The index as named arrays (see `from_arrays`)."""
        return {
            "terms": np.frombuffer("\n".join(self.terms.vocabulary).encode("utf-8"), dtype=np.uint8),
            "own_terms": self.terms.numbers,
            "own_lengths": self.terms.lengths,
            "docs": self._docs,
            "impacts": self._impacts,
            "starts": self._starts,
            "rarity": self._rarity,
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
        numbers = take(arrays, "own_terms", np.int32, (None,))
        lengths = take(arrays, "own_lengths", np.int32, (None,))
        size = len(lengths)
        docs = take(arrays, "docs", np.int32, (None,))
        impacts = take(arrays, "impacts", np.float32, docs.shape)
        starts = take(arrays, "starts", np.int64, (vocabulary + 1,))
        rarity = take(arrays, "rarity", np.float64, (vocabulary,))
        if (lengths < 0).any() or int(lengths.sum(dtype=np.int64)) != len(numbers):
            raise ValueError("the lessons' own terms do not add up")
        if len(numbers) and (int(numbers.min()) < 0 or int(numbers.max()) >= len(terms)):
            raise ValueError("a lesson's term is out of range")
        if starts[0] != 0 or starts[-1] != len(docs) or (np.diff(starts) < 0).any():
            raise ValueError("the term runs are out of order")
        if len(docs) and (int(docs.min()) < 0 or int(docs.max()) >= size):
            raise ValueError("a lesson position is out of range")
        if not (np.isfinite(impacts).all() and np.isfinite(rarity).all()):
            raise ValueError("a weight is not a number")
        own = LessonTerms(tuple(terms), numbers, lengths)
        return cls(terms=own, docs=docs, impacts=impacts, starts=starts, rarity=rarity, weights=weights)

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
