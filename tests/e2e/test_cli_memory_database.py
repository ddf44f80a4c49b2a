"""The `nightwatch` command with memory in the database: on SQLite always, on PostgreSQL with DATABASE_URL.

Memory lives in the database (no memory file is written), follows a rename and is archived on delete; a replica
told to keep memory in files beside a shared PostgreSQL database says, on every command, that its memory is local.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.adapters.db.conftest import postgres_engine
from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic

__all__ = ["postgres_engine"]

LOCAL = "note: NIGHTWATCH_MEMORY_STORE=files with a PostgreSQL DATABASE_URL"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    # DATABASE_URL stays until a test sets its own: the PostgreSQL fixture reads it to find the server.
    clean_env(monkeypatch, home, keep=("DATABASE_URL",))
    monkeypatch.setenv("NIGHTWATCH_LLM", "offline")
    return home


def lifecycle(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    """Add a lesson, rename, read it under the new name, delete: all in the database, nothing in files."""
    assert run(capsys, "personas", "create", "Nova", "--role", "Data Engineer")[0] == 0
    assert run(capsys, "memory", "add", "nova", "Backfills run on replicas only.", "--project", "etl")[0] == 0
    code, out, _ = run(capsys, "personas", "rename", "nova", "Nova Prime")
    assert code == 0
    assert "memory moved to agents/nova-prime/" in out
    code, out, _ = run(capsys, "memory", "show", "Nova Prime", "--project", "etl")
    assert code == 0
    assert out.startswith("the database (memory_documents, owner nova-prime, project etl) · 1 lesson\n")
    assert "Backfills run on replicas only.  · added from the CLI" in out
    code, out, _ = run(capsys, "personas", "delete", "nova-prime", "--yes")
    assert code == 0
    assert "its memory was archived to agents/.archived/nova-prime-" in out
    code, out, _ = run(capsys, "personas", "create", "Nova Prime", "--role", "Data Engineer")
    assert "found memory" not in out
    assert "Backfills" not in run(capsys, "memory", "show", "nova-prime", "--project", "etl")[1]
    assert not (home / "agents").exists()


def test_memory_in_the_database_on_sqlite(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("NIGHTWATCH_MEMORY_STORE", "database")
    lifecycle(capsys, home)
    assert (home / "nightwatch.db").is_file()


@pytest.mark.postgres
def test_memory_goes_to_a_shared_postgresql_by_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path, postgres_engine: Engine
) -> None:
    monkeypatch.setenv("DATABASE_URL", postgres_engine.url.render_as_string(hide_password=False))
    lifecycle(capsys, home)
    assert LOCAL not in run(capsys, "personas", "list")[2]


@pytest.mark.postgres
def test_memory_in_files_beside_a_shared_postgresql_is_a_note_on_every_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path, postgres_engine: Engine
) -> None:
    monkeypatch.setenv("DATABASE_URL", postgres_engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("NIGHTWATCH_MEMORY_STORE", "files")
    code, _, err = run(capsys, "memory", "add", "maya", "Rotate the webhook secret quarterly.", "--project", "p")
    assert code == 0
    assert err.count(LOCAL) == 1
    assert f"({home / 'agents'})" in err
    assert (home / "agents" / "maya" / "memories" / "p" / "main.md").is_file()
    with FakeAnthropic() as fake:  # choosing the model drops the offline note, never this one
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        code, _, err = run(
            capsys, "deliberate", "Rotate the webhook secret?", "--personas", "maya", "--llm", "anthropic"
        )
    assert code == 0, err
    assert err.count(LOCAL) == 1
