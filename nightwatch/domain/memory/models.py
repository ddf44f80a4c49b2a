"""Memory's values: what a lesson is about, the wording a role reflects in, unread lines, the block a turn carries,
a reflection's context, held lessons, compactions, and what recording a lesson did.

What a lesson is about: six categories, after the layered memory design in the seeds. The category decides how
curation treats a new lesson close to an old one: `events` and `cases` always stand alone (each happened once),
`profile` and `preferences` merge into the entry they update, and `entities` and `patterns` follow the
meaning-based rule every lesson had before categories.

The memory block a turn's system prompt carries has a template context of its own (the soul compiler puts its own
heading above it): each lesson is its abstract, one line, made data.

Memory as a context source (MemorySource): the persona's most relevant lessons for the turn, as the prompt's memory
block, laid into the system prompt with the other sources' (see domain/context.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import ClassVar, Final, Literal, Protocol, get_args

from nightwatch.domain.context import ContextAsk, ContextPart
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.models import Category, Lesson, Persona, ThreadMessage  # Category is declared beside Lesson
from nightwatch.domain.quoting import as_data
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.prompts import Prompt

CATEGORIES: Final[tuple[Category, ...]] = get_args(Category)

DESCRIPTIONS: Final[dict[Category, str]] = {
    "profile": "who the team and the project are: people, roles, ownership, the product",
    "preferences": "how the team likes things done: conventions, tools, style, process choices",
    "entities": "named things and their state: services, dependencies, versions, environments",
    "events": "something that happened once: an incident, a release, a decision taken on a date",
    "cases": "a problem and how it was solved",
    "patterns": "a reusable way of working that held more than once",
}


def validate_category(value: str) -> Category:
    """`value` as a category (case and surrounding spaces ignored), or InvalidInputError naming the six."""
    name = value.strip().lower()
    for category in CATEGORIES:
        if name == category:
            return category
    raise InvalidInputError(f"{value!r} is not a lesson category: use one of {', '.join(CATEGORIES)}.")


class Flavour(StrEnum):
    """The family of wording a role's reflection uses; the templates branch on it."""

    IMPLEMENTER = "implementer"
    TECH_LEAD = "tech_lead"
    QA = "qa"
    SECURITY = "security"
    GENERIC = "generic"


# Checked in order: a "QA lead" reflects like QA, a "security lead" like security.
_ROLE_PATTERNS: tuple[tuple[Flavour, re.Pattern[str]], ...] = (
    (Flavour.SECURITY, re.compile(r"\b(secur\w*|appsec|infosec|pen[- ]?test\w*|threat\w*|vulnerabilit\w*)\b")),
    (Flavour.QA, re.compile(r"\b(qa|quality|tests?|tester|testing|sdet)\b")),
    (Flavour.TECH_LEAD, re.compile(r"\b(tech(nical)? lead|lead|architect\w*|principal|staff engineer)\b")),
    (
        Flavour.IMPLEMENTER,
        re.compile(r"\b(implement\w*|developer|dev|programmer|coder|software engineer|(back|front)[- ]?end\w*)\b"),
    ),
)


def flavour_for(role: str) -> Flavour:
    """Pick the reflection wording for a role from its text; anything unknown gets the generic wording."""
    text = " ".join(role.lower().replace("_", " ").split())
    return next((flavour for flavour, pattern in _ROLE_PATTERNS if pattern.search(text)), Flavour.GENERIC)


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

    @classmethod
    def fitted(
        cls, chosen: Sequence[Lesson], budget: int, total: int, *, wrap: Callable[[str], str] = str
    ) -> MemoryBlock:
        """The block of `chosen` (best first) rendered, dropping the lowest-ranked lesson until it fits `budget`.

        The estimate is checked on the whole rendered block, as `wrap` lays it into the prompt (its header and
        delimiters count too). The lesson dropped is the last unpinned one, or a pinned one when nothing else is left.
        """
        kept = list(chosen)
        text = _block_text(kept)
        while kept and estimate_tokens(wrap(text)) > budget:
            unpinned = [i for i, lesson in enumerate(kept) if not lesson.pinned]
            at = unpinned[-1] if unpinned else len(kept) - 1
            kept = kept[:at] + kept[at + 1 :]
            text = _block_text(kept)
        if not kept:
            return cls(total_lessons=total)
        return cls(tuple(kept), text, estimate_tokens(text), total)


@dataclass(frozen=True)
class MemoryBlockPrompt(Prompt):
    """The lessons injected into a system prompt (the soul compiler puts its own heading above them)."""

    template: ClassVar[str] = "memory_block.md.j2"

    lessons: tuple[str, ...]

    @classmethod
    def example(cls) -> MemoryBlockPrompt:
        return cls(
            lessons=(
                "Never merge a migration without a rollback script.",
                "The auth module couples to the session store; review changes to both together.",
            )
        )


def _block_text(chosen: Sequence[Lesson]) -> str:
    """The block's text, each lesson already made data, so its tokens are counted as the prompt will carry it."""
    return MemoryBlockPrompt(lessons=tuple(as_data(lesson.text) for lesson in chosen)).render() if chosen else ""


@dataclass(frozen=True)
class ReflectionContext:
    """What happened in an interaction, handed to a persona's reflection."""

    kind: str
    topic: str
    summary: str
    outcome: str = ""
    link: str | None = None


@dataclass(frozen=True)
class Discarded:
    """A thread's older messages, folded into its summary and out of every later prompt: lessons are taken from them."""

    kind: str
    topic: str
    messages: tuple[ThreadMessage, ...]
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
    category: Category | None = None  # see Lesson.category and Lesson.overview
    overview: str | None = None


@dataclass(frozen=True)
class CompactionResult:
    lines_before: int
    lines_after: int
    compacted: bool
    message: str


Outcome = Literal["created", "merged", "superseded"]


@dataclass(frozen=True)
class Remembered:
    """What recording one lesson did: `lesson` holds it now (the new lesson, or the one it merged into);
    `replaced` is the id of the lesson it superseded (moved to the history)."""

    lesson: Lesson
    outcome: Outcome
    replaced: str | None = None

    @property
    def said(self) -> str:
        """What happened, in the words every surface uses: "created", "merged into <id>" or "superseded <id>"."""
        if self.outcome == "merged":
            return f"merged into {self.lesson.id}"
        if self.outcome == "superseded":
            return f"superseded {self.replaced}"
        return "created"


MEMORY = "memory"  # the source's name, as budgets and reports know it


@dataclass(frozen=True)
class MemorySection(Prompt):
    """The memory block: lessons inside `<memory>` … `</memory>`, introduced as notes that are never instructions.

    `lessons` must already be made safe with `as_data` (`memory_section` does it), so that only the template opens
    and closes the block.
    """

    template: ClassVar[str] = "soul_memory.md.j2"
    lessons: str

    @classmethod
    def example(cls) -> MemorySection:
        return cls(lessons="- Rotate the signing key when a maintainer leaves.\n- The CI cache hides flaky tests.")


class MemoryReading(Protocol):
    """What the source needs of the memory service: its read for a turn."""

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> MemoryBlock: ...


def memory_section(memory: MemoryBlock) -> str:
    """The memory block as the prompt carries it: its text made data (see `as_data`) inside the delimiters."""
    return section_text(memory.text)


def section_text(lessons: str) -> str:
    """Rendered lessons as the prompt carries them, header and delimiters included: what the budget is counted on."""
    return MemorySection(lessons=as_data(lessons.strip())).render()


def memory_part(memory: MemoryBlock) -> ContextPart:
    """`memory` as a turn's context: its section (none when there is nothing to say), its lessons."""
    section = memory_section(memory) if not memory.empty and memory.text.strip() else ""
    ids = tuple(lesson.id for lesson in memory.lessons)
    return ContextPart(MEMORY, section, memory, len(memory.lessons), ids)


class MemorySource:
    """The persona's memory of the project, ranked for the topic and the recent thread, under its budget."""

    name = MEMORY

    def __init__(self, memory: MemoryReading) -> None:
        self._memory = memory

    def read(self, ask: ContextAsk) -> ContextPart:
        budget = ask.budget(MEMORY)
        block = self._memory.read(ask.persona, ask.project, ask.topic, thread=ask.thread, budget=budget)
        return memory_part(block)


LESSON_MAX = 400  # most characters a lesson may have
OFFLINE_MARK = "[offline]"  # how every text of the offline model starts, a lesson it recorded included


@dataclass(frozen=True)
class MemoryPolicy:
    """Limits of one persona's memory for one project, and whether the model helps curate new lessons."""

    token_budget: int = 2000
    max_lines: int = 150
    compaction_target: int = 50
    max_lesson_chars: int = LESSON_MAX
    use_model_for_curation: bool = True
    use_model_for_compaction: bool = True  # False: the rules compact (retention.py), as without a model
    inject_offline_lessons: bool = True  # False: lessons the offline model recorded stay out of prompts
    search_similarity: float = 0.3  # cosine a search hit needs when it shares no keyword with the query


def recorded_offline(lesson: Lesson) -> bool:
    """Whether the offline model recorded this lesson (its text starts with the offline model's mark)."""
    return lesson.text.startswith(OFFLINE_MARK)
