"""The lessons message says exactly what each reflection lesson did to memory (issue 23), through the real Bolt app
and the fake Slack server: created, merged into the lesson it restates, or superseding the one it updates.

The offline model answers everything but the reflections, which each test writes (Maya's only; the others reflect
nothing), so the lesson and the memory it meets are known.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from injector import Module, provider, singleton

from nightwatch.adapters.offline.llm import OfflineLLM
from nightwatch.domain.llm import LLM, LLMRequest, LLMResponse, Purpose
from tests.adapters.slack.stack import Stack, running_stack
from tests.adapters.slack.test_lesson_notes import deliberate, lessons_message
from tests.fake_slack import FakeSlack

TOPIC = "Maya, Priya: should we add rate limiting to the login endpoint?"
OLD = "The login endpoint allows 10 attempts a minute per IP, enforced in nginx."
NEW = "The login endpoint allows 5 attempts a minute per IP now, enforced in nginx."


class ScriptedReflections:
    """The offline model, except that a reflection answers with the lessons set for its persona (NONE otherwise)."""

    def __init__(self) -> None:
        self.inner = OfflineLLM()
        self.lessons: dict[str, str] = {}

    def complete(self, request: LLMRequest) -> LLMResponse:
        if request.purpose is Purpose.REFLECTION:
            name = request.persona.name if request.persona else ""
            return LLMResponse(text=self.lessons.get(name, "NONE"))
        return self.inner.complete(request)

    def module(self) -> Module:
        scripted = self

        class Scripted(Module):
            @singleton
            @provider
            def llm(self) -> LLM:
                return scripted

        return Scripted()


@pytest.fixture
def llm() -> ScriptedReflections:
    return ScriptedReflections()


@pytest.fixture
def scripted(home: Path, fake: FakeSlack, llm: ScriptedReflections) -> Iterator[Stack]:
    with running_stack(home, fake, overrides=(llm.module(),)) as running:
        yield running


def maya_line(fake: FakeSlack, ts: str) -> tuple[str, str]:
    """Maya's one line in the thread's lessons message: its text and the lesson id its Forget button targets."""
    note = lessons_message(fake, ts)
    [section] = [b for b in note["blocks"] if b["type"] == "section"]
    assert section["text"]["text"].startswith("*Maya*")
    return section["text"]["text"], section["accessory"]["value"]


def test_a_reflection_lesson_that_updates_one_says_superseded(
    scripted: Stack, fake: FakeSlack, llm: ScriptedReflections
) -> None:
    maya = scripted.personas.get("Maya")
    old = scripted.memory.remember(maya, "general", OLD)
    llm.lessons["Maya"] = f"- {NEW}"

    ts = deliberate(scripted, fake, TOPIC)

    [new] = scripted.memory.lessons(maya, "general")
    assert new.text == NEW
    assert [lesson.id for lesson in scripted.memory.history(maya, "general")] == [old.id]
    text, target = maya_line(fake, ts)
    assert re.search(rf" · superseded {old.id}: {re.escape(NEW)}", text)
    assert new.id in target  # Forget takes back the new lesson


def test_a_reflection_lesson_that_restates_one_says_merged_and_forget_targets_the_kept_lesson(
    scripted: Stack, fake: FakeSlack, llm: ScriptedReflections
) -> None:
    maya = scripted.personas.get("Maya")
    old = scripted.memory.remember(maya, "general", OLD)
    llm.lessons["Maya"] = f"- {OLD}"

    ts = deliberate(scripted, fake, TOPIC)

    [kept] = scripted.memory.lessons(maya, "general")
    assert (kept.id, kept.seen) == (old.id, 2)
    text, target = maya_line(fake, ts)
    assert re.search(rf" · merged into {old.id}: {re.escape(OLD)}", text)
    assert old.id in target


def test_a_new_reflection_lesson_says_created(scripted: Stack, fake: FakeSlack, llm: ScriptedReflections) -> None:
    llm.lessons["Maya"] = f"- {NEW}"

    ts = deliberate(scripted, fake, TOPIC)

    [lesson] = scripted.memory.lessons(scripted.personas.get("Maya"), "general")
    text, target = maya_line(fake, ts)
    assert f" · created: {NEW}" in text
    assert lesson.id in target
