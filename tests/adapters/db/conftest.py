"""Database engines for the adapter tests: a fresh SQLite file, and PostgreSQL when DATABASE_URL points at one.

`engine` runs a test on both (the PostgreSQL run is marked `postgres`); the PostgreSQL engine works in a schema of
its own, dropped afterwards, so runs never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from nightwatch.adapters.db import make_engine, upgrade


def postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgresql"):
        pytest.skip("set DATABASE_URL=postgresql+psycopg://... to run the PostgreSQL tests")
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_engine() -> Iterator[Engine]:
    """An engine whose search_path is a fresh schema, dropped afterwards."""
    base = postgres_url()
    schema = f"nw_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    engine = make_engine(url.render_as_string(hide_password=False))
    try:
        upgrade(engine)
        yield engine
    finally:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest) -> Engine:
    return request.getfixturevalue(f"{request.param}_engine")  # type: ignore[no-any-return]
