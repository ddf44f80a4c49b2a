"""Memory: each persona's lessons per project, as a markdown document a person can read and edit.

Each lesson has an abstract (the bullet, injected into prompts), an overview (shown to people) and a category that
decides how curation treats it. The service reads memory for a turn, records what a reflection or an extraction
learned (junk guard, dedup, supersession, the categories' rules), and keeps the document bounded by compaction;
teaching records what a person says in plain words ("remember that …", "forget that …"); the memory tools let a
persona recall and remember during its own turn. Shares open one persona's knowledge of a project to teammates,
read-only, as a shared block in their prompts. Pinned context (pins.py) keeps the documents a person pinned for a
persona and packs them into a block of their own. Other rooms use the names below, not the modules behind them.
"""

from nightwatch.domain.memory.block import MemoryBlockPrompt
from nightwatch.domain.memory.cache import line_cost
from nightwatch.domain.memory.categories import CATEGORIES, DESCRIPTIONS, Category, validate_category
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
from nightwatch.domain.memory.models import Remembered
from nightwatch.domain.memory.pending import Retried, orphans
from nightwatch.domain.memory.reflection import Flavour, flavour_for
from nightwatch.domain.memory.service import MemoryPolicy, MemoryService
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
    "CATEGORIES",
    "CLI_AUTHOR",
    "DESCRIPTIONS",
    "LESSON_MAX",
    "MAX_TOOL_CALLS",
    "QUERY_MAX",
    "RECALL_TOOL",
    "REMEMBER_TOOL",
    "SEARCH_MAX",
    "Category",
    "Flavour",
    "MemoryBlockPrompt",
    "MemoryPolicy",
    "MemoryService",
    "MemoryTools",
    "MemoryTransfer",
    "Merged",
    "Remembered",
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
    "validate_category",
    "validate_lesson",
    "validate_lesson_id",
    "validate_query",
    "validate_search_limit",
]
