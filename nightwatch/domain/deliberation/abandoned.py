"""Deliberations nobody is working on any more, and closing them as INTERRUPTED so none stays `running` forever.

A deliberation is abandoned when the process that ran it (its owner) is known to have exited, which can be told at
once for a process on this machine, or when it has shown no sign of life for `STALE_AFTER`: its start and each turn
are stored as they happen, and a live deliberation anywhere (another terminal, another Slack replica) always stores
a turn within a model call's timeout and retries. Every entry point applies this one rule when it opens the
database, so `nightwatch history` never shows a ghost; a deliberation that a live process is still running is left
alone.

A Slack deliberation holds a lease instead (see takeover.py): while any replica serves Slack, one takes it over when
its owner dies, so this rule leaves it alone until its lease has not been renewed for `STALE_AFTER` (no replica
renewed it or took it over meanwhile), however quiet the deliberation is and whatever became of its owner.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from nightwatch.domain.deliberation.models import Deliberation, DeliberationStatus
from nightwatch.domain.deliberation.ports import DeliberationLog, Liveness

STALE_AFTER = timedelta(minutes=15)


def abandoned(
    log: DeliberationLog, liveness: Liveness, now: datetime, stale_after: timedelta = STALE_AFTER
) -> list[Deliberation]:
    """RUNNING deliberations whose owner has exited or that showed no sign of life for `stale_after`.

    A leased (Slack) deliberation is abandoned only once its lease is `stale_after` old: a replica takes it over.
    """
    idle = {deliberation.id for deliberation in log.running(now - stale_after)}
    return [
        deliberation
        for deliberation in log.running()
        if (
            deliberation.heartbeat_at < now - stale_after
            if deliberation.heartbeat_at is not None
            else deliberation.id in idle or (deliberation.owner is not None and liveness.gone(deliberation.owner))
        )
    ]


def close_abandoned(
    log: DeliberationLog, liveness: Liveness, now: datetime, stale_after: timedelta = STALE_AFTER
) -> list[Deliberation]:
    """Mark every abandoned deliberation INTERRUPTED; returns those it closed (one that ended meanwhile is not)."""
    closed: list[Deliberation] = []
    for deliberation in abandoned(log, liveness, now, stale_after):
        if deliberation.id is not None and log.interrupt(deliberation.id, now):
            closed.append(replace(deliberation, status=DeliberationStatus.INTERRUPTED, finished_at=now))
    return closed


class Unowned:
    """Liveness when nothing tells processes apart: no owner is recorded and none is ever known to be gone."""

    def owner(self) -> str:
        return ""

    def gone(self, owner: str) -> bool:
        return False
