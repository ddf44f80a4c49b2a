"""What a persona knows for a turn, built for tests: a TurnContext from blocks, a ContextReader over services.

Both put the sources in the order the wiring does (pins, memory, shared), so prompts read as in production.
"""

from __future__ import annotations

from nightwatch.domain.context import ContextPart, ContextReader, ContextSource, TurnContext
from nightwatch.domain.memory import MemoryReading, MemorySource, memory_part
from nightwatch.domain.memory.models import MemoryBlock
from nightwatch.domain.pins import PersonaPins, PinBlock, PinsSource, pins_part
from nightwatch.domain.sharing import SharedBlock, SharedKnowledge, SharedSource, shared_part


def knowing(
    memory: MemoryBlock | None = None, *, pins: PinBlock | None = None, shared: SharedBlock | None = None
) -> TurnContext:
    """A turn's context holding the blocks given."""
    parts: list[ContextPart] = []
    if pins is not None:
        parts.append(pins_part(pins))
    if memory is not None:
        parts.append(memory_part(memory))
    if shared is not None:
        parts.append(shared_part(shared))
    return TurnContext(tuple(parts))


def reading(
    memory: MemoryReading | None = None, *, pins: PersonaPins | None = None, shared: SharedKnowledge | None = None
) -> ContextReader:
    """The context seam over the services given, as the wiring composes it."""
    sources: list[ContextSource] = []
    if pins is not None:
        sources.append(PinsSource(pins))
    if memory is not None:
        sources.append(MemorySource(memory))
    if shared is not None:
        sources.append(SharedSource(shared))
    return ContextReader(sources)
