"""The lease keeper: a background thread that renews this replica's leases and takes over orphaned deliberations.

It ticks every third of the lease (`renew_every`) or every `LOOK_EVERY_SECONDS` if that is sooner, and once at start,
so a replica started after another died takes over at once, and a deliberation another replica handed over when it
stopped is resumed within seconds. A tick is cheap: one UPDATE when this replica runs deliberations, and one SELECT of
the running ones. A failed tick is logged and the next one tries again; a lease survives two missed renewals.
"""

from __future__ import annotations

import logging

from nightwatch.adapters.runtime import Ticker
from nightwatch.adapters.slack.threads import Deliberations

log = logging.getLogger(__name__)

LOOK_EVERY_SECONDS = 5.0  # the longest a handed-over deliberation waits for a replica to resume it


class LeaseKeeper:
    """Every `every_seconds` (at most `look_every_seconds`): renew this replica's leases, then take over orphans."""

    def __init__(
        self, *, deliberations: Deliberations, every_seconds: float, look_every_seconds: float = LOOK_EVERY_SECONDS
    ) -> None:
        self._deliberations = deliberations
        self.every_seconds = min(every_seconds, look_every_seconds)
        self._ticker = Ticker("nightwatch-leases", self._log_tick, self.every_seconds, at_start=True)

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
