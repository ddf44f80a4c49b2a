"""Memory: each persona's lessons per project, as a markdown document a person can read and edit.

The service reads memory for a turn, records what a reflection learned (junk guard, dedup, supersession), and keeps
the document bounded by compaction. Other rooms use the names below, not the modules behind them.
"""

from nightwatch.domain.memory.cache import line_cost
from nightwatch.domain.memory.curation import is_duplicate
from nightwatch.domain.memory.pending import Retried, orphans
from nightwatch.domain.memory.reflection import Flavour, flavour_for
from nightwatch.domain.memory.service import MemoryBlockPrompt, MemoryPolicy, MemoryService

__all__ = [
    "Flavour",
    "MemoryBlockPrompt",
    "MemoryPolicy",
    "MemoryService",
    "Retried",
    "flavour_for",
    "is_duplicate",
    "line_cost",
    "orphans",
]
