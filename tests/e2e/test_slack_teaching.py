"""End to end: teaching in plain words over the real Socket Mode handler and WebClient against FakeSlack, with the
offline model, and with the real anthropic client answering the teaching prompt from the fake Anthropic server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from injector import Module, provider, singleton

from nightwatch.adapters.anthropic_llm import AnthropicLLM
from nightwatch.domain.llm import LLM
from nightwatch.domain.models import Lesson
from tests import payloads
from tests.adapters.slack.stack import Stack, running_stack
from tests.e2e.slack_live import LiveApp
from tests.fake_anthropic import FakeAnthropic, answer, request_text, server_error
from tests.fake_slack import FakeSlack

pytestmark = pytest.mark.slow


def app_posts(fake: FakeSlack, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in fake.messages(channel, thread_ts) if m.get("bot_id") and not m.get("username")]


def lessons(stack: Stack, name: str, project: str) -> list[Lesson]:
    return stack.memory.lessons(stack.personas.get(name), project)


def test_the_personas_of_a_deliberation_learn_in_its_thread_and_forget_on_their_teachers_word(
    live: LiveApp, fake: FakeSlack
) -> None:
    topic = fake.post_human_message("C1", "<@UBOT> should we put the login endpoint behind a rate limiter?")
    fake.wait_for(lambda: any("remembered" in str(m.get("text")) for m in fake.messages("C1", topic["ts"])), 15)
    fake.wait_for(lambda: live.stack.slack.pool.running == 0)
    spoke = {m["username"] for m in fake.messages("C1", topic["ts"]) if m.get("username")}
    before = len(app_posts(fake, "C1", topic["ts"]))

    fake.post_human_message(
        "C1", "<@UBOT> remember that login attempts are capped at 5 a minute", thread_ts=topic["ts"]
    )

    def taught() -> list[str]:  # the lines of the thread's one lessons message that this teaching added
        notes = [m for m in app_posts(fake, "C1", topic["ts"]) if not m.get("username") and "remembered" in m["text"]]
        return [line for m in notes for line in m["text"].splitlines() if "capped at 5 a minute" in line]

    fake.wait_for(lambda: len(taught()) >= len(spoke), 10)
    assert len(app_posts(fake, "C1", topic["ts"])) == before  # the lessons message was updated in place
    assert {line.split(" remembered:")[0].removeprefix("★ ") for line in taught()} == spoke
    for name in spoke:
        assert "Login attempts are capped at 5 a minute." in [
            lesson.text for lesson in lessons(live.stack, name, "general")
        ]

    fake.post_human_message("C1", "<@UBOT> forget that we cap login attempts", thread_ts=topic["ts"])
    fake.wait_for(lambda: "teach_forget" in json.dumps(app_posts(fake, "C1", topic["ts"])[-1].get("blocks")), 10)
    offer = app_posts(fake, "C1", topic["ts"])[-1]
    assert "Login attempts are capped at 5 a minute." in offer["text"]
    value = next(e["value"] for b in offer["blocks"] if b["type"] == "actions" for e in b["elements"])
    fake.send_interactive(payloads.block_action("teach_forget", value, user="U1", message_ts=offer["ts"]))
    fake.wait_for(lambda: "forgotten by <@U1>" in json.dumps(fake.workspace.find_message("C1", offer["ts"])))
    for name in spoke:
        texts = [lesson.text for lesson in lessons(live.stack, name, "general")]
        assert "Login attempts are capped at 5 a minute." not in texts
    assert live.stop() is True
    assert len(live.stack.log.recent()) == 1  # the teachings started no deliberation


class ClaudeOnFake(Module):
    """The real Anthropic adapter, pointed at the fake server."""

    def __init__(self, url: str) -> None:
        self.url = url

    @singleton
    @provider
    def llm(self) -> LLM:
        return AnthropicLLM(api_key="sk-ant-test", default_model="claude-test", base_url=self.url, max_retries=0)


@pytest.fixture
def model() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def claude_stack(home: Path, fake: FakeSlack, model: FakeAnthropic) -> Iterator[Stack]:
    with running_stack(home, fake, overrides=(ClaudeOnFake(model.url),)) as stack:
        yield stack


def teach(stack: Stack, fake: FakeSlack, text: str) -> dict[str, Any]:
    stored = fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": f"<@UBOT> {text}"})
    stack.dispatch(payloads.event_callback(payloads.app_mention(stored["text"], ts=stored["ts"])))
    return stored


def teaching_requests(model: FakeAnthropic) -> list[str]:
    return [request_text(r.body)[0] for r in model.requests if "<message>" in request_text(r.body)[0]]


def test_the_models_reading_of_a_teaching_is_what_is_remembered(
    claude_stack: Stack, fake: FakeSlack, model: FakeAnthropic
) -> None:
    reading = {"intent": "remember", "personas": ["Maya"], "text": "Production deploys happen on Thursdays now."}
    model.plan(answer(json.dumps(reading)))
    stored = teach(claude_stack, fake, "Maya, please remember that we deploy to prod on Thursdays now")
    fake.wait_for(lambda: bool(app_posts(fake, "C1", stored["ts"])))
    [lesson] = lessons(claude_stack, "Maya", "general")
    assert (lesson.text, lesson.author) == ("Production deploys happen on Thursdays now.", "U1")
    [prompt] = teaching_requests(model)
    assert "<message>\nMaya, please remember that we deploy to prod on Thursdays now\n</message>" in prompt


def test_an_invalid_answer_falls_back_to_the_phrase_rules(
    claude_stack: Stack, fake: FakeSlack, model: FakeAnthropic
) -> None:
    model.plan(answer("Sure! I'll make sure Maya remembers that."))
    stored = teach(claude_stack, fake, "Maya, remember that we deploy on Thursdays now")
    fake.wait_for(lambda: bool(app_posts(fake, "C1", stored["ts"])))
    assert [lesson.text for lesson in lessons(claude_stack, "Maya", "general")] == ["We deploy on Thursdays now."]
    assert len(teaching_requests(model)) == 1


def test_a_persona_the_message_does_not_name_cannot_be_added_by_the_model(
    claude_stack: Stack, fake: FakeSlack, model: FakeAnthropic
) -> None:
    reading = {"intent": "remember", "personas": ["Carlos"], "text": "We deploy on Thursdays now."}
    model.plan(answer(json.dumps(reading)))
    stored = teach(claude_stack, fake, "remember that we deploy on Thursdays now")
    fake.wait_for(lambda: bool(app_posts(fake, "C1", stored["ts"])))
    assert app_posts(fake, "C1", stored["ts"])[0]["text"].startswith("Which persona should remember this?")
    assert lessons(claude_stack, "Carlos", "general") == []


def test_a_failed_model_call_falls_back_to_the_phrase_rules(
    claude_stack: Stack, fake: FakeSlack, model: FakeAnthropic
) -> None:
    model.plan(server_error(500))
    stored = teach(claude_stack, fake, "Maya, forget that we deploy on Fridays")
    fake.wait_for(lambda: bool(app_posts(fake, "C1", stored["ts"])))
    assert "Nothing *Maya* remember about *general*" in json.dumps(app_posts(fake, "C1", stored["ts"])[0]["blocks"])
