"""An inverted index over one set of lessons, scoring a query with BM25 over two fields.

The `text` field is the lesson itself. The `context` field is the text of the lessons recorded beside it in the same
interaction (same time and link, next to it in the file): a lesson such as "Yes, and it failed again on Friday"
says little alone, and its neighbours say what "it" is. Context counts for less than the lesson's own words.

Built once per lesson set (the caller caches it); a query then touches only the postings of its own terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nightwatch.domain.keywords import terms
from nightwatch.domain.models import Lesson


@dataclass(frozen=True)
class KeywordWeights:
    """BM25 parameters and field weights. Defaults were tuned on conversational memory (see bench/retrieval.py)."""

    k1: float = 1.2
    b: float = 0.75
    context_weight: float = 0.3
    context_window: int = 1  # neighbours on each side that lend their words as context
    query_saturation: float = 2.0  # a term repeated in a long query counts for at most this many times


Postings = dict[str, list[tuple[int, float]]]


def _bm25_postings(docs: Sequence[Sequence[str]], k1: float, b: float) -> tuple[Postings, dict[str, float]]:
    """Per term, (doc number, saturated term-frequency weight) pairs and the term's idf."""
    lengths = [len(doc) for doc in docs]
    average = (sum(lengths) / len(lengths)) if lengths and sum(lengths) else 1.0
    postings: Postings = {}
    for number, doc in enumerate(docs):
        norm = k1 * (1.0 - b + b * lengths[number] / average)
        for term, tf in Counter(doc).items():
            postings.setdefault(term, []).append((number, tf * (k1 + 1.0) / (tf + norm)))
    total = len(docs)
    idf = {term: math.log(1.0 + (total - len(p) + 0.5) / (len(p) + 0.5)) for term, p in postings.items()}
    return postings, idf


def _neighbours(lessons: Sequence[Lesson], window: int) -> list[list[int]]:
    """For each lesson, the positions of lessons next to it recorded in the same interaction."""
    found: list[list[int]] = []
    for i, lesson in enumerate(lessons):
        near: list[int] = []
        for j in range(max(0, i - window), min(len(lessons), i + window + 1)):
            other = lessons[j]
            if j != i and other.recorded_at == lesson.recorded_at and other.link == lesson.link:
                near.append(j)
        found.append(near)
    return found


class LessonIndex:
    """BM25 postings for the lessons' own text and for their context, built once."""

    def __init__(self, lessons: Sequence[Lesson], weights: KeywordWeights, analysed: Sequence[list[str]]) -> None:
        self.weights = weights
        self.size = len(lessons)
        self._text, self._text_idf = _bm25_postings(analysed, weights.k1, weights.b)
        context_docs = [
            [term for j in near for term in analysed[j]] for near in _neighbours(lessons, weights.context_window)
        ]
        self._context, self._context_idf = _bm25_postings(context_docs, weights.k1, weights.b)

    def scores(self, query_terms: Iterable[str]) -> dict[int, float]:
        """Lesson position -> relevance for the query; lessons sharing no term with it are absent."""
        saturation = self.weights.query_saturation
        counts = Counter(query_terms)
        result: dict[int, float] = {}
        get = result.get
        for term, count in counts.items():
            qweight = min(float(count), saturation)
            self._accumulate(result, get, self._text.get(term), self._text_idf.get(term, 0.0) * qweight)
            if self.weights.context_weight:
                factor = self._context_idf.get(term, 0.0) * qweight * self.weights.context_weight
                self._accumulate(result, get, self._context.get(term), factor)
        return result

    @staticmethod
    def _accumulate(result: dict[int, float], get: object, postings: list[tuple[int, float]] | None, factor: float) -> None:
        if not postings or factor <= 0.0:
            return
        for number, weight in postings:
            result[number] = result.get(number, 0.0) + weight * factor


def analyse(lessons: Sequence[Lesson]) -> list[list[str]]:
    """The index terms of each lesson's text."""
    return [terms(lesson.text) for lesson in lessons]
