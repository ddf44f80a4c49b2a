"""SqlDeliberationLog: deliberations, turns, verdicts, thread summaries and token usage in the database.

Rows never leave this module: every method returns the domain's frozen dataclasses. Each write is its own short
transaction, so a turn is stored as soon as it is posted and a restart loses nothing already said. Every text is
redacted before it is stored (a backstop: secrets are redacted where they enter and where the model answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db.deliberation_rows import (
    changes_json,
    clean,
    deliberation_from_row,
    turn_from_row,
    usage_values,
    verdict_json,
)
from nightwatch.adapters.db.schema import deliberations, thread_summaries, turns
from nightwatch.adapters.runtime import SystemClock
from nightwatch.domain.deliberation.models import ChangesRequest, Deliberation, DeliberationStatus, Turn, Verdict
from nightwatch.domain.deliberation.ports import recent_limit
from nightwatch.domain.errors import NotFoundError, StorageError
from nightwatch.domain.llm import Usage
from nightwatch.domain.ports import Clock


class SqlDeliberationLog:
    """The DeliberationLog port on the `deliberations`, `turns` and `thread_summaries` tables."""

    def __init__(self, engine: Engine, *, clock: Clock | None = None) -> None:
        self._engine = engine
        self._clock = clock or SystemClock()

    # --- deliberations ------------------------------------------------------------------------------------------

    def start(self, deliberation: Deliberation) -> Deliberation:
        started = deliberation.started_at or self._clock.now()
        values = {
            "topic": clean(deliberation.topic),
            "project": deliberation.project,
            "thread": deliberation.thread,
            "status": deliberation.status.value,
            "started_at": started,
            "finished_at": deliberation.finished_at,
            "verdict": verdict_json(deliberation.verdict),
            "owner": deliberation.owner,
            "heartbeat_at": deliberation.heartbeat_at,
            "takeovers": deliberation.takeovers,
            **usage_values(deliberation.usage),
        }
        with self._engine.begin() as conn:
            key = conn.execute(insert(deliberations).values(**values)).inserted_primary_key
        if key is None:
            raise StorageError("The database did not return the new deliberation's id; check the database logs.")
        return replace(deliberation, started_at=started, id=int(key[0]))

    def add_usage(self, deliberation_id: int, usage: Usage) -> None:
        changes = {name: getattr(deliberations.c, name) + amount for name, amount in usage_values(usage).items()}
        with self._engine.begin() as conn:
            done = conn.execute(update(deliberations).where(deliberations.c.id == deliberation_id).values(**changes))
        _require(done.rowcount, deliberation_id)

    def finish(self, deliberation_id: int, status: DeliberationStatus, verdict: Verdict | None, now: datetime) -> None:
        statement = (
            update(deliberations)
            .where(deliberations.c.id == deliberation_id)
            .values(status=status.value, verdict=verdict_json(verdict), finished_at=now)
        )
        with self._engine.begin() as conn:
            done = conn.execute(statement)
        _require(done.rowcount, deliberation_id)

    def interrupt(self, deliberation_id: int, now: datetime) -> bool:
        """Mark the deliberation INTERRUPTED if it is still RUNNING; False when it had ended meanwhile."""
        statement = (
            update(deliberations)
            .where(deliberations.c.id == deliberation_id, deliberations.c.status == DeliberationStatus.RUNNING.value)
            .values(status=DeliberationStatus.INTERRUPTED.value, finished_at=now)
        )
        with self._engine.begin() as conn:
            return bool(conn.execute(statement).rowcount)

    def renew(self, owner: str, threads: Sequence[str], now: datetime) -> int:
        if not threads:
            return 0
        statement = (
            update(deliberations)
            .where(
                deliberations.c.owner == owner,
                deliberations.c.thread.in_(list(threads)),
                deliberations.c.status == DeliberationStatus.RUNNING.value,
                deliberations.c.heartbeat_at.is_not(None),
            )
            .values(heartbeat_at=now)
        )
        with self._engine.begin() as conn:
            return int(conn.execute(statement).rowcount)

    def claim(
        self, deliberation_id: int, *, holder: str | None, owner: str, now: datetime, stale_before: datetime | None
    ) -> Deliberation | None:
        conditions = [
            deliberations.c.id == deliberation_id,
            deliberations.c.status == DeliberationStatus.RUNNING.value,
            deliberations.c.heartbeat_at.is_not(None),
            deliberations.c.owner.is_(None) if holder is None else deliberations.c.owner == holder,
        ]
        if stale_before is not None:
            conditions.append(deliberations.c.heartbeat_at < stale_before)
        # One UPDATE with every condition in its WHERE: the database lets exactly one of several claimants match.
        statement = (
            update(deliberations)
            .where(*conditions)
            # A hand-over (no holder) is not a takeover: only replicas that went away unannounced count.
            .values(owner=owner, heartbeat_at=now, takeovers=deliberations.c.takeovers + int(holder is not None))
        )
        with self._engine.begin() as conn:
            if not conn.execute(statement).rowcount:
                return None
            row = conn.execute(select(deliberations).where(deliberations.c.id == deliberation_id)).mappings().one()
        return deliberation_from_row(row)

    def release(self, owner: str, threads: Sequence[str]) -> int:
        if not threads:
            return 0
        statement = (
            update(deliberations)
            .where(
                deliberations.c.owner == owner,
                deliberations.c.thread.in_(list(threads)),
                deliberations.c.status == DeliberationStatus.RUNNING.value,
                deliberations.c.heartbeat_at.is_not(None),
            )
            .values(owner=None)  # the lease's time is kept: a released lease is claimed at once anyway
        )
        with self._engine.begin() as conn:
            return int(conn.execute(statement).rowcount)

    def holds(self, deliberation_id: int, owner: str) -> bool:
        query = select(deliberations.c.owner).where(deliberations.c.id == deliberation_id)
        with self._engine.connect() as conn:
            return conn.execute(query).scalar() == owner

    def save_changes(self, deliberation_id: int, changes: ChangesRequest) -> None:
        statement = (
            update(deliberations).where(deliberations.c.id == deliberation_id).values(changes=changes_json(changes))
        )
        with self._engine.begin() as conn:
            done = conn.execute(statement)
        _require(done.rowcount, deliberation_id)

    def get(self, deliberation_id: int) -> Deliberation | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(deliberations).where(deliberations.c.id == deliberation_id)).mappings().first()
        return deliberation_from_row(row) if row is not None else None

    def recent(self, limit: int = 10, thread_prefix: str | None = None) -> list[Deliberation]:
        query = select(deliberations).order_by(deliberations.c.id.desc()).limit(recent_limit(limit))
        if thread_prefix is not None:
            query = query.where(deliberations.c.thread.startswith(thread_prefix, autoescape=True))
        with self._engine.connect() as conn:
            return [deliberation_from_row(row) for row in conn.execute(query).mappings()]

    def running(self, idle_since: datetime | None = None) -> list[Deliberation]:
        query = select(deliberations).where(deliberations.c.status == DeliberationStatus.RUNNING.value)
        if idle_since is not None:
            recent_turn = (
                select(turns.c.id)
                .where(turns.c.deliberation_id == deliberations.c.id, turns.c.created_at >= idle_since)
                .exists()
            )
            query = query.where(deliberations.c.started_at < idle_since, ~recent_turn)
        query = query.order_by(deliberations.c.id)
        with self._engine.connect() as conn:
            return [deliberation_from_row(row) for row in conn.execute(query).mappings()]

    # --- turns --------------------------------------------------------------------------------------------------

    def add_turn(self, deliberation_id: int, turn: Turn) -> None:
        position = (
            select(func.coalesce(func.max(turns.c.position), 0) + 1)
            .where(turns.c.deliberation_id == deliberation_id)
            .scalar_subquery()
        )
        values = {
            "deliberation_id": deliberation_id,
            "position": position,
            "persona": turn.persona,
            "role": turn.role,
            "text": clean(turn.full_text or turn.text),  # the whole answer: `history --show` prints it
            "round": turn.round,
            "lessons_injected": turn.lessons_injected,
            "skipped": turn.skipped,
            "created_at": turn.created_at or self._clock.now(),
            **usage_values(turn.usage),
        }
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(turns).values(**values))
        except IntegrityError:
            raise NotFoundError(f"No deliberation with id {deliberation_id}; start it before adding turns.") from None

    def turns(self, deliberation_id: int) -> list[Turn]:
        query = select(turns).where(turns.c.deliberation_id == deliberation_id).order_by(turns.c.position)
        with self._engine.connect() as conn:
            return [turn_from_row(row) for row in conn.execute(query).mappings()]

    # --- thread summaries ---------------------------------------------------------------------------------------

    def save_summary(self, thread: str, covered: int, summary: str) -> None:
        values = {"covered": covered, "summary": clean(summary), "updated_at": self._clock.now()}
        change = update(thread_summaries).where(thread_summaries.c.thread == thread).values(**values)
        with self._engine.begin() as conn:
            if conn.execute(change).rowcount:
                return
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(thread_summaries).values(thread=thread, **values))
        except IntegrityError:
            # Another worker inserted the first summary of this thread meanwhile: the newer summary wins.
            with self._engine.begin() as conn:
                conn.execute(change)

    def summary(self, thread: str) -> tuple[int, str] | None:
        query = select(thread_summaries.c.covered, thread_summaries.c.summary).where(
            thread_summaries.c.thread == thread
        )
        with self._engine.connect() as conn:
            row = conn.execute(query).first()
        return (int(row.covered), str(row.summary)) if row is not None else None

    def extracted(self, thread: str) -> int:
        query = select(thread_summaries.c.extracted).where(thread_summaries.c.thread == thread)
        with self._engine.connect() as conn:
            found = conn.execute(query).scalar()
        return int(found) if found is not None else 0

    def save_extracted(self, thread: str, upto: int) -> None:
        change = update(thread_summaries).where(thread_summaries.c.thread == thread).values(extracted=upto)
        with self._engine.begin() as conn:
            if conn.execute(change).rowcount:
                return
        # No summary was stored (the model failed to make one): keep the mark in an empty summary's row.
        values = {"covered": 0, "summary": "", "updated_at": self._clock.now(), "extracted": upto}
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(thread_summaries).values(thread=thread, **values))
        except IntegrityError:
            with self._engine.begin() as conn:
                conn.execute(change)


def _require(rowcount: int, deliberation_id: int) -> None:
    if not rowcount:
        raise NotFoundError(f"No deliberation with id {deliberation_id}; it may have been removed.")
