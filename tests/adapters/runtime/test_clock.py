from __future__ import annotations

from datetime import UTC, datetime

from freezegun import freeze_time

from nightwatch.adapters.runtime.clock import SystemClock


def test_the_system_clock_tells_aware_utc_time() -> None:
    with freeze_time("2026-11-21 09:30:00"):
        now = SystemClock().now()
    assert now == datetime(2026, 11, 21, 9, 30, tzinfo=UTC)
    assert now.utcoffset() is not None
