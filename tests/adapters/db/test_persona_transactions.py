"""Rename and delete with memory in the database: the persona row and its memory change in one real transaction.

A failure is injected inside the database, between the persona step and the memory step, by a trigger that refuses
to move memory rows (or to delete a persona): the transaction rolls back and the persona, its memory, its vectors
and its kept lessons are all as they were. Runs on SQLite, and on PostgreSQL with DATABASE_URL.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from sqlalchemy import Engine, text

from nightwatch.adapters.db import SqlPendingLessons, SqlPersonaRepository, SqlPinRepository
from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.adapters.db.persona_transactions import SqlPersonaTransactions
from nightwatch.domain.errors import NightWatchError, StorageError
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.personas import PersonaDraft, PersonaService
from nightwatch.domain.pins.models import Pin, PinKind
from nightwatch.domain.vectors import VectorTable, vector_key
from tests.adapters.db.conftest import engine, postgres_engine, sqlite_engine
from tests.fakes import T0, FakeClock

__all__ = ["engine", "postgres_engine", "sqlite_engine"]

LESSON = (
    "# Maya · memory for night-watch\n\n## 2026-11-20 · manual\n- Webhook signatures need constant-time compares.\n"
)


class World:
    """A persona service on the real database, with memory in the database, and what it is made of."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.repo = SqlPersonaRepository(engine)
        self.store = DatabaseMemoryStore(engine)
        self.pending = SqlPendingLessons(engine)
        self.service = PersonaService(
            repo=self.repo,
            store=self.store,
            clock=FakeClock(),
            pending=self.pending,
            transactions=SqlPersonaTransactions(engine),
        )
        self.service.create(PersonaDraft(name="Maya", role="Security reviewer"))
        self.store.update("maya", "night-watch", lambda _: LESSON)
        self.store.save_vectors("maya", "night-watch", VectorTable((vector_key("x"),), np.ones((1, 4), np.float32)))
        kept = PendingLesson("maya", "night-watch", "Rotate keys.", "manual", date(2026, 11, 20), None, "x", T0)
        self.pending.keep([kept])

    def state(self) -> tuple[object, ...]:
        """Everything a rename or delete may change, to compare before and after."""
        return (
            [(p.id, p.name, p.slug) for p in self.repo.list()],
            {slug: self.store.projects(slug) for slug in ("maya", "maya-sec")},
            self.store.read("maya", "night-watch"),
            self.store.read_vectors("maya", "night-watch").keys,
            [(row.persona, row.text) for row in self.pending.waiting()],
        )


@pytest.fixture
def world(engine: Engine) -> World:
    return World(engine)


def refuse(engine: Engine, operation: str, table: str) -> None:
    """Make the database refuse `operation` (UPDATE OF column, DELETE) on `table`, as a failing statement would."""
    name = f"refuse_{table}"
    if engine.dialect.name == "sqlite":
        statements = [
            f"CREATE TRIGGER {name} BEFORE {operation} ON {table} BEGIN SELECT RAISE(ABORT, 'injected: refused'); END"
        ]
    else:
        statements = [
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'injected: % refused', TG_TABLE_NAME; END $$",
            f"CREATE TRIGGER {name} BEFORE {operation} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()",
        ]
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))


def test_a_rename_moves_the_persona_its_memory_vectors_and_kept_lessons_together(world: World) -> None:
    outcome = world.service.rename("Maya", "Maya Sec")
    assert outcome.persona is not None
    assert outcome.persona.slug == "maya-sec"
    assert outcome.message == "Renamed Maya to Maya Sec; memory moved to agents/maya-sec/."
    assert world.store.read("maya-sec", "night-watch") == LESSON
    assert world.store.projects("maya") == []
    assert len(world.store.read_vectors("maya-sec", "night-watch")) == 1
    assert [row.persona for row in world.pending.waiting()] == ["maya-sec"]


def test_a_delete_archives_memory_and_drops_kept_lessons_together(world: World) -> None:
    outcome = world.service.delete("Maya")
    assert outcome.message == (
        "Deleted Maya; its memory was archived to agents/.archived/maya-20261121T090000Z/; "
        "1 lesson waiting to be saved went with it."
    )
    assert world.repo.list() == []
    assert world.store.projects("maya") == []
    assert world.pending.waiting() == []


def test_a_memory_move_refused_after_the_persona_changed_leaves_both_unchanged(world: World, engine: Engine) -> None:
    refuse(engine, "UPDATE OF owner", "memory_documents")
    before = world.state()
    with pytest.raises(StorageError) as caught:
        world.service.rename("Maya", "Maya Sec")
    assert "Could not rename Maya" in str(caught.value)
    assert "Nothing was changed; its memory stays in agents/maya/" in str(caught.value)
    assert world.state() == before
    assert world.service.get("maya").name == "Maya"


def test_an_archive_refused_after_the_persona_was_removed_leaves_both_unchanged(world: World, engine: Engine) -> None:
    refuse(engine, "UPDATE OF owner", "memory_documents")
    before = world.state()
    with pytest.raises(StorageError, match="Could not delete Maya"):
        world.service.delete("Maya")
    assert world.state() == before


@pytest.mark.parametrize(("action", "operation"), [("rename", "UPDATE"), ("delete", "DELETE")])
def test_a_refused_persona_step_moves_no_memory(world: World, engine: Engine, action: str, operation: str) -> None:
    refuse(engine, operation, "personas")
    before = world.state()
    step = {"rename": lambda: world.service.rename("Maya", "Maya Sec"), "delete": lambda: world.service.delete("Maya")}
    with pytest.raises(NightWatchError, match=f"Could not {action} Maya: .* Nothing was changed"):
        step[action]()
    assert world.state() == before


def test_a_delete_takes_the_persona_s_own_pins_in_its_transaction(world: World, engine: Engine) -> None:
    pins = SqlPinRepository(engine)
    maya = world.service.get("maya")
    for persona_id, source in ((maya.id, "/srv/a.md"), (None, "/srv/b.md")):
        pin = Pin(persona_id, "night-watch", PinKind.FILE, source, "Doc.", "h", T0, "cli", created_at=T0)
        pins.add(pin, source)
    refuse(engine, "UPDATE OF owner", "memory_documents")
    with pytest.raises(StorageError, match="Could not delete Maya"):
        world.service.delete("Maya")
    assert [pin.source for pin in pins.list()] == ["/srv/a.md", "/srv/b.md"], "a refused delete keeps the pins"
    with engine.begin() as conn:
        conn.execute(
            text(
                "DROP TRIGGER refuse_memory_documents"
                + (" ON memory_documents" if engine.dialect.name != "sqlite" else "")
            )
        )
    outcome = world.service.delete("Maya")
    assert outcome.message.endswith("its pin was removed.")
    assert [pin.source for pin in pins.list()] == ["/srv/b.md"]
