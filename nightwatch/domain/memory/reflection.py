"""Role-flavoured reflection and compaction prompts.

answers.py sends a memory prompt to the model and reads the lessons it answers with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from nightwatch.domain.memory.lesson_text import OVERVIEW_MAX
from nightwatch.domain.memory.models import CATEGORIES, DESCRIPTIONS, Flavour, ReflectionContext, flavour_for
from nightwatch.domain.models import Persona
from nightwatch.domain.quoting import as_data
from nightwatch.prompts import Prompt

# Each category and what it holds, as the reflection and extraction prompts list them.
CATEGORY_GUIDE: tuple[tuple[str, str], ...] = tuple((category, DESCRIPTIONS[category]) for category in CATEGORIES)


@dataclass(frozen=True)
class ReflectionPrompt(Prompt):
    """The prompt that asks a persona, in its role's words, for 1-3 lessons from an interaction."""

    template: ClassVar[str] = "reflection.md.j2"

    persona_name: str
    role: str
    flavour: str
    project: str
    kind: str
    topic: str
    summary: str
    outcome: str
    link: str
    max_chars: int
    overview_chars: int = OVERVIEW_MAX
    categories: tuple[tuple[str, str], ...] = CATEGORY_GUIDE

    @classmethod
    def build(cls, persona: Persona, project: str, context: ReflectionContext, max_chars: int) -> ReflectionPrompt:
        return cls(
            persona_name=persona.name,
            role=persona.role,
            flavour=flavour_for(persona.role).value,
            project=project,
            kind=context.kind,
            topic=context.topic,
            summary=context.summary,
            outcome=context.outcome,
            link=context.link or "",
            max_chars=max_chars,
        )

    def instructions_only(self) -> ReflectionPrompt:
        """The same prompt with the interaction left out: its text is what a lesson must not echo."""
        return ReflectionPrompt(
            persona_name=self.persona_name,
            role=self.role,
            flavour=self.flavour,
            project=self.project,
            kind=self.kind,
            topic="",
            summary="",
            outcome="",
            link="",
            max_chars=self.max_chars,
        )

    @classmethod
    def example(cls) -> ReflectionPrompt:
        return cls(
            persona_name="Carlos",
            role="Tech Lead / Architect",
            flavour=Flavour.TECH_LEAD.value,
            project="night-watch",
            kind="pr_review",
            topic="PR #42: move sessions to Redis",
            summary="The PR moves session storage to Redis; auth still reads the old table in two places.",
            outcome="CHANGES",
            link="https://example.slack.com/archives/C1/p1700000000",
            max_chars=400,
        )


@dataclass(frozen=True)
class CompactionItem:
    """A lesson shown to the model for compaction; its text is data inside the prompt's <memory> block."""

    text: str
    pinned: bool = False
    category: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", as_data(self.text))


@dataclass(frozen=True)
class CompactionPrompt(Prompt):
    """The prompt that asks a persona, staying in character, to condense its memory to its most useful lessons."""

    template: ClassVar[str] = "compaction.md.j2"

    persona_name: str
    role: str
    flavour: str
    project: str
    target: int
    lessons: tuple[CompactionItem, ...]

    @classmethod
    def example(cls) -> CompactionPrompt:
        return cls(
            persona_name="Priya",
            role="QA Engineer",
            flavour=Flavour.QA.value,
            project="night-watch",
            target=50,
            lessons=(
                CompactionItem("test_login_flow is flaky on CI when the clock crosses midnight.", True, "cases"),
                CompactionItem("Payment webhooks need an idempotency test for retried deliveries.", False, "patterns"),
                CompactionItem("Payment webhook retries must be covered by an idempotency test."),
            ),
        )
