"""AnthropicLLM through the real anthropic SDK, against tests/fake_anthropic.py (and httpx2.MockTransport)."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterator

import httpx2
import pytest

from nightwatch.adapters.anthropic_llm import AnthropicLLM, system_blocks
from nightwatch.domain.errors import LLMOutputError, LLMUnavailableError
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from tests.fake_anthropic import (
    FakeAnthropic,
    Planned,
    overloaded,
    rate_limited,
    server_error,
    slow,
    unauthorized,
)

KEY = "sk-ant-test-SECRET-4242"
MODEL = "claude-sonnet-5-5"

Factory = Callable[..., AnthropicLLM]


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def make_llm(fake: FakeAnthropic) -> Iterator[Factory]:
    made: list[AnthropicLLM] = []

    def make(**options: object) -> AnthropicLLM:
        settings: dict[str, object] = {"api_key": KEY, "default_model": MODEL, "base_url": fake.url, "timeout": 5.0}
        settings.update(options)
        llm = AnthropicLLM(**settings)  # type: ignore[arg-type]
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()


def turn_request(**changes: object) -> LLMRequest:
    fields: dict[str, object] = {
        "purpose": Purpose.TURN,
        "system": SystemPrompt(
            (
                PromptBlock("You are Maya, the security reviewer.", cache=True),
                PromptBlock("## Memory\n- Never log tokens.", cache=True),
                PromptBlock("Thread context: a login change.", cache=False),
            )
        ),
        "messages": (
            ChatMessage("user", "Carlos: should we ship the login change?"),
            ChatMessage("assistant", "Not before the token check."),
            ChatMessage("user", "Round 2. Your turn, Maya."),
        ),
        "max_tokens": 300,
        "topic": "login change",
    }
    fields.update(changes)
    return LLMRequest(**fields)  # type: ignore[arg-type]


def test_success_sends_cached_system_blocks_and_records_usage(fake: FakeAnthropic, make_llm: Factory) -> None:
    llm = make_llm()

    first = llm.complete(turn_request())
    second = llm.complete(turn_request())

    body = fake.requests[0].body
    assert fake.requests[0].path == "/v1/messages"
    assert body["model"] == MODEL
    assert body["max_tokens"] == 300
    assert body["system"] == [
        {"type": "text", "text": "You are Maya, the security reviewer.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "## Memory\n- Never log tokens.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Thread context: a login change."},
    ]
    assert body["messages"] == [
        {"role": "user", "content": "Carlos: should we ship the login change?"},
        {"role": "assistant", "content": "Not before the token check."},
        {"role": "user", "content": "Round 2. Your turn, Maya."},
    ]
    assert first.text == "Fake answer from the fake Anthropic server."
    assert first.model == MODEL
    assert not first.offline
    cached_words = len("You are Maya, the security reviewer.\n## Memory\n- Never log tokens.".split())
    assert first.usage.cache_write_tokens == cached_words
    assert first.usage.cache_read_tokens == 0
    assert first.usage.output_tokens == 7
    assert first.usage.input_tokens > 0
    assert second.usage.cache_read_tokens == cached_words
    assert second.usage.cache_write_tokens == 0


def test_the_persona_model_overrides_the_default(fake: FakeAnthropic, make_llm: Factory) -> None:
    response = make_llm().complete(turn_request(model="claude-opus-5"))

    assert fake.requests[0].body["model"] == "claude-opus-5"
    assert response.model == "claude-opus-5"


def test_the_sdk_reads_anthropic_base_url_when_none_is_given(
    fake: FakeAnthropic, make_llm: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)

    response = make_llm(base_url=None).complete(turn_request())

    assert response.text == "Fake answer from the fake Anthropic server."
    assert len(fake.requests) == 1


def test_cache_breakpoints_go_on_the_last_four_cached_blocks_and_empty_blocks_are_dropped() -> None:
    blocks = [PromptBlock(f"stable {i}", cache=True) for i in range(6)] + [PromptBlock(""), PromptBlock("now")]

    sent = system_blocks(blocks)

    assert [b["text"] for b in sent] == [f"stable {i}" for i in range(6)] + ["now"]
    assert ["cache_control" in b for b in sent] == [False, False, True, True, True, True, False]


def test_a_rate_limit_is_retried_after_the_wait_the_server_asks_for(fake: FakeAnthropic, make_llm: Factory) -> None:
    fake.plan(rate_limited(retry_after_ms=20))
    started = time.monotonic()

    response = make_llm(max_retries=3).complete(turn_request())

    assert response.text == "Fake answer from the fake Anthropic server."
    assert len(fake.requests) == 2
    assert time.monotonic() - started < 0.9  # retry-after-ms (20 ms) won over retry-after (1 s)


def test_server_errors_are_retried_then_answered(fake: FakeAnthropic, make_llm: Factory) -> None:
    fake.plan(server_error(500), server_error(503))

    response = make_llm(max_retries=3).complete(turn_request())

    assert response.text.startswith("Fake answer")
    assert len(fake.requests) == 3


def test_overload_until_retries_run_out_is_unavailable(fake: FakeAnthropic, make_llm: Factory) -> None:
    fake.plan(*[overloaded(retry_after_ms=5) for _ in range(4)])

    with pytest.raises(LLMUnavailableError, match=r"overloaded \(529\) after 3 retries; try again in a minute"):
        make_llm(max_retries=3).complete(turn_request())

    assert len(fake.requests) == 4


def test_a_long_retry_after_fails_at_once_instead_of_parking_a_worker(fake: FakeAnthropic, make_llm: Factory) -> None:
    fake.plan(Planned(status=429, headers={"retry-after": "120"}, body={"type": "error", "error": {}}))

    with pytest.raises(LLMUnavailableError, match=r"rate limit .*\(429\); try again in 120 s"):
        make_llm(max_retries=3).complete(turn_request())

    assert len(fake.requests) == 1


@pytest.mark.slow
def test_a_slow_answer_times_out(fake: FakeAnthropic, make_llm: Factory) -> None:
    fake.plan(slow(3.0), slow(3.0))
    started = time.monotonic()

    with pytest.raises(
        LLMUnavailableError, match=r"did not answer within 0.3 s after 1 retry; .*NIGHTWATCH_LLM_TIMEOUT"
    ):
        make_llm(timeout=0.3, max_retries=1).complete(turn_request())

    assert time.monotonic() - started < 2.0
    assert len(fake.requests) == 2


def test_a_rejected_key_is_not_retried_and_names_the_variable(fake: FakeAnthropic, make_llm: Factory) -> None:
    fake.plan(unauthorized())

    with pytest.raises(LLMUnavailableError, match="check ANTHROPIC_API_KEY"):
        make_llm(max_retries=3).complete(turn_request())

    assert len(fake.requests) == 1


def test_an_unreachable_server_is_unavailable(make_llm: Factory) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there

    with pytest.raises(LLMUnavailableError, match="Could not reach Anthropic"):
        make_llm(base_url=f"http://127.0.0.1:{port}", max_retries=0).complete(turn_request())


@pytest.mark.parametrize(
    "planned",
    [
        Planned(body={"id": "msg_1", "type": "message", "role": "assistant"}),
        Planned(body={"id": "msg_1", "type": "message", "content": [{"type": "tool_use", "id": "t", "input": {}}]}),
        Planned(body={"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "  "}]}),
        Planned(raw=b"<html>gateway</html>"),
    ],
    ids=["no-content", "no-text-block", "blank-text", "not-json"],
)
def test_a_malformed_answer_is_an_output_error(fake: FakeAnthropic, make_llm: Factory, planned: Planned) -> None:
    fake.plan(planned)

    with pytest.raises(LLMOutputError, match="try again"):
        make_llm(max_retries=3).complete(turn_request())

    assert len(fake.requests) == 1


def test_the_key_never_reaches_a_log_record(
    fake: FakeAnthropic, make_llm: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    llm = make_llm(max_retries=2)
    fake.plan(rate_limited(retry_after_ms=5), unauthorized())

    with pytest.raises(LLMUnavailableError) as failure:
        llm.complete(turn_request())
    llm.complete(turn_request())

    assert any("retry 1 of 2" in record.getMessage() for record in caplog.records)
    assert len(caplog.records) > 3  # the SDK's own debug records were captured too
    assert all(KEY not in record.getMessage() for record in caplog.records)
    assert KEY not in str(failure.value)
    assert fake.requests[0].headers.get("authorization", fake.requests[0].headers.get("x-api-key", "")).endswith(KEY)


def test_an_http_client_with_a_mock_transport_is_used_as_given() -> None:
    answers = iter(
        [
            httpx2.Response(
                503,
                headers={"retry-after-ms": "1"},
                json={"type": "error", "error": {"type": "api_error", "message": "down"}},
            ),
            httpx2.Response(
                200,
                json={
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [{"type": "text", "text": "From the mock."}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": 40},
                },
            ),
        ]
    )
    seen: list[dict[str, object]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return next(answers)

    client = httpx2.Client(transport=httpx2.MockTransport(handle))
    llm = AnthropicLLM(api_key=KEY, default_model=MODEL, http_client=client, base_url="http://mock.invalid")
    try:
        response = llm.complete(turn_request())
    finally:
        llm.close()

    assert response.text == "From the mock."
    assert (response.usage.input_tokens, response.usage.cache_read_tokens, response.usage.cache_write_tokens) == (
        12,
        40,
        0,
    )
    assert len(seen) == 2
    assert client.is_closed


def test_the_fake_default_responder_answers_each_shape(fake: FakeAnthropic, make_llm: Factory) -> None:
    llm = make_llm()
    now = (ChatMessage("user", "Answer now, in the form asked for."),)

    def ask(purpose: Purpose, system: str, messages: tuple[ChatMessage, ...] = now) -> str:
        return llm.complete(
            turn_request(purpose=purpose, system=SystemPrompt((PromptBlock(system),)), messages=messages)
        ).text

    verdict = ask(Purpose.CONSENSUS, "You are Carlos.", (ChatMessage("user", 'Decide. JSON: {"decision": ...}'),))
    lessons = ask(Purpose.REFLECTION, "Write 1 to 3 lessons, one per line.")
    kept = ask(
        Purpose.COMPACTION, "Condense to at most 2 lessons.\nRules:\n- be brief\n\n- one\n- [pinned] two\n- three"
    )
    curation = ask(Purpose.CURATION, 'Answer with JSON: {"action": "create" | "merge" | "skip" | "supersede"}')

    assert json.loads(verdict)["decision"] in {"APPROVE", "CHANGES", "HUMAN"}
    assert [line[:4] for line in lessons.splitlines()] == ["- [p", "  > ", "- [c", "  > "]
    assert ask(Purpose.EXTRACTION, "<messages>\n- a: b\n</messages>\nWrite 0 to 3 lessons.") == "NONE"
    assert kept == "- two\n- three"
    assert json.loads(curation) == {"action": "create", "target": None}
