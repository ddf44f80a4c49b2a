"""PersonaService with memory in the persona's own database: a rename or delete is one transaction (fakes).

The persona row, its memory and its kept lessons change together; when any step fails, the memory move included,
none of them has changed. The real transaction on SQLite and PostgreSQL: tests/adapters/db/test_persona_transactions.py.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import PurePosixPath

import pytest

from nightwatch.domain.errors import ConflictError, StorageError
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.ports import FolderMove
from nightwatch.domain.models import Persona
from nightwatch.domain.personas.service import PersonaDraft, PersonaService
from tests.fakes import (
    T0,
    FakeClock,
    InMemoryMemoryStore,
    InMemoryPendingLessons,
    InMemoryPersonaRepository,
    InMemoryPersonaTransactions,
    InMemoryShareRepository,
)

LESSON = "# Maya · night-watch\n\n## 2026-11-20 · pr_review\n- Webhook signatures need constant-time compares.\n"


class BreakingStore(InMemoryMemoryStore):
    """Moves memory, then fails, as a database refusing the statement after it would: armed by `broken`."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        move = super().migrate(old_slug, new_slug, now)
        if self.broken:
            raise StorageError("The database could not move a renamed persona's memory (OperationalError).")
        return move

    def archive(self, slug: str, now: datetime) -> FolderMove:
        move = super().archive(slug, now)
        if self.broken:
            raise StorageError("The database could not archive a deleted persona's memory (OperationalError).")
        return move


class Env:
    def __init__(self) -> None:
        self.repo = InMemoryPersonaRepository()
        self.store = BreakingStore()
        self.pending = InMemoryPendingLessons()
        self.transactions = InMemoryPersonaTransactions(self.repo, self.store, self.pending)
        self.service = PersonaService(
            repo=self.repo, store=self.store, clock=FakeClock(), pending=self.pending, transactions=self.transactions
        )
        outcome = self.service.create(PersonaDraft(name="Maya", role="Reviewer"))
        assert outcome.persona is not None
        self.maya: Persona = outcome.persona
        self.store.update("maya", "night-watch", lambda _: LESSON)
        self.pending.keep(
            [PendingLesson("maya", "night-watch", "Rotate keys.", "deliberation", date(2026, 11, 20), None, "x", T0)]
        )


@pytest.fixture
def env() -> Env:
    return Env()


def test_a_rename_moves_the_persona_its_memory_and_its_kept_lessons_in_one_transaction(env: Env) -> None:
    outcome = env.service.rename("Maya", "Maya Sec")
    assert env.transactions.committed == 1
    assert env.service.get("maya-sec").id == env.maya.id
    assert env.store.read("maya-sec", "night-watch") == LESSON
    assert env.store.projects("maya") == []
    assert [row.persona for row in env.pending.rows] == ["maya-sec"]
    assert outcome.move == FolderMove(True, PurePosixPath("agents/maya"), PurePosixPath("agents/maya-sec"))
    assert outcome.message == "Renamed Maya to Maya Sec; memory moved to agents/maya-sec/."


def test_a_delete_archives_memory_and_drops_kept_lessons_in_one_transaction(env: Env) -> None:
    outcome = env.service.delete("Maya")
    assert env.transactions.committed == 1
    assert env.repo.list() == []
    assert env.store.archived == {"maya-20261121T090000Z": {"night-watch": LESSON}}
    assert env.pending.rows == []
    assert outcome.message == (
        "Deleted Maya; its memory was archived to agents/.archived/maya-20261121T090000Z/; "
        "1 lesson waiting to be saved went with it."
    )


def test_a_memory_move_that_fails_leaves_the_persona_and_its_memory_as_they_were(env: Env) -> None:
    env.store.broken = True
    with pytest.raises(StorageError) as caught:
        env.service.rename("Maya", "Maya Sec")
    assert "Could not rename Maya" in str(caught.value)
    assert "Nothing was changed; its memory stays in agents/maya/" in str(caught.value)
    assert env.service.get("maya") == env.maya
    assert env.repo.find("maya-sec") is None
    assert env.store.read("maya", "night-watch") == LESSON
    assert env.store.projects("maya-sec") == []
    assert [row.persona for row in env.pending.rows] == ["maya"]
    assert env.transactions.committed == 0


def test_an_archive_that_fails_leaves_the_persona_its_memory_and_its_kept_lessons(env: Env) -> None:
    env.store.broken = True
    with pytest.raises(StorageError, match=r"Could not delete Maya: .* Nothing was changed"):
        env.service.delete("Maya")
    assert env.repo.list() == [env.maya]
    assert env.store.read("maya", "night-watch") == LESSON
    assert env.store.archived == {}
    assert len(env.pending.rows) == 1


def test_kept_lessons_that_cannot_move_undo_the_rename(env: Env) -> None:
    env.pending.broken = True
    with pytest.raises(StorageError, match="Nothing was changed"):
        env.service.rename("Maya", "Maya Sec")
    env.pending.broken = False
    assert env.service.get("maya") == env.maya
    assert env.store.read("maya", "night-watch") == LESSON


def test_a_conflict_found_by_the_database_keeps_its_type_and_changes_nothing(env: Env) -> None:
    class Racing(InMemoryPersonaRepository):
        def save(self, persona: Persona) -> Persona:
            raise ConflictError("Another persona already has that name; choose another name.")

    racing = Racing()
    env.transactions.open = type(env.transactions.open)(racing, env.store, env.pending, InMemoryShareRepository(racing))
    with pytest.raises(ConflictError, match="Nothing was changed"):
        env.service.rename("Maya", "Maya Sec")
    assert env.store.read("maya", "night-watch") == LESSON
