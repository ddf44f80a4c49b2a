"""Databases for the migration tests: empty ones (a new SQLite file, a new PostgreSQL database), one made by a release.

The PostgreSQL databases are whole databases, not schemas: the release's dump names `public`, and the upgrade lock is
per database. Each is dropped afterwards, along with any connection a test's processes left.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, Connection, Engine, MetaData, text
from sqlalchemy.engine import make_url

from nightwatch.adapters.db import make_engine
from nightwatch.adapters.db.schema import metadata as code_metadata
from tests.adapters.db.conftest import postgres_url

RELEASE = Path(__file__).resolve().parents[2] / "fixtures" / "release_47e04dc"


@contextmanager
def empty_database(kind: str, folder: Path) -> Iterator[str]:
    """The URL of an empty database of this kind ("sqlite" or "postgres"), dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'nightwatch.db'}"
        return
    base = postgres_url()
    name = f"nw_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.engine.dispose()


def load_release(url: str) -> None:
    """Fill an empty database with what release 47e04dc stored (its tables and rows, no alembic_version)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        with sqlite3.connect(parsed.database or "") as conn:
            conn.executescript((RELEASE / "sqlite.sql").read_text(encoding="utf-8"))
        return
    engine = make_engine(url)  # its own engine: the dump empties search_path on the connection it runs on
    try:
        raw = engine.raw_connection()
        try:
            raw.cursor().execute((RELEASE / "postgresql.sql").read_text(encoding="utf-8"))
            raw.commit()
        finally:
            raw.close()
    finally:
        engine.dispose()


def schema_differences(engine: Engine, metadata: MetaData = code_metadata) -> list[object]:
    """What Alembic's autogenerate would change to make the database match `metadata` (empty: they agree)."""
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": _same_server_default}
        )
        return list(compare_metadata(context, metadata))


def _same_server_default(
    context: object,
    inspected: Column[object],
    expected: Column[object],
    inspected_default: str | None,
    expected_default: object,
    rendered_expected: str | None,
) -> bool | None:
    """Alembic's own comparison, except that SQLite's empty string ('' read back as "('')") matches ''."""
    if rendered_expected == "" and inspected_default in {"''", "('')"}:
        return False
    return None


def table_rows(conn: Connection, tables: list[str]) -> dict[str, list[dict[str, object]]]:
    """Every row of each table, as column -> value, in the order of the first column (each table's key)."""
    return {
        table: [dict(row._mapping) for row in conn.execute(text(f"SELECT * FROM {table} ORDER BY 1"))]
        for table in tables
    }
