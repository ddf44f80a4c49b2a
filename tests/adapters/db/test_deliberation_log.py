"""SqlDeliberationLog against a real SQLite database (and PostgreSQL when DATABASE_URL points at one)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.domain.deliberation.models import Decision, Deliberation, DeliberationStatus, Turn, Verdict
from nightwatch.domain.deliberation.ports import RECENT_MAX
from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.llm import Usage
from tests.fakes import T0, FakeClock


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def log(engine: Engine) -> SqlDeliberationLog:
    return SqlDeliberationLog(engine, clock=FakeClock())


def started(log: SqlDeliberationLog, thread: str = "C1:1.0", project: str = "night-watch") -> Deliberation:
    return log.start(Deliberation("Rotate keys?", project, thread, started_at=T0))


def test_start_assigns_an_id_and_get_reads_it_back(log: SqlDeliberationLog) -> None:
    first = started(log)
    second = started(log, "C1:2.0")
    assert first.id is not None
    assert second.id == first.id + 1
    assert log.get(first.id) == first
    stored = log.get(first.id)
    assert stored is not None
    assert stored.status is DeliberationStatus.RUNNING
    assert stored.started_at == T0
    assert stored.started_at.tzinfo is not None
    assert log.get(999) is None


def test_turns_are_kept_in_order_with_their_usage(log: SqlDeliberationLog) -> None:
    d = started(log)
    assert d.id is not None
    turns = [
        Turn(
            "Maya",
            "Security reviewer",
            "Tokens must expire.",
            1,
            lessons_injected=3,
            usage=Usage(100, 20, 80, 5),
            created_at=T0,
        ),
        Turn("Dev", "Implementer", "SKIP", 1, skipped=True, created_at=T0 + timedelta(seconds=1)),
        Turn("Carlos", "Tech lead", "Ship behind a flag.", 2, created_at=T0 + timedelta(seconds=2)),
    ]
    for turn in turns:
        log.add_turn(d.id, turn)
    assert log.turns(d.id) == turns
    assert log.turns(d.id + 1) == []


def test_add_turn_without_a_time_uses_the_clock(engine: Engine) -> None:
    clock = FakeClock(T0 + timedelta(hours=1))
    log = SqlDeliberationLog(engine, clock=clock)
    d = started(log)
    log.add_turn(d.id or 0, Turn("Maya", "Security reviewer", "Hi.", 1))
    assert log.turns(d.id or 0)[0].created_at == clock.now()


def test_usage_is_summed_on_the_deliberation(log: SqlDeliberationLog) -> None:
    d = started(log)
    log.add_usage(d.id or 0, Usage(10, 5, 3, 1))
    log.add_usage(d.id or 0, Usage(1, 2, 3, 4))
    stored = log.get(d.id or 0)
    assert stored is not None
    assert stored.usage == Usage(11, 7, 6, 5)


def test_finish_stores_the_status_verdict_and_time(log: SqlDeliberationLog) -> None:
    d = started(log)
    verdict = Verdict(Decision.CHANGES, "Add a TTL.", ("No expiry.",), ("Dev - add TTL", "Priya - test it"))
    log.finish(d.id or 0, DeliberationStatus.DONE, verdict, T0 + timedelta(minutes=2))
    stored = log.get(d.id or 0)
    assert stored is not None
    assert stored.status is DeliberationStatus.DONE
    assert stored.verdict == verdict
    assert stored.finished_at == T0 + timedelta(minutes=2)


def test_finish_without_a_verdict_and_running_lists_only_running(log: SqlDeliberationLog) -> None:
    a, b, c = started(log, "C1:1"), started(log, "C1:2"), started(log, "C1:3")
    log.finish(b.id or 0, DeliberationStatus.INTERRUPTED, None, T0)
    assert [d.id for d in log.running()] == [a.id, c.id]
    stored = log.get(b.id or 0)
    assert stored is not None
    assert stored.verdict is None
    assert stored.status is DeliberationStatus.INTERRUPTED


def test_recent_is_newest_first_and_filters_by_a_literal_thread_prefix(log: SqlDeliberationLog) -> None:
    terminal = started(log, "terminal:abc")
    slack = started(log, "C1:1.0")
    odd = started(log, "terminal_x%:1")
    assert [d.id for d in log.recent()] == [odd.id, slack.id, terminal.id]
    assert [d.id for d in log.recent(limit=1)] == [odd.id]
    assert [d.id for d in log.recent(thread_prefix="terminal:")] == [terminal.id]
    assert [d.id for d in log.recent(thread_prefix="terminal_x%")] == [odd.id]


def test_thread_summaries_are_inserted_then_replaced(log: SqlDeliberationLog) -> None:
    assert log.summary("C1:1.0") is None
    log.save_summary("C1:1.0", 4, "First four.")
    assert log.summary("C1:1.0") == (4, "First four.")
    log.save_summary("C1:1.0", 9, "First nine.")
    assert log.summary("C1:1.0") == (9, "First nine.")
    assert log.summary("C1:2.0") is None


def test_writes_to_a_missing_deliberation_say_so(log: SqlDeliberationLog) -> None:
    with pytest.raises(NotFoundError):
        log.add_turn(42, Turn("Maya", "Security reviewer", "Hi.", 1, created_at=T0))
    with pytest.raises(NotFoundError):
        log.add_usage(42, Usage(1))
    with pytest.raises(NotFoundError):
        log.finish(42, DeliberationStatus.DONE, None, T0)


def test_rows_survive_a_new_engine(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'again.db'}"
    first = make_engine(url)
    upgrade(first)
    d = started(SqlDeliberationLog(first))
    first.dispose()
    second = make_engine(url)
    try:
        upgrade(second)
        again = SqlDeliberationLog(second).get(d.id or 0)
        assert again is not None
        assert again.topic == "Rotate keys?"
    finally:
        second.dispose()


@pytest.mark.postgres
@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgresql"), reason="needs DATABASE_URL for PostgreSQL"
)
def test_the_same_log_works_on_postgresql() -> None:
    schema = f"nw_log_{uuid.uuid4().hex[:10]}"
    admin = make_engine(os.environ["DATABASE_URL"])
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = os.environ["DATABASE_URL"]
    engine = make_engine(f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}")
    try:
        upgrade(engine)
        log = SqlDeliberationLog(engine, clock=FakeClock())
        d = started(log)
        log.add_turn(d.id or 0, Turn("Maya", "Security reviewer", "Hi.", 1, created_at=T0))
        log.add_usage(d.id or 0, Usage(3, 4))
        log.save_summary("C1:1.0", 2, "Two.")
        log.save_summary("C1:1.0", 3, "Three.")
        log.finish(d.id or 0, DeliberationStatus.DONE, Verdict(Decision.APPROVE, "Ok."), T0)
        stored = log.get(d.id or 0)
        assert stored is not None
        assert (stored.status, stored.usage, stored.verdict) == (
            DeliberationStatus.DONE,
            Usage(3, 4),
            Verdict(Decision.APPROVE, "Ok."),
        )
        assert log.turns(d.id or 0)[0].text == "Hi."
        assert log.summary("C1:1.0") == (3, "Three.")
    finally:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def either_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated engine on SQLite, and on PostgreSQL (a fresh schema) when DATABASE_URL points at one."""
    url = os.environ.get("DATABASE_URL", "")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'either.db'}"
    elif not url.startswith("postgresql"):
        pytest.skip("set DATABASE_URL=postgresql+psycopg://... to run the PostgreSQL tests")
    schema = f"nw_limit_{uuid.uuid4().hex[:10]}"
    admin = make_engine(url)
    if request.param == "postgres":
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        url = f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    engine = make_engine(url)
    try:
        upgrade(engine)
        yield engine
    finally:
        engine.dispose()
        if request.param == "postgres":
            with admin.begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def test_recent_refuses_a_limit_out_of_range_before_the_database_sees_it(either_engine: Engine) -> None:
    log = SqlDeliberationLog(either_engine, clock=FakeClock())
    for topic in ("First?", "Second?"):
        log.start(Deliberation(topic, "night-watch", f"C1:{topic}", started_at=T0))
    for limit in (0, -5, RECENT_MAX + 1, 10**20, True):
        with pytest.raises(InvalidInputError) as caught:
            log.recent(limit)
        assert f"must be a whole number from 1 to {RECENT_MAX} (got {limit})" in str(caught.value)
    assert [d.topic for d in log.recent(1)] == ["Second?"]
    assert [d.topic for d in log.recent(RECENT_MAX)] == ["Second?", "First?"]


def test_running_with_idle_since_skips_deliberations_that_made_progress(log: SqlDeliberationLog) -> None:
    quiet, busy = started(log, "C1:1"), started(log, "C1:2")
    turn = Turn("Maya", "Security Reviewer", "Still on it.", 1, created_at=T0 + timedelta(minutes=20))
    log.add_turn(busy.id or 0, turn)
    fresh = log.start(Deliberation("New", "night-watch", "C1:3", started_at=T0 + timedelta(minutes=25)))
    idle_since = T0 + timedelta(minutes=15)
    assert [d.id for d in log.running(idle_since)] == [quiet.id]
    assert {d.id for d in log.running()} == {quiet.id, busy.id, fresh.id}


def test_how_far_extraction_got_is_kept_beside_the_summary_and_never_changes_it(either_engine: Engine) -> None:
    log = SqlDeliberationLog(either_engine, clock=FakeClock())
    assert log.extracted("C1:1.0") == 0
    log.save_summary("C1:1.0", 4, "First four.")
    assert log.extracted("C1:1.0") == 0
    log.save_extracted("C1:1.0", 4)
    assert (log.extracted("C1:1.0"), log.summary("C1:1.0")) == (4, (4, "First four."))
    log.save_summary("C1:1.0", 9, "First nine.")
    assert log.extracted("C1:1.0") == 4  # a newer summary leaves the mark where extraction left it
    log.save_extracted("C1:1.0", 9)
    assert (log.extracted("C1:1.0"), log.summary("C1:1.0")) == (9, (9, "First nine."))


def test_extraction_without_a_stored_summary_keeps_its_mark_in_an_empty_one(either_engine: Engine) -> None:
    log = SqlDeliberationLog(either_engine, clock=FakeClock())
    log.save_extracted("C2:1.0", 5)  # the model could not summarise, yet lessons were taken
    assert log.extracted("C2:1.0") == 5
    assert log.summary("C2:1.0") == (0, "")  # which a window reads as no summary at all
    log.save_summary("C2:1.0", 6, "Six.")
    assert (log.extracted("C2:1.0"), log.summary("C2:1.0")) == (5, (6, "Six."))
