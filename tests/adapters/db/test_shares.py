"""SqlShareRepository on real SQLite and PostgreSQL: one share per parties, shares with all, deletes that take them.

Runs on SQLite, and on PostgreSQL with DATABASE_URL (marked `postgres`).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db import SqlPersonaRepository, SqlShareRepository
from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.adapters.db.persona_transactions import SqlPersonaTransactions
from nightwatch.domain.errors import NightWatchError, NotFoundError, StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.sharing.models import Share, ShareContent
from tests.adapters.db.test_persona_transactions import refuse
from tests.fakes import T0, FakeClock

LESSONS, PINS, ALL = ShareContent.LESSONS, ShareContent.PINS, ShareContent.ALL


class Team:
    """Maya, Dev and Priya in the database, and the shares repository beside them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.personas = SqlPersonaRepository(engine)
        self.shares = SqlShareRepository(engine)
        added = [self.personas.add(Persona(name=n, slug=n.lower(), role="r", created_at=T0)) for n in NAMES]
        self.maya, self.dev, self.priya = (p.id or 0 for p in added)

    def share(self, sharer: int, receiver: int | None, project: str = "p", what: ShareContent = LESSONS) -> Share:
        return Share(sharer, receiver, project, what, T0)

    def rows(self) -> list[tuple[int, int | None, str, ShareContent]]:
        return [(s.sharer_id, s.receiver_id, s.project, s.what) for s in self.shares.list()]


NAMES = ("Maya", "Dev", "Priya")


@pytest.fixture
def team(engine: Engine) -> Team:
    return Team(engine)


def test_a_share_is_stored_once_and_sharing_again_changes_what_it_opens(team: Team) -> None:
    assert team.shares.put(team.share(team.maya, team.dev)) is None
    before = team.shares.put(team.share(team.maya, team.dev, what=ALL))
    assert before == Share(team.maya, team.dev, "p", LESSONS, T0)
    assert team.rows() == [(team.maya, team.dev, "p", ALL)]
    [stored] = team.shares.list()
    assert stored.created_at == T0  # the first share's time stays
    assert stored.created_at is not None
    assert stored.created_at.tzinfo is not None


def test_a_share_with_all_is_one_row_however_often_it_is_made(team: Team) -> None:
    assert team.shares.put(team.share(team.maya, None)) is None
    assert team.shares.put(team.share(team.maya, None, what=PINS)) is not None
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.maya, None, project="q"))
    assert team.rows() == [
        (team.maya, None, "p", PINS),
        (team.maya, team.dev, "p", LESSONS),
        (team.maya, None, "q", LESSONS),
    ]


def test_the_database_itself_refuses_a_second_share_with_all(team: Team) -> None:
    team.shares.put(team.share(team.maya, None))
    with pytest.raises(IntegrityError), team.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO persona_shares (sharer_id, receiver_id, project, what, created_at) "
                "VALUES (:s, NULL, 'p', 'all', :t)"
            ),
            {"s": team.maya, "t": T0},
        )


def test_removing_returns_the_share_and_a_missing_one_is_none(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.maya, None))
    assert team.shares.remove(team.maya, None, "p") == Share(team.maya, None, "p", LESSONS, T0)
    assert team.shares.remove(team.maya, None, "p") is None
    assert team.shares.remove(team.maya, team.dev, "q") is None
    assert team.rows() == [(team.maya, team.dev, "p", LESSONS)]


def test_what_a_persona_receives_is_its_own_shares_and_those_with_all_on_that_project(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.priya, None))
    team.shares.put(team.share(team.maya, team.priya))
    team.shares.put(team.share(team.priya, team.dev, project="q"))
    assert [(s.sharer_id, s.receiver_id) for s in team.shares.received(team.dev, "p")] == [
        (team.maya, team.dev),
        (team.priya, None),
    ]
    assert [s.sharer_id for s in team.shares.received(team.dev, "q")] == [team.priya]
    assert team.shares.received(team.dev, "none") == []


def test_listing_by_project_and_by_the_personas_a_share_names(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.priya, None))
    team.shares.put(team.share(team.dev, team.priya, project="q"))
    assert [s.sharer_id for s in team.shares.list(project="p")] == [team.maya, team.priya]
    assert [s.project for s in team.shares.list(persona_id=team.dev)] == ["p", "q"]  # not Priya's share with all
    assert team.shares.list(project="q", persona_id=team.maya) == []


def test_deleting_a_persona_deletes_the_shares_it_gives_and_receives_in_its_transaction(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.maya, None))
    team.shares.put(team.share(team.priya, team.maya))
    team.shares.put(team.share(team.priya, None))
    team.shares.put(team.share(team.dev, team.priya))
    team.personas.remove(team.maya)
    assert team.rows() == [(team.priya, None, "p", LESSONS), (team.dev, team.priya, "p", LESSONS)]


def test_a_persona_delete_the_database_refuses_keeps_its_shares(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    refuse(team.engine, "DELETE", "personas")
    with pytest.raises(NightWatchError):
        team.personas.remove(team.maya)
    assert team.rows() == [(team.maya, team.dev, "p", LESSONS)]


def test_the_foreign_keys_take_the_shares_even_when_a_row_is_deleted_by_hand(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.priya, team.maya))
    with team.engine.begin() as conn:
        conn.execute(text("DELETE FROM personas WHERE id = :id"), {"id": team.maya})
    assert team.rows() == []


def test_a_share_naming_a_deleted_persona_is_not_found(team: Team) -> None:
    team.personas.remove(team.dev)
    with pytest.raises(NotFoundError, match="no longer exists"):
        team.shares.put(team.share(team.maya, team.dev))
    assert team.rows() == []


def test_a_row_this_version_cannot_read_says_how_to_fix_it(team: Team) -> None:
    team.shares.put(team.share(team.maya, team.dev))
    with team.engine.begin() as conn:
        conn.execute(text("UPDATE persona_shares SET what = 'secrets'"))
    with pytest.raises(StorageError, match=r"opens 'secrets'.*lessons, pins or all"):
        team.shares.list()


def test_replicas_sharing_the_same_thing_at_once_make_one_share(team: Team) -> None:
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def put(n: int) -> None:
        start.wait()
        try:
            team.shares.put(Share(team.maya, None, "p", ALL if n % 2 else PINS, T0 + timedelta(seconds=n)))
        except BaseException as err:  # collected for the assertion below
            errors.append(err)

    threads = [threading.Thread(target=put, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert [(s.sharer_id, s.receiver_id) for s in team.shares.list()] == [(team.maya, None)]


def test_an_unreachable_database_is_a_storage_error_that_says_what_to_check(team: Team) -> None:
    with team.engine.begin() as conn:
        conn.execute(text("DROP TABLE persona_shares"))
    with pytest.raises(StorageError, match=r"could not list the shares.*check DATABASE_URL"):
        team.shares.list()


# --- deletes through the persona service, memory in the database ---------------------------------------------------


def test_a_persona_delete_with_memory_in_the_database_reports_and_removes_its_shares(team: Team) -> None:
    service = PersonaService(
        repo=team.personas,
        store=DatabaseMemoryStore(team.engine),
        clock=FakeClock(datetime(2026, 11, 25, tzinfo=UTC)),
        transactions=SqlPersonaTransactions(team.engine),
        shares=team.shares,
    )
    team.shares.put(team.share(team.maya, team.dev))
    team.shares.put(team.share(team.priya, team.maya))
    team.shares.put(team.share(team.priya, None))
    outcome = service.delete("Maya")
    assert (
        outcome.message == "Deleted Maya; it had no memory to archive; the 2 shares it gave or received were removed."
    )
    assert team.rows() == [(team.priya, None, "p", LESSONS)]


def test_a_persona_delete_that_fails_midway_keeps_its_shares(team: Team) -> None:
    store = DatabaseMemoryStore(team.engine)
    store.update("maya", "p", lambda _: "# Maya · memory for p\n\n## 2026-11-20 · manual\n- A lesson.\n")
    service = PersonaService(
        repo=team.personas,
        store=store,
        clock=FakeClock(),
        transactions=SqlPersonaTransactions(team.engine),
        shares=team.shares,
    )
    team.shares.put(team.share(team.maya, team.dev))
    refuse(team.engine, "UPDATE OF owner", "memory_documents")  # the archive step, after the persona row went
    with pytest.raises(StorageError, match="Could not delete Maya"):
        service.delete("Maya")
    assert team.rows() == [(team.maya, team.dev, "p", LESSONS)]
