"""The deliberation log keeps each deliberation's owner, and closes a run only while it is still running.

Runs on SQLite and, with DATABASE_URL pointing at it, on PostgreSQL (where several replicas share one log).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from alembic import command
from sqlalchemy import Engine, inspect, text

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.migrate import alembic_config
from nightwatch.domain.deliberation.abandoned import close_abandoned
from nightwatch.domain.deliberation.models import Decision, Deliberation, DeliberationStatus, Verdict
from tests.fakes import T0, FakeClock, FakeLiveness


def test_the_owner_is_stored_and_read_back(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    owned = log.start(Deliberation("Rotate keys?", "p", "terminal:a", started_at=T0, owner="vm#1a2b3c4d/42/1234"))
    legacy = log.start(Deliberation("Older row", "p", "terminal:b", started_at=T0))
    assert log.get(owned.id or 0).owner == "vm#1a2b3c4d/42/1234"  # type: ignore[union-attr]
    assert log.get(legacy.id or 0).owner is None  # type: ignore[union-attr]
    assert {d.owner for d in log.running()} == {"vm#1a2b3c4d/42/1234", None}


def test_interrupt_changes_only_a_running_deliberation(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    running = log.start(Deliberation("Cut off", "p", "terminal:a", started_at=T0))
    done = log.start(Deliberation("Finished", "p", "terminal:b", started_at=T0))
    log.finish(done.id or 0, DeliberationStatus.DONE, Verdict(Decision.APPROVE, "Ok."), T0)
    later = T0 + timedelta(minutes=1)
    assert log.interrupt(running.id or 0, later) is True
    assert log.interrupt(running.id or 0, later) is False
    assert log.interrupt(done.id or 0, later) is False
    stored = log.get(running.id or 0)
    assert stored is not None
    assert (stored.status, stored.finished_at) == (DeliberationStatus.INTERRUPTED, later)
    assert log.get(done.id or 0).status is DeliberationStatus.DONE  # type: ignore[union-attr]


def test_closing_abandoned_runs_on_the_real_log_spares_the_live_one(engine: Engine) -> None:
    log, liveness = SqlDeliberationLog(engine, clock=FakeClock()), FakeLiveness()
    killed = log.start(Deliberation("Killed", "p", "terminal:a", started_at=T0, owner="here/7/1"))
    live = log.start(Deliberation("Live", "p", "terminal:b", started_at=T0, owner="here/8/1"))
    liveness.exited.add("here/7/1")
    closed = close_abandoned(log, liveness, T0 + timedelta(minutes=1))
    assert [d.id for d in closed] == [killed.id]
    assert [d.id for d in log.running()] == [live.id]


def test_an_older_database_gains_the_owner_column_on_upgrade(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0001")  # the tables every release before migrations had
            conn.execute(text("ALTER TABLE deliberations DROP COLUMN owner"))
            conn.execute(text("DROP TABLE alembic_version"))  # as a release before owners and migrations left it
        assert "owner" not in {c["name"] for c in inspect(engine).get_columns("deliberations")}
        upgrade(engine)
        assert "owner" in {c["name"] for c in inspect(engine).get_columns("deliberations")}
    finally:
        engine.dispose()
