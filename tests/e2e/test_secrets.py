"""Nothing secret is remembered: the issue's example through `nightwatch`, its memory files, its database and --json."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.adapters.secrets.secret_corpus import ALNUM, UPPER_DIGITS, URLSAFE, digits, fake
from tests.e2e.cli import clean_env, run

SLACK = f"xoxb-{digits(12)}-{fake(ALNUM, 12)}"
ANTHROPIC = f"sk-ant-api03-{fake(URLSAFE, 93)}AA"
GITHUB = f"ghp_{fake(ALNUM, 36)}"
AWS = f"AKIA{fake(UPPER_DIGITS, 16)}"
TOPIC = f"Our bot token {SLACK} and key {ANTHROPIC} leaked, rotate?"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def memory_files(home: Path) -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(home.glob("agents/*/memories/*/main.md"))}


def database_texts(home: Path) -> list[str]:
    """Every value of every column of every table in the SQLite database, as text."""
    with sqlite3.connect(home / "nightwatch.db") as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [str(value) for table in tables for row in db.execute(f'SELECT * FROM "{table}"') for value in row]


def test_a_deliberation_about_leaked_tokens_remembers_stores_and_prints_none_of_them(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    code, out, err = run(capsys, "deliberate", TOPIC, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["deliberation"]["topic"] == (
        "Our bot token [redacted slack token] and key [redacted anthropic key] leaked, rotate?"
    )
    memories, rows = memory_files(home), database_texts(home)
    assert len(memories) >= 3, "the personas should have reflected"
    assert any("[redacted slack token]" in text for text in memories.values())  # lessons still say what leaked
    assert any("[redacted anthropic key]" in row for row in rows)
    files = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())  # the WAL and vectors too
    for token in (SLACK, ANTHROPIC):
        assert token not in out + err
        assert not [path for path, text in memories.items() if token in text]
        assert not [row for row in rows if token in row]
        assert token.encode() not in files


def test_the_lessons_a_redacted_deliberation_reports_can_be_forgotten_by_their_ids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "deliberate", TOPIC, "--json")
    assert code == 0, err
    lessons = json.loads(out)["lessons"]
    assert lessons
    for lesson in lessons:
        code, out, err = run(capsys, "memory", "forget", lesson["persona"], lesson["id"])
        assert code == 0, err
        assert out.startswith(f"Forgot {lesson['id']}: ")


@pytest.mark.parametrize(
    ("token", "kind"),
    [(SLACK, "slack token"), (ANTHROPIC, "anthropic key"), (GITHUB, "github token"), (AWS, "aws access key")],
    ids=["slack", "anthropic", "github", "aws"],
)
def test_memory_add_stores_the_redacted_lesson_and_its_printed_id_forgets_it(
    capsys: pytest.CaptureFixture[str], home: Path, token: str, kind: str
) -> None:
    lesson = f"The staging deploy used {token} from a pasted chat message; rotate keys that reach chat at once."
    code, out, err = run(capsys, "memory", "add", "maya", lesson, "--project", "demo")
    assert code == 0, err
    expected = lesson.replace(token, f"[redacted {kind}]")
    assert out.strip().endswith(f": {expected}")
    lesson_id = out.split()[1].rstrip(":")
    [text] = memory_files(home).values()
    assert f"- {expected}" in text
    assert token not in text + out + err

    code, out, err = run(capsys, "memory", "forget", "maya", lesson_id, "--project", "demo")
    assert code == 0, err
    assert out.strip() == f"Forgot {lesson_id}: {expected}"
    assert expected not in next(iter(memory_files(home).values()))
