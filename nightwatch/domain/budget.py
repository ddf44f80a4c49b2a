"""Where a persona's system prompt spends its tokens (`nightwatch context`), and what is left of the model's window.

The soul compiler counts the stable prefix, the interaction context and the thread; `counting` adds what the turn's
context (domain/context.py) puts in the prompt, with the figures each known source reports. A source that has no line
of its own in the report counts in `other_tokens`, so the total is always whole.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from nightwatch.domain.context import TurnContext
from nightwatch.domain.memory import MEMORY
from nightwatch.domain.memory.models import MemoryBlock
from nightwatch.domain.models import Lesson
from nightwatch.domain.pins import PINS, PackedPin, PinBlock
from nightwatch.domain.sharing import SHARED, SharedBlock, SharedItem

_REPORTED = (MEMORY, PINS, SHARED)


@dataclass(frozen=True)
class PromptBudget:
    """Where a persona's system prompt spends its tokens, and what is left of the model's window."""

    persona: str
    mode: str
    override: bool
    soul_tokens: int
    style_tokens: int
    skill_tokens: int
    rules_tokens: int
    context_tokens: int
    thread_tokens: int
    summary_tokens: int
    window: int
    memory_lessons: int = 0
    memory_total_lessons: int = 0
    memory_tokens: int = 0
    pins_tokens: int = 0
    pins_budget: int = 0
    pins: tuple[PackedPin, ...] = ()  # each pin in the block: its tokens and whether it was cut
    shared_items: int = 0
    shared_total_items: int = 0
    shared_tokens: int = 0
    shared_sources: tuple[str, ...] = ()
    other_tokens: int = 0  # context sources the report has no line for
    memory_shown: tuple[Lesson, ...] = ()  # the lessons injected, in prompt order (`context --full`)
    shared_shown: tuple[SharedItem, ...] = ()  # the shared items injected, each with whose it is
    system_prompt: str = ""  # the whole system prompt as the model gets it (`context --show`); "" when not laid out

    @property
    def total_tokens(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self) if f.name.endswith("_tokens"))

    @property
    def remaining(self) -> int:
        return self.window - self.total_tokens

    def counting(self, known: TurnContext) -> PromptBudget:
        """This budget with what `known` puts in the prompt: each source's tokens, and the figures it reports."""
        memory = known.find(MemoryBlock) or MemoryBlock()
        pins = known.find(PinBlock) or PinBlock()
        shared = known.find(SharedBlock) or SharedBlock()
        return replace(
            self,
            memory_lessons=len(memory.lessons),
            memory_total_lessons=memory.total_lessons,
            memory_tokens=known.tokens(MEMORY),
            pins_tokens=known.tokens(PINS),
            pins_budget=pins.budget,
            pins=pins.pins,
            shared_items=len(shared.items),
            shared_total_items=shared.total_items,
            shared_tokens=known.tokens(SHARED),
            shared_sources=shared.sources,
            memory_shown=memory.lessons,
            shared_shown=shared.items,
            other_tokens=sum(part.tokens for part in known.parts if part.source not in _REPORTED),
        )
