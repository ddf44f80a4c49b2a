"""The Protocols several rooms need from the outside world: adapters implement them; tests/fakes.py fakes them."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Protocol

from nightwatch.domain.models import Persona


class Clock(Protocol):
    def now(self) -> datetime:
        """Return the current time, timezone-aware UTC."""
        ...


class PersonaLookup(Protocol):
    """The personas other rooms name (pins, shares): found by name or slug; the personas room's service is one."""

    def get(self, name_or_slug: str) -> Persona:
        """The persona with this name (ignoring case) or slug; NotFoundError lists the known names."""
        ...

    def list(self, *, include_inactive: bool = True) -> builtins.list[Persona]: ...
