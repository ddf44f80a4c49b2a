"""Leases on the real deliberation log: stored and renewed by their owner only, and claimed by exactly one replica.

Runs on SQLite and, with DATABASE_URL pointing at it, on PostgreSQL (where several replicas share one log).
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

from alembic import command
from sqlalchemy import Engine, inspect, text

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.migrate import alembic_config
from nightwatch.domain.deliberation.models import Deliberation, DeliberationStatus
from tests.fakes import T0, FakeClock

DEAD = "vm#1/7/1"
LATER = T0 + timedelta(minutes=3)


def leased(log: SqlDeliberationLog, thread: str = "C1:1.0", owner: str = DEAD) -> Deliberation:
    return log.start(Deliberation("Rotate keys?", "p", thread, started_at=T0, owner=owner, heartbeat_at=T0))


def test_the_lease_and_takeovers_are_stored_and_read_back(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    row = leased(log)
    terminal = log.start(Deliberation("In a terminal", "p", "terminal:1", started_at=T0, owner=DEAD))
    stored = log.get(row.id or 0)
    assert stored is not None
    assert (stored.heartbeat_at, stored.takeovers) == (T0, 0)
    assert (log.get(terminal.id or 0).heartbeat_at, log.get(terminal.id or 0).takeovers) == (None, 0)  # type: ignore[union-attr]


def test_renew_touches_only_the_owners_running_leased_rows_in_its_threads(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    mine = leased(log, "C1:1.0", "me/1/1")
    elsewhere = leased(log, "C1:2.0", "me/1/1")  # claimed but not running here: left to go stale
    theirs = leased(log, "C1:1.0", "them/2/2")
    terminal = log.start(Deliberation("Terminal", "p", "C1:1.0", started_at=T0, owner="me/1/1"))
    done = leased(log, "C1:1.0", "me/1/1")
    log.finish(done.id or 0, DeliberationStatus.DONE, None, T0)
    assert log.renew("me/1/1", ["C1:1.0"], LATER) == 1
    assert log.renew("me/1/1", [], LATER) == 0
    beats = {d.id: d.heartbeat_at for d in (log.get(x.id or 0) for x in (mine, elsewhere, theirs, terminal, done)) if d}
    assert beats == {mine.id: LATER, elsewhere.id: T0, theirs.id: T0, terminal.id: None, done.id: T0}


def test_a_claim_is_a_compare_and_set_on_owner_status_and_lease(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    row = leased(log)
    stale_before = LATER - timedelta(minutes=2)
    assert log.claim(row.id or 0, holder="someone/else", owner="me/1/1", now=LATER, stale_before=stale_before) is None
    assert log.claim(row.id or 0, holder=DEAD, owner="me/1/1", now=LATER, stale_before=T0) is None  # lease fresh
    claimed = log.claim(row.id or 0, holder=DEAD, owner="me/1/1", now=LATER, stale_before=stale_before)
    assert claimed is not None
    assert (claimed.owner, claimed.heartbeat_at, claimed.takeovers, claimed.status) == (
        "me/1/1",
        LATER,
        1,
        DeliberationStatus.RUNNING,
    )
    assert log.claim(row.id or 0, holder=DEAD, owner="you/3/3", now=LATER, stale_before=None) is None  # taken
    log.finish(row.id or 0, DeliberationStatus.DONE, None, LATER)
    assert log.claim(row.id or 0, holder="me/1/1", owner="you/3/3", now=LATER, stale_before=None) is None  # ended
    terminal = log.start(Deliberation("Terminal", "p", "terminal:1", started_at=T0, owner=DEAD))
    assert log.claim(terminal.id or 0, holder=DEAD, owner="you/3/3", now=LATER, stale_before=None) is None


def test_of_three_replicas_claiming_at_once_exactly_one_wins_each_deliberation(engine: Engine) -> None:
    rows = [leased(SqlDeliberationLog(engine), f"C1:{n}.0") for n in range(5)]
    logs = [SqlDeliberationLog(engine) for _ in range(3)]  # three replicas, one database
    start = threading.Barrier(3)
    won: dict[int, list[int]] = {n: [] for n in range(3)}
    failures: list[BaseException] = []

    def replica(n: int) -> None:
        try:
            start.wait(timeout=10)
            for row in rows:
                stale_before = LATER - timedelta(minutes=2)
                if logs[n].claim(row.id or 0, holder=DEAD, owner=f"r{n}/1/1", now=LATER, stale_before=stale_before):
                    won[n].append(row.id or 0)
        except BaseException as error:  # handed to the test thread
            failures.append(error)

    threads = [threading.Thread(target=replica, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert sorted(i for ids in won.values() for i in ids) == sorted(row.id or 0 for row in rows)
    for row in rows:
        stored = logs[0].get(row.id or 0)
        assert stored is not None
        assert stored.takeovers == 1
        assert row.id in won[int((stored.owner or "r9")[1])]


def test_an_older_database_gains_the_lease_columns_on_upgrade(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    try:
        with engine.begin() as conn:  # the schema as revision 0001 left it, with a deliberation in it
            command.upgrade(alembic_config(conn), "0001")
            conn.execute(
                text(
                    "INSERT INTO deliberations (topic, project, thread, status, started_at, owner) VALUES "
                    "('Before leases', 'p', 'C1:1.0', 'running', '2026-11-20 09:00:00', :owner)"
                ),
                {"owner": DEAD},
            )
        upgrade(engine)
        log = SqlDeliberationLog(engine)
        (old,) = log.running()
        columns = {c["name"]: c for c in inspect(engine).get_columns("deliberations")}
        assert columns["heartbeat_at"]["nullable"] is True
        assert columns["takeovers"]["nullable"] is False
        stored = log.get(old.id or 0)
        assert stored is not None
        assert (stored.heartbeat_at, stored.takeovers) == (None, 0)  # an older row is never taken over
    finally:
        engine.dispose()
