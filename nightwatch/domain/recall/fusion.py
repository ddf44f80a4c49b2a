"""Fusion: keyword relevance and meaning relevance made into one score per lesson, plus recency and use.

Keywords: BM25 over the best lesson's score, or over `keyword_evidence` when even the best is weak, so a query whose
words match nothing well (a paraphrase) leaves keywords a small share instead of crowning a lesson that shares one
common word. Meaning: cosine above a small floor, over the best lesson's. The two are mixed in fixed shares;
recency and use are small shares that order lessons the query cannot tell apart.

Chosen with bench/tune_recall.py on the "tune" halves of LoCoMo and of bench/data/persona_lessons.jsonl, over
meaning shares 0.35-0.7, evidence 0-16, floors 0.05-0.25, a share of the neighbours' cosines (0-0.3: it helped
LoCoMo a little and hurt the persona lessons) and scaling meaning by a perfect match instead of the best lesson.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.recall.index import KeywordWeights

Scores = NDArray[np.float32]


@dataclass(frozen=True)
class RecallWeights:
    """How the parts of a score combine."""

    keyword: KeywordWeights = field(default_factory=KeywordWeights)
    meaning: float = 0.45  # share of meaning in relevance when lessons have vectors
    keyword_evidence: float = 12.0  # BM25 score below which keyword relevance is scaled down, not up to 1
    meaning_floor: float = 0.05  # cosine at or below which meaning adds nothing
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


def meaning_part(cosines: Scores, present: NDArray[np.bool_], weights: RecallWeights) -> Scores:
    """Cosines above the floor over the best one (0 where a lesson has no vector)."""
    lifted = np.clip(cosines - np.float32(weights.meaning_floor), 0.0, None) * present
    best = float(lifted.max(initial=0.0))
    scaled: Scores = (lifted / np.float32(best) if best > 0 else lifted).astype(np.float32)
    return scaled


def fuse(keyword: Scores, meaning: Scores | None, weights: RecallWeights) -> Relevance:
    """The relevance of each lesson: keywords alone without vectors, else the weighted mix."""
    if meaning is None:
        return Relevance(keyword, np.zeros_like(keyword), keyword)
    share = np.float32(weights.meaning)
    return Relevance(keyword, meaning, (np.float32(1.0) - share) * keyword + share * meaning)
