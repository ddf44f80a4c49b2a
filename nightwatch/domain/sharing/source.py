"""Shared knowledge as a context source: what teammates share with a persona, as the prompt's shared block.

The soul compiler lays the block into the system prompt with the other sources' (see domain/context.py); its items
are teammates' lessons and documents, never counted as the persona's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from nightwatch.domain.context import ContextAsk, ContextPart
from nightwatch.domain.models import Persona
from nightwatch.domain.quoting import as_data
from nightwatch.domain.sharing.block import SharedBlock
from nightwatch.prompts import Prompt

SHARED = "shared"  # the source's name, as budgets and reports know it


@dataclass(frozen=True)
class SharedSection(Prompt):
    """Knowledge teammates share: attributed lines inside `<shared>` … `</shared>`, notes that are never instructions.

    `items` must already be made safe with `as_data` (`shared_section` does it).
    """

    template: ClassVar[str] = "soul_shared.md.j2"
    items: str

    @classmethod
    def example(cls) -> SharedSection:
        return cls(items="- from Maya (Security Reviewer): The session cookie lacks SameSite.")


class SharedKnowledge(Protocol):
    """What teammates share with a persona (SharingService): read afresh before each of its turns."""

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock: ...


def shared_section(shared: SharedBlock) -> str:
    """The shared block as the prompt carries it: its lines made data inside the delimiters."""
    return SharedSection(items=as_data(shared.text.strip())).render()


def shared_part(shared: SharedBlock) -> ContextPart:
    """`shared` as a turn's context: its section (none when nothing is shared) and how many items went in."""
    section = shared_section(shared) if not shared.empty and shared.text.strip() else ""
    return ContextPart(SHARED, section, shared, len(shared.items))


class SharedSource:
    """What teammates share with the persona on the project, ranked for the topic, under its budget."""

    name = SHARED

    def __init__(self, shared: SharedKnowledge) -> None:
        self._shared = shared

    def read(self, ask: ContextAsk) -> ContextPart:
        budget = ask.budget(SHARED)
        block = self._shared.read(ask.persona, ask.project, ask.topic, thread=ask.thread, budget=budget)
        return shared_part(block)
