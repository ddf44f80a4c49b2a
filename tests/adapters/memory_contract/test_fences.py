"""Every store, built as the app builds it: a write to a slug no persona holds is refused and leaves nothing behind."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, func, select

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.adapters.db.repositories import SqlPersonaRepository
from nightwatch.adapters.db.schema import memory_documents
from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.domain.errors import MemoryMovedError
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.models import Persona
from tests.adapters.memory_contract.conftest import Stores
from tests.adapters.memory_contract.memories import table

NOW = datetime(2026, 11, 21, 9, 30, 5, tzinfo=UTC)
GHOST = Persona(name="Ghost", slug="ghost", role="Nobody yet", created_at=NOW, updated_at=NOW)


@pytest.fixture
def personas(stores: Stores) -> Iterator[SqlPersonaRepository]:
    """The persona table the store is fenced by: the store's own database, or SQLite beside the files."""
    if stores.url is not None:
        yield SqlPersonaRepository(stores.engine())
        return
    engine = make_engine(f"sqlite:///{stores.home.parent / 'personas.db'}")
    upgrade(engine)
    try:
        yield SqlPersonaRepository(engine)
    finally:
        engine.dispose()


@pytest.fixture
def fenced(stores: Stores, personas: SqlPersonaRepository) -> MemoryStore:
    if stores.url is None:
        return FileMemoryStore(stores.home, personas=personas)
    return DatabaseMemoryStore(stores.engine(), fenced=True)


def nothing_under_ghost(stores: Stores) -> bool:
    if stores.url is None:
        return not (stores.home / "agents" / "ghost").exists()
    engine: Engine = stores.engine()
    with engine.connect() as conn:
        rows = conn.execute(select(func.count()).where(memory_documents.c.owner == "ghost")).scalar_one()
    return rows == 0


def test_a_write_to_a_slug_no_persona_holds_is_refused_and_leaves_nothing(stores: Stores, fenced: MemoryStore) -> None:
    writes = [
        lambda: fenced.update("ghost", "p", lambda text: text + "- a lesson\n"),
        lambda: fenced.replace_keeping_previous("ghost", "p", "", "- compacted\n"),
        lambda: fenced.save_vectors("ghost", "p", table(["a lesson"])),
    ]
    for write in writes:
        with pytest.raises(MemoryMovedError, match="renamed or deleted"):
            write()
    assert fenced.update("ghost", "p", lambda text: text) == ""  # nothing to write: nothing refused either
    assert nothing_under_ghost(stores)


def test_once_a_persona_holds_the_slug_its_writes_go_through(
    stores: Stores, fenced: MemoryStore, personas: SqlPersonaRepository
) -> None:
    ghost = personas.add(GHOST)
    assert fenced.update("ghost", "p", lambda text: text + "- a lesson\n") == "- a lesson\n"
    assert fenced.replace_keeping_previous("ghost", "p", "- a lesson\n", "- compacted\n") is True
    assert fenced.rollback("ghost", "p") is True
    personas.save(replace(ghost, name="Casper", slug="casper"))
    with pytest.raises(MemoryMovedError):
        fenced.update("ghost", "p", lambda text: text + "- a late lesson\n")
    with pytest.raises(MemoryMovedError):
        fenced.replace_keeping_previous("ghost", "p", "- a lesson\n", "- compacted\n")
    assert fenced.read("ghost", "p") == "- a lesson\n"  # left as it was: the move is the rename's to make
