"""SqlPendingLessons on real SQLite and PostgreSQL: kept lessons survive, keep their order, follow renames."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, inspect, text

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.migrate import alembic_config
from nightwatch.adapters.db.pending_lessons import SqlPendingLessons
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.models import PendingLesson
from tests.fakes import T0

LINK = "https://example.slack.com/archives/C1/p1700000000"


def kept(
    persona: str, project: str, text: str, *, day: date = date(2026, 11, 20), link: str | None = LINK
) -> PendingLesson:
    return PendingLesson(persona, project, text, "deliberation", day, link, "disk full", T0)


@pytest.fixture
def pending(engine: Engine) -> SqlPendingLessons:
    return SqlPendingLessons(engine)


def test_kept_lessons_come_back_whole_and_oldest_first(pending: SqlPendingLessons) -> None:
    first = kept("maya", "p", "Sécurité: les clés tournent — 🔑 every 90 days.")
    second = kept("maya", "p", "Audit the vault after rotating.", link=None, day=date(2026, 11, 21))
    stored = pending.keep([first, second])
    assert [row.id for row in stored] == sorted(row.id for row in stored if row.id is not None)
    assert pending.waiting() == stored
    [again, _] = pending.waiting("maya", "p")
    assert (again.text, again.kind, again.day, again.link, again.error) == (
        first.text,
        "deliberation",
        date(2026, 11, 20),
        LINK,
        "disk full",
    )
    assert again.kept_at == T0
    assert again.kept_at.tzinfo is not None


def test_waiting_filters_by_persona_and_project(pending: SqlPendingLessons) -> None:
    pending.keep([kept("maya", "p", "One."), kept("dev", "p", "Two."), kept("maya", "q", "Three.")])
    assert [row.text for row in pending.waiting("maya")] == ["One.", "Three."]
    assert [row.text for row in pending.waiting("maya", "q")] == ["Three."]
    assert [row.text for row in pending.waiting(project="p")] == ["One.", "Two."]
    assert pending.waiting("priya") == []


def test_remove_failed_move_and_drop(pending: SqlPendingLessons) -> None:
    one, two, _ = pending.keep([kept("maya", "p", "One."), kept("maya", "p", "Two."), kept("dev", "p", "Three.")])
    assert one.id is not None
    assert two.id is not None
    pending.failed([two.id], "agents/maya/memories/p/main.md is a folder")
    pending.remove([one.id])
    assert [(row.text, row.error) for row in pending.waiting("maya")] == [
        ("Two.", "agents/maya/memories/p/main.md is a folder")
    ]
    assert pending.move("maya", "maya-sec") == 1
    assert [row.persona for row in pending.waiting()] == ["maya-sec", "dev"]
    assert pending.drop("dev") == 1
    assert pending.drop("dev") == 0
    assert [row.text for row in pending.waiting()] == ["Two."]


def test_a_time_in_another_zone_is_stored_as_the_same_instant(pending: SqlPendingLessons) -> None:
    elsewhere = T0.astimezone(timezone(timedelta(hours=-5)))
    lesson = PendingLesson("maya", "p", "One.", "manual", date(2026, 11, 21), None, "x", elsewhere)
    pending.keep([lesson])
    [stored] = pending.waiting()
    assert stored.kept_at == T0
    assert stored.kept_at.utcoffset() == UTC.utcoffset(None)


def test_an_unreachable_database_is_a_storage_error_that_says_what_to_do(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")  # never upgraded: the table is missing
    try:
        with pytest.raises(StorageError, match="check DATABASE_URL"):
            SqlPendingLessons(engine).keep([kept("maya", "p", "One.")])
    finally:
        engine.dispose()


def test_an_older_database_gains_the_table_on_upgrade(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0001")  # the tables every release before migrations had
            conn.execute(text("DROP TABLE pending_lessons"))
            conn.execute(text("DROP TABLE alembic_version"))  # as a release before kept lessons and migrations left it
        assert "pending_lessons" not in inspect(engine).get_table_names()
        upgrade(engine)
        assert "pending_lessons" in inspect(engine).get_table_names()
        assert SqlPendingLessons(engine).keep([kept("maya", "p", "One.")])[0].id == 1
    finally:
        engine.dispose()


def test_kept_at_round_trips_without_microsecond_loss(pending: SqlPendingLessons) -> None:
    moment = datetime(2026, 11, 21, 9, 0, 0, 123456, tzinfo=UTC)
    pending.keep([PendingLesson("maya", "p", "One.", "manual", moment.date(), None, "x", moment)])
    assert pending.waiting()[0].kept_at == moment


def test_a_kept_lesson_keeps_its_category_and_overview(pending: SqlPendingLessons) -> None:
    structured = replace(
        kept("maya", "p", "The 2026-03-02 key leak forced a rotation."),
        category="events",
        overview="Found in a public gist; rotated within the hour.",
    )
    pending.keep([structured, kept("maya", "p", "A lesson without either.")])
    first, second = pending.waiting("maya", "p")
    assert (first.category, first.overview) == ("events", "Found in a public gist; rotated within the hour.")
    assert (second.category, second.overview) == (None, None)


def test_lessons_kept_before_categories_come_back_without_them_after_the_upgrade(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'before.db'}")
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0006")  # the last revision before categories
            conn.execute(
                text(
                    "INSERT INTO pending_lessons (persona, project, text, kind, day, link, error, kept_at) "
                    "VALUES ('maya', 'p', 'One.', 'manual', '2026-11-20', NULL, 'disk full', '2026-11-24 09:00:00')"
                )
            )
            conn.execute(
                text("INSERT INTO thread_summaries VALUES ('C1:1.0', 4, 'First four.', '2026-11-24 09:00:00')")
            )
        upgrade(engine)
        [row] = SqlPendingLessons(engine).waiting()
        assert (row.text, row.category, row.overview) == ("One.", None, None)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT extracted FROM thread_summaries")).scalar() == 0
    finally:
        engine.dispose()
