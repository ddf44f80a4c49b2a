"""The offline model looks back when a topic asks about the past: it recalls first, then answers "From memory: ..."."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nightwatch.adapters.offline import OfflineLLM
from nightwatch.adapters.offline.recall import asks_about_the_past, recall_query
from nightwatch.adapters.persona_files import load_default_personas
from nightwatch.domain.deliberation.tool_turn import ToolTurn
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory import RECALL_TOOL, MemoryPolicy, MemoryService, MemoryTools, memory_tool_specs
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, RecordingPoster, ScriptedLLM

LOOKING_BACK = "What did we decide last time about rate limiting on the login endpoint?"
HELD = "Rate limiting on the login endpoint: 10 attempts a minute per IP, enforced in nginx, not in the app."


@pytest.mark.parametrize(
    "topic",
    [
        LOOKING_BACK,
        "Did we ever roll back a schema migration?",
        "Have we seen flaky checkout tests before?",
        "Previously, how did we handle token expiry?",
        "Remember when the payments deploy broke?",
        "What was decided about the sessions table",
        "How did the last incident with Redis go?",
        "Have we already tried caching the search results",
        "Is this the same bug we had in the past?",
    ],
)
def test_a_topic_that_looks_back_asks_about_the_past(topic: str) -> None:
    assert asks_about_the_past(topic)


@pytest.mark.parametrize(
    "topic",
    [
        "Should we add rate limiting to the login endpoint?",
        "Cover token expiry before merging the auth change",
        "Migrate the sessions table to PostgreSQL 16",
        "What should we do about flaky tests?",
        "Is it time to decide on Redis?",
        "Remembering user preferences in the settings page",
    ],
)
def test_a_topic_about_now_does_not(topic: str) -> None:
    assert not asks_about_the_past(topic)


@pytest.mark.parametrize(
    ("topic", "query"),
    [
        (LOOKING_BACK, "rate limiting on the login endpoint"),
        ("Did we ever roll back a schema migration?", "roll back a schema migration"),
        ("Have we seen flaky checkout tests before?", "flaky checkout tests"),
        ("Remember when the payments deploy broke?", "the payments deploy broke"),
        ("What did we decide?", "What did we decide?"),  # nothing left: the topic itself
    ],
)
def test_the_query_is_the_topic_without_its_look_back(topic: str, query: str) -> None:
    assert recall_query(topic) == query


DEV = next(persona for persona in load_default_personas() if persona.slug == "dev")


def memory(*lessons: str) -> MemoryService:
    service = MemoryService(
        store=InMemoryMemoryStore(),
        llm=ScriptedLLM(),
        clock=FakeClock(),
        recall=Recall(),
        policy=MemoryPolicy(use_model_for_curation=False),
    )
    for text in lessons:
        service.remember(DEV, "demo", text, author="cli")
    return service


def request(topic: str = LOOKING_BACK, *, round_no: int = 1, persona: Persona | None = DEV) -> LLMRequest:
    return LLMRequest(
        purpose=Purpose.TURN,
        system=SystemPrompt(
            (PromptBlock("You are Dev.", cache=True), PromptBlock(f"Project: demo · round {round_no} of 2"))
        ),
        messages=(ChatMessage("user", f"Your turn, Dev (round {round_no})."),),
        persona=persona,
        topic=topic,
        tools=memory_tool_specs(),
    )


def run(req: LLMRequest, service: MemoryService) -> tuple[str, ToolTurn, RecordingPoster]:
    poster = RecordingPoster()
    tools = MemoryTools(memory=service, persona=DEV, project="demo", link=None)
    loop = ToolTurn(llm=OfflineLLM(), tools=tools, poster=poster, persona=DEV, project="demo")
    return loop.answer(req).text, loop, poster


def test_a_persona_asked_about_the_past_recalls_then_answers_from_memory() -> None:
    text, loop, poster = run(request(), memory(HELD, "Staging data is wiped every Monday."))

    assert text.startswith("[offline] From memory: Rate limiting on the login endpoint: 10 attempts a minute per IP")
    assert text.count("[offline]") == 1
    assert [(trace.name, dict(trace.input)) for trace in loop.traces] == [
        (RECALL_TOOL, {"query": "rate limiting on the login endpoint"})
    ]
    assert poster.recalls == [("Dev", "rate limiting on the login endpoint", 1)]
    assert poster.lessons == []  # it never remembers: reflection does


def test_with_nothing_remembered_it_says_so() -> None:
    text, _, poster = run(request(), memory())

    assert text.startswith("[offline] From memory: nothing noted on rate limiting on the login endpoint yet.")
    assert poster.recalls == [("Dev", "rate limiting on the login endpoint", 0)]


@pytest.mark.parametrize(
    "changed",
    [
        {"topic": "Should we add rate limiting to the login endpoint?"},
        {"round_no": 2},
        {"persona": None},
    ],
    ids=["about-now", "later-round", "no-persona"],
)
def test_no_recall_when_the_topic_is_about_now_in_later_rounds_or_for_no_one(changed: dict[str, object]) -> None:
    response = OfflineLLM().complete(request(**changed))  # type: ignore[arg-type]
    assert response.tool_calls == ()
    assert response.text.startswith("[offline]") or response.text == "SKIP"


def test_no_recall_without_the_tool_or_outside_a_turn() -> None:
    without = replace(request(), tools=())
    consensus = replace(request(), purpose=Purpose.CONSENSUS)
    assert OfflineLLM().complete(without).tool_calls == ()
    assert OfflineLLM().complete(consensus).tool_calls == ()


def test_the_recall_is_deterministic() -> None:
    first = OfflineLLM().complete(request())
    second = OfflineLLM().complete(request())
    assert first == second
    assert first.text == ""
    assert [call.name for call in first.tool_calls] == [RECALL_TOOL]
