"""The engine: a database URL made into a SQLAlchemy engine, SQLite's file kept private and its pragmas set."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url


def make_engine(url: str, *, pool_size: int = 15) -> Engine:
    """Create an engine; for SQLite, create the file's folder and enable WAL and a busy timeout.

    A server database gets a pool of at most `pool_size` connections (NIGHTWATCH_DB_POOL_SIZE), kept open once made.
    """
    parsed = make_url(url)
    kwargs: dict[str, Any] = {"future": True}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the home, private
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    else:
        kwargs.update(pool_pre_ping=True, pool_size=pool_size, max_overflow=0)
    engine = create_engine(url, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            event.listen(engine, "connect", _private_file(Path(parsed.database)))
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _private_file(path: Path) -> Callable[[Any, Any], None]:
    """A connect hook that makes the database file 0600 before WAL mode is set (its -wal and -shm take its mode)."""

    def tighten(_dbapi_connection: Any, _record: Any) -> None:
        with contextlib.suppress(OSError):
            if os.stat(path).st_mode & 0o077:
                os.chmod(path, 0o600)

    return tighten


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL stays corruption-safe and skips the fsync on every commit (the WAL is synced at
    # checkpoints), which keeps a stored turn under a millisecond; a power cut may lose the last commits.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
