"""The turn-context seam: every source read once in order, under its own budget, a failing one left out."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pytest

from nightwatch.domain.context import ContextAsk, ContextPart, ContextReader, ContextSource, TurnContext
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.models import MemoryBlock
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.soul import SoulCompiler
from tests.domain.knowing import knowing
from tests.fakes import T0

MAYA = Persona(name="Maya", slug="maya", role="Security Reviewer")
ASK = ContextAsk(MAYA, "night-watch", "rotate keys", "recent", budgets={"notes": 42})


@dataclass
class Notes:
    """A source this codebase does not have: the seam takes it with no change to turns, engine or compiler."""

    name: str = "notes"
    broken: bool = False
    asked: list[ContextAsk] = field(default_factory=list)

    def read(self, ask: ContextAsk) -> ContextPart:
        self.asked.append(ask)
        if self.broken:
            raise StorageError("The notes could not be read; check the disk.")
        return ContextPart(self.name, f"<notes>\nfor {ask.persona.name}\n</notes>", count=1)


def test_each_source_is_asked_once_with_its_own_budget_and_parts_keep_the_sources_order() -> None:
    first, second = Notes("notes"), Notes("later")
    known = ContextReader([first, second]).read(ASK)
    assert [part.source for part in known.parts] == ["notes", "later"]
    assert first.asked == second.asked == [ASK]
    assert (ASK.budget("notes"), ASK.budget("later")) == (42, None)
    assert known.count("notes") == 1
    assert known.count("absent") == 0


def test_a_failing_source_is_logged_and_left_out_and_the_rest_are_read(caplog: pytest.LogCaptureFixture) -> None:
    sources: list[ContextSource] = [Notes("broken", broken=True), Notes("notes")]
    with caplog.at_level(logging.WARNING):
        known = ContextReader(sources).read(ASK)
    assert [part.source for part in known.parts] == ["notes"]
    assert "could not read Maya's broken" in caplog.text


def test_a_new_source_reaches_the_prompt_and_the_budget_without_a_line_of_its_own() -> None:
    known = ContextReader([Notes()]).read(ASK)
    prompt = SoulCompiler().compile(MAYA, mode="deliberation", known=known, context="ctx")
    assert [block.text for block in prompt.blocks][1] == "<notes>\nfor Maya\n</notes>"
    budget = SoulCompiler().budget(MAYA, mode="deliberation", known=known)
    assert budget.other_tokens == known.tokens("notes") > 0
    nothing = SoulCompiler().budget(MAYA, mode="deliberation", known=TurnContext())
    assert budget.total_tokens == nothing.total_tokens + budget.other_tokens


def test_the_persona_s_own_lessons_are_what_counts_as_injected() -> None:
    lesson = Lesson("aaaa1111", "Rotate keys.", T0)
    known = knowing(MemoryBlock((lesson,), "- Rotate keys.", 5, 1))
    assert known.lesson_ids == ("aaaa1111",)
    assert known.find(MemoryBlock) is not None
    assert known.find(Persona) is None
