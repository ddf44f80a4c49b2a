"""Error as input for persona turns through the real anthropic client, against tests/fake_anthropic.py.

The engine runs with the real AnthropicLLM (its own retries included) and the terminal poster; memory and the
deliberation log are the in-memory fakes.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from nightwatch.adapters.anthropic_llm import AnthropicLLM
from nightwatch.adapters.terminal import TerminalPoster
from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.deliberation.models import DeliberationStatus
from nightwatch.domain.soul import SoulCompiler
from tests.domain.deliberation.cast import CARLOS, MAYA, FakeMemory, ask
from tests.fake_anthropic import FakeAnthropic, Planned, answer, server_error
from tests.fakes import FakeClock, FakeLiveness, InMemoryDeliberationLog, InMemoryPersonaRepository

ADAPTER_RETRIES = 3  # so a failing call is 4 requests before the turn's own retry


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def llm(fake: FakeAnthropic) -> Iterator[AnthropicLLM]:
    client = AnthropicLLM(
        api_key="sk-ant-test", default_model="claude-test", base_url=fake.url, timeout=5.0, max_retries=ADAPTER_RETRIES
    )
    yield client
    client.close()


def deliberate(llm: AnthropicLLM) -> tuple[Any, TerminalPoster, io.StringIO, InMemoryDeliberationLog]:
    log = InMemoryDeliberationLog()
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository((MAYA, CARLOS)),
        memory=FakeMemory(),
        compiler=SoulCompiler(),
        llm=llm,
        log=log,
        clock=FakeClock(),
        policy=DeliberationPolicy(max_rounds=1),
        liveness=FakeLiveness(),
    )
    out = io.StringIO()
    poster = TerminalPoster(out=out)
    result = engine.run(ask("Maya: should we rotate the signing key?"), poster)
    return result, poster, out, log


def messages(fake: FakeAnthropic, index: int) -> list[dict[str, Any]]:
    return list(fake.requests[index].body["messages"])


def last_user_text(fake: FakeAnthropic, index: int) -> str:
    content = messages(fake, index)[-1]["content"]
    return content if isinstance(content, str) else " ".join(part["text"] for part in content)


def test_a_script_answer_is_sent_back_with_the_problem_and_the_second_answer_is_posted(
    fake: FakeAnthropic, llm: AnthropicLLM
) -> None:
    script = "Maya: rotate it tonight.\nCarlos: agreed, ship it."
    fake.plan(answer(script), answer("Rotate the signing key before the release."))
    result, poster, _, _ = deliberate(llm)
    assert poster.thread[0].author == "Maya"
    assert poster.thread[0].text == "Rotate the signing key before the release."
    assert poster.notices == []
    retry = messages(fake, 1)
    assert retry[-2] == {"role": "assistant", "content": script}
    assert "the answer also spoke for Carlos" in last_user_text(fake, 1)
    assert result.deliberation.status is DeliberationStatus.DONE


def test_a_500_on_every_attempt_then_success_on_the_error_fed_retry(fake: FakeAnthropic, llm: AnthropicLLM) -> None:
    fake.plan(*[server_error(500)] * (ADAPTER_RETRIES + 1), answer("Rotate the key and revoke old sessions."))
    result, poster, _, log = deliberate(llm)
    assert poster.thread[0].text == "Rotate the key and revoke old sessions."
    assert poster.notices == []
    fed_back = last_user_text(fake, ADAPTER_RETRIES + 1)
    assert "the model could not answer (Anthropic had a server error (500) after 3 retries" in fed_back
    assert messages(fake, ADAPTER_RETRIES + 1)[-2] == {"role": "assistant", "content": "(no answer)"}
    stored = log.turns(result.deliberation.id or 0)
    assert [(t.persona, t.skipped) for t in stored] == [("Maya", False), ("Carlos", False)]


def test_both_attempts_failing_skip_the_persona_with_a_notice_in_the_thread_and_the_terminal(
    fake: FakeAnthropic, llm: AnthropicLLM
) -> None:
    fake.plan(*[server_error(500)] * (ADAPTER_RETRIES + 1), answer("Maya: rotate.\nCarlos: yes."))
    result, poster, out, log = deliberate(llm)
    assert [m.author for m in poster.thread] == ["Carlos", "Carlos"]  # Carlos's turn, then his verdict
    notice = (
        "Maya was skipped this turn, even after a second try: the answer also spoke for Carlos, as a script of "
        "several voices. The others carry on."
    )
    assert poster.notices == [notice]
    assert f"· {notice}" in out.getvalue()
    stored = log.turns(result.deliberation.id or 0)
    assert (stored[0].persona, stored[0].skipped) == ("Maya", True)
    assert result.deliberation.status is DeliberationStatus.DONE


def test_an_answer_with_no_text_counts_as_a_failure_too(fake: FakeAnthropic, llm: AnthropicLLM) -> None:
    empty = Planned(
        body={
            "id": "msg_empty",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": "max_tokens",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 0},
        }
    )
    fake.plan(empty, answer("Rotate the key; the old one leaked."))
    _, poster, _, _ = deliberate(llm)
    assert poster.thread[0].text == "Rotate the key; the old one leaked."
    assert "the model's answer could not be read (Anthropic's answer held no text" in last_user_text(fake, 1)
