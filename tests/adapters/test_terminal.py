"""The terminal surface: what a person sees, the --json document, the budget text, and a full offline run."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.offline.llm import OfflineLLM
from nightwatch.adapters.persona_files import load_default_personas
from nightwatch.adapters.terminal import (
    BudgetReport,
    TerminalPoster,
    plain_text,
    render_budget,
    render_result_json,
    render_retry,
)
from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy, DeliberationRequest
from nightwatch.domain.deliberation.models import Decision, Verdict
from nightwatch.domain.memory import MemoryPolicy, MemoryService, Retried
from nightwatch.domain.models import Persona
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.soul import SoulCompiler
from tests.domain.knowing import reading
from tests.fakes import FakeClock, InMemoryMemoryStore, InMemoryPersonaRepository

MAYA = Persona(name="Maya", slug="maya", role="Security reviewer")
CARLOS = Persona(name="Carlos", slug="carlos", role="Tech lead")
VERDICT = Verdict(Decision.CHANGES, "Add a TTL.", ("No expiry.",), ("Dev - add TTL",))


def test_the_poster_prints_turns_verdict_lessons_and_notices_as_they_happen() -> None:
    out = io.StringIO()
    poster = TerminalPoster(out=out)
    poster.post_turn(MAYA, "Tokens must expire.\nEvery hour.")
    assert out.getvalue() == "Maya (Security reviewer)\n  Tokens must expire.\n  Every hour.\n\n"
    poster.post_notice("Carlos asks for one more round.")
    poster.post_verdict(CARLOS, VERDICT, "*Changes needed.* Add a TTL.\n\nReasons:\n- No expiry.")
    poster.post_lesson(CARLOS, "night-watch", "ab12cd34", "Flag risky launches.")
    printed = out.getvalue()
    assert "· Carlos asks for one more round." in printed
    assert (
        "Carlos (Tech lead) · decision: CHANGES\n  Changes needed. Add a TTL.\n\n  Reasons:\n  - No expiry." in printed
    )
    assert printed.endswith("Carlos remembered: Flag risky launches. (ab12cd34)\n")
    poster.post_lesson(CARLOS, "night-watch", "ef56ab78", "Flag risky launches early.", change="superseded ab12cd34")
    assert out.getvalue().endswith("Carlos remembered: Flag risky launches early. (ef56ab78 · superseded ab12cd34)\n")
    assert [m.author for m in poster.messages()] == ["Maya", "Carlos"]
    assert all(m.persona is not None for m in poster.messages())
    assert poster.messages()[1].text.startswith("*Changes needed.*")  # kept as posted: Slack renders mrkdwn


@pytest.mark.parametrize(
    ("mrkdwn", "plain"),
    [
        ("*Approved.* [offline] Ship it.", "Approved. [offline] Ship it."),
        ("- item with *bold*, _italic_ and ~struck~ words", "- item with bold, italic and struck words"),
        (
            "see <https://example.com/pr/42|the PR> or <https://example.com>",
            "see the PR (https://example.com/pr/42) or https://example.com",
        ),
        ("keep `*args*` and ```a *b* c``` as code", "keep `*args*` and ```a *b* c``` as code"),
        ("snake_case_name, 2*3*4 and * a lone star *", "snake_case_name, 2*3*4 and * a lone star *"),
    ],
)
def test_mrkdwn_prints_as_plain_text(mrkdwn: str, plain: str) -> None:
    assert plain_text(mrkdwn) == plain


def test_every_printed_line_is_plain_text() -> None:
    out = io.StringIO()
    poster = TerminalPoster(out=out)
    poster.post_turn(MAYA, "*Blocking*: rotate the key.")
    poster.post_notice("Carlos asks for _one more round_.")
    poster.post_verdict(CARLOS, VERDICT, "*A person needs to decide.* See <https://example.com|the thread>.")
    poster.post_lesson(MAYA, "night-watch", "ab12cd34", "*Rotate* keys first.")

    printed = out.getvalue()
    assert "*" not in printed
    assert "_one more round_" not in printed
    assert "A person needs to decide. See the thread (https://example.com)." in printed


def test_quiet_mode_prints_nothing_but_keeps_everything() -> None:
    out = io.StringIO()
    poster = TerminalPoster(out=out, quiet=True)
    poster.post_turn(MAYA, "Tokens must expire.")
    poster.post_verdict(CARLOS, VERDICT, "Closing.")
    poster.post_lesson(MAYA, "night-watch", "ab12cd34", "Expire tokens.")
    poster.post_notice("A notice.")
    assert out.getvalue() == ""
    assert poster.verdict == VERDICT
    assert [lesson.text for lesson in poster.lessons] == ["Expire tokens."]
    assert poster.notices == ["A notice."]
    assert len(poster.messages()) == 2


def test_budget_text_shows_each_part_and_what_remains() -> None:
    report = BudgetReport.example()
    text = render_budget(MAYA, "night-watch", report.budget)
    assert text.startswith("Context budget for Maya (Security reviewer) · project night-watch")
    assert "12 of 48 lessons injected" in text
    assert "1,300 tokens" in text  # thread context
    assert f"{report.budget.remaining:,} tokens" in text
    assert "200,000" in text


# --- a full offline run ----------------------------------------------------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'nightwatch.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


def offline_engine(db: Engine) -> DeliberationEngine:
    llm = OfflineLLM()
    clock = FakeClock()
    memory = MemoryService(store=InMemoryMemoryStore(), llm=llm, clock=clock, recall=Recall(), policy=MemoryPolicy())
    return DeliberationEngine(
        personas=InMemoryPersonaRepository(load_default_personas()),
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=SqlDeliberationLog(db, clock=clock),
        clock=clock,
        policy=DeliberationPolicy(),
        context=reading(memory),
    )


def test_an_offline_run_prints_and_the_second_run_injects_the_first_runs_lessons(engine: Engine) -> None:
    deliberation = offline_engine(engine)
    topic = "Should we store login sessions in Redis instead of signed cookies?"
    out = io.StringIO()
    first = deliberation.run(DeliberationRequest(topic, "demo", "terminal:one"), TerminalPoster(out=out))
    printed = out.getvalue()
    assert "[offline]" in printed
    assert "· decision: " in printed
    assert " remembered: " in printed
    assert not re.search(r"\*\S[^*\n]*\*", printed)  # no literal *emphasis*
    assert "Approved." in printed or "Changes needed." in printed or "A person needs to decide." in printed
    assert first.remembered
    assert all(turn.lessons_injected == 0 for turn in first.turns)

    quiet = TerminalPoster(quiet=True)
    second = deliberation.run(DeliberationRequest(topic, "demo", "terminal:two"), quiet)
    document = render_result_json(second)
    assert json.loads(json.dumps(document)) == document
    assert any(turn["lessons_injected"] > 0 for turn in document["turns"])
    assert document["verdict"]["decision"] in {"APPROVE", "CHANGES", "HUMAN"}
    assert document["summary"] == second.verdict.summary
    assert document["deliberation"]["status"] == "done"
    assert document["usage"]["input_tokens"] > 0
    stored = SqlDeliberationLog(engine).get(second.deliberation.id or 0)
    assert stored is not None
    assert stored.usage == second.usage


def test_the_json_document_lists_turns_verdict_and_lessons(engine: Engine) -> None:
    result = offline_engine(engine).run(
        DeliberationRequest("Maya: rotate the signing key?", "demo", "terminal:x"), TerminalPoster(quiet=True)
    )
    document = render_result_json(result)
    assert set(document) == {"deliberation", "turns", "verdict", "summary", "lessons", "usage", "unsaved"}
    assert document["unsaved"] == []
    assert [turn["persona"] for turn in document["turns"]][:1] == ["Maya"]
    assert set(document["turns"][0]) == {
        "persona",
        "role",
        "round",
        "text",
        "skipped",
        "lessons_injected",
        "pins_injected",
        "tool_calls",
    }
    assert set(document["verdict"]) == {"decision", "summary", "reasons", "action_items"}
    assert document["lessons"] == [
        {"persona": r.persona, "id": r.lesson.id, "text": r.lesson.text, "said": r.said} for r in result.remembered
    ]


def test_the_retry_report_says_what_was_recorded_and_what_still_waits() -> None:
    assert render_retry([]) == "Nothing to retry: no lessons are waiting to be saved."
    report = render_retry(
        [
            Retried("Maya", "demo", 2, 0),
            Retried("Dev", "demo", 1, 3, "agents/dev/memories/demo/main.md is a folder where a file should be"),
        ]
    )
    assert report.splitlines() == [
        "Maya · demo: recorded 2 lessons.",
        "Dev · demo: recorded 1 lesson.",
        "Dev · demo: 3 lessons still waiting: agents/dev/memories/demo/main.md is a folder where a file should be.",
        "Fix that, then run `nightwatch memory retry` again; the next lesson written there retries them too.",
    ]
