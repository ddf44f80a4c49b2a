"""Every bad setting ends the command in one line of `error: ...` and exit 2, before anything is opened.

One row a way to get a setting wrong: a number past its range (every numeric setting has a maximum), infinities and
NaN, a database URL SQLAlchemy cannot load (or whose driver is missing), a home that cannot be a folder, and a
settings file that is wrong in any way.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run

NUMERIC = {  # each numeric setting, and a value just past its maximum
    "NIGHTWATCH_MEMORY_TOKEN_BUDGET": "100001",
    "NIGHTWATCH_MEMORY_MAX_LINES": "10001",
    "NIGHTWATCH_MEMORY_COMPACTION_TARGET": "5001",
    "NIGHTWATCH_MEMORY_HALF_LIFE_DAYS": "3651",
    "NIGHTWATCH_SHARED_TOKEN_BUDGET": "20001",
    "NIGHTWATCH_MAX_ROUNDS": "6",
    "NIGHTWATCH_MAX_REPLIES": "41",
    "NIGHTWATCH_TURN_WORDS": "401",
    "NIGHTWATCH_LEASE_SECONDS": "3601",
    "NIGHTWATCH_WORKERS": "257",
    "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES": "10081",
    "NIGHTWATCH_PROACTIVE_QUIET_MINUTES": "10081",
    "NIGHTWATCH_LLM_TIMEOUT": "601",
    "NIGHTWATCH_PIN_TOKEN_BUDGET": "20001",
    "NIGHTWATCH_HEALTH_PORT": "65536",
    "NIGHTWATCH_DB_POOL_SIZE": "201",
}
FLOATS = ("NIGHTWATCH_MEMORY_HALF_LIFE_DAYS", "NIGHTWATCH_LEASE_SECONDS", "NIGHTWATCH_LLM_TIMEOUT")

ROWS: list[tuple[str, dict[str, str], str]] = [
    *[(f"{name} too large", {name: value}, name) for name, value in NUMERIC.items()],
    *[(f"{name}={bad}", {name: bad}, name) for name in FLOATS for bad in ("inf", "-inf", "nan", "1e400")],
    *[(f"{name} not a number", {name: "lots"}, name) for name in NUMERIC],
    ("DATABASE_URL garbage", {"DATABASE_URL": "garbage"}, "DATABASE_URL"),
    ("DATABASE_URL postgres://", {"DATABASE_URL": "postgres://u@127.0.0.1/db"}, "postgresql://"),
    ("DATABASE_URL mysql", {"DATABASE_URL": "mysql://u@127.0.0.1/db"}, "does not support"),
    ("DATABASE_URL unknown dialect", {"DATABASE_URL": "nosuch://u@h/db"}, "DATABASE_URL"),
    ("DATABASE_URL missing driver", {"DATABASE_URL": "postgresql+pg8000://u@h/db"}, "not installed"),
    ("NIGHTWATCH_HOME in /proc", {"NIGHTWATCH_HOME": "/proc/nightwatch"}, "system folder"),
    ("NIGHTWATCH_LOG_FORMAT", {"NIGHTWATCH_LOG_FORMAT": "xml"}, "NIGHTWATCH_LOG_FORMAT"),
    ("NIGHTWATCH_LOG_LEVEL", {"NIGHTWATCH_LOG_LEVEL": "loud"}, "NIGHTWATCH_LOG_LEVEL"),
]


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(("env", "named"), [(env, named) for _, env, named in ROWS], ids=[r[0] for r in ROWS])
def test_a_bad_setting_is_one_error_line_and_exit_2(
    env: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env(monkeypatch, home)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = run(capsys, "personas", "list")
    assert code == 2
    assert out == ""
    assert named in one_error_line(err)


def home_cases(tmp_path: Path) -> dict[str, Path]:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    return {"a file": a_file, "below a file": a_file / "home"}


@pytest.mark.parametrize("case", ["a file", "below a file"])
def test_a_home_that_cannot_be_a_folder(
    case: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env(monkeypatch, home_cases(tmp_path)[case])
    code, _, err = run(capsys, "personas", "list")
    assert code == 2
    assert "NIGHTWATCH_HOME" in one_error_line(err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_home_this_user_cannot_write(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    clean_env(monkeypatch, locked / "home")
    code, _, err = run(capsys, "personas", "list")
    assert code == 2
    assert "not writable" in one_error_line(err)


SETTINGS_FILES = {
    "a byte-order mark": (b"\xef\xbb\xbfNIGHTWATCH_MAX_ROUNDS=3\n", "byte-order mark"),
    "a NUL byte": (b"NIGHTWATCH_HOME=/tmp/a\x00b\n", "NUL"),
    "not a setting line": (b"max rounds 3\n", "line 1"),
    "an unknown name": (b"NIGHTWATCH_MAX_ROUND=3\n", "NIGHTWATCH_MAX_ROUND"),
    "a name twice": (b"NIGHTWATCH_MAX_ROUNDS=3\nNIGHTWATCH_MAX_ROUNDS=4\n", "twice"),
    "not UTF-8": (b"NIGHTWATCH_LEAD=\xff\n", "UTF-8"),
    "a bad value": (b"NIGHTWATCH_LEASE_SECONDS=inf\n", "NIGHTWATCH_LEASE_SECONDS"),
}


@pytest.mark.parametrize("case", sorted(SETTINGS_FILES))
def test_a_bad_settings_file_is_one_error_line(
    case: str, monkeypatch: pytest.MonkeyPatch, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, named = SETTINGS_FILES[case]
    path = tmp_path / "nightwatch.env"
    path.write_bytes(content)
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_SETTINGS_FILE", str(path))
    code, _, err = run(capsys, "personas", "list")
    assert code == 2
    assert named in one_error_line(err)


def test_a_missing_settings_file_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_SETTINGS_FILE", str(tmp_path / "missing.env"))
    code, _, err = run(capsys, "personas", "list")
    assert code == 2
    assert "NIGHTWATCH_SETTINGS_FILE" in one_error_line(err)


def test_an_unreachable_database_is_one_error_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    code, _, err = run(capsys, "personas", "list")
    assert code == 1
    assert "DATABASE_URL" in one_error_line(err)
