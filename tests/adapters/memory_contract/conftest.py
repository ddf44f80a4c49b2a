"""The MemoryStore contract runs on every store: memory files, the database on SQLite, and on PostgreSQL.

`stores` says how to build a store of one kind, and is picklable, so a child process builds its own (and, having a
process id of its own, its own engine). The PostgreSQL run is marked `postgres` and works in a schema of its own
(tests/adapters/db/conftest.py), dropped afterwards.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import Engine

from nightwatch.adapters.db import make_engine
from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.domain.memory.ports import MemoryStore
from tests.adapters.db.conftest import postgres_engine, sqlite_engine

__all__ = ["Stores", "postgres_engine", "sqlite_engine"]

_ENGINES: dict[tuple[int, str], Engine] = {}  # per process: a forked child never uses its parent's connections
_ENGINES_LOCK = threading.Lock()  # fifty threads asking at once share one engine, none left open and unowned


@dataclass(frozen=True)
class Stores:
    """Builds stores of one kind over the same memory: files under `home`, or the database at `url`."""

    kind: str  # files, sqlite or postgres
    home: Path
    url: str | None = None

    def make(self) -> MemoryStore:
        """A new store over the same memory, as another adapter (or another process) would have."""
        if self.url is None:
            return FileMemoryStore(self.home)
        return DatabaseMemoryStore(self.engine())

    def engine(self) -> Engine:
        assert self.url is not None
        key = (os.getpid(), self.url)
        with _ENGINES_LOCK:
            if key not in _ENGINES:
                _ENGINES[key] = make_engine(self.url)
            return _ENGINES[key]

    def close(self) -> None:
        """Close this process's connections, so a fork or the fixture's teardown finds none open."""
        with _ENGINES_LOCK:
            engine = _ENGINES.pop((os.getpid(), self.url), None) if self.url is not None else None
        if engine is not None:
            engine.dispose()


@pytest.fixture(params=["files", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request: pytest.FixtureRequest, home: Path) -> Iterator[Stores]:
    if request.param == "files":
        yield Stores("files", home)
        return
    engine: Engine = request.getfixturevalue(f"{request.param}_engine")
    built = Stores(request.param, home, engine.url.render_as_string(hide_password=False))
    try:
        yield built
    finally:
        built.close()


@pytest.fixture
def store(stores: Stores) -> MemoryStore:
    return stores.make()
