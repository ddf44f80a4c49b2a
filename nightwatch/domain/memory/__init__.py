"""Memory: each persona's lessons per project, as a markdown document a person can read and edit.

The service reads memory for a turn, records what a reflection learned (junk guard, dedup, supersession), and keeps
the document bounded by compaction; teaching records what a person says in plain words ("remember that …", "forget
that …"); the memory tools let a persona recall and remember during its own turn. Shares open one persona's
knowledge of a project to teammates, read-only, as a shared block in their prompts. Pinned context (pins.py) keeps
the documents a person pinned for a persona and packs them into a block of their own. Other rooms use the names
below, not the modules behind them.
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
from nightwatch.domain.memory.pin_block import PackedPin, PinBlock, PinsSection, cut_marker, label_of, stale_note
from nightwatch.domain.memory.pin_inputs import (
    EVERY_PERSONA,
    PIN_PATH_MAX,
    PIN_TEXT_MAX,
    PIN_URL_MAX,
    PINS_MAX,
    pin_source,
    snapshot_hash,
    validate_pin_id,
    validate_pin_path,
    validate_pin_text,
    validate_pin_url,
)
from nightwatch.domain.memory.pins import PinOutcome, PinService, PinView
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
    "EVERY_PERSONA",
    "LESSON_MAX",
    "MAX_TOOL_CALLS",
    "PINS_MAX",
    "PIN_PATH_MAX",
    "PIN_TEXT_MAX",
    "PIN_URL_MAX",
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
    "PackedPin",
    "PinBlock",
    "PinOutcome",
    "PinService",
    "PinView",
    "PinsSection",
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
    "cut_marker",
    "describe",
    "flavour_for",
    "is_duplicate",
    "label_of",
    "line_cost",
    "may_forget",
    "may_teach",
    "memory_tool_specs",
    "merge_imported",
    "orphans",
    "parse_teaching",
    "pin_source",
    "read_teaching",
    "snapshot_hash",
    "stale_note",
    "unread_summary",
    "validate_lesson",
    "validate_lesson_id",
    "validate_pin_id",
    "validate_pin_path",
    "validate_pin_text",
    "validate_pin_url",
    "validate_query",
    "validate_receiver",
    "validate_search_limit",
    "validate_share_content",
]
