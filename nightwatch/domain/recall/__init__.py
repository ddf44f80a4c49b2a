"""Recall: which lessons matter for a topic, and which of them fit a token budget.

Keywords (BM25 over stemmed terms) and meaning (stored lesson vectors against the query's) are fused, scored with
recency and use, then packed under the budget. Lesson vectors are made once, at write time, keyed by their text.
"""

from nightwatch.domain.recall.fusion import RecallWeights
from nightwatch.domain.recall.index import KeywordWeights, LessonIndex, LessonTerms
from nightwatch.domain.recall.keywords import STOP_WORDS, terms, terms_of
from nightwatch.domain.recall.prepared import RecallIndex, Signals
from nightwatch.domain.recall.ranking import Recall, Scored, ScoreParts, pack
from nightwatch.domain.recall.stemmer import stem

__all__ = [
    "STOP_WORDS",
    "KeywordWeights",
    "LessonIndex",
    "LessonTerms",
    "Recall",
    "RecallIndex",
    "RecallWeights",
    "ScoreParts",
    "Scored",
    "Signals",
    "pack",
    "stem",
    "terms",
    "terms_of",
]
