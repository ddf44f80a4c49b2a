"""What a turn needs of pinned context: the persona's pins for the project, read afresh, never failing the turn.

PinService (domain/pins/service.py) is the real one: it checks each pinned file against the disk and packs the pins
under their budget. Without it (tests, tools) every block is empty.
"""

from __future__ import annotations

import logging
from typing import Protocol

from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.models import Persona
from nightwatch.domain.pins.block import PinBlock

log = logging.getLogger(__name__)


class PersonaPins(Protocol):
    """What a turn needs of pinned context (PinService): the persona's pins, each file checked against the disk."""

    def block(self, persona: Persona, project: str, *, budget: int | None = None) -> PinBlock:
        """The pins packed under `budget` tokens (None: the service's own budget)."""
        ...


class NoPins:
    """PersonaPins when pinned context is not wired in: every block is empty."""

    def block(self, persona: Persona, project: str, *, budget: int | None = None) -> PinBlock:
        return PinBlock()


def read_pins(pins: PersonaPins, persona: Persona, project: str, budget: int | None = None) -> PinBlock:
    """The persona's pinned block; an empty one when the pins cannot be read (logged), so the turn goes on."""
    try:
        return pins.block(persona, project, budget=budget)
    except (NightWatchError, OSError) as error:
        log.warning("could not read %s's pins (%s); the turn goes on without them", persona.name, error)
        return PinBlock()
