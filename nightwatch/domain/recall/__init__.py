"""Recall: which lessons matter for a topic, and which of them fit a token budget.

A keyword index (BM25 over stemmed terms) scored with recency and use, then packed under the budget.
"""

from nightwatch.domain.recall.keywords import STOP_WORDS, terms
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.recall.stemmer import stem

__all__ = ["STOP_WORDS", "Recall", "stem", "terms"]
