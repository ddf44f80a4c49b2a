"""A persona forgets with its `memory_forget` tool, the thread is told, and Undo brings the lesson back (issue 22).

Through the real Bolt app against the fake Slack server, with Claude as the real Anthropic adapter against the fake
Anthropic server: Maya's first turn calls `memory_forget` with the id of one of her lessons.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nightwatch.adapters.slack.lesson_notes import LESSON_UNDO
from nightwatch.domain.models import Lesson
from tests import payloads
from tests.adapters.slack.stack import ADMIN, Stack, running_stack
from tests.adapters.slack.test_lesson_notes import deliberate, lessons_message
from tests.e2e.test_slack_teaching import ClaudeOnFake
from tests.fake_anthropic import FakeAnthropic, Planned, default_responder, request_text, tool_results, tool_use
from tests.fake_slack import FakeSlack

STALE = "Tokens are signed with HS256 and rotated every 90 days."
KEPT = "Session cookies are HttpOnly and SameSite=Lax."


class MayaForgets:
    """Claude as Maya: her first turn forgets the lesson `wanted`, then answers; everything else as the default."""

    def __init__(self) -> None:
        self.wanted = ""
        self._lock = threading.Lock()
        self._done = False

    def __call__(self, body: dict[str, Any]) -> str | Planned:
        system, _ = request_text(body)
        if not body.get("tools") or "# You are Maya" not in system or tool_results(body):
            return default_responder(body)
        with self._lock:
            if self._done:
                return default_responder(body)
            self._done = True
        return tool_use(("memory_forget", {"lesson": self.wanted}), text="That note is out of date.")


@pytest.fixture
def maya_forgets() -> MayaForgets:
    return MayaForgets()


@pytest.fixture
def claude(home: Path, fake: FakeSlack, maya_forgets: MayaForgets) -> Iterator[Stack]:
    with FakeAnthropic(maya_forgets) as model, running_stack(home, fake, overrides=(ClaudeOnFake(model.url),)) as stack:
        yield stack


def maya_lessons(stack: Stack) -> list[Lesson]:
    return stack.memory.lessons(stack.personas.get("Maya"), "general")


def undo_button(note: dict[str, Any]) -> dict[str, Any]:
    [button] = [b["accessory"] for b in note["blocks"] if (b.get("accessory") or {}).get("action_id") == LESSON_UNDO]
    return button


def click_undo(stack: Stack, fake: FakeSlack, note: dict[str, Any], user: str) -> None:
    value = undo_button(note)["value"]
    stack.dispatch(
        payloads.block_action(LESSON_UNDO, value, user=user, message_ts=note["ts"], message_blocks=note["blocks"])
    )


def test_the_thread_is_told_what_maya_forgot_and_the_starter_can_undo_it(
    claude: Stack, fake: FakeSlack, maya_forgets: MayaForgets
) -> None:
    maya = claude.personas.get("Maya")
    stale = claude.memory.remember(maya, "general", STALE, author="U3", category="entities")
    claude.memory.remember(maya, "general", KEPT)
    maya_forgets.wanted = stale.id

    ts = deliberate(claude, fake, "Maya, Priya: how should we store session tokens?")

    assert STALE not in [lesson.text for lesson in maya_lessons(claude)]
    note = lessons_message(fake, ts)
    assert f"Maya forgot: {STALE}" in note["text"].splitlines()
    assert undo_button(note)["text"]["text"] == "Undo"
    assert "1 forgotten" in note["blocks"][0]["elements"][0]["text"]

    click_undo(claude, fake, note, "U3")  # neither an admin nor who started the deliberation
    fake.wait_for(lambda: bool(fake.ephemerals("C1", "U3")))
    assert "Only the person who started this deliberation" in fake.ephemerals("C1", "U3")[0]["text"]
    assert STALE not in [lesson.text for lesson in maya_lessons(claude)]

    click_undo(claude, fake, note, "U1")  # U1 started it
    fake.wait_for(lambda: "restored" in str(lessons_message(fake, ts)["blocks"]))
    [back] = [lesson for lesson in maya_lessons(claude) if lesson.text == STALE]
    assert (back.id, back.author, back.category) == (stale.id, "U3", "entities")
    line = next(b for b in lessons_message(fake, ts)["blocks"] if b["type"] == "section" and " forgot: " in str(b))
    assert line["text"]["text"] == f"*Maya* forgot: ~{STALE}~ — restored (<@U1>)"
    assert "accessory" not in line

    click_undo(claude, fake, note, ADMIN)  # the old blocks still carry the button: a second Undo changes nothing
    fake.wait_for(lambda: bool(fake.ephemerals("C1", ADMIN)))
    assert "restored already" in fake.ephemerals("C1", ADMIN)[0]["text"]
    assert [lesson.text for lesson in maya_lessons(claude)].count(STALE) == 1


def test_words_that_match_several_lessons_forget_nothing(
    claude: Stack, fake: FakeSlack, maya_forgets: MayaForgets
) -> None:
    maya = claude.personas.get("Maya")
    claude.memory.remember(maya, "general", STALE)
    claude.memory.remember(maya, "general", "Tokens for the admin API are rotated every 30 days.")
    maya_forgets.wanted = "tokens rotated"

    ts = deliberate(claude, fake, "Maya, Priya: how should we store session tokens?")

    assert len(maya_lessons(claude)) >= 2  # two lessons match the words: the tool answered with candidates
    assert "forgot" not in lessons_message(fake, ts)["text"]


def test_an_admin_may_undo(claude: Stack, fake: FakeSlack, maya_forgets: MayaForgets) -> None:
    maya = claude.personas.get("Maya")
    maya_forgets.wanted = claude.memory.remember(maya, "general", STALE).id
    ts = deliberate(claude, fake, "Maya, Priya: how should we store session tokens?")

    click_undo(claude, fake, lessons_message(fake, ts), ADMIN)

    fake.wait_for(lambda: "restored" in str(lessons_message(fake, ts)["blocks"]))
    assert STALE in [lesson.text for lesson in maya_lessons(claude)]
