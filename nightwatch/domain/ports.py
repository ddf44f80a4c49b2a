"""The Protocols several rooms need from the outside world: adapters implement them; tests/fakes.py fakes them."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Return the current time, timezone-aware UTC."""
        ...
