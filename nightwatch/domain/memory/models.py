"""Memory's values: unread lines, the block a turn carries, a reflection's context, held lessons, compactions, and
what recording a lesson did."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from nightwatch.domain.models import Category, Lesson, ThreadMessage


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
