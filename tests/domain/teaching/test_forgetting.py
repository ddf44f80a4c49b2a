"""The model's `memory_forget` tool and Undo: one of its own lessons a turn, by id or by words that match exactly one
lesson clearly, kept so a restore brings it back with every mark it had.

The memory is the real MemoryService on an in-memory store; the model is scripted (`calling`) and the turn's loop is
the real ToolTurn, so the tool is exercised as a deliberation's turn runs it.
"""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation.tool_turn import ToolTurn
from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory import FORGET_TOOL, MemoryPolicy, MemoryService, MemoryTools, MemoryTransfer
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from nightwatch.domain.teaching import Forgetting
from tests.fakes import FakeClock, InMemoryForgottenLessons, InMemoryMemoryStore, RecordingPoster, ScriptedLLM, calling

DEV = Persona(name="Dev", slug="dev", role="Implementer", id=1)
PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer", id=2)
PROJECT = "night-watch"
THREAD = "C1:1700000000.000100"
LOGIN = "Rate limiting on the login endpoint allows 10 attempts a minute per IP, enforced in nginx."
SEARCH = "Rate limiting on the search API was rolled back after it blocked the mobile app."
STAGING = "Staging data is wiped every Monday at 06:00 UTC."


class Personas:
    def get_by_id(self, persona_id: int) -> Persona:
        return {1: DEV, 2: PRIYA}[persona_id]


def setup() -> tuple[MemoryService, Forgetting, InMemoryForgottenLessons]:
    store = InMemoryMemoryStore()
    memory = MemoryService(
        store=store,
        llm=ScriptedLLM(),
        clock=FakeClock(),
        recall=Recall(),
        policy=MemoryPolicy(use_model_for_curation=False),
    )
    kept = InMemoryForgottenLessons()
    transfer = MemoryTransfer(store=store, memory=memory)
    return memory, Forgetting(memory=memory, transfer=transfer, kept=kept, personas=Personas()), kept


def dev_turn(memory: MemoryService, forgetting: Forgetting, *calls: tuple[str, dict[str, object]]) -> ToolTurn:
    """Dev's turn: the model makes `calls` in one round, then answers; the turn has run when this returns."""
    tools = MemoryTools(memory=memory, persona=DEV, project=PROJECT, link=None, forgetting=forgetting, thread=THREAD)
    llm = ScriptedLLM().script(Purpose.TURN, calling(*calls), "Done.")
    turn = ToolTurn(llm=llm, tools=tools, poster=RecordingPoster(), persona=DEV, project=PROJECT)
    request = LLMRequest(
        purpose=Purpose.TURN,
        system=SystemPrompt((PromptBlock("You are Dev."),)),
        messages=(ChatMessage("user", "Your turn, Dev."),),
        persona=DEV,
        topic="rate limits",
    )
    turn.answer(request)
    return turn


def texts(memory: MemoryService, persona: Persona = DEV) -> list[str]:
    return [lesson.text for lesson in memory.lessons(persona, PROJECT)]


def test_the_tool_is_offered_beside_recall_and_remember() -> None:
    memory, forgetting, _ = setup()
    tools = MemoryTools(memory=memory, persona=DEV, project=PROJECT, link=None, forgetting=forgetting)
    assert [spec.name for spec in tools.specs] == ["memory_recall", "remember", FORGET_TOOL]
    assert "at most 1 lesson in a turn" in " ".join(tools.specs[-1].description.split())


def test_forgetting_by_id_removes_the_lesson_keeps_it_and_tells_the_thread() -> None:
    memory, forgetting, kept = setup()
    lesson = memory.remember(DEV, PROJECT, LOGIN, author="U7", category="entities")
    memory.remember(DEV, PROJECT, STAGING)

    turn = dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": lesson.id}))

    assert texts(memory) == [STAGING]
    assert turn.traces[0].result == f"forgot {lesson.id}"
    assert not turn.traces[0].error
    [(name, forgotten)] = turn.poster.forgotten  # type: ignore[attr-defined]
    assert (name, forgotten.lesson_id, forgotten.text, forgotten.thread) == ("Dev", lesson.id, LOGIN, THREAD)
    assert kept.rows[1].kept.count("\n- ") == 1  # a one-lesson document


def test_undo_restores_the_lesson_with_its_marks_once() -> None:
    memory, forgetting, kept = setup()
    lesson = memory.remember(DEV, PROJECT, LOGIN, author="U7", category="entities")
    dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": lesson.id}))

    restored = forgetting.restore(1, "U1")

    [back] = memory.lessons(DEV, PROJECT)
    assert (back.id, back.text, back.author, back.category) == (lesson.id, LOGIN, "U7", "entities")
    assert restored.restored_by == "U1"
    assert kept.rows[1].restored_by == "U1"
    with pytest.raises(InvalidInputError, match="restored already"):
        forgetting.restore(1, "U2")
    with pytest.raises(NotFoundError, match="no longer points at a forgotten lesson"):
        forgetting.restore(99, "U1")


def test_words_forget_a_lesson_only_when_exactly_one_matches_clearly() -> None:
    memory, forgetting, _ = setup()
    for text in (LOGIN, SEARCH, STAGING):
        memory.remember(DEV, PROJECT, text)

    vague = dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": "rate limiting"}))
    assert texts(memory) == [LOGIN, SEARCH, STAGING]  # two lessons match: nothing forgotten
    result = vague.llm.requests[1].tool_rounds[0].results[0]  # type: ignore[attr-defined]
    assert not result.is_error
    assert "Nothing was forgotten" in result.content
    assert LOGIN in result.content
    assert SEARCH in result.content

    clear = dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": "staging data is wiped every Monday"}))
    assert texts(memory) == [LOGIN, SEARCH]
    assert clear.traces[0].result.startswith("forgot ")


def test_a_second_forget_in_the_same_turn_is_a_tool_error() -> None:
    memory, forgetting, _ = setup()
    login = memory.remember(DEV, PROJECT, LOGIN)
    staging = memory.remember(DEV, PROJECT, STAGING)

    turn = dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": login.id}), (FORGET_TOOL, {"lesson": staging.id}))

    assert texts(memory) == [STAGING]
    first, second = turn.llm.requests[1].tool_rounds[0].results  # type: ignore[attr-defined]
    assert not first.is_error
    assert second.is_error
    assert "at most one lesson in a turn" in second.content


def test_a_persona_cannot_forget_another_personas_lesson() -> None:
    memory, forgetting, _ = setup()
    theirs = memory.remember(PRIYA, PROJECT, LOGIN)

    turn = dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": theirs.id}))

    assert texts(memory, PRIYA) == [LOGIN]
    assert "Nothing was forgotten" in turn.llm.requests[1].tool_rounds[0].results[0].content  # type: ignore[attr-defined]


def test_an_empty_lesson_is_a_tool_error_and_forgets_nothing() -> None:
    memory, forgetting, _ = setup()
    memory.remember(DEV, PROJECT, LOGIN)

    turn = dev_turn(memory, forgetting, (FORGET_TOOL, {"lesson": "  "}))

    assert turn.traces[0].error
    assert "Give the lesson to forget" in turn.traces[0].result
    assert texts(memory) == [LOGIN]
