"""The proactive scheduler: a background thread that ticks, takes the database lease, and lets personas speak.

Only the replica holding the lease posts; it renews the lease every tick and gives it up when it stops, so another
replica takes over within one lease lifetime if this one dies.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from nightwatch.adapters.runtime.ticker import Ticker
from nightwatch.domain.deliberation.ports import Poster
from nightwatch.domain.ports import Clock
from nightwatch.domain.proactive import ChannelActivity, ProactiveOutcome, ProactiveService

log = logging.getLogger(__name__)

LEASE = "proactive"
DEFAULT_TICK_SECONDS = 60.0


class SchedulerState(Protocol):
    """What the scheduler keeps in the shared database (db.SlackState): its lease, and each channel's activity."""

    def try_acquire(self, name: str, holder: str, now: datetime, ttl: timedelta) -> bool: ...

    def release(self, name: str, holder: str) -> None: ...

    def channels(self) -> list[ChannelActivity]: ...

    def mark_proactive(self, channel: str, now: datetime) -> None: ...


def replica_id() -> str:
    """A name for this process that is unique across replicas."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class ProactiveScheduler:
    """Every `tick_seconds`, if this replica holds the lease, runs housekeeping and posts in each due channel."""

    def __init__(
        self,
        *,
        service: ProactiveService,
        state: SchedulerState,
        clock: Clock,
        poster_for: Callable[[str], Poster],
        channel_name: Callable[[str], str],
        tick_seconds: float = DEFAULT_TICK_SECONDS,
        holder: str | None = None,
        housekeeping: Callable[[], object] | None = None,
    ) -> None:
        self._service = service
        self._state = state
        self._clock = clock
        self._poster_for = poster_for
        self._channel_name = channel_name
        self.tick_seconds = tick_seconds
        self.holder = holder or replica_id()
        self._housekeeping = housekeeping
        self._lease_ttl = timedelta(seconds=max(3 * tick_seconds, 30.0))
        self._ticker = Ticker("nightwatch-proactive", self._log_tick, tick_seconds)

    def tick(self) -> list[ProactiveOutcome]:
        """One pass: take or renew the lease, then speak in every due channel. Returns what happened."""
        if not self._state.try_acquire(LEASE, self.holder, self._clock.now(), self._lease_ttl):
            return []
        if self._housekeeping is not None:
            try:
                self._housekeeping()
            except Exception:  # housekeeping must never stop proactive messages
                log.exception("housekeeping failed; the next tick tries again")
        outcomes = []
        for channel in self._service.due(self._state.channels()):
            if self._ticker.stopping:  # shutting down: the remaining channels wait for the next replica
                break
            try:
                outcome = self._service.speak(
                    channel, self._poster_for(channel.channel), channel_name=self._channel_name(channel.channel)
                )
            except Exception:  # one channel's failure must not starve the others
                log.exception("proactive message in %s failed", channel.channel)
                outcome = ProactiveOutcome(channel.channel, None, posted=False, reason="failed; see the log")
            # Marked even on SKIP or failure: the next attempt waits a full interval instead of every tick.
            self._state.mark_proactive(channel.channel, self._clock.now())
            outcomes.append(outcome)
        return outcomes

    def start(self) -> None:
        """Tick in a daemon thread until `stop`."""
        self._ticker.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop ticking, wait for a running tick up to `timeout`, and release the lease."""
        self._ticker.stop(timeout)
        try:
            self._state.release(LEASE, self.holder)
        except Exception:  # the lease expires by itself; failing to release it only delays a takeover
            log.warning("could not release the proactive lease", exc_info=True)

    def _log_tick(self) -> None:
        for outcome in self.tick():
            log.info("proactive %s: %s %s", outcome.channel, outcome.persona, outcome.reason or "posted")
