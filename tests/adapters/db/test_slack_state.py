"""SlackState against a real SQLite file (and PostgreSQL when DATABASE_URL points at one)."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.slack_state import SlackState
from tests.fakes import T0


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'state.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def state(engine: Engine) -> SlackState:
    return SlackState(engine)


def test_only_the_first_delivery_of_an_event_counts(state: SlackState) -> None:
    assert state.first_delivery("Ev1", T0) is True
    assert state.first_delivery("Ev1", T0 + timedelta(seconds=5)) is False
    assert state.first_delivery("Ev2", T0) is True


def test_seen_events_survive_a_restart(engine: Engine) -> None:
    assert SlackState(engine).first_delivery("Ev1", T0) is True
    assert SlackState(engine).first_delivery("Ev1", T0) is False


def test_concurrent_deliveries_start_exactly_one(engine: Engine) -> None:
    replicas = [SlackState(engine) for _ in range(8)]
    results: list[bool] = []
    barrier = threading.Barrier(len(replicas))

    def deliver(replica: SlackState) -> None:
        barrier.wait()
        results.append(replica.first_delivery("EvSame", T0))

    threads = [threading.Thread(target=deliver, args=(r,)) for r in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]


def test_old_seen_events_are_pruned(state: SlackState) -> None:
    state.first_delivery("EvOld", T0)
    assert state.prune_seen(T0 + timedelta(days=2)) == 1
    assert state.first_delivery("EvOld", T0 + timedelta(days=2)) is True


def test_first_delivery_prunes_expired_rows_as_it_goes(engine: Engine) -> None:
    state = SlackState(engine, seen_retention=timedelta(hours=1))
    state.first_delivery("EvA", T0)
    state.first_delivery("EvB", T0 + timedelta(hours=3))  # prunes EvA on the way
    with engine.connect() as conn:
        ids = set(conn.execute(text("SELECT event_id FROM seen_events")).scalars())
    assert ids == {"EvB"}


def test_a_channel_maps_to_a_project_and_can_be_remapped(state: SlackState) -> None:
    assert state.project_for("C1") is None
    state.map_channel("C1", "night-watch", T0)
    state.map_channel("C1", "other", T0 + timedelta(minutes=1))
    assert state.project_for("C1") == "other"
    [channel] = state.channels()
    assert (channel.channel, channel.project, channel.last_activity_at) == ("C1", "other", T0 + timedelta(minutes=1))


def test_activity_and_proactive_times_are_kept_in_utc(state: SlackState) -> None:
    state.map_channel("C1", "nw", T0)
    state.touch("C1", T0 + timedelta(minutes=5))
    state.mark_proactive("C1", T0 + timedelta(minutes=7))
    state.touch("C-unmapped", T0)  # ignored: only mapped channels are tracked
    [channel] = state.channels()
    assert channel.last_activity_at == T0 + timedelta(minutes=5)
    assert channel.last_proactive_at == T0 + timedelta(minutes=7)
    assert channel.last_activity_at.tzinfo is not None


def test_a_lease_has_one_holder_until_it_expires(state: SlackState) -> None:
    ttl = timedelta(minutes=2)
    assert state.try_acquire("proactive", "replica-a", T0, ttl) is True
    assert state.try_acquire("proactive", "replica-b", T0 + timedelta(minutes=1), ttl) is False
    assert state.try_acquire("proactive", "replica-a", T0 + timedelta(minutes=1), ttl) is True  # renewal
    assert state.try_acquire("proactive", "replica-b", T0 + timedelta(minutes=2), ttl) is False
    assert state.try_acquire("proactive", "replica-b", T0 + timedelta(minutes=3), ttl) is True  # a's expired


def test_a_released_lease_is_free_at_once(state: SlackState) -> None:
    state.try_acquire("proactive", "a", T0, timedelta(minutes=5))
    state.release("proactive", "b")  # not b's to release
    assert state.try_acquire("proactive", "b", T0, timedelta(minutes=5)) is False
    state.release("proactive", "a")
    assert state.try_acquire("proactive", "b", T0, timedelta(minutes=5)) is True


def _race_for_lease(engine: Engine, name: str) -> list[str]:
    winners: list[str] = []
    barrier = threading.Barrier(6)

    def contend(holder: str) -> None:
        replica = SlackState(engine)
        barrier.wait()
        if replica.try_acquire(name, holder, T0, timedelta(minutes=1)):
            winners.append(holder)

    threads = [threading.Thread(target=contend, args=(f"r{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return winners


def test_replicas_racing_for_a_lease_get_one_winner(engine: Engine) -> None:
    assert len(_race_for_lease(engine, "proactive")) == 1


POSTGRES = os.environ.get("DATABASE_URL", "")


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES.startswith("postgresql"), reason="needs DATABASE_URL pointing at PostgreSQL")
def test_postgres_leases_and_first_delivery_are_atomic() -> None:
    schema = f"nw_state_{uuid.uuid4().hex[:8]}"
    admin = make_engine(POSTGRES)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in POSTGRES else "?"
    engine = make_engine(f"{POSTGRES}{separator}options=-csearch_path%3D{schema}")
    try:
        upgrade(engine)
        assert len(_race_for_lease(engine, "proactive")) == 1
        state = SlackState(engine)
        assert state.first_delivery("EvPg", T0) is True
        assert state.first_delivery("EvPg", T0) is False
    finally:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
