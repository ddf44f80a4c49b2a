"""Schema upgrades: Alembic runs the migrations in `migrations/versions/`, one upgrade at a time per database.

`upgrade(engine)` brings any database to the newest revision: an empty one gets every table, one an earlier release
made (tables but no alembic_version) is completed by the baseline revision without losing a row, and one already at
the newest revision is left as it is. It runs in one transaction that first takes the upgrade lock, so replicas
starting together on one database never race: on PostgreSQL an advisory lock, on SQLite the file's write lock
(`BEGIN IMMEDIATE`). Whoever comes second waits, then finds nothing left to do.

The configuration is built in code (`alembic_config`): the scripts are found through the package, the connection is
handed to `migrations/env.py` in `config.attributes["connection"]`, and no working directory or alembic.ini is read.

Every command upgrades at start, and almost always finds the database already at the newest revision. That case is
one SELECT, with no lock and without importing Alembic (a fifth of a second of every command's start-up): the newest
revision is the highest number among the files in `migrations/versions/`, whose names tests/adapters/db/
test_migrations.py keeps equal to their revision ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from nightwatch.domain.errors import StorageError

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = "nightwatch.adapters.db:migrations"
VERSIONS = Path(__file__).parent / "migrations" / "versions"
_REVISION_FILE = re.compile(r"(\d{4})_[a-z0-9_]+\.py")
# The key of the PostgreSQL advisory lock every upgrade takes ("nwdb" in ASCII). Advisory locks are per database, so
# upgrades in different schemas of one database also wait for each other: rare, short, and harmless.
UPGRADE_LOCK = 0x6E776462


@dataclass(frozen=True)
class SchemaChange:
    """What an upgrade did: the revision before (None: no migration had run) and after it."""

    before: str | None
    after: str
    earlier_release: bool = False  # before is None, and the tables an earlier release made were there

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def message(self) -> str:
        """One line for a person: what the upgrade did."""
        if not self.changed:
            return f"Database schema already up to date (revision {self.after})."
        if self.earlier_release:
            origin = "an earlier release's tables (every row kept)"
        elif self.before is None:
            origin = "an empty database"
        else:
            origin = f"revision {self.before}"
        return f"Database schema upgraded from {origin} to revision {self.after}."


def upgrade(engine: Engine) -> SchemaChange:
    """Run the migrations the database lacks, holding the upgrade lock; say what changed."""
    try:
        current = _stored_revision(engine)
        if current == head():
            return SchemaChange(current, current)
        from alembic import command  # only when there may be something to do: see the module doc

        with locked(engine) as connection:
            config = alembic_config(connection)
            before = _revision(connection)
            _check_known(config, before, engine)
            earlier_release = before is None and inspect(connection).has_table("personas")
            command.upgrade(config, "head")
            after = _revision(connection)
    except SQLAlchemyError as err:
        raise StorageError(
            f"Could not upgrade the database schema at {_where(engine)} ({_cause(err)}); "
            "check DATABASE_URL and that the database is reachable and writable, then try again."
        ) from err
    assert after is not None  # the migrations have run, so there is a revision
    return SchemaChange(before, after, earlier_release)


@cache
def head() -> str:
    """The newest revision this version of Night Watch knows: the highest numbered file in migrations/versions/."""
    numbers = [match.group(1) for path in VERSIONS.iterdir() if (match := _REVISION_FILE.fullmatch(path.name))]
    return max(numbers)


def _stored_revision(engine: Engine) -> str | None:
    """The database's revision read with one SELECT (None before any migration ran)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one_or_none()


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration, built in code: the packaged scripts, and the connection env.py is to use."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    config.attributes["connection"] = connection
    return config


@contextmanager
def locked(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that holds the upgrade lock; committed when the block ends without error."""
    with engine.connect() as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            # Transaction-scoped: released at commit or rollback, so no pooled connection can keep it by mistake.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK})
        elif connection.dialect.name == "sqlite":
            # pysqlite starts no transaction before DDL; this one takes the file's write lock at once, so a second
            # upgrade waits (busy_timeout) instead of creating the same tables.
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        yield connection


def _revision(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def _check_known(config: Config, revision: str | None, engine: Engine) -> None:
    """Refuse a database a newer version of Night Watch has upgraded: this one cannot know its schema."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(config)
    if revision is None or revision in {script.revision for script in scripts.walk_revisions()}:
        return
    raise StorageError(
        f"The database at {_where(engine)} is at schema revision {revision}, which this version of Night Watch does "
        f"not know (it knows up to {scripts.get_current_head()}): a newer version upgraded it. Run that version or a "
        "newer one."
    )


def _cause(err: SQLAlchemyError) -> str:
    """The driver's own first line (connection refused, permission denied, ...), else the error's kind."""
    detail = str(err.orig) if isinstance(err, DBAPIError) else ""
    return detail.strip().splitlines()[0][:300] if detail.strip() else type(err).__name__


def _where(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)
