"""The memory tools' definitions, and the category `remember` takes (checked; lessons do not store it yet)."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import (
    LESSON_MAX,
    RECALL_TOOL,
    REMEMBER_TOOL,
    MemoryPolicy,
    MemoryService,
    MemoryTools,
    memory_tool_specs,
)
from nightwatch.domain.memory.models import CATEGORIES
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from nightwatch.domain.tool_use import ToolCall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

DEV = Persona(name="Dev", slug="dev", role="Implementer")


def service() -> MemoryService:
    policy = MemoryPolicy(use_model_for_curation=False)
    return MemoryService(
        store=InMemoryMemoryStore(), llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy
    )


def test_remember_checks_the_category_before_writing_anything() -> None:
    memory = service()
    with pytest.raises(InvalidInputError, match="not a lesson category: use one of profile, preferences"):
        memory.remember(DEV, "demo", "The export job runs at 05:00 UTC.", category="misc")  # type: ignore[arg-type]
    assert memory.lessons(DEV, "demo") == []


@pytest.mark.parametrize("category", [*CATEGORIES, None])
def test_remember_accepts_every_category_and_none(category: str | None) -> None:
    memory = service()
    lesson = memory.remember(DEV, "demo", "The export job runs at 05:00 UTC.", category=category)  # type: ignore[arg-type]
    assert memory.lessons(DEV, "demo") == [lesson]


def test_the_definitions_follow_the_lesson_limit_and_name_each_category_with_its_meaning() -> None:
    recall, remember = memory_tool_specs(120)
    assert (recall.name, remember.name) == (RECALL_TOOL, REMEMBER_TOOL)
    assert remember.input_schema["properties"]["lesson"]["maxLength"] == 120  # type: ignore[index]
    assert "at most 120 characters" in " ".join(remember.description.split())
    assert "- cases: a problem and how it was solved" in remember.description
    assert memory_tool_specs()[1].input_schema["properties"]["lesson"]["maxLength"] == LESSON_MAX  # type: ignore[index]


def test_a_tool_call_with_a_category_in_another_case_is_read_as_that_category() -> None:
    memory = service()
    tools = MemoryTools(memory=memory, persona=DEV, project="demo", link=None)
    outcome = tools.run(
        ToolCall("c1", REMEMBER_TOOL, {"lesson": "The export job runs at 05:00 UTC.", "category": " Events "})
    )
    assert outcome.remembered is not None
    assert outcome.content == f"Remembered as [{outcome.remembered.lesson.id}] (events)."
