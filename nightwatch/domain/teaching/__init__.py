"""Teaching in plain words: "remember that ..." and "forget that ..." understood from a thread."""

from nightwatch.domain.teaching.intent import Intent, Teaching, TeachingPrompt, may_teach, read_teaching
from nightwatch.domain.teaching.phrases import parse_teaching
from nightwatch.domain.teaching.service import TAUGHT, Match, Nearest, Taught, TeachingService, may_forget

__all__ = [
    "TAUGHT",
    "Intent",
    "Match",
    "Nearest",
    "Taught",
    "Teaching",
    "TeachingPrompt",
    "TeachingService",
    "may_forget",
    "may_teach",
    "parse_teaching",
    "read_teaching",
]
