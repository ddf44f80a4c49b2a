"""An inverted index over one set of lessons, scoring a query with BM25 over two fields.

The `text` field is the lesson itself. The `context` field is the text of the lessons recorded beside it in the same
interaction (same time and link, near it in the file): a lesson such as "Yes, and it failed again on Friday" says
little alone, and its neighbours say what "it" is. Context counts for less than the lesson's own words.

Built once per lesson set (Recall caches it). Each term's posting list already holds both fields' weighted BM25
impact for each lesson, so a query only adds up the postings of its own terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nightwatch.domain.models import Lesson


@dataclass(frozen=True)
class KeywordWeights:
    """BM25 parameters and field weights (measured with bench/retrieval.py)."""

    k1: float = 1.2
    b: float = 0.75
    context_weight: float = 0.5  # a neighbour's words count half as much as the lesson's own
    context_window: int = 2  # neighbours on each side that lend their words as context
    query_saturation: float = 2.0  # a term repeated in a long query counts at most this many times
    max_query_terms: int = 32  # a long query (a whole thread) keeps its most telling terms: read time stays flat


def _field_weights(docs: Sequence[Counter[str]], k1: float, b: float) -> tuple[list[dict[str, float]], Counter[str]]:
    """Each doc's saturated BM25 term weights in one field, and each term's document frequency there."""
    lengths = [sum(doc.values()) for doc in docs]
    average = (sum(lengths) / len(lengths)) if lengths and sum(lengths) else 1.0
    weights = []
    frequency: Counter[str] = Counter()
    for doc, length in zip(docs, lengths, strict=True):
        norm = k1 * (1.0 - b + b * length / average)
        weights.append({term: tf * (k1 + 1.0) / (tf + norm) for term, tf in doc.items()})
        frequency.update(doc.keys())
    return weights, frequency


def _idf(frequency: Counter[str], total: int) -> dict[str, float]:
    return {term: math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}


def _neighbours(lessons: Sequence[Lesson], window: int) -> list[list[int]]:
    """For each lesson, the positions of lessons near it that were recorded in the same interaction."""
    found: list[list[int]] = []
    for i, lesson in enumerate(lessons):
        near = [
            j
            for j in range(max(0, i - window), min(len(lessons), i + window + 1))
            if j != i and lessons[j].recorded_at == lesson.recorded_at and lessons[j].link == lesson.link
        ]
        found.append(near)
    return found


class LessonIndex:
    """Per term, the lessons it occurs in (or near) and its weighted impact there; built once per lesson set."""

    def __init__(self, lessons: Sequence[Lesson], analysed: Sequence[Sequence[str]], weights: KeywordWeights) -> None:
        self.weights = weights
        self.size = len(lessons)
        self.neighbours = _neighbours(lessons, weights.context_window)
        own = [Counter(doc) for doc in analysed]
        context: list[Counter[str]] = []
        for near in self.neighbours:
            merged: Counter[str] = Counter()
            for j in near:
                merged.update(own[j])
            context.append(merged)
        own_weights, own_frequency = _field_weights(own, weights.k1, weights.b)
        near_weights, near_frequency = _field_weights(context, weights.k1, weights.b)
        own_idf, near_idf = _idf(own_frequency, self.size), _idf(near_frequency, self.size)
        self._rarity = {**near_idf, **own_idf}  # a term's own-text idf when it has one
        self._postings: dict[str, tuple[list[int], list[float]]] = {}
        share = weights.context_weight
        for number, (mine, nearby) in enumerate(zip(own_weights, near_weights, strict=True)):
            impacts = {term: weight * own_idf[term] for term, weight in mine.items()}
            for term, weight in nearby.items():
                impacts[term] = impacts.get(term, 0.0) + share * weight * near_idf[term]
            for term, impact in impacts.items():
                numbers, values = self._postings.setdefault(term, ([], []))
                numbers.append(number)
                values.append(impact)

    def scores(self, query_terms: Iterable[str]) -> list[float]:
        """Relevance of each lesson (by position) to the query; 0.0 where they share no term."""
        result = [0.0] * self.size
        for term, repeat in self._telling_terms(query_terms):
            numbers, impacts = self._postings[term]
            if repeat == 1.0:
                for number, impact in zip(numbers, impacts, strict=True):
                    result[number] += impact
            else:
                for number, impact in zip(numbers, impacts, strict=True):
                    result[number] += impact * repeat
        return result

    def _telling_terms(self, query_terms: Iterable[str]) -> list[tuple[str, float]]:
        """The query's known terms with their (saturated) repeat counts, rarest first, at most max_query_terms."""
        saturation = self.weights.query_saturation
        known = [
            (term, min(float(count), saturation))
            for term, count in Counter(query_terms).items()
            if term in self._rarity
        ]
        known.sort(key=lambda pair: -pair[1] * self._rarity[pair[0]])
        return known[: self.weights.max_query_terms]
