"""Leases on Slack deliberations, and taking over one whose replica is gone.

A replica running a Slack deliberation holds a lease on its row (`heartbeat_at`), renewed every third of `LEASE_FOR`
while it runs, so a long model call never makes a live replica look dead. A deliberation is orphaned when its lease
is older than `LEASE_FOR`, or at once when its owner is known to have exited (a process on this machine, see
ports.Liveness). Another replica claims it with one compare-and-set on the row, so exactly one of several replicas
looking at once wins, and finishes it from its stored turns in the same thread (see resume.py). One taken over more
than `MAX_TAKEOVERS` times is closed as failed instead, so a deliberation that kills its replicas does not loop.

A replica that stops (SIGTERM) hands its running deliberations over instead of letting their leases expire: each
stops at its next checkpoint and its lease is released (no owner, see `released`), so another replica claims it at
once. A hand-over is not counted as a takeover: only a replica that went away unannounced brings a deliberation
closer to `MAX_TAKEOVERS`.

Terminal deliberations hold no lease: there is no thread to continue them in, and abandoned.py closes them.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from nightwatch.domain.deliberation.models import Deliberation
from nightwatch.domain.deliberation.ports import DeliberationLog, Liveness

LEASE_FOR = timedelta(seconds=90)  # plus one renewal period (30 s) to notice: another replica takes over within 2 min
MAX_TAKEOVERS = 3
GAVE_UP = (
    "This deliberation was taken over {times} times after the replica running it stopped, so it is closed as failed "
    "rather than tried again. Mention me again to start it over."
)


def renew_every(lease_for: timedelta) -> float:
    """Seconds between two renewals of a lease (and two looks for orphans): a third of the lease."""
    return lease_for.total_seconds() / 3


def orphans(log: DeliberationLog, liveness: Liveness, now: datetime, lease_for: timedelta) -> list[Deliberation]:
    """RUNNING leased deliberations, not this process's, whose lease expired or whose owner has exited."""
    me = liveness.owner() or None
    return [
        deliberation
        for deliberation in log.running()
        if deliberation.id is not None
        and deliberation.heartbeat_at is not None
        and deliberation.owner != me
        and (deliberation.heartbeat_at < now - lease_for or released(deliberation) or _gone(liveness, deliberation))
    ]


def claim(
    log: DeliberationLog, liveness: Liveness, orphan: Deliberation, now: datetime, lease_for: timedelta
) -> Deliberation | None:
    """Take `orphan` over for this process; None when another process claimed it first or its owner renewed."""
    if orphan.id is None or not liveness.owner():
        return None
    stale_before = None if released(orphan) or _gone(liveness, orphan) else now - lease_for
    return log.claim(orphan.id, holder=orphan.owner, owner=liveness.owner(), now=now, stale_before=stale_before)


def released(deliberation: Deliberation) -> bool:
    """Whether its replica handed it over on shutdown: a lease with no owner (leased runs always start with one)."""
    return deliberation.heartbeat_at is not None and deliberation.owner is None


def _gone(liveness: Liveness, deliberation: Deliberation) -> bool:
    return deliberation.owner is not None and liveness.gone(deliberation.owner)
