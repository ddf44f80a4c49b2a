"""What a persona knows for a turn: every context source read once, under its budget, never failing the turn.

A context source (the persona's memory, its pinned context, what teammates share with it, and whatever comes next)
lives in its own room and implements `ContextSource`: asked with a `ContextAsk`, it returns its `ContextPart`, the
block as the system prompt carries it (delimited, made data) beside the room's own value for whoever reports on it.
The composition root lists the sources in the order their blocks go into the prompt, the least often changed first
(pins, memory, shared), since a changed block re-caches every block after it.

`ContextReader.read` asks each source in turn and returns one `TurnContext`, which the soul compiler lays into the
system prompt. A source that fails (a storage fault, an unreadable file) is logged and left out; the turn goes on
without it. Deliberation turns, `nightwatch context` and proactive messages all read here, so adding a source touches
its own room and the wiring, not the turn, the engine or the soul compiler.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.models import Persona
from nightwatch.domain.tokens import estimate_tokens

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class ContextAsk:
    """What every source is asked for: a persona's knowledge of a project, for a topic, under per-source budgets."""

    persona: Persona
    project: str  # a slug
    topic: str
    thread: str = ""  # the recent messages, which a source may rank by
    budgets: Mapping[str, int | None] = field(default_factory=dict)  # tokens, by source name

    def budget(self, source: str) -> int | None:
        """The most tokens `source` may fill; None when the source keeps its own budget."""
        return self.budgets.get(source)


@dataclass(frozen=True)
class ContextPart:
    """One source's share of a turn's context."""

    source: str  # the source's name, as budgets and reports know it
    section: str = ""  # the block as the system prompt carries it (delimited, made data); "" when there is none
    block: object = None  # the room's own value (a MemoryBlock, a PinBlock, a SharedBlock), for reports
    count: int = 0  # how many things it put in the prompt: lessons, pins, shared items
    lesson_ids: tuple[str, ...] = ()  # the persona's own lessons among them, counted as injected after the run

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.section)


class ContextSource(Protocol):
    """One thing a persona may know for a turn; its room implements it, the wiring lists it."""

    @property
    def name(self) -> str: ...

    def read(self, ask: ContextAsk) -> ContextPart:
        """This source's part for `ask`; it may raise NightWatchError or OSError, which leaves it out of the turn."""
        ...


@dataclass(frozen=True)
class TurnContext:
    """Everything a persona knows for one turn, one part per source that answered, in prompt order."""

    parts: tuple[ContextPart, ...] = ()

    @property
    def sections(self) -> tuple[str, ...]:
        """The blocks the system prompt carries, in order, leaving out the empty ones."""
        return tuple(part.section for part in self.parts if part.section.strip())

    @property
    def lesson_ids(self) -> tuple[str, ...]:
        """The persona's own lessons that went into the prompt."""
        return tuple(lesson_id for part in self.parts for lesson_id in part.lesson_ids)

    def part(self, source: str) -> ContextPart | None:
        return next((part for part in self.parts if part.source == source), None)

    def count(self, source: str) -> int:
        """How many things `source` put in the prompt (0 when it is not there)."""
        found = self.part(source)
        return found.count if found is not None else 0

    def tokens(self, source: str) -> int:
        found = self.part(source)
        return found.tokens if found is not None else 0

    def find(self, kind: type[T]) -> T | None:
        """The first part's own value of type `kind` (for reports), or None."""
        return next((part.block for part in self.parts if isinstance(part.block, kind)), None)


class ContextReader:
    """The one place a turn's context is read: each source in turn, a failing one logged and left out."""

    def __init__(self, sources: Sequence[ContextSource] = ()) -> None:
        self._sources = tuple(sources)

    def read(self, ask: ContextAsk) -> TurnContext:
        """What `ask.persona` knows for this turn, read afresh (an edit, a new pin or an unshare holds at once)."""
        parts = []
        for source in self._sources:
            try:
                parts.append(source.read(ask))
            except (NightWatchError, OSError) as error:
                log.warning(
                    "could not read %s's %s (%s); the turn goes on without it", ask.persona.name, source.name, error
                )
        return TurnContext(tuple(parts))
