"""Role-flavoured reflection and compaction prompts, and how a memory prompt is sent to the model.

The lessons a model answers with are read by answers.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory.lesson_text import OVERVIEW_MAX
from nightwatch.domain.memory.models import CATEGORIES, DESCRIPTIONS, ReflectionContext
from nightwatch.domain.models import Persona
from nightwatch.domain.quoting import as_data
from nightwatch.prompts import Prompt


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

# Each category and what it holds, as the reflection and extraction prompts list them.
CATEGORY_GUIDE: tuple[tuple[str, str], ...] = tuple((category, DESCRIPTIONS[category]) for category in CATEGORIES)


def flavour_for(role: str) -> Flavour:
    """Pick the reflection wording for a role from its text; anything unknown gets the generic wording."""
    text = " ".join(role.lower().replace("_", " ").split())
    return next((flavour for flavour, pattern in _ROLE_PATTERNS if pattern.search(text)), Flavour.GENERIC)


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


def ask(llm: LLM, purpose: Purpose, persona: Persona, prompt: str, *, topic: str, max_tokens: int) -> str:
    """Send a memory prompt to the model as the persona; LLMError propagates to the caller."""
    request = LLMRequest(
        purpose=purpose,
        system=SystemPrompt((PromptBlock(prompt),)),
        messages=(ChatMessage(role="user", content="Answer now, in the form asked for."),),
        max_tokens=max_tokens,
        model=persona.model,
        persona=persona,
        topic=topic,
    )
    return llm.complete(request).text
