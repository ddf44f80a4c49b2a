"""An inverted index over one set of lessons, scoring a query with BM25 over two fields.

The `text` field is the lesson itself. The `context` field is the text of the lessons recorded beside it in the same
interaction (same time and link, near it in the file): a lesson such as "Yes, and it failed again on Friday" says
little alone, and its neighbours say what "it" is. Context counts for less than the lesson's own words.

Built once per lesson set (Recall caches it); a query then touches only the postings of its own terms.
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


Postings = dict[str, list[tuple[int, float]]]


def _bm25_postings(docs: Sequence[Counter[str]], k1: float, b: float) -> tuple[Postings, dict[str, float]]:
    """Per term, (doc number, saturated term-frequency weight) pairs and the term's idf."""
    lengths = [sum(doc.values()) for doc in docs]
    average = (sum(lengths) / len(lengths)) if lengths and sum(lengths) else 1.0
    postings: Postings = {}
    for number, doc in enumerate(docs):
        norm = k1 * (1.0 - b + b * lengths[number] / average)
        for term, tf in doc.items():
            postings.setdefault(term, []).append((number, tf * (k1 + 1.0) / (tf + norm)))
    total = len(docs)
    idf = {term: math.log(1.0 + (total - len(p) + 0.5) / (len(p) + 0.5)) for term, p in postings.items()}
    return postings, idf


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
    """BM25 postings for the lessons' own text and for their context, built once per lesson set."""

    def __init__(self, lessons: Sequence[Lesson], analysed: Sequence[Sequence[str]], weights: KeywordWeights) -> None:
        self.weights = weights
        own = [Counter(doc) for doc in analysed]
        self._text, self._text_idf = _bm25_postings(own, weights.k1, weights.b)
        context: list[Counter[str]] = []
        for near in _neighbours(lessons, weights.context_window):
            merged: Counter[str] = Counter()
            for j in near:
                merged.update(own[j])
            context.append(merged)
        self._context, self._context_idf = _bm25_postings(context, weights.k1, weights.b)

    def scores(self, query_terms: Iterable[str]) -> dict[int, float]:
        """Lesson position -> relevance to the query; lessons sharing no term with it are absent."""
        result: dict[int, float] = {}
        for term, count in Counter(query_terms).items():
            repeat = min(float(count), self.weights.query_saturation)
            _accumulate(result, self._text.get(term), self._text_idf.get(term, 0.0) * repeat)
            context_factor = self._context_idf.get(term, 0.0) * repeat * self.weights.context_weight
            _accumulate(result, self._context.get(term), context_factor)
        return result


def _accumulate(result: dict[int, float], postings: list[tuple[int, float]] | None, factor: float) -> None:
    if not postings or factor <= 0.0:
        return
    get = result.get
    for number, weight in postings:
        result[number] = get(number, 0.0) + weight * factor
