"""Pinned context as a context source: the persona's pins for the project, read afresh, as the prompt's pinned block.

PinService (domain/pins/service.py) is the real one: it checks each pinned file against the disk and packs the pins
under their budget. The soul compiler lays the block into the system prompt with the other sources' (see
domain/context.py), which leaves it out of the turn when it cannot be read.
"""

from __future__ import annotations

from typing import Protocol

from nightwatch.domain.context import ContextAsk, ContextPart
from nightwatch.domain.models import Persona
from nightwatch.domain.pins.block import PinBlock, PinsSection

PINS = "pins"  # the source's name, as budgets and reports know it


class PersonaPins(Protocol):
    """What a turn needs of pinned context (PinService): the persona's pins, each file checked against the disk."""

    def block(self, persona: Persona, project: str, *, budget: int | None = None) -> PinBlock:
        """The pins packed under `budget` tokens (None: the service's own budget)."""
        ...


def pins_section(pins: PinBlock) -> str:
    """The pinned block as the prompt carries it, inside its delimiters.

    Each entry's parts were made data when it was packed (pins/block.py); making the whole text data again would
    escape the entries' own source lines, which `as_data` rightly treats as a pin's source line posed by data.
    """
    return PinsSection(pins=pins.text).render()


def pins_part(pins: PinBlock) -> ContextPart:
    """`pins` as a turn's context: its section (none when nothing is pinned) and how many pins went in."""
    return ContextPart(PINS, pins_section(pins) if not pins.empty else "", pins, len(pins.pins))


class PinsSource:
    """The persona's pinned context for the project, under its budget."""

    name = PINS

    def __init__(self, pins: PersonaPins) -> None:
        self._pins = pins

    def read(self, ask: ContextAsk) -> ContextPart:
        return pins_part(self._pins.block(ask.persona, ask.project, budget=ask.budget(PINS)))
