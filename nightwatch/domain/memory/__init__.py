"""Memory: each persona's lessons per project, as a markdown document a person can read and edit.

The service reads memory for a turn, records what a reflection learned (junk guard, dedup, supersession), and keeps
the document bounded by compaction; the memory tools let a persona recall and remember during its turn. Other rooms
use the names below, not the modules behind them.
"""

from nightwatch.domain.memory.cache import line_cost
from nightwatch.domain.memory.curation import is_duplicate
from nightwatch.domain.memory.format import CLI_AUTHOR
from nightwatch.domain.memory.inputs import (
    LESSON_MAX,
    QUERY_MAX,
    SEARCH_MAX,
    validate_lesson,
    validate_lesson_id,
    validate_query,
    validate_search_limit,
)
from nightwatch.domain.memory.pending import Retried, orphans
from nightwatch.domain.memory.reflection import Flavour, flavour_for
from nightwatch.domain.memory.service import MemoryBlockPrompt, MemoryPolicy, MemoryService
from nightwatch.domain.memory.tools import (
    MAX_TOOL_CALLS,
    RECALL_TOOL,
    REMEMBER_TOOL,
    MemoryTools,
    ToolMemory,
    ToolOutcome,
    memory_tool_specs,
)
from nightwatch.domain.memory.transfer import MemoryTransfer, Merged, merge_imported
from nightwatch.domain.memory.unread import unread_summary

__all__ = [
    "CLI_AUTHOR",
    "LESSON_MAX",
    "MAX_TOOL_CALLS",
    "QUERY_MAX",
    "RECALL_TOOL",
    "REMEMBER_TOOL",
    "SEARCH_MAX",
    "Flavour",
    "MemoryBlockPrompt",
    "MemoryPolicy",
    "MemoryService",
    "MemoryTools",
    "MemoryTransfer",
    "Merged",
    "Retried",
    "ToolMemory",
    "ToolOutcome",
    "flavour_for",
    "is_duplicate",
    "line_cost",
    "memory_tool_specs",
    "merge_imported",
    "orphans",
    "unread_summary",
    "validate_lesson",
    "validate_lesson_id",
    "validate_query",
    "validate_search_limit",
]
