"""`nightwatch db upgrade` and the upgrade every command's start-up runs: a fresh data root, real SQLite."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nightwatch.adapters.db.migrate import head
from tests.adapters.db.databases import load_release
from tests.e2e.cli import clean_env, run


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def rows(home: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / "nightwatch.db") as conn:
        return conn.execute(query).fetchall()


def test_db_upgrade_migrates_a_new_database_once_and_does_nothing_else(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    code, out, err = run(capsys, "db", "upgrade")
    assert (code, out) == (0, f"Database schema upgraded from an empty database to revision {head()}.\n"), err
    assert rows(home, "SELECT version_num FROM alembic_version") == [(head(),)]
    assert rows(home, "SELECT count(*) FROM personas") == [(0,)]  # no start-up: nothing seeded, nothing closed
    assert run(capsys, "db", "upgrade")[:2] == (0, f"Database schema already up to date (revision {head()}).\n")


def test_start_up_upgrades_a_release_database_and_every_row_is_there_after(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, home: Path
) -> None:
    load_release(f"sqlite:///{home / 'nightwatch.db'}")
    with caplog.at_level(logging.INFO, logger="nightwatch.startup"):
        code, out, err = run(capsys, "history")
    assert code == 0, err
    assert "Should we rotate the signing keys every 90 days?" in out
    assert f"Database schema upgraded from an earlier release's tables (every row kept) to revision {head()}." in (
        caplog.messages
    )
    code, out, _ = run(capsys, "personas", "show", "old timer")
    assert code == 0
    assert "role: Reviewer" in out
    assert run(capsys, "db", "upgrade")[1] == f"Database schema already up to date (revision {head()}).\n"


def test_a_database_from_a_newer_version_stops_every_command_with_what_to_do(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    assert run(capsys, "db", "upgrade")[0] == 0
    with sqlite3.connect(home / "nightwatch.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    for argv in (("db", "upgrade"), ("personas", "list")):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (1, "")
        assert "is at schema revision 9999, which this version of Night Watch does not know" in err
        assert err.rstrip().endswith("Run that version or a newer one.")


def test_a_command_in_its_own_process_prints_no_alembic_chatter(home: Path) -> None:
    env = {**os.environ, "NIGHTWATCH_HOME": str(home), "NIGHTWATCH_LLM": "offline"}
    argv = [sys.executable, "-m", "nightwatch.cli", "db", "upgrade"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (
        0,
        f"Database schema upgraded from an empty database to revision {head()}.\n",
    )
    assert "alembic" not in done.stderr.lower()  # its INFO lines name the dialect on every run
