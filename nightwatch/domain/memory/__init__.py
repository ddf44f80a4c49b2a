"""Memory: each persona's lessons per project, as a markdown document a person can read and edit.

The service reads memory for a turn, records what a reflection learned (junk guard, dedup, supersession), and keeps
the document bounded by compaction; teaching records what a person says in plain words ("remember that …", "forget
that …"); the memory tools let a persona recall and remember during its own turn. Shares open one persona's
knowledge of a project to teammates, read-only, as a shared block in their prompts. Other rooms use the names below,
not the modules behind them.
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
from nightwatch.domain.memory.shared_block import SharedBlock, SharedItem
from nightwatch.domain.memory.shares import (
    EVERYONE,
    SHARED_TOKEN_BUDGET,
    ShareOutcome,
    ShareView,
    SharingService,
    describe,
    validate_receiver,
    validate_share_content,
)
from nightwatch.domain.memory.teaching import Intent, Teaching, TeachingPrompt, may_teach, read_teaching
from nightwatch.domain.memory.teaching_phrases import parse_teaching
from nightwatch.domain.memory.teaching_service import TAUGHT, Match, Nearest, Taught, TeachingService, may_forget
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
    "EVERYONE",
    "LESSON_MAX",
    "MAX_TOOL_CALLS",
    "QUERY_MAX",
    "RECALL_TOOL",
    "REMEMBER_TOOL",
    "SEARCH_MAX",
    "SHARED_TOKEN_BUDGET",
    "TAUGHT",
    "Flavour",
    "Intent",
    "Match",
    "MemoryBlockPrompt",
    "MemoryPolicy",
    "MemoryService",
    "MemoryTools",
    "MemoryTransfer",
    "Merged",
    "Nearest",
    "Retried",
    "ShareOutcome",
    "ShareView",
    "SharedBlock",
    "SharedItem",
    "SharingService",
    "Taught",
    "Teaching",
    "TeachingPrompt",
    "TeachingService",
    "ToolMemory",
    "ToolOutcome",
    "describe",
    "flavour_for",
    "is_duplicate",
    "line_cost",
    "may_forget",
    "may_teach",
    "memory_tool_specs",
    "merge_imported",
    "orphans",
    "parse_teaching",
    "read_teaching",
    "unread_summary",
    "validate_lesson",
    "validate_lesson_id",
    "validate_query",
    "validate_receiver",
    "validate_search_limit",
    "validate_share_content",
]
