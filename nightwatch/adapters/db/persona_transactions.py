"""One database transaction over a persona's row, its memory, its kept lessons, its shares and its pins.

Used when memory lives in the database: the persona repository, the memory store and the kept lessons are built on
one Connection, so a rename or delete moves the persona and its memory together or not at all. There is no moment
in which another replica sees the persona renamed and its memory still under the old slug, and a failure at any
step (the memory move included) rolls back every step before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine

from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.adapters.db.pending_lessons import SqlPendingLessons
from nightwatch.adapters.db.pins import SqlPinRepository
from nightwatch.adapters.db.repositories import SqlPersonaRepository
from nightwatch.adapters.db.shares import SqlShareRepository
from nightwatch.adapters.db.transactions import database_errors, transaction


@dataclass(frozen=True)
class SqlPersonaTransaction:
    """The persona repository, memory store, kept lessons, shares and pins of one open transaction."""

    personas: SqlPersonaRepository
    memory: DatabaseMemoryStore
    pending: SqlPendingLessons
    pins: SqlPinRepository
    shares: SqlShareRepository


class SqlPersonaTransactions:
    """Opens SqlPersonaTransactions on `engine` (a write transaction: BEGIN IMMEDIATE on SQLite)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @contextmanager
    def begin(self) -> Iterator[SqlPersonaTransaction]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        with database_errors("change a persona and its memory"), transaction(self._engine, write=True) as conn:
            yield SqlPersonaTransaction(
                personas=SqlPersonaRepository(conn),
                memory=DatabaseMemoryStore(conn),
                pending=SqlPendingLessons(conn),
                pins=SqlPinRepository(conn),
                shares=SqlShareRepository(conn),
            )
