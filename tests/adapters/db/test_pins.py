"""SqlPinRepository against real SQLite (and PostgreSQL when DATABASE_URL points at one)."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, text, update
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db import SqlPersonaRepository, SqlPinRepository, make_engine, upgrade
from nightwatch.adapters.db.migrate import alembic_config, locked
from nightwatch.adapters.db.schema import pins as pins_table
from nightwatch.domain.errors import NotFoundError, StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.pins import snapshot_hash
from nightwatch.domain.pins.inputs import pin_key
from nightwatch.domain.pins.models import Pin, PinKind, PinStatus
from tests.adapters.db.databases import empty_database, schema_differences
from tests.fakes import T0

SECRET = "xoxb-1234567890-abcdefghijklmnop"


@pytest.fixture
def repo(engine: Engine) -> SqlPinRepository:
    return SqlPinRepository(engine)


@pytest.fixture
def people(engine: Engine) -> dict[str, Persona]:
    personas = SqlPersonaRepository(engine)
    return {
        name: personas.add(Persona(name=name, slug=name.lower(), role="Reviewer", created_at=T0, updated_at=T0))
        for name in ("Maya", "Carlos")
    }


def a_pin(persona: Persona | None, source: str = "/srv/docs/a.md", content: str = "Doc.", **changes: object) -> Pin:
    pin = Pin(
        persona_id=persona.id if persona else None,
        project="night-watch",
        kind=PinKind.FILE,
        source=source,
        content=content,
        content_hash=snapshot_hash(content),
        read_at=T0,
        added_by="cli",
        status_since=T0,
        stamp="1:2:3:4:5",
        created_at=T0,
    )
    return replace(pin, **changes)  # type: ignore[arg-type]


def add(repo: SqlPinRepository, pin: Pin) -> Pin:
    stored, _ = repo.add(pin, pin_key(pin.kind, pin.source, pin.content))
    return stored


def test_a_pin_is_stored_and_read_back_as_it_was(repo: SqlPinRepository, people: dict[str, Persona]) -> None:
    pin = a_pin(people["Maya"], content="Ünïcödé 日本語 ✓\nsecond line")
    stored, new = repo.add(pin, "k1")
    assert new
    assert stored == replace(pin, id=stored.id)
    assert repo.get(stored.id or 0) == stored
    assert repo.get(999) is None


def test_the_same_source_for_the_same_persona_and_project_updates_the_one_row(
    repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    first = add(repo, a_pin(people["Maya"]))
    again, new = repo.add(
        a_pin(people["Maya"], content="Doc v2.", added_by="U9"), pin_key(PinKind.FILE, "/srv/docs/a.md", "")
    )
    assert not new
    assert again.id == first.id
    assert again.content == "Doc v2."
    assert again.added_by == "cli"  # who pinned it first
    others = [
        add(repo, a_pin(people["Carlos"])),  # another persona
        add(repo, a_pin(None)),  # every persona
        add(repo, a_pin(people["Maya"], project="other")),  # another project
    ]
    assert len({pin.id for pin in [first, *others]}) == 4
    shared_again, new = repo.add(a_pin(None, content="v3"), pin_key(PinKind.FILE, "/srv/docs/a.md", ""))
    assert not new
    assert shared_again.id == others[1].id


def test_lists_for_a_project_a_kind_and_what_one_persona_gets(
    repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    maya, carlos = people["Maya"], people["Carlos"]
    own = add(repo, a_pin(maya))
    shared = add(repo, a_pin(None, source="note", kind=PinKind.TEXT))
    theirs = add(repo, a_pin(carlos, source="/srv/docs/b.md"))
    elsewhere = add(repo, a_pin(maya, project="other"))
    assert repo.list() == [own, shared, theirs, elsewhere]
    assert repo.list(project="night-watch") == [own, shared, theirs]
    assert repo.list(kind=PinKind.TEXT) == [shared]
    assert repo.for_persona(maya.id or 0, "night-watch") == [own, shared]
    assert repo.for_persona(carlos.id or 0, "other") == []


def test_update_stores_a_new_snapshot_or_status(repo: SqlPinRepository, people: dict[str, Persona]) -> None:
    pin = add(repo, a_pin(people["Maya"]))
    later = T0 + timedelta(hours=1)
    missing = repo.update(replace(pin, status=PinStatus.MISSING, status_since=later, problem=None))
    assert missing is not None
    assert (missing.status, missing.status_since, missing.content) == (
        PinStatus.MISSING,
        later,
        "Doc.",
    )
    fresh = repo.update(replace(pin, content="New.", content_hash=snapshot_hash("New."), stamp="9", read_at=later))
    assert fresh is not None
    assert (fresh.content, fresh.stamp, fresh.read_at, fresh.status) == ("New.", "9", later, "ok")
    assert repo.update(replace(pin, id=999)) is None


def test_remove_returns_the_pin_once(repo: SqlPinRepository, people: dict[str, Persona]) -> None:
    pin = add(repo, a_pin(people["Maya"]))
    assert repo.remove(pin.id or 0) == pin
    assert repo.remove(pin.id or 0) is None
    assert repo.list() == []


def test_a_removed_pin_s_number_is_never_given_again(repo: SqlPinRepository, people: dict[str, Persona]) -> None:
    first = add(repo, a_pin(people["Maya"], source="/srv/docs/a.md"))
    second = add(repo, a_pin(people["Maya"], source="/srv/docs/b.md"))
    assert repo.remove(second.id or 0) == second
    third = add(repo, a_pin(people["Maya"], source="/srv/docs/c.md"))
    assert (first.id, second.id, third.id) == (first.id, (first.id or 0) + 1, (first.id or 0) + 2)
    assert repo.remove(second.id or 0) is None, "an old `pin remove` of the second pin reaches no other pin"
    assert [pin.id for pin in repo.list()] == [first.id, third.id]


def test_removing_every_pin_does_not_start_the_numbers_again(
    repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    numbers = [add(repo, a_pin(people["Carlos"], source=f"/srv/docs/{n}.md")).id or 0 for n in range(3)]
    for number in numbers:
        repo.remove(number)
    assert add(repo, a_pin(None)).id == numbers[-1] + 1


def test_writers_pinning_at_once_while_pins_are_removed_never_share_or_reuse_a_number(
    engine: Engine, people: dict[str, Persona]
) -> None:
    repo = SqlPinRepository(engine)
    removed = [add(repo, a_pin(people["Maya"], source=f"/srv/old/{n}.md")).id or 0 for n in range(3)]
    for number in removed:
        repo.remove(number)
    numbers: list[int] = []
    errors: list[BaseException] = []

    def pin_some(writer: int) -> None:
        try:
            mine = SqlPinRepository(engine)
            for n in range(5):
                numbers.append(add(mine, a_pin(people["Maya"], source=f"/srv/new/{writer}-{n}.md")).id or 0)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=pin_some, args=(writer,)) for writer in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(numbers) == len(set(numbers)) == 20
    assert min(numbers) > max(removed)


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_pins_made_before_revision_0012_keep_their_numbers_and_later_ones_are_never_reused(
    kind: str, tmp_path: Path
) -> None:
    with empty_database(kind, tmp_path) as url:
        engine = make_engine(url)
        try:
            with locked(engine) as connection:
                command.upgrade(alembic_config(connection), "0011")
            maya = SqlPersonaRepository(engine).add(Persona(name="Maya", slug="maya", role="Reviewer"))
            repo = SqlPinRepository(engine)
            old = [add(repo, a_pin(maya, source=f"/srv/docs/{n}.md")) for n in range(3)]
            repo.remove(old[1].id or 0)
            upgrade(engine)
            assert schema_differences(engine) == []
            assert repo.list() == [old[0], old[2]]
            newest = add(repo, a_pin(maya, source="/srv/docs/next.md"))
            assert newest.id == (old[2].id or 0) + 1
            repo.remove(newest.id or 0)
            shared = add(repo, a_pin(None))
            assert shared.id == (newest.id or 0) + 1
            row = {column: getattr(shared, column) for column in ("project", "kind", "source", "content")}
            twin = row | {"source_key": pin_key(PinKind.FILE, shared.source, ""), "content_hash": "x", "read_at": T0}
            with pytest.raises(IntegrityError), engine.begin() as conn:  # the partial unique index came through
                conn.execute(pins_table.insert().values(**twin, added_by="cli", status="ok", created_at=T0))
        finally:
            engine.dispose()


def test_a_persona_s_own_pins_go_with_it_and_the_project_wide_ones_stay(
    engine: Engine, repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    add(repo, a_pin(people["Maya"]))
    shared = add(repo, a_pin(None))
    carlos = add(repo, a_pin(people["Carlos"]))
    SqlPersonaRepository(engine).remove(people["Maya"].id or 0)
    assert repo.list() == [shared, carlos]


def test_a_pin_for_a_persona_deleted_meanwhile_is_refused(
    engine: Engine, repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    SqlPersonaRepository(engine).remove(people["Maya"].id or 0)
    with pytest.raises(NotFoundError, match="no longer exists"):
        add(repo, a_pin(people["Maya"]))


def test_secrets_are_redacted_before_they_are_stored_and_the_hash_follows(
    repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    pin = add(repo, a_pin(people["Maya"], content=f"token = {SECRET}"))
    assert SECRET not in pin.content
    assert "[redacted" in pin.content
    assert pin.content_hash == snapshot_hash(pin.content)
    changed = repo.update(replace(pin, content=f"new {SECRET}", content_hash="changed"))
    assert changed is not None
    assert SECRET not in changed.content


def test_a_status_change_does_not_rewrite_an_unchanged_snapshot(
    engine: Engine, repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    pin = add(repo, a_pin(people["Maya"], content=f"clean {SECRET}"))
    with engine.begin() as conn:  # what an older row could hold: the check below must not scan or rewrite it
        conn.execute(update(pins_table).where(pins_table.c.id == pin.id).values(content="stored as it is"))
    flagged = repo.update(replace(pin, status=PinStatus.MISSING))
    assert flagged is not None
    assert flagged.content == "stored as it is"


def test_two_writers_pinning_the_same_source_at_once_end_with_one_pin(
    engine: Engine, people: dict[str, Persona]
) -> None:
    results: list[tuple[Pin, bool]] = []
    errors: list[BaseException] = []

    def pin_it() -> None:
        try:
            results.append(SqlPinRepository(engine).add(a_pin(None), "same-key"))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=pin_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len({pin.id for pin, _ in results}) == 1
    assert sorted(new for _, new in results) == [False, False, False, True]


def test_an_unknown_kind_in_a_row_is_a_clear_storage_error(
    engine: Engine, repo: SqlPinRepository, people: dict[str, Persona]
) -> None:
    pin = add(repo, a_pin(people["Maya"]))
    with engine.begin() as conn:
        conn.execute(text("UPDATE pins SET kind = 'ftp' WHERE id = :id"), {"id": pin.id})
    with pytest.raises(StorageError, match="fix the row"):
        repo.list()
