"""The lease keeper: a background thread that renews this replica's leases and takes over orphaned deliberations.

It ticks every third of the lease (`renew_every`), and once at start, so a replica started after another died takes
over at once. A failed tick is logged and the next one tries again; a lease survives two missed renewals.
"""

from __future__ import annotations

import logging

from nightwatch.adapters.runtime import Ticker
from nightwatch.adapters.slack.threads import Deliberations

log = logging.getLogger(__name__)


class LeaseKeeper:
    """Every `every_seconds`: renew the leases of the deliberations this replica runs, then take over orphans."""

    def __init__(self, *, deliberations: Deliberations, every_seconds: float) -> None:
        self._deliberations = deliberations
        self.every_seconds = every_seconds
        self._ticker = Ticker("nightwatch-leases", self._log_tick, every_seconds, at_start=True)

    def tick(self) -> list[int]:
        """One pass: renew, then take over; returns the ids of the deliberations taken over."""
        try:
            self._deliberations.renew()
        except Exception:  # taking over must not wait for renewing to work again
            log.exception("renewing the deliberation leases failed; the next tick tries again")
        return self._deliberations.take_over()

    def start(self) -> None:
        """Tick now and then every `every_seconds` in a daemon thread, until `stop`."""
        self._ticker.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop ticking and wait for a running tick up to `timeout`."""
        self._ticker.stop(timeout)

    def _log_tick(self) -> None:
        for taken in self.tick():
            log.info("took over deliberation #%s", taken)
