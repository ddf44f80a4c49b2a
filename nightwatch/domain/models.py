"""Domain values: frozen, typed dataclasses. Times are timezone-aware UTC."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from types import MappingProxyType

from nightwatch.domain.tool_use import ToolCall, ToolRound, ToolSpec, ToolTrace


def _frozen_map(value: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


# --- personas ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Soul:
    """Who a persona is: the stable core of its system prompt."""

    who_i_am: str = ""
    worldview: tuple[str, ...] = ()
    opinions: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    expertise: tuple[str, ...] = ()
    interests: tuple[str, ...] = ()
    tensions: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()
    pet_peeves: tuple[str, ...] = ()


@dataclass(frozen=True)
class Style:
    """How a persona speaks."""

    voice_principles: tuple[str, ...] = ()
    sentence_structure: str = ""
    tone: str = ""
    words_used: tuple[str, ...] = ()
    words_avoided: tuple[str, ...] = ()
    emoji_usage: str = ""
    rhetorical_moves: tuple[str, ...] = ()
    anti_patterns: tuple[str, ...] = ()
    good_examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skill:
    """What a persona does in each interaction mode (pr_review, incident, proactive, deliberation, ...)."""

    modes: Mapping[str, str] = field(default_factory=_frozen_map)
    additional_instructions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Persona:
    """An AI team member. `slug` names its memory folder and is derived from `name`."""

    name: str
    slug: str
    role: str
    avatar: str = ""
    soul: Soul = field(default_factory=Soul)
    style: Style = field(default_factory=Style)
    skill: Skill = field(default_factory=Skill)
    model: str | None = None
    system_prompt_override: str | None = None
    active: bool = True
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: int | None = None


# --- memory ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lesson:
    """One remembered bullet. `id` is a short hash of the normalised text only (see memory.format.lesson_id).

    `author` says which person wrote it (a Slack user id, or "cli" for the command line); None when the persona
    recorded it itself.
    """

    id: str
    text: str
    recorded_at: datetime
    kind: str = "note"
    link: str | None = None
    pinned: bool = False
    seen: int = 1
    injected: int = 0
    superseded_by: str | None = None
    author: str | None = None

    @property
    def stale(self) -> bool:
        return self.superseded_by is not None


@dataclass(frozen=True)
class UnreadLine:
    """A line of a memory file that could not be read as a lesson or as structure: kept as written, reported."""

    number: int  # 1-based, as an editor counts
    text: str


@dataclass(frozen=True)
class MemoryBlock:
    """The lessons chosen for one prompt, already rendered; `text` is empty when there is nothing to inject."""

    lessons: tuple[Lesson, ...] = ()
    text: str = ""
    tokens: int = 0
    total_lessons: int = 0

    @property
    def empty(self) -> bool:
        return not self.lessons


@dataclass(frozen=True)
class ReflectionContext:
    """What happened in an interaction, handed to a persona's reflection."""

    kind: str
    topic: str
    summary: str
    outcome: str = ""
    link: str | None = None


@dataclass(frozen=True)
class PendingLesson:
    """A lesson a memory write could not store, kept (with why) until a retry writes it; slugs, not names."""

    persona: str  # the persona's slug, as its memory folder is named
    project: str  # a project slug
    text: str
    kind: str  # of the interaction it came from, as its dated section names it
    day: date  # of the interaction: a retry files it under this day, not the day of the retry
    link: str | None
    error: str  # why the latest attempt failed, for a person
    kept_at: datetime
    id: int | None = None
    author: str | None = None  # who wrote it, when a person did (see Lesson.author)


class ShareContent(StrEnum):
    """What a share opens to its receiver: the sharer's lessons, its pinned documents, or both."""

    LESSONS = "lessons"
    PINS = "pins"
    ALL = "all"

    def covers(self, kind: ShareContent) -> bool:
        """Whether this share includes `kind` (LESSONS or PINS)."""
        return self is ShareContent.ALL or self is kind


@dataclass(frozen=True)
class Share:
    """One persona's knowledge of one project, opened read-only to another persona or to every persona.

    Personas are named by database id, so a rename changes nothing here. `receiver_id` None means every persona,
    ones created later included (stored as such, never expanded into one share per persona).
    """

    sharer_id: int
    receiver_id: int | None
    project: str  # a slug
    what: ShareContent
    created_at: datetime | None = None


@dataclass(frozen=True)
class CompactionResult:
    lines_before: int
    lines_after: int
    compacted: bool
    message: str


# --- pinned context ----------------------------------------------------------------------------------------------


class PinKind(StrEnum):
    """Where a pin's content comes from: a file on the server, a web page, or text a person typed."""

    FILE = "file"
    URL = "url"
    TEXT = "text"


class PinStatus(StrEnum):
    """Whether a pin's source could be read the last time it was looked at."""

    OK = "ok"
    MISSING = "missing"  # the file is gone; the last content read is kept, marked stale
    UNREADABLE = "unreadable"  # the file is there but cannot be pinned now (see Pin.problem); last content kept


@dataclass(frozen=True)
class Pin:
    """A document pinned to a persona's prompt for one project (pinned context; not a pinned lesson).

    `persona_id` names the persona by its database id, so a rename keeps its pins; None pins it for every persona of
    the project. `source` is the file's absolute path, the page's URL, or a text pin's title (its first words).
    `content` is the snapshot injected into prompts (redacted); `stamp` identifies the version of a file it was read
    from, compared with the file on disk before every turn.
    """

    persona_id: int | None
    project: str  # a slug
    kind: PinKind
    source: str
    content: str
    content_hash: str
    read_at: datetime
    added_by: str  # "cli" or the Slack user id of who pinned it
    status: PinStatus = PinStatus.OK
    status_since: datetime | None = None  # when the status last changed (a missing file: when it went missing)
    problem: str | None = None  # why the source cannot be read, for a person; None when status is OK
    stamp: str | None = None
    created_at: datetime | None = None
    id: int | None = None

    @property
    def shared(self) -> bool:
        """Whether every persona of the project gets this pin."""
        return self.persona_id is None


# --- LLM -------------------------------------------------------------------------------------------------------


class Purpose(StrEnum):
    """Why a model is called; adapters may choose limits by it and the offline model shapes its answer by it."""

    TURN = "turn"
    CONSENSUS = "consensus"
    REFLECTION = "reflection"
    COMPACTION = "compaction"
    SUMMARY = "summary"
    PROACTIVE = "proactive"
    CURATION = "curation"
    TEACHING = "teaching"  # does a message ask to remember or forget something?


@dataclass(frozen=True)
class PromptBlock:
    """A piece of the system prompt; `cache` marks the end of a stable prefix worth caching."""

    text: str
    cache: bool = False


@dataclass(frozen=True)
class SystemPrompt:
    blocks: tuple[PromptBlock, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(block.text for block in self.blocks if block.text)


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True)
class LLMRequest:
    purpose: Purpose
    system: SystemPrompt
    messages: tuple[ChatMessage, ...]
    max_tokens: int = 400
    model: str | None = None
    persona: Persona | None = None
    topic: str = ""
    tools: tuple[ToolSpec, ...] = ()  # tools the model may call (see tool_use.py)
    tool_rounds: tuple[ToolRound, ...] = ()  # the calls made so far and their results, after `messages`
    answer_now: bool = False  # the tools stay defined, but the model must answer in text without calling one


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class LLMResponse:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    offline: bool = False
    tool_calls: tuple[ToolCall, ...] = ()  # the model asks for these before it answers; `text` may then be ''


# --- deliberation ----------------------------------------------------------------------------------------------


class Decision(StrEnum):
    APPROVE = "APPROVE"
    CHANGES = "CHANGES"
    HUMAN = "HUMAN"


class DeliberationStatus(StrEnum):
    RUNNING = "running"
    DONE = "done"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


@dataclass(frozen=True)
class ThreadMessage:
    """A message seen in the thread: by a human (`persona` None) or by a persona."""

    author: str
    text: str
    persona: str | None = None
    ts: str = ""


@dataclass(frozen=True)
class Turn:
    persona: str  # persona name
    role: str
    text: str
    round: int
    lessons_injected: int = 0
    skipped: bool = False
    usage: Usage = field(default_factory=Usage)
    created_at: datetime | None = None
    pins_injected: int = 0  # pinned documents in its prompt (not stored: 0 in turns read back from the log)
    tool_calls: tuple[ToolTrace, ...] = ()  # kept in memory for the caller; the deliberation log does not store them


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    summary: str
    reasons: tuple[str, ...] = ()
    action_items: tuple[str, ...] = ()


@dataclass(frozen=True)
class RememberedLesson:
    persona: str
    lesson: Lesson


@dataclass(frozen=True)
class Deliberation:
    """A stored deliberation (header only; turns are stored beside it)."""

    topic: str
    project: str
    thread: str  # "channel:thread_ts" for Slack, "terminal:<id>" for the CLI
    status: DeliberationStatus = DeliberationStatus.RUNNING
    started_at: datetime | None = None
    finished_at: datetime | None = None
    verdict: Verdict | None = None
    usage: Usage = field(default_factory=Usage)
    id: int | None = None
    owner: str | None = None  # the process that runs it (see ports.Liveness); None in rows from before owners
    # The owner's lease, renewed while it runs; None for deliberations no other process can take over (the CLI's).
    heartbeat_at: datetime | None = None
    takeovers: int = 0  # how many times another process took it over (see deliberation/takeover.py)
