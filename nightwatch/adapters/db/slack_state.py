"""Slack bookkeeping in the database: seen event ids, channel -> project mappings, and leases.

Every write that must be decided once across replicas (a first delivery, a lease) is a single statement that the
database itself arbitrates: an INSERT guarded by the primary key, or an UPDATE guarded by its WHERE clause. That
holds on SQLite and on PostgreSQL without any dialect-specific SQL.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, Engine, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db.schema import channel_projects, leases, seen_events, utc
from nightwatch.adapters.db.transactions import begin
from nightwatch.domain.proactive import ChannelActivity

log = logging.getLogger(__name__)

SEEN_RETENTION = timedelta(days=1)  # Slack stops redelivering an event within the hour
PRUNE_EVERY = timedelta(minutes=10)


def _stored(value: datetime) -> datetime:
    """A time to store, in UTC (SQLite keeps the wall clock and drops the offset)."""
    return value.astimezone(UTC)


class SlackState:
    """Seen events, channel mappings and leases over the `seen_events`, `channel_projects` and `leases` tables."""

    def __init__(self, engine: Engine, *, seen_retention: timedelta = SEEN_RETENTION) -> None:
        self._engine = engine
        self._retention = seen_retention
        self._last_prune: datetime | None = None

    def _begin(self, doing: str) -> AbstractContextManager[Connection]:
        """A transaction whose database errors (but a clash at a unique index) become a StorageError."""
        return begin(self._engine, doing, clashes=True)

    # --- seen events ------------------------------------------------------------------------------------------

    def first_delivery(self, event_id: str, now: datetime) -> bool:
        """Record `event_id`; True only for the first delivery, across restarts and replicas."""
        self._maybe_prune(now)
        try:
            with self._begin("record a Slack event") as conn:
                conn.execute(insert(seen_events).values(event_id=event_id[:100], seen_at=_stored(now)))
        except IntegrityError:
            return False
        return True

    def prune_seen(self, before: datetime) -> int:
        """Forget event ids seen before `before`; return how many were removed."""
        with self._begin("prune seen Slack events") as conn:
            result = conn.execute(delete(seen_events).where(seen_events.c.seen_at < _stored(before)))
        return int(result.rowcount or 0)

    def _maybe_prune(self, now: datetime) -> None:
        if self._last_prune is not None and now - self._last_prune < PRUNE_EVERY:
            return
        self._last_prune = now
        removed = self.prune_seen(now - self._retention)
        if removed:
            log.debug("pruned %d seen Slack events", removed)

    # --- channels ---------------------------------------------------------------------------------------------

    def project_for(self, channel: str) -> str | None:
        """The project slug mapped to `channel`, or None when it has none."""
        with self._begin("read a channel's project") as conn:
            row = conn.execute(select(channel_projects.c.project).where(channel_projects.c.channel == channel)).first()
        return None if row is None else str(row[0])

    def map_channel(self, channel: str, project: str, now: datetime) -> None:
        """Map `channel` to `project` (replacing any earlier mapping); mapping counts as activity."""
        values = {"project": project, "updated_at": _stored(now), "last_activity_at": _stored(now)}
        if self._update_channel(channel, values):
            return
        try:
            with self._begin("map a channel to a project") as conn:
                conn.execute(insert(channel_projects).values(channel=channel, **values))
        except IntegrityError:
            self._update_channel(channel, values)  # another replica inserted it first: ours is the newer mapping

    def touch(self, channel: str, now: datetime) -> None:
        """Note activity in a mapped channel (unmapped channels are not tracked)."""
        self._update_channel(channel, {"last_activity_at": _stored(now)})

    def mark_proactive(self, channel: str, now: datetime) -> None:
        """Note that a proactive message was considered for `channel` at `now` (posted or skipped)."""
        self._update_channel(channel, {"last_proactive_at": _stored(now)})

    def channels(self) -> list[ChannelActivity]:
        """Every mapped channel with its activity times."""
        with self._begin("list mapped channels") as conn:
            rows = conn.execute(select(channel_projects).order_by(channel_projects.c.channel)).all()
        return [
            ChannelActivity(
                channel=row.channel,
                project=row.project,
                last_activity_at=utc(row.last_activity_at),
                last_proactive_at=utc(row.last_proactive_at),
            )
            for row in rows
        ]

    def _update_channel(self, channel: str, values: dict[str, object]) -> bool:
        with self._begin("update a channel") as conn:
            result = conn.execute(
                update(channel_projects).where(channel_projects.c.channel == channel).values(**values)
            )
        return bool(result.rowcount)

    # --- leases -----------------------------------------------------------------------------------------------

    def try_acquire(self, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
        """Take or renew the lease `name` for `holder` until now + ttl; False while another holder's is live."""
        expires = _stored(now + ttl)
        with self._begin("take a lease") as conn:
            result = conn.execute(
                update(leases)
                .where(leases.c.name == name)
                .where(or_(leases.c.holder == holder, leases.c.expires_at <= _stored(now)))
                .values(holder=holder, expires_at=expires)
            )
        if result.rowcount:
            return True
        try:
            with self._begin("take a lease") as conn:
                conn.execute(insert(leases).values(name=name, holder=holder, expires_at=expires))
        except IntegrityError:
            return False  # the row exists and another holder's lease is live
        return True

    def release(self, name: str, holder: str) -> None:
        """Give up the lease if `holder` has it, so another replica can take it at once."""
        with self._begin("release a lease") as conn:
            conn.execute(delete(leases).where(leases.c.name == name, leases.c.holder == holder))
