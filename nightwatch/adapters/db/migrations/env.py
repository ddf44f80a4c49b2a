"""Alembic's environment: runs the migrations on the connection it is handed, or on Night Watch's own database.

`nightwatch db upgrade` and start-up (`migrate.upgrade`) hand over a connection already in a transaction that holds
the upgrade lock, in `config.attributes["connection"]`. The `alembic` command a developer runs hands over none: then
this connects to the database Night Watch's settings name (DATABASE_URL, else the SQLite file under NIGHTWATCH_HOME)
and takes the same lock. Offline `--sql` mode is not offered: the baseline revision looks at what the database holds.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from alembic.util import CommandError
from sqlalchemy import Connection

from nightwatch.adapters.db.engine import make_engine
from nightwatch.adapters.db.migrate import locked
from nightwatch.adapters.db.schema import metadata


def run_migrations(connection: Connection) -> None:
    """Run the migrations on the connection, inside the transaction its caller holds."""
    context.configure(
        connection=connection,
        target_metadata=metadata,  # what `alembic revision --autogenerate` compares the database with
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters a table by copying it
    )
    with context.begin_transaction():
        context.run_migrations()


def run_on_configured_database() -> None:
    """Connect to the database Night Watch's settings name, take the upgrade lock, and run the migrations."""
    from nightwatch.config import Settings

    engine = make_engine(Settings.from_env().database_url)
    try:
        with locked(engine) as connection:
            run_migrations(connection)
    finally:
        engine.dispose()


if context.config.config_file_name is not None:  # the `alembic` command, with alembic.ini's logging
    fileConfig(context.config.config_file_name, disable_existing_loggers=False)
if context.is_offline_mode():
    raise CommandError("Night Watch's migrations run against a database: drop --sql, and set DATABASE_URL.")
handed: Connection | None = context.config.attributes.get("connection")
if handed is None:
    run_on_configured_database()
else:
    run_migrations(handed)
