"""`nightwatch memory projects` and the hint `memory show` gives when the project it shows is empty.

Both memory stores: files, and the database (SQLite; PostgreSQL too with DATABASE_URL).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.adapters.db.conftest import postgres_engine
from tests.e2e.cli import clean_env, run

__all__ = ["postgres_engine"]


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    # DATABASE_URL stays until a test sets its own (the PostgreSQL fixture reads it) or goes without (SQLite).
    clean_env(monkeypatch, home, keep=("DATABASE_URL",))
    monkeypatch.setenv("NIGHTWATCH_LLM", "offline")
    return home


@pytest.fixture
def sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)


def lessons_in_two_projects(capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("Refunds settle in two days.", "Card tokens never reach the logs.", "Payouts run at 02:00 UTC."):
        assert run(capsys, "memory", "add", "maya", text, "--project", "payments")[0] == 0
    assert run(capsys, "memory", "add", "maya", "The demo resets every night.", "--project", "demo")[0] == 0


def check_projects_and_the_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "memory", "projects", "maya")
    assert code == 0
    assert out.splitlines() == [f"{'demo':<24} 1 lesson", f"{'payments':<24} 3 lessons"]
    code, out, _ = run(capsys, "memory", "projects", "Maya", "--json")
    assert json.loads(out) == {
        "persona": "maya",
        "projects": [{"project": "demo", "lessons": 1}, {"project": "payments", "lessons": 3}],
    }
    code, out, _ = run(capsys, "memory", "show", "maya")
    assert code == 0
    assert out.splitlines()[1] == (
        '  no lessons in project "default"; Maya has lessons in: payments (3), demo (1); use --project NAME'
    )
    code, out, _ = run(capsys, "memory", "show", "maya", "--project", "demo")
    assert "no lessons in project" not in out
    assert "The demo resets every night." in out


@pytest.mark.usefixtures("sqlite")
def test_projects_and_the_hint_with_memory_in_files(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    lessons_in_two_projects(capsys)
    assert (home / "agents" / "maya" / "memories" / "payments" / "main.md").is_file()
    check_projects_and_the_hint(capsys)


@pytest.mark.usefixtures("sqlite")
def test_projects_and_the_hint_with_memory_in_the_database(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.setenv("NIGHTWATCH_MEMORY_STORE", "database")
    lessons_in_two_projects(capsys)
    assert not (home / "agents" / "maya").exists()
    check_projects_and_the_hint(capsys)


@pytest.mark.postgres
def test_projects_and_the_hint_with_memory_in_postgresql(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, postgres_engine: Engine
) -> None:
    monkeypatch.setenv("DATABASE_URL", postgres_engine.url.render_as_string(hide_password=False))
    lessons_in_two_projects(capsys)
    check_projects_and_the_hint(capsys)


@pytest.mark.usefixtures("sqlite")
def test_a_persona_without_memory_says_how_to_start_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "memory", "projects", "priya")[1].strip() == (
        'Priya has no memory yet: nightwatch memory add priya "LESSON" --project P'
    )
    assert json.loads(run(capsys, "memory", "projects", "priya", "--json")[1]) == {"persona": "priya", "projects": []}
    assert run(capsys, "memory", "show", "priya")[1].splitlines()[1] == "  (no lessons yet)"
    code, _, err = run(capsys, "memory", "projects", "nobody")
    assert code == 1
    assert err.startswith("error: No persona is called 'nobody'")
