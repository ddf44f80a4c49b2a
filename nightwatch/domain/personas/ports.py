"""Where personas are kept, and the one transaction that moves a persona with everything it owns."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from nightwatch.domain.memory.ports import MemoryStore, PendingLessons
from nightwatch.domain.models import Persona
from nightwatch.domain.pins.ports import PinRepository
from nightwatch.domain.sharing.ports import ShareRepository


class PersonaRepository(Protocol):
    def list(self, *, include_inactive: bool = True) -> list[Persona]: ...

    def get(self, persona_id: int) -> Persona | None: ...

    def find(self, name_or_slug: str) -> Persona | None:
        """Match a name ignoring case, or a slug."""
        ...

    def add(self, persona: Persona) -> Persona:
        """Insert; raise ConflictError when the name (ignoring case) or slug is taken. Returns it with its id."""
        ...

    def save(self, persona: Persona) -> Persona:
        """Update the persona with `persona.id`; raise ConflictError / NotFoundError."""
        ...

    def remove(self, persona_id: int) -> None:
        """Delete the persona and, in the same transaction, the shares it gives or receives and its own pins."""
        ...

    def file_marks(self) -> dict[str, str | None]:
        """Every persona ever added from a file, by slug, with the fingerprint of what a file last set (or None).

        A mark stays when its persona is deleted, so a deleted persona is not added from its file again.
        """
        ...

    def mark_file(self, slug: str, fingerprint: str | None) -> None:
        """Record (or update) the mark of `slug` with the fingerprint of what its file set."""
        ...


class PersonaTransaction(Protocol):
    """A persona's row, its memory, its kept lessons, its shares and its pins, changed in one database transaction."""

    @property
    def personas(self) -> PersonaRepository: ...

    @property
    def memory(self) -> MemoryStore: ...

    @property
    def pending(self) -> PendingLessons: ...

    @property
    def pins(self) -> PinRepository: ...

    @property
    def shares(self) -> ShareRepository: ...


class PersonaTransactions(Protocol):
    """Where memory lives in the personas' own database: renames and deletes move it in the persona's transaction."""

    def begin(self) -> AbstractContextManager[PersonaTransaction]:
        """Open one transaction: it commits when the block ends, and when the block raises nothing has changed."""
        ...
