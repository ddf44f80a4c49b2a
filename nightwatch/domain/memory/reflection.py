"""Lessons a persona takes from an interaction, in its role's words: by reflecting after it, and from a long thread's
older messages as they are summarised away (extraction, so nothing learned there is lost with their detail); and the
role-flavoured prompts that ask for them, and for a compaction.

Both ask the model as the persona, in its role's words, for at most 3 lessons in the structured form (answers.py),
put each through the junk guard (an overview that fails it is dropped, its abstract kept), and record the rest
through the same write path: curation, categories' rules, kept lessons on a storage fault. A model failure records
nothing and is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from nightwatch.domain.errors import LLMError
from nightwatch.domain.llm import LLM, Purpose
from nightwatch.domain.memory.answers import Candidate, ask, junk_reason, parse_candidates
from nightwatch.domain.memory.format import header_part, section_link
from nightwatch.domain.memory.lesson_text import OVERVIEW_MAX
from nightwatch.domain.memory.models import (
    CATEGORIES,
    DESCRIPTIONS,
    Discarded,
    Flavour,
    ReflectionContext,
    Remembered,
    flavour_for,
)
from nightwatch.domain.memory.recording import Entry, Recorded, Tally, remembered
from nightwatch.domain.models import Persona, ThreadMessage
from nightwatch.domain.ports import Clock
from nightwatch.domain.quoting import as_data
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

LESSONS_AT_MOST = 3
ANSWER_TOKENS = 900  # three lessons with their overviews

Record = Callable[[Persona, str, list[Candidate], Entry], list[Recorded]]  # the service's write, skips allowed

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


@dataclass(frozen=True)
class ExtractionPrompt(Prompt):
    """The prompt that asks a persona for the lessons in a thread's older messages before they are summarised away."""

    template: ClassVar[str] = "extraction.md.j2"

    persona_name: str
    role: str
    flavour: str
    project: str
    kind: str
    topic: str
    messages: tuple[ThreadMessage, ...]
    max_chars: int
    overview_chars: int = OVERVIEW_MAX
    categories: tuple[tuple[str, str], ...] = CATEGORY_GUIDE

    def __post_init__(self) -> None:  # the messages are data inside the prompt's <messages> block
        quoted = tuple(replace(m, author=as_data(m.author), text=as_data(m.text)) for m in self.messages)
        object.__setattr__(self, "messages", quoted)

    def instructions_only(self) -> ExtractionPrompt:
        """The same prompt without the thread: its text is what a lesson must not echo."""
        return replace(self, topic="", messages=())

    @classmethod
    def example(cls) -> ExtractionPrompt:
        return cls(
            persona_name="Priya",
            role="QA Engineer",
            flavour=Flavour.QA.value,
            project="night-watch",
            kind="deliberation",
            topic="Move sessions to Redis?",
            messages=(
                ThreadMessage(author="alice", text="The login suite failed twice on CI last week: clock skew."),
                ThreadMessage(author="Dev", text="I pinned freezegun to 1.5 and it passed.", persona="Dev"),
            ),
            max_chars=400,
        )


class Learner:
    """Asks a persona for lessons (reflection, extraction) and records those that pass the junk guard."""

    def __init__(self, *, llm: LLM, clock: Clock, record: Record, max_chars: int, tally: Tally | None = None) -> None:
        self._tally = tally or Tally(None)
        self._llm = llm
        self._clock = clock
        self._record = record
        self._max_chars = max_chars

    def reflect(self, persona: Persona, project: str, context: ReflectionContext) -> list[Remembered]:
        """Ask the persona, in its role's words, for 1-3 lessons from the interaction; returns what recording each
        did (created, merged into a restated lesson, or superseding one); skipped candidates are left out."""
        prompt = ReflectionPrompt.build(persona, project, context, self._max_chars)
        parts = (context.topic, context.summary, context.outcome)
        where = Entry(self._clock.now().date(), header_part(context.kind) or "note", section_link(context.link))
        return self._learn(persona, project, Purpose.REFLECTION, prompt, prompt.instructions_only(), parts, where)

    def extract(self, persona: Persona, project: str, discarded: Discarded) -> list[Remembered]:
        """Ask the persona for the lessons in messages being summarised away; returns what recording each did."""
        if not discarded.messages:
            return []
        prompt = ExtractionPrompt(
            persona_name=persona.name,
            role=persona.role,
            flavour=flavour_for(persona.role).value,
            project=project,
            kind=discarded.kind,
            topic=discarded.topic,
            messages=discarded.messages,
            max_chars=self._max_chars,
        )
        where = Entry(self._clock.now().date(), header_part(discarded.kind) or "note", section_link(discarded.link))
        parts = (discarded.topic,)  # a lesson may keep a message's own words: a fact said once is worth keeping
        return self._learn(persona, project, Purpose.EXTRACTION, prompt, prompt.instructions_only(), parts, where)

    def _learn(
        self,
        persona: Persona,
        project: str,
        purpose: Purpose,
        prompt: Prompt,
        instructions: Prompt,
        context: Sequence[str],
        entry: Entry,
    ) -> list[Remembered]:
        what = "Reflection" if purpose is Purpose.REFLECTION else "Extraction"
        topic = context[0]  # the interaction's topic comes first
        try:
            answer = ask(self._llm, purpose, persona, prompt.render(), topic=topic, max_tokens=ANSWER_TOKENS)
        except LLMError as err:
            log.warning("%s by %s on %s recorded nothing: the model failed (%s)", what, persona.name, project, err)
            return []
        found = parse_candidates(answer, max_chars=self._max_chars)
        if not found:
            if answer.strip().strip(".").upper() == "NONE":
                log.info("%s by %s on %s: nothing worth remembering", what, persona.name, project)
            else:
                log.warning("%s by %s on %s recorded nothing: no lessons in %r", what, persona.name, project, answer)
            return []
        said = instructions.render()
        kept = [c for c in (_guarded(persona, project, c, said, context) for c in found) if c is not None]
        self._tally.refused(len(found) - len(kept))
        outcomes = self._record(persona, project, kept[:LESSONS_AT_MOST], entry)
        return [remembered(outcome, outcome.lesson) for outcome in outcomes if outcome.lesson is not None]


def _guarded(
    persona: Persona, project: str, candidate: Candidate, instructions: str, context: Sequence[str]
) -> Candidate | None:
    """The candidate when its abstract passes the junk guard (without its overview, when only that fails)."""
    reason = junk_reason(candidate.text, instructions=instructions, context=context)
    if reason:
        log.info("%s's lesson on %s dropped %r: %s", persona.name, project, candidate.text, reason)
        return None
    if candidate.overview and junk_reason(candidate.overview, instructions=instructions):
        log.info("%s's lesson on %s kept without its overview %r", persona.name, project, candidate.overview)
        return replace(candidate, overview=None)
    return candidate
