"""Memory: each persona's lessons per project, as a markdown document a person can read and edit.

Each lesson has an abstract (the bullet, injected into prompts), an overview (shown to people) and a category that
decides how curation treats it. `MemoryService` reads memory for a turn (the block, ranked and fitted to a token
budget), records what a reflection or an extraction learned (junk guard, dedup, supersession, the categories' rules),
and keeps the document bounded by compaction; `MemoryTools` let a persona recall and remember during its own turn;
`MemoryTransfer` moves whole documents in and out for a person. Where memory is kept is the room's port
(`memory.ports`), its values are `memory.models`; other rooms use those and the names below, not the modules
behind them.
"""

from nightwatch.domain.memory.cache import line_cost
from nightwatch.domain.memory.curation import LessonSuccession, is_duplicate
from nightwatch.domain.memory.document import new_document, unread_summary
from nightwatch.domain.memory.format import CLI_AUTHOR, Merged, lesson_id, merge_imported
from nightwatch.domain.memory.lesson_text import (
    QUERY_MAX,
    SEARCH_MAX,
    is_lesson_id,
    validate_lesson,
    validate_lesson_id,
    validate_query,
    validate_search_limit,
)
from nightwatch.domain.memory.models import (
    CATEGORIES,
    DESCRIPTIONS,
    LESSON_MAX,
    MEMORY,
    Flavour,
    MemoryBlockPrompt,
    MemoryPolicy,
    MemoryReading,
    MemorySection,
    MemorySource,
    Remembered,
    flavour_for,
    memory_part,
    memory_section,
    validate_category,
)
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.memory.tools import (
    FORGET_TOOL,
    MAX_TOOL_CALLS,
    RECALL_TOOL,
    REMEMBER_TOOL,
    MemoryTools,
    MemoryTransfer,
    ToolMemory,
    ToolOutcome,
    memory_tool_specs,
)
from nightwatch.domain.memory.writing import Retried, orphans
from nightwatch.domain.models import Category

__all__ = [
    "CATEGORIES",
    "CLI_AUTHOR",
    "DESCRIPTIONS",
    "FORGET_TOOL",
    "LESSON_MAX",
    "MAX_TOOL_CALLS",
    "MEMORY",
    "QUERY_MAX",
    "RECALL_TOOL",
    "REMEMBER_TOOL",
    "SEARCH_MAX",
    "Category",
    "Flavour",
    "LessonSuccession",
    "MemoryBlockPrompt",
    "MemoryPolicy",
    "MemoryReading",
    "MemorySection",
    "MemoryService",
    "MemorySource",
    "MemoryTools",
    "MemoryTransfer",
    "Merged",
    "Remembered",
    "Retried",
    "ToolMemory",
    "ToolOutcome",
    "flavour_for",
    "is_duplicate",
    "is_lesson_id",
    "lesson_id",
    "line_cost",
    "memory_part",
    "memory_section",
    "memory_tool_specs",
    "merge_imported",
    "new_document",
    "orphans",
    "unread_summary",
    "validate_category",
    "validate_lesson",
    "validate_lesson_id",
    "validate_query",
    "validate_search_limit",
]
