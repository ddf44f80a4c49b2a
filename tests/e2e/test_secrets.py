"""Nothing secret is remembered: the issue's example through `nightwatch`, its memory files, its database and --json."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nightwatch.domain.deliberation import TOPIC_MAX
from nightwatch.domain.memory import LESSON_MAX
from nightwatch.domain.pins.inputs import PIN_TEXT_MAX
from tests.adapters.secrets.blind_corpus import HARMLESS_ITEMS, SECRET_ITEMS, Item, chunks
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
    held = {(lesson["persona"], lesson["id"]) for lesson in lessons}  # a restatement names the lesson it merged into
    for persona, lesson_id in sorted(held):
        code, out, err = run(capsys, "memory", "forget", persona, lesson_id)
        assert code == 0, err
        assert out.startswith(f"Forgot {lesson_id}: ")


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


# --- the blind corpus through every entry point and both memory stores (issue 20) ------------------------------------

STORES = ["files", "database"]


def everything_stored(home: Path) -> bytes:
    """Every byte under the home: memory files, vectors, the database and its WAL, kept edits."""
    return b"".join(path.read_bytes() for path in sorted(home.rglob("*")) if path.is_file())


def leaked(home: Path, outputs: list[str], items: tuple[Item, ...]) -> list[str]:
    stored = everything_stored(home)
    said = "\n".join(outputs)
    return [
        f"{item.id} ({item.label}, {item.form}): {secret[:24]}..."
        for item in items
        for secret in item.secrets
        if secret.encode() in stored or secret in said
    ]


def run_ok(capsys: pytest.CaptureFixture[str], outputs: list[str], *argv: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 0, (argv[:3], err)
    outputs.append(out + err)


@pytest.fixture
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("NIGHTWATCH_MEMORY_STORE", request.param)
    monkeypatch.setenv("NIGHTWATCH_RECALL_DENSE", "off")  # meaning recall adds nothing here but time
    return str(request.param)


# Lessons as typed: several lines, which the command makes one after it has redacted them (a CSV is still a CSV).
FITS_A_LESSON = tuple(item for item in SECRET_ITEMS if len(item.text) <= LESSON_MAX)
MEMORY_LESSONS = chunks(FITS_A_LESSON, LESSON_MAX)


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES, indirect=True)
def test_memory_add_stores_no_secret_of_the_blind_corpus(
    capsys: pytest.CaptureFixture[str], home: Path, store: str
) -> None:
    outputs: list[str] = []
    for lesson in MEMORY_LESSONS:
        code, out, err = run(capsys, "memory", "add", "maya", lesson, "--project", "blind")
        assert code == 0 or "Not remembered" in err, err  # a lesson left all markers is refused as a placeholder
        outputs.append(out + err)
    run_ok(capsys, outputs, "memory", "show", "maya", "--project", "blind")
    assert len(FITS_A_LESSON) > 200
    assert leaked(home, outputs, FITS_A_LESSON) == []


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES, indirect=True)
def test_pinned_texts_and_files_store_no_secret_and_keep_every_look_alike(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, store: str
) -> None:
    outputs: list[str] = []
    for n, text in enumerate(chunks(SECRET_ITEMS, PIN_TEXT_MAX)):
        run_ok(capsys, outputs, "pin", "add", "maya", "--text", text, "--project", "blind")
        document = tmp_path / f"secrets-{n}.md"
        document.write_text(text, encoding="utf-8")
        run_ok(capsys, outputs, "pin", "add", "maya", str(document), "--project", "blind")
    for n, text in enumerate(chunks(HARMLESS_ITEMS, PIN_TEXT_MAX)):
        run_ok(capsys, outputs, "pin", "add", "maya", "--text", text, "--project", "blind")
        document = tmp_path / f"look-alikes-{n}.md"
        document.write_text(text, encoding="utf-8")
        run_ok(capsys, outputs, "pin", "add", "maya", str(document), "--project", "blind")
    run_ok(capsys, outputs, "context", "maya", "--project", "blind")
    assert leaked(home, outputs, SECRET_ITEMS) == []
    stored = "\n".join(database_texts(home))
    lost = [f"{item.id}: {kept}" for item in HARMLESS_ITEMS for kept in item.keep if kept not in stored]
    assert lost == []


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES, indirect=True)
def test_a_deliberation_about_the_blind_corpus_remembers_stores_and_prints_none_of_it(
    capsys: pytest.CaptureFixture[str], home: Path, store: str
) -> None:
    outputs: list[str] = []
    topics = chunks(SECRET_ITEMS, TOPIC_MAX)
    for topic in topics[STORES.index(store) :: 2]:  # half the corpus on each store: a deliberation takes a second
        run_ok(capsys, outputs, "deliberate", topic, "--json", "--project", "blind")
    items = tuple(
        item for topic in topics[STORES.index(store) :: 2] for item in SECRET_ITEMS if item.text.strip() in topic
    )
    assert items
    assert leaked(home, outputs, items) == []
