"""SqlItemShareRepository on real SQLite and PostgreSQL: one row per shared lesson or pin, shares with all, persona
deletes that take them, pins removed that do not.

Runs on SQLite, and on PostgreSQL with DATABASE_URL (marked `postgres`).
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db import SqlItemShareRepository, SqlPersonaRepository, SqlPinRepository
from nightwatch.domain.errors import NotFoundError, StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.pins.models import Pin, PinKind
from nightwatch.domain.sharing import Item, ItemKind, ItemShare
from tests.fakes import T0

COOKIE = Item(ItemKind.LESSON, "0401dc1d")
TOKENS = Item(ItemKind.LESSON, "47be24f8")
THREAT = Item(ItemKind.PIN, "1")


class Team:
    """Maya, Dev and Priya in the database, and the item shares beside them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.personas = SqlPersonaRepository(engine)
        self.items = SqlItemShareRepository(engine)
        added = [self.personas.add(Persona(name=n, slug=n.lower(), role="r", created_at=T0)) for n in NAMES]
        self.maya, self.dev, self.priya = (p.id or 0 for p in added)

    def share(self, sharer: int, receiver: int | None, item: Item = COOKIE, project: str = "p") -> ItemShare:
        return ItemShare(sharer, receiver, project, item, T0)

    def rows(self) -> list[tuple[int, int | None, str, Item]]:
        return [(s.sharer_id, s.receiver_id, s.project, s.item) for s in self.items.list()]


NAMES = ("Maya", "Dev", "Priya")


@pytest.fixture
def team(engine: Engine) -> Team:
    return Team(engine)


def test_an_item_share_is_stored_once_with_its_time_and_each_item_is_a_share_of_its_own(team: Team) -> None:
    assert team.items.put(team.share(team.maya, team.dev)) is None
    assert team.items.put(team.share(team.maya, team.dev)) == team.share(team.maya, team.dev)
    assert team.items.put(team.share(team.maya, team.dev, TOKENS)) is None
    assert team.items.put(team.share(team.maya, team.dev, THREAT)) is None
    assert team.rows() == [
        (team.maya, team.dev, "p", COOKIE),
        (team.maya, team.dev, "p", TOKENS),
        (team.maya, team.dev, "p", THREAT),
    ]
    [first, *_] = team.items.list()
    assert first.created_at == T0


def test_a_lesson_and_a_pin_with_the_same_id_are_different_items(team: Team) -> None:
    team.items.put(team.share(team.maya, team.dev, Item(ItemKind.LESSON, "1")))
    team.items.put(team.share(team.maya, team.dev, Item(ItemKind.PIN, "1")))
    assert [row[3].kind for row in team.rows()] == [ItemKind.LESSON, ItemKind.PIN]


def test_a_share_with_all_is_one_row_and_the_database_itself_refuses_a_second(team: Team) -> None:
    assert team.items.put(team.share(team.maya, None)) is None
    assert team.items.put(team.share(team.maya, None)) is not None
    assert team.rows() == [(team.maya, None, "p", COOKIE)]
    with pytest.raises(IntegrityError), team.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO persona_item_shares (sharer_id, receiver_id, project, kind, item, created_at) "
                "VALUES (:maya, NULL, 'p', 'lesson', '0401dc1d', :t0)"
            ),
            {"maya": team.maya, "t0": T0},
        )


def test_what_a_persona_receives_is_its_own_item_shares_and_those_with_all_on_that_project(team: Team) -> None:
    team.items.put(team.share(team.maya, team.dev))
    team.items.put(team.share(team.maya, None, TOKENS))
    team.items.put(team.share(team.maya, team.priya, THREAT))
    team.items.put(team.share(team.maya, team.dev, THREAT, project="q"))
    assert [s.item for s in team.items.received(team.dev, "p")] == [COOKIE, TOKENS]
    assert [s.item for s in team.items.received(team.priya, "p")] == [TOKENS, THREAT]
    assert [s.item for s in team.items.received(team.dev, "q")] == [THREAT]
    assert [s.item for s in team.items.list(project="q")] == [THREAT]
    assert [s.item for s in team.items.list(persona_id=team.priya)] == [THREAT]


def test_removing_returns_the_share_and_a_missing_one_is_none(team: Team) -> None:
    team.items.put(team.share(team.maya, team.dev))
    team.items.put(team.share(team.maya, None))
    assert team.items.remove(team.maya, team.dev, "p", COOKIE) == team.share(team.maya, team.dev)
    assert team.items.remove(team.maya, team.dev, "p", COOKIE) is None
    assert team.items.remove(team.maya, None, "p", TOKENS) is None
    assert team.rows() == [(team.maya, None, "p", COOKIE)]


def test_deleting_a_persona_deletes_the_item_shares_it_gives_and_receives(team: Team) -> None:
    team.items.put(team.share(team.maya, team.dev))
    team.items.put(team.share(team.priya, team.maya))
    team.items.put(team.share(team.maya, None))
    team.items.put(team.share(team.dev, team.priya))
    team.personas.remove(team.maya)
    assert team.rows() == [(team.dev, team.priya, "p", COOKIE)]


def test_removing_the_pin_leaves_its_share_for_listing_to_call_gone(team: Team) -> None:
    pins = SqlPinRepository(team.engine)
    pin = Pin(team.maya, "p", PinKind.TEXT, "threat", "The admin API is VPN-only.", "h", T0, "cli", created_at=T0)
    stored, _ = pins.add(pin, "key")
    shared = Item(ItemKind.PIN, str(stored.id))
    team.items.put(team.share(team.maya, team.dev, shared))
    assert stored.id is not None
    pins.remove(stored.id)
    assert team.rows() == [(team.maya, team.dev, "p", shared)]


def test_a_share_naming_a_deleted_persona_is_not_found(team: Team) -> None:
    team.personas.remove(team.dev)
    with pytest.raises(NotFoundError, match="no longer exists"):
        team.items.put(team.share(team.maya, team.dev))
    assert team.rows() == []


def test_a_row_this_version_cannot_read_says_how_to_fix_it(team: Team) -> None:
    team.items.put(team.share(team.maya, team.dev))
    with team.engine.begin() as conn:
        conn.execute(text("UPDATE persona_item_shares SET kind = 'secret'"))
    with pytest.raises(StorageError, match=r"of a 'secret'.*lesson or pin"):
        team.items.list()


def test_replicas_sharing_the_same_item_at_once_make_one_share(team: Team) -> None:
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def put() -> None:
        start.wait()
        try:
            team.items.put(team.share(team.maya, None))
        except BaseException as err:  # collected for the assertion below
            errors.append(err)

    threads = [threading.Thread(target=put) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert team.rows() == [(team.maya, None, "p", COOKIE)]


def test_an_unreachable_table_is_a_storage_error_that_says_what_to_check(team: Team) -> None:
    with team.engine.begin() as conn:
        conn.execute(text("DROP TABLE persona_item_shares"))
    with pytest.raises(StorageError, match=r"could not list the shares.*check DATABASE_URL"):
        team.items.list()
