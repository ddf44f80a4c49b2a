"""Memory as a context source: the persona's most relevant lessons for the turn, as the prompt's memory block.

The soul compiler lays the block into the system prompt with the other sources' (see domain/context.py); its
lessons are the persona's own, so they are counted as injected once the deliberation ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from nightwatch.domain.context import ContextAsk, ContextPart
from nightwatch.domain.memory.models import MemoryBlock
from nightwatch.domain.models import Persona
from nightwatch.domain.quoting import as_data
from nightwatch.prompts import Prompt

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
