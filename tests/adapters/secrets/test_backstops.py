"""The backstops: whatever reaches a store or a printer with a secret in it is stored and shown redacted.

Inputs are redacted where they enter and model output where it leaves the adapter; these tests hand the stores and
printers raw secrets directly, as a missed entry point would.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.schema import deliberations, thread_summaries, turns
from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.adapters.terminal import TerminalPoster, render_result_json
from nightwatch.domain.deliberation import DeliberationResult
from nightwatch.domain.deliberation.models import (
    Decision,
    Deliberation,
    DeliberationStatus,
    RememberedLesson,
    Turn,
    Verdict,
)
from nightwatch.domain.llm import Usage
from nightwatch.domain.models import Lesson, Persona
from tests.adapters.secrets.secret_corpus import ALNUM, UPPER_DIGITS, fake
from tests.fakes import T0, FakeClock

GITHUB = f"ghp_{fake(ALNUM, 36)}"
AWS = f"AKIA{fake(UPPER_DIGITS, 16)}"
MAYA = Persona(name="Maya", slug="maya", role="Security reviewer")
VERDICT = Verdict(Decision.CHANGES, f"Revoke {GITHUB}.", (f"{AWS} is public.",), (f"Maya - rotate {AWS}",))


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


def stored_texts(engine: Engine) -> str:
    with engine.connect() as conn:
        rows = [
            *conn.execute(select(deliberations.c.topic, deliberations.c.verdict)),
            *conn.execute(select(turns.c.text)),
            *conn.execute(select(thread_summaries.c.summary)),
        ]
    return json.dumps([[str(value) for value in row] for row in rows])


def test_the_deliberation_log_stores_topics_turns_verdicts_and_summaries_redacted(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    started = log.start(Deliberation(f"We leaked {GITHUB}", "demo", "C1:1.0", started_at=T0))
    assert started.id is not None
    log.add_turn(started.id, Turn("Maya", "Security reviewer", f"Rotate {AWS} first.", 1, created_at=T0))
    log.finish(started.id, DeliberationStatus.DONE, VERDICT, T0)
    log.save_summary("C1:1.0", 2, f"The thread pasted {GITHUB}.")
    stored = stored_texts(engine)
    assert GITHUB not in stored
    assert AWS not in stored
    assert log.turns(started.id)[0].text == "Rotate [redacted aws access key] first."
    assert log.summary("C1:1.0") == (2, "The thread pasted [redacted github token].")
    finished = log.get(started.id)
    assert finished is not None
    assert finished.topic == "We leaked [redacted github token]"
    assert finished.verdict == Verdict(
        Decision.CHANGES,
        "Revoke [redacted github token].",
        ("[redacted aws access key] is public.",),
        ("Maya - rotate [redacted aws access key]",),
    )


def test_the_memory_file_store_writes_new_lines_redacted_and_returns_what_it_wrote(home: Path) -> None:
    store = FileMemoryStore(home)
    written = store.update("maya", "demo", lambda text: f"# Maya · memory for demo\n\n- Revoke {GITHUB} today.\n")
    on_disk = (home / "agents" / "maya" / "memories" / "demo" / "main.md").read_text()
    assert on_disk == written == "# Maya · memory for demo\n\n- Revoke [redacted github token] today.\n"
    assert store.replace_keeping_previous("maya", "demo", written, f"{written}- {AWS} is public.\n")
    assert store.read("maya", "demo").endswith("- [redacted aws access key] is public.\n")


def test_an_unchanged_memory_file_is_not_rewritten_even_with_a_hand_typed_secret(home: Path) -> None:
    store = FileMemoryStore(home)
    store.update("maya", "demo", lambda text: "- a lesson\n")
    path = home / "agents" / "maya" / "memories" / "demo" / "main.md"
    path.write_text(f"- typed by hand: {GITHUB}\n")
    assert store.update("maya", "demo", lambda text: text) == f"- typed by hand: {GITHUB}\n"
    store.update("maya", "demo", lambda text: text + f"- then {AWS}\n")
    assert path.read_text() == f"- typed by hand: {GITHUB}\n- then [redacted aws access key]\n"


def test_the_terminal_prints_every_post_redacted() -> None:
    out = io.StringIO()
    poster = TerminalPoster(out=out)
    poster.post_turn(MAYA, f"Revoke {GITHUB}.")
    poster.post_verdict(MAYA, VERDICT, VERDICT.summary)
    poster.post_lesson(MAYA, "demo", "ab12cd34", f"Never paste {AWS} in chat.")
    poster.post_notice(f"{AWS} seen")
    printed = out.getvalue()
    assert GITHUB not in printed
    assert AWS not in printed
    assert "Revoke [redacted github token]." in printed
    assert "Maya remembered: Never paste [redacted aws access key] in chat. (ab12cd34)" in printed


def test_the_json_document_is_redacted_in_every_text() -> None:
    lesson = Lesson("ab12cd34", f"Never paste {AWS} in chat.", datetime(2026, 11, 21, tzinfo=UTC))
    result = DeliberationResult(
        deliberation=Deliberation(f"We leaked {GITHUB}", "demo", "terminal:x", id=1),
        turns=(Turn("Maya", "Security reviewer", f"Rotate {AWS}.", 1),),
        verdict=VERDICT,
        remembered=(RememberedLesson("Maya", lesson),),
        usage=Usage(),
    )
    document = json.dumps(render_result_json(result))
    assert GITHUB not in document
    assert AWS not in document
    assert document.count("[redacted aws access key]") == 4  # the turn, the reason, the action item and the lesson
    assert document.count("[redacted github token]") == 3  # the topic, the verdict's summary and the summary
