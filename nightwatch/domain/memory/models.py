"""Memory's values: what a lesson is about, the wording a role reflects in, unread lines, the block a turn carries,
a reflection's context, held lessons, compactions.

What a lesson is about: six categories, after the layered memory design in the seeds. The category decides how
curation treats a new lesson close to an old one: `events` and `cases` always stand alone (each happened once),
`profile` and `preferences` merge into the entry they update, and `entities` and `patterns` follow the
meaning-based rule every lesson had before categories.

The memory block a turn's system prompt carries has a template context of its own (the soul compiler puts its own
heading above it): each lesson is its abstract, one line, made data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import ClassVar, Final, get_args

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.models import Category, Lesson, ThreadMessage  # Category is declared beside Lesson
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


def of_category(lessons: Sequence[Lesson], category: Category | None) -> list[Lesson]:
    """The lessons of `category` (every one when it is None); InvalidInputError for a name that is no category."""
    kind = validate_category(category) if category is not None else None
    return [lesson for lesson in lessons if kind is None or lesson.category == kind]
