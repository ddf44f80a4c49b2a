"""Lessons held for review: taught by someone who may not teach, or reading as an instruction to the model.

A lesson taught in a thread or with `/nightwatch remember` is injected into every later prompt of its persona, so
one planted "lesson" could steer decisions for good. Two screens stop that: who taught it (the entry point says
whether they may teach; see NIGHTWATCH_TEACHERS), and what it says (`reads_as_instruction`: words addressed to the
model, or telling it to approve, ignore, skip a review or never flag). A lesson either screen stops is held, not
recorded; an admin approves it (then it is recorded, as its teacher taught it) or drops it.
"""

from __future__ import annotations

import builtins
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from nightwatch.domain.errors import NotFoundError
from nightwatch.domain.memory import MemoryService, validate_lesson
from nightwatch.domain.models import Category, Lesson, Persona
from nightwatch.domain.ports import Clock


class Reason(StrEnum):
    """Why a lesson waits for an admin."""

    TEACHER = "taught by someone who is not one of the teachers"
    INSTRUCTION = "it reads as an instruction to the model"


@dataclass(frozen=True)
class HeldLesson:
    """A lesson waiting for an admin: for which persona (by id, so a rename keeps it) and project, from whom."""

    persona_id: int
    persona: str  # the persona's name when the lesson was held (shown; the id is what counts)
    project: str
    text: str
    reason: Reason
    held_at: datetime
    author: str | None = None
    link: str | None = None
    kind: str = "manual"
    category: Category | None = None
    id: int | None = None


class HeldLessons(Protocol):
    """Where held lessons wait; every replica sees the same ones."""

    def hold(self, lesson: HeldLesson) -> HeldLesson:
        """Store it; returns it with its id."""
        ...

    def list(self) -> builtins.list[HeldLesson]:
        """Every held lesson, oldest first."""
        ...

    def take(self, held_id: int) -> HeldLesson | None:
        """Remove the lesson and return it; None when it is gone (another admin took it first)."""
        ...


_WORD = r"(?:a |an |the |any |all |every |your |its |their |our |this |that |these |those |such |previous |prior )*"
_INSTRUCTIONS = tuple(
    re.compile(pattern)
    for pattern in (
        r"\b(?:ignore|disregard|override|bypass)\b",
        r"\bforget (?:all|everything|your|previous|prior|the above)\b",
        r"\balways (?:approve|accept|merge|pass|allow|trust|say yes|sign off|lgtm|green[- ]?light|ship)\b",
        r"\b(?:never|don't|do not|must not|should not|shouldn't) (?:flag|block|reject|question|report|raise|escalate|"
        r"mention|refuse|deny|warn|object|comment on|look at|check|scan|audit|review)\b",
        r"\b(?:skip|skips|skipping|waive|waives|omit|omits|disable|disables|drop|drops)\s+" + _WORD
        + r"(?:security |code |human )?(?:review|reviews|check|checks|scan|scans|audit|audits|approval|approvals)\b",
        r"\b(?:never|no longer|don't|do not|doesn't|does not) (?:needs?|requires?|gets?) " + _WORD
        + r"(?:security |code |human )?(?:review|reviews|check|checks|scan|scans|audit|audits|approval|approvals)\b",
        r"\b(?:need|needs|require|requires) no (?:security |code |human )?(?:review|check|scan|audit|approval)s?\b",
        r"\b(?:review|reviews|check|checks|scan|scans|audit|audits|approval|approvals) (?:is|are) (?:not needed|"
        r"unnecessary|optional|not required|never needed)\b",
        r"\b(?:system prompt|new instructions|your instructions|previous instructions|jailbreak|developer mode)\b",
        r"\bas an? (?:ai|assistant|language model|llm)\b",
        r"(?:^|[.!;:]\s*)(?:hey |dear |note to )?(?:assistant|ai|model|llm|claude|gpt|chatgpt|bot|night watch)s?\b"
        r"\s*[,:]",
        r"\b(?:you|the assistant|the ai|the model|the llm|the bot|claude)\s+(?:must|should|shall|will|are to|"
        r"have to|need to|are now|always|never)\b",
        r"(?:^|[.!;:]\s*)(?:you|you're|you are)\b",
        r"\bfrom now on\b",
        r"\bpretend\b|\bact as\b|\broleplay\b",
    )
)  # fmt: skip


def reads_as_instruction(text: str) -> bool:
    """Whether a lesson reads as an instruction to the model rather than a note about the team's work."""
    plain = unicodedata.normalize("NFKC", text).casefold()
    plain = "".join(char for char in plain if unicodedata.category(char) != "Cf").replace("\u2019", "'")
    plain = " ".join(plain.split())
    return any(pattern.search(plain) for pattern in _INSTRUCTIONS)


class LessonReview:
    """Screens lessons people teach, holds the ones it stops, and lets an admin approve or drop them."""

    def __init__(self, *, held: HeldLessons, memory: MemoryService, clock: Clock) -> None:
        self._held = held
        self._memory = memory
        self._clock = clock

    @staticmethod
    def screen(text: str, *, may_teach: bool) -> Reason | None:
        """Why this lesson must wait for an admin, or None to record it now."""
        if reads_as_instruction(text):
            return Reason.INSTRUCTION
        return None if may_teach else Reason.TEACHER

    def hold(
        self,
        persona: Persona,
        project: str,
        text: str,
        reason: Reason,
        *,
        author: str | None,
        link: str | None = None,
        kind: str = "manual",
        category: Category | None = None,
    ) -> HeldLesson:
        """Hold the lesson for `persona` (InvalidInputError for text no lesson may hold); nothing reaches its memory."""
        if persona.id is None:
            raise NotFoundError(f"{persona.name} is not saved yet; nothing was held.")
        lesson = HeldLesson(
            persona_id=persona.id,
            persona=persona.name,
            project=project,
            text=validate_lesson(text),
            reason=reason,
            held_at=self._clock.now(),
            author=author,
            link=link,
            kind=kind,
            category=category,
        )
        return self._held.hold(lesson)

    def pending(self) -> list[HeldLesson]:
        """Every lesson waiting for an admin, oldest first."""
        return self._held.list()

    def approve(self, held_id: int, persona: Persona) -> Lesson:
        """Record the held lesson for `persona` (the one it was held for, found by id) as its teacher taught it."""
        held = self._take(held_id)
        return self._memory.remember(
            persona, held.project, held.text, kind=held.kind, link=held.link, author=held.author, category=held.category
        )

    def drop(self, held_id: int) -> HeldLesson:
        """Let the held lesson go; nothing is recorded."""
        return self._take(held_id)

    def get(self, held_id: int) -> HeldLesson:
        """The held lesson with this id; NotFoundError when it is gone."""
        for held in self._held.list():
            if held.id == held_id:
                return held
        raise NotFoundError(f"Held lesson #{held_id} is not waiting any more (approved or dropped already).")

    def _take(self, held_id: int) -> HeldLesson:
        held = self._held.take(held_id)
        if held is None:
            raise NotFoundError(f"Held lesson #{held_id} is not waiting any more (approved or dropped already).")
        return held
