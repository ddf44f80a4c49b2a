"""Fusion: keyword relevance and meaning relevance made into one score per lesson, plus recency and use.

Both parts are brought to 0..1 before they are mixed, each by how strong its own evidence is, not only by the best
lesson of the query: a query whose words match nothing well (a paraphrase) leaves keywords a small share, and
a query whose meaning is far from every lesson leaves meaning a small one. Recency and use are small shares that
order lessons the query cannot tell apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.recall.index import KeywordWeights

Scores = NDArray[np.float32]


@dataclass(frozen=True)
class RecallWeights:
    """How the parts of a score combine (chosen with bench/retrieval.py on the tuning halves of its data sets)."""

    keyword: KeywordWeights = field(default_factory=KeywordWeights)
    meaning: float = 0.5  # share of meaning in relevance when lessons have vectors
    keyword_evidence: float = 6.0  # BM25 score below which keyword relevance is scaled down, not up to 1
    meaning_floor: float = 0.15  # cosine at or below which meaning adds nothing
    meaning_context: float = 0.25  # share of the neighbours' (same interaction) cosine
    meaning_relative: bool = False  # scale meaning by the query's best lesson (True) or by a perfect match
    recency: float = 0.1
    usage: float = 0.05
    injected_share: float = 0.25  # an injection says less about worth than being recorded again


@dataclass(frozen=True, eq=False)
class Relevance:
    """Each lesson's keyword and meaning relevance (0..1) and the two fused."""

    keyword: Scores
    meaning: Scores
    fused: Scores


def keyword_part(raw: Scores, weights: RecallWeights) -> Scores:
    """BM25 scores over the best one, or over `keyword_evidence` when even the best is weak."""
    scale = max(float(raw.max(initial=0.0)), weights.keyword_evidence)
    return raw / np.float32(scale) if scale > 0 else np.zeros_like(raw)


def meaning_part(cosines: Scores, context: Scores, present: NDArray[np.bool_], weights: RecallWeights) -> Scores:
    """Cosines above the floor, mixed with the neighbours', over the best one (0 where a lesson has no vector)."""
    mixed = (cosines + weights.meaning_context * context) / np.float32(1.0 + weights.meaning_context)
    lifted = np.clip(mixed - np.float32(weights.meaning_floor), 0.0, None) * present
    best = float(lifted.max(initial=0.0))
    ceiling = best if weights.meaning_relative else 1.0 - weights.meaning_floor
    return (lifted / np.float32(ceiling if ceiling > 0 else 1.0)).astype(np.float32)


def fuse(keyword: Scores, meaning: Scores | None, weights: RecallWeights) -> Relevance:
    """The relevance of each lesson: keywords alone without vectors, else the weighted mix."""
    if meaning is None:
        return Relevance(keyword, np.zeros_like(keyword), keyword)
    share = np.float32(weights.meaning)
    return Relevance(keyword, meaning, (np.float32(1.0) - share) * keyword + share * meaning)
