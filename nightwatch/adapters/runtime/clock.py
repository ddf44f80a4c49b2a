"""The real clock."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """Tells the current time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)
