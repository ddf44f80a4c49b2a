"""Tool use through the real anthropic SDK against tests/fake_anthropic.py, which speaks (and checks) the protocol.

A whole turn runs through the domain's tool loop, the Anthropic adapter and the real memory service: the model
recalls, then remembers, then answers, and each request carries the previous call's `tool_result` under its id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nightwatch.adapters.anthropic_llm import AnthropicLLM, system_blocks, tool_params
from nightwatch.adapters.secrets.redaction import RedactingLLM
from nightwatch.domain.deliberation.tool_turn import ToolTurn
from nightwatch.domain.errors import LLMOutputError, LLMUnavailableError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory import RECALL_TOOL, REMEMBER_TOOL, MemoryPolicy, MemoryService, MemoryTools
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from nightwatch.domain.tool_use import ToolCall, ToolResult, ToolRound
from tests.adapters.secrets import secret_corpus
from tests.fake_anthropic import FakeAnthropic, Planned, answer, tool_protocol_error, tool_use
from tests.fakes import FakeClock, InMemoryMemoryStore, RecordingPoster, ScriptedLLM

MODEL = "claude-sonnet-5-5"
DEV = Persona(name="Dev", slug="dev", role="Implementer")
PROJECT = "night-watch"
HELD = "Rate limiting on the login endpoint allows 10 attempts a minute per IP, enforced in nginx."
NEW = "The search API rate limit was rolled back in March because it blocked the mobile app."
SLACK_TOKEN = (
    f"xoxb-{secret_corpus.digits(11)}-{secret_corpus.digits(13)}-{secret_corpus.fake('abcdefghijklmnopqrstuvwx', 24)}"
)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def claude(fake: FakeAnthropic) -> Iterator[AnthropicLLM]:
    llm = AnthropicLLM(api_key="sk-ant-test", default_model=MODEL, base_url=fake.url, timeout=5.0)
    yield llm
    llm.close()


@pytest.fixture
def memory() -> MemoryService:
    service = MemoryService(
        store=InMemoryMemoryStore(),
        llm=ScriptedLLM(),
        clock=FakeClock(),
        recall=Recall(),
        policy=MemoryPolicy(use_model_for_curation=False),
    )
    service.remember(DEV, PROJECT, HELD, author="cli")
    return service


def turn_request() -> LLMRequest:
    return LLMRequest(
        purpose=Purpose.TURN,
        system=SystemPrompt(
            (
                PromptBlock("You are Dev, the implementer. " * 20, cache=True),
                PromptBlock("## Memory\n- Keep PRs small.", cache=True),
                PromptBlock("Topic: what did we decide last time about rate limiting?"),
            )
        ),
        messages=(ChatMessage("user", "The thread so far: nothing yet."), ChatMessage("user", "Your turn, Dev.")),
        max_tokens=400,
        persona=DEV,
        topic="What did we decide last time about rate limiting?",
    )


MakeTurn = Callable[..., tuple[ToolTurn, RecordingPoster]]


@pytest.fixture
def make_turn(claude: AnthropicLLM, memory: MemoryService) -> MakeTurn:
    def make(llm: LLM = claude) -> tuple[ToolTurn, RecordingPoster]:
        poster = RecordingPoster()
        tools = MemoryTools(memory=memory, persona=DEV, project=PROJECT, link="https://example.slack.com/p1")
        return ToolTurn(llm=llm, tools=tools, poster=poster, persona=DEV, project=PROJECT), poster

    return make


def messages(fake: FakeAnthropic, index: int) -> list[dict[str, Any]]:
    return list(fake.requests[index].body["messages"])


def test_a_turn_recalls_then_remembers_then_answers(
    fake: FakeAnthropic, make_turn: MakeTurn, memory: MemoryService
) -> None:
    fake.plan(
        tool_use((RECALL_TOOL, {"query": "rate limiting"}), text="Checking my notes."),
        tool_use((REMEMBER_TOOL, {"lesson": NEW, "category": "events"})),
        answer("From memory: 10 a minute on login. I'd keep that and skip the search API."),
    )
    tools, poster = make_turn()

    reply = tools.answer(turn_request())

    assert reply.text == "From memory: 10 a minute on login. I'd keep that and skip the search API."
    assert len(fake.requests) == 3
    first = fake.requests[0].body
    assert [tool["name"] for tool in first["tools"]] == [RECALL_TOOL, REMEMBER_TOOL]
    assert first["tools"][0]["input_schema"]["required"] == ["query"]
    assert "tool_choice" not in first
    # The second request: the model's own turn (text and tool_use), then the tool_result under the same id.
    asked, results = messages(fake, 1)[-2:]
    assert asked == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking my notes."},
            {"type": "tool_use", "id": "toolu_fake_1_1", "name": RECALL_TOOL, "input": {"query": "rate limiting"}},
        ],
    }
    [recalled] = results["content"]
    assert results["role"] == "user"
    assert recalled["type"] == "tool_result"
    assert recalled["tool_use_id"] == "toolu_fake_1_1"
    assert recalled["is_error"] is False
    held = memory.lessons(DEV, PROJECT)[0]
    assert f"- [{held.id}] {HELD}" in recalled["content"]
    # The third request carries both rounds, each answered under its own id.
    conversation = messages(fake, 2)
    assert [m["role"] for m in conversation] == ["user", "user", "assistant", "user", "assistant", "user"]
    [remembered] = conversation[-1]["content"]
    assert remembered["tool_use_id"] == conversation[-2]["content"][0]["id"] == "toolu_fake_2_1"
    new = next(lesson for lesson in memory.lessons(DEV, PROJECT) if lesson.text == NEW)
    assert remembered["content"] == f"Remembered as [{new.id}] (events)."
    assert new.author is None
    assert poster.lessons == [("Dev", PROJECT, new.id, NEW)]
    assert poster.recalls == [("Dev", "rate limiting", 1)]
    assert all(tool_protocol_error(request.body) is None for request in fake.requests)


def test_the_tools_and_the_system_prompt_keep_their_cache_marks_across_the_loop(
    fake: FakeAnthropic, make_turn: MakeTurn
) -> None:
    fake.plan(tool_use((RECALL_TOOL, {"query": "rate limiting"})), answer("Done."))
    tools, _ = make_turn()

    reply = tools.answer(turn_request())

    first, second = (request.body for request in fake.requests)
    assert first["tools"] == second["tools"]
    assert [("cache_control" in tool) for tool in first["tools"]] == [False, True]
    assert first["system"] == second["system"]
    assert [("cache_control" in block) for block in first["system"]] == [True, True, False]
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert reply.usage.cache_write_tokens > 0  # the first call wrote the prefix (tools and system)
    assert reply.usage.cache_read_tokens == reply.usage.cache_write_tokens  # the second read it back
    assert reply.usage.input_tokens > 0  # what was not cached: the interaction's context and the messages


def test_a_fourth_call_gets_an_error_result_and_the_next_request_forbids_tools(
    fake: FakeAnthropic, make_turn: MakeTurn
) -> None:
    fake.plan(*[tool_use((RECALL_TOOL, {"query": f"rate limit {n}"})) for n in range(4)], answer("Answer now."))
    tools, poster = make_turn()

    assert tools.answer(turn_request()).text == "Answer now."

    assert len(fake.requests) == 5
    assert [request.body.get("tool_choice") for request in fake.requests] == [None, None, None, None, {"type": "none"}]
    [refused] = messages(fake, 4)[-1]["content"]
    assert refused["is_error"] is True
    assert refused["content"].startswith("limit reached; answer now")
    assert len(poster.recalls) == 3


def test_cache_breakpoints_stay_within_the_api_limit_when_tools_take_one() -> None:
    system = system_blocks([PromptBlock(f"stable {i}", cache=True) for i in range(6)], breakpoints=3)
    tools = tool_params(MemoryTools(memory=None, persona=DEV, project=PROJECT, link=None).specs)  # type: ignore[arg-type]
    marks = sum("cache_control" in block for block in system) + sum("cache_control" in tool for tool in tools)
    assert marks == 4


def test_the_fake_refuses_a_result_that_answers_no_call_as_the_api_does(
    fake: FakeAnthropic, claude: AnthropicLLM
) -> None:
    specs = MemoryTools(memory=None, persona=DEV, project=PROJECT, link=None).specs  # type: ignore[arg-type]
    call = ToolCall("toolu_real", RECALL_TOOL, {"query": "x"})
    wrong = ToolRound("", (call,), (ToolResult("toolu_other", "nothing"),))
    request = LLMRequest(
        purpose=Purpose.TURN,
        system=SystemPrompt((PromptBlock("You are Dev."),)),
        messages=(ChatMessage("user", "Your turn."),),
        tools=specs,
        tool_rounds=(wrong,),
    )

    with pytest.raises(LLMUnavailableError, match=r"refused the request \(400"):
        claude.complete(request)
    assert "without `tool_result` blocks immediately after" in str(tool_protocol_error(fake.requests[0].body))


def test_a_malformed_tool_call_from_the_server_is_an_output_error(fake: FakeAnthropic, claude: AnthropicLLM) -> None:
    fake.plan(
        Planned(
            body={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "tool_use", "id": "toolu_1", "name": RECALL_TOOL, "input": "rate limiting"}],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )
    )
    with pytest.raises(LLMOutputError, match="malformed tool call"):
        claude.complete(turn_request())


def test_secrets_in_a_tool_call_are_redacted_before_memory_sees_them(
    fake: FakeAnthropic, claude: AnthropicLLM, make_turn: MakeTurn, memory: MemoryService
) -> None:
    lesson = f"The deploy bot posts with {SLACK_TOKEN} from the ops vault."
    fake.plan(tool_use((REMEMBER_TOOL, {"lesson": lesson, "category": "entities"})), answer("Noted."))
    tools, poster = make_turn(RedactingLLM(claude))

    tools.answer(turn_request())

    texts = [stored.text for stored in memory.lessons(DEV, PROJECT)]
    assert "The deploy bot posts with [redacted slack token] from the ops vault." in texts
    assert SLACK_TOKEN not in json.dumps(texts) + json.dumps(poster.lessons)
    assert SLACK_TOKEN not in tools.traces[0].input["lesson"]  # type: ignore[operator]
