"""The migrations: they make the schema the code expects, adopt a release's database without losing a row, and stop.

`test_the_migrations_make_the_schema_the_code_expects` is the guard for schema.py: a table, column, index or
constraint added there without a migration makes it fail, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, inspect, text

from nightwatch.adapters.db import SqlDeliberationLog, SqlPendingLessons, SqlPersonaRepository, make_engine, upgrade
from nightwatch.adapters.db.migrate import SchemaChange, alembic_config, head, locked
from nightwatch.adapters.db.schema import metadata
from nightwatch.domain.deliberation.models import Deliberation
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.models import PendingLesson
from tests.adapters.db.databases import empty_database, load_release, schema_differences, table_rows

ROOT = Path(__file__).resolve().parents[3]
MIGRATIONS = ROOT / "nightwatch" / "adapters" / "db" / "migrations"
T0 = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
RELEASE_TABLES = [
    "channel_projects",
    "deliberations",
    "leases",
    "personas",
    "seeded_defaults",
    "seen_events",
    "thread_summaries",
    "turns",
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An engine on an empty database: a new SQLite file, or a new PostgreSQL database."""
    with empty_database(request.param, tmp_path) as url:
        engine = make_engine(url)
        try:
            yield engine
        finally:
            engine.dispose()


@pytest.fixture
def release(empty: Engine) -> Engine:
    """An engine on a database as release 47e04dc left it: its tables and rows, no alembic_version."""
    load_release(empty.url.render_as_string(hide_password=False))
    return empty


# --- an empty database -----------------------------------------------------------------------------------------------


def test_the_migrations_make_the_schema_the_code_expects(empty: Engine) -> None:
    upgrade(empty)
    assert schema_differences(empty) == []


def test_the_comparison_sees_a_table_or_a_column_schema_py_has_and_no_migration_made(empty: Engine) -> None:
    upgrade(empty)
    ahead = MetaData()
    for table in metadata.tables.values():
        table.to_metadata(ahead)
    Table("a_table_without_a_migration", ahead, Column("id", Integer, primary_key=True))
    ahead.tables["leases"].append_column(Column("note", String(40), nullable=True))
    changes = [change[0] for change in schema_differences(empty, ahead)]  # type: ignore[index]
    assert changes == ["add_table", "add_column"]


def test_an_empty_database_is_migrated_once_and_then_left_alone(empty: Engine) -> None:
    first, second = upgrade(empty), upgrade(empty)
    assert first == SchemaChange(before=None, after=head(), earlier_release=False)
    assert first.message == f"Database schema upgraded from an empty database to revision {head()}."
    assert (second.changed, second.before, second.after) == (False, head(), head())
    assert second.message == f"Database schema already up to date (revision {head()})."
    assert "meta" not in inspect(empty).get_table_names()  # retired: alembic_version says the revision now


def test_downgrading_to_base_empties_the_database_and_upgrading_again_rebuilds_it(empty: Engine) -> None:
    upgrade(empty)
    with locked(empty) as connection:
        command.downgrade(alembic_config(connection), "base")
    assert inspect(empty).get_table_names() == ["alembic_version"]
    assert upgrade(empty).before is None
    assert schema_differences(empty) == []


# --- a database an earlier release made ------------------------------------------------------------------------------


def test_a_release_database_is_upgraded_with_every_row_kept(release: Engine) -> None:
    with release.connect() as conn:
        before = table_rows(conn, RELEASE_TABLES)
    assert all(before.values()), "the fixture should hold rows in every table"
    change = upgrade(release)
    assert change == SchemaChange(before=None, after=head(), earlier_release=True)
    assert (
        change.message
        == f"Database schema upgraded from an earlier release's tables (every row kept) to revision {head()}."
    )
    with release.connect() as conn:
        after = table_rows(conn, RELEASE_TABLES)
    for table, rows in before.items():
        assert [{name: row[name] for name in old} for row, old in zip(after[table], rows, strict=True)] == rows
    assert [row["owner"] for row in after["deliberations"]] == [None]  # the new column, empty in old rows
    assert schema_differences(release) == []
    assert "meta" not in inspect(release).get_table_names()
    assert not upgrade(release).changed


def test_the_repositories_read_and_extend_a_release_database_once_upgraded(release: Engine) -> None:
    upgrade(release)
    personas = SqlPersonaRepository(release)
    old_timer = personas.find("old timer")
    assert old_timer is not None
    assert (old_timer.name, old_timer.role, old_timer.avatar) == ("Old Timer", "Reviewer", ":owl:")
    assert personas.file_marks() == dict.fromkeys(["carlos", "dev", "maya", "priya"])  # no fingerprints yet
    log = SqlDeliberationLog(release)
    [old] = log.recent(5)
    assert (old.id, old.topic, old.owner) == (1, "Should we rotate the signing keys every 90 days?", None)
    assert old.verdict is not None
    assert len(log.turns(1)) == 8
    assert log.start(Deliberation("Next", "demo", "terminal:next", started_at=T0)).id == 2  # the id sequence goes on
    pending = SqlPendingLessons(release)  # the table the release lacked
    kept = pending.keep([PendingLesson("maya", "demo", "One.", "manual", date(2026, 11, 24), None, "disk full", T0)])
    assert [lesson.id for lesson in kept] == [1]


def test_an_upgrade_that_fails_half_way_changes_nothing(release: Engine) -> None:
    with release.begin() as conn:  # a damaged table: the baseline must add a NOT NULL column to rows that exist
        conn.execute(text("ALTER TABLE turns DROP COLUMN role"))
    with pytest.raises(StorageError, match="Could not upgrade the database schema"):
        upgrade(release)
    tables = set(inspect(release).get_table_names())
    assert {"meta", "turns"} <= tables
    assert not {"alembic_version", "pending_lessons"} & tables
    assert "owner" not in {column["name"] for column in inspect(release).get_columns("deliberations")}  # rolled back


def test_a_database_a_newer_version_upgraded_is_refused_with_what_to_do(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    try:
        upgrade(engine)
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        with pytest.raises(StorageError, match=r"revision 9999, which this version .* Run that version or a newer one"):
            upgrade(engine)
    finally:
        engine.dispose()


def test_an_unusable_database_is_a_storage_error_that_says_what_to_do(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}")  # a folder, not a file
    try:
        with pytest.raises(StorageError, match=r"unable to open database file.*check DATABASE_URL"):
            upgrade(engine)
    finally:
        engine.dispose()


# --- the migration scripts -------------------------------------------------------------------------------------------


def test_every_migration_is_named_and_numbered_after_the_one_before() -> None:
    scripts = list(reversed(list(ScriptDirectory.from_config(alembic_config()).walk_revisions())))
    assert [script.down_revision for script in scripts] == [None, *(script.revision for script in scripts[:-1])]
    for number, script in enumerate(scripts, start=1):
        assert script.revision == f"{number:04d}"
        assert re.fullmatch(rf"{number:04d}_[a-z0-9_]+\.py", Path(script.path).name), script.path
        assert ast.get_docstring(ast.parse(Path(script.path).read_text(encoding="utf-8"))), script.path
    assert head() == scripts[-1].revision


def test_the_package_ships_every_migration_file() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert {"nightwatch.adapters.db.migrations", "nightwatch.adapters.db.migrations.versions"} <= set(
        setuptools["packages"]
    )
    data = setuptools["package-data"]["nightwatch.adapters.db.migrations"]
    others = {path.name for path in MIGRATIONS.rglob("*") if path.is_file() and path.suffix not in {".py", ".pyc"}}
    assert others == set(data) == {"script.py.mako"}


@pytest.mark.slow
def test_the_alembic_command_migrates_the_database_nightwatch_is_configured_for(tmp_path: Path) -> None:
    env = {**os.environ, "NIGHTWATCH_HOME": str(tmp_path), "NIGHTWATCH_LLM": "offline"}
    env.pop("DATABASE_URL", None)
    upgraded = _alembic("upgrade", "head", env=env)
    assert upgraded.returncode == 0, upgraded.stderr
    checked = _alembic("check", env=env)
    assert checked.returncode == 0, checked.stderr
    assert "No new upgrade operations detected" in checked.stdout
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    try:
        assert not upgrade(engine).changed
    finally:
        engine.dispose()


def _alembic(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the `alembic` command from the project's folder, as a developer would."""
    command_line = [sys.executable, "-m", "alembic", *argv]
    return subprocess.run(command_line, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def test_the_head_read_from_file_names_is_alembics_head() -> None:
    assert head() == ScriptDirectory.from_config(alembic_config()).get_current_head()


@pytest.mark.slow
def test_a_database_at_the_head_is_answered_without_importing_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nightwatch.db'}"
    engine = make_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    script = (
        "import sys\n"
        "from nightwatch.adapters.db import make_engine, upgrade\n"
        f"change = upgrade(make_engine({url!r}))\n"
        "print(change.changed, 'alembic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
