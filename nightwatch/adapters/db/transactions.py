"""Transactions: a new one on an engine, or the caller's own on a connection, so several stores can share one.

A repository or store built on an Engine opens a transaction per call; built on a Connection (a unit of work, see
persona_transactions.py) it joins the transaction that connection is in, and the caller commits or rolls back the lot.
A write transaction on SQLite starts with BEGIN IMMEDIATE: it takes the database's write lock before its first
read, so a read-then-write can never be refused half-way (a deferred transaction that reads, then finds another
writer committed meanwhile, fails at once instead of waiting out the busy timeout). On PostgreSQL a write
serialises on the rows it locks (`SELECT ... FOR UPDATE`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from nightwatch.domain.errors import StorageError

Bind = Engine | Connection


@contextmanager
def transaction(bind: Bind, *, write: bool = False) -> Iterator[Connection]:
    """A connection inside a transaction: committed when the block ends and rolled back when it raises.

    On a Connection the block joins the transaction that connection is already in, which its owner ends.
    """
    if isinstance(bind, Connection):
        yield bind
        return
    with bind.begin() as conn:
        if write and conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # pysqlite sees it open, so commit and rollback end it
        yield conn


@contextmanager
def begin(bind: Bind, doing: str, *, write: bool = False, clashes: bool = False) -> Iterator[Connection]:
    """A `transaction` whose database errors become a StorageError saying what could not be `doing`.

    With `clashes`, a clash at a unique index (IntegrityError) passes through unchanged, for the caller to read.
    """
    with database_errors(doing, clashes=clashes), transaction(bind, write=write) as conn:
        yield conn


@contextmanager
def database_errors(doing: str, *, clashes: bool = False) -> Iterator[None]:
    """Turn a database error into a StorageError that says what could not be done and what to check.

    The one place a database error becomes a StorageError; with `clashes`, an IntegrityError passes through.
    """
    try:
        yield
    except SQLAlchemyError as err:
        if clashes and isinstance(err, IntegrityError):
            raise
        raise StorageError(
            f"The database could not {doing} ({type(err).__name__}); check DATABASE_URL and that the database is "
            "reachable, then try again."
        ) from err
