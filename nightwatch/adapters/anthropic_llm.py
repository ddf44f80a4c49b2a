"""The LLM port on Anthropic's Messages API, through the official `anthropic` SDK.

The SDK's own retries are switched off (`max_retries=0`) and done here instead, for two reasons: the SDK obeys any
`retry-after` however long (it would park a worker for as long as the server asks), and the error a person finally
sees should say how many retries were made. What is retried: 408, 409, 429, every 5xx (529 "overloaded" included),
timeouts and connection failures; a `x-should-retry` header from the API wins either way.

Tool use: a request's tools go out as the API's tool definitions, the last one marked for the prompt cache (tools
come before the system prompt in the cached prefix, and are the same for every persona's turn), and its tool rounds
as an assistant message of `tool_use` blocks followed by a user message of the matching `tool_result` blocks (same
`tool_use_id`). An answer with `tool_use` blocks (stop reason "tool_use") becomes the response's tool calls.
`answer_now` sends `tool_choice: none`: the tools stay defined, as the API requires while earlier calls are in the
conversation, but the model must answer in text.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

import anthropic
import httpx2
from anthropic.types import (
    AssistantMessageParam,
    ContentBlockParam,
    Message,
    MessageParam,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    UserMessageParam,
)

from nightwatch.domain.errors import LLMOutputError, LLMUnavailableError
from nightwatch.domain.llm import ChatMessage, LLMRequest, LLMResponse, PromptBlock, Usage
from nightwatch.domain.tool_use import ToolCall, ToolRound, ToolSpec

log = logging.getLogger(__name__)

MAX_CACHE_BREAKPOINTS = 4  # the Messages API refuses a request with more cache_control blocks than this
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 20.0  # a server asking for a longer wait gets an error now instead of a stuck worker
CONNECT_TIMEOUT = 10.0


class AnthropicLLM:
    """Answers LLM requests with Claude; maps failures onto LLMUnavailableError / LLMOutputError."""

    def __init__(
        self,
        *,
        api_key: str,
        default_model: str,
        timeout: float = 60.0,
        max_retries: int = 3,
        http_client: httpx2.Client | None = None,
        base_url: str | None = None,
    ) -> None:
        self._default_model = default_model
        self._timeout = timeout
        self._max_retries = max_retries
        # base_url None lets the SDK read ANTHROPIC_BASE_URL itself (how e2e tests reach tests/fake_anthropic.py).
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            max_retries=0,
            http_client=http_client,
        )

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Send one Messages request, retrying what is worth retrying; return the text and its token usage."""
        model = request.model or self._default_model
        tools = tool_params(request.tools)
        system = system_blocks(request.system.blocks, breakpoints=MAX_CACHE_BREAKPOINTS - (1 if tools else 0))
        messages = message_params(request.messages) + round_params(request.tool_rounds)
        options: dict[str, Any] = {"tools": tools} if tools else {}
        if tools and request.answer_now:
            options["tool_choice"] = {"type": "none"}
        for attempt in range(self._max_retries + 1):
            try:
                message = self._client.messages.create(
                    model=model, max_tokens=request.max_tokens, system=system, messages=messages, **options
                )
            except anthropic.APIStatusError as error:
                wait = self._retry_wait(attempt, error.response)
                if wait is None:
                    raise _status_error(error, model, attempt) from None
                self._pause(attempt, f"answered {error.status_code}", wait)
            except anthropic.APIConnectionError as error:
                if attempt >= self._max_retries:
                    raise self._connection_error(error, attempt) from None
                self._pause(attempt, "did not answer", _backoff(attempt))
            except (json.JSONDecodeError, anthropic.APIResponseValidationError):
                raise LLMOutputError(
                    "Anthropic's answer was not a valid Messages response; try again, and report it if it persists."
                ) from None
            except anthropic.AnthropicError as error:
                raise LLMUnavailableError(f"The Anthropic client failed ({type(error).__name__}); try again.") from None
            else:
                return _response(message, model)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def close(self) -> None:
        """Close the HTTP connections (the SDK's own client, or the one passed in)."""
        self._client.close()

    def _retry_wait(self, attempt: int, response: httpx2.Response) -> float | None:
        """Seconds to wait before retrying this answer, or None when it must not be retried."""
        if attempt >= self._max_retries or not _retryable(response):
            return None
        asked = _retry_after(response.headers)
        if asked is None:
            return _backoff(attempt)
        return asked if asked <= MAX_RETRY_AFTER else None

    def _pause(self, attempt: int, what: str, seconds: float) -> None:
        log.warning("Anthropic %s; retry %d of %d in %.2f s", what, attempt + 1, self._max_retries, seconds)
        time.sleep(seconds)

    def _connection_error(self, error: anthropic.APIConnectionError, attempt: int) -> LLMUnavailableError:
        tries = _tries(attempt)
        if isinstance(error, anthropic.APITimeoutError):
            return LLMUnavailableError(
                f"Anthropic did not answer within {self._timeout:g} s{tries}; try again, "
                "or raise NIGHTWATCH_LLM_TIMEOUT."
            )
        return LLMUnavailableError(
            f"Could not reach Anthropic at {self._client.base_url}{tries}; check the network connection "
            "(and ANTHROPIC_BASE_URL if you set it)."
        )


def system_blocks(blocks: Sequence[PromptBlock], *, breakpoints: int = MAX_CACHE_BREAKPOINTS) -> list[TextBlockParam]:
    """The system prompt as text blocks; the last cached blocks (up to `breakpoints`) get a cache breakpoint."""
    kept = [block for block in blocks if block.text]
    cached = [i for i, block in enumerate(kept) if block.cache][-breakpoints:] if breakpoints > 0 else []
    params: list[TextBlockParam] = []
    for i, block in enumerate(kept):
        param: TextBlockParam = {"type": "text", "text": block.text}
        if i in cached:
            param["cache_control"] = {"type": "ephemeral"}
        params.append(param)
    return params


def message_params(messages: Sequence[ChatMessage]) -> list[MessageParam]:
    """The conversation for the API; empty messages are dropped because the API rejects empty text."""
    params: list[MessageParam] = []
    for message in messages:
        if not message.content.strip():
            continue
        if message.role == "assistant":
            params.append(AssistantMessageParam(role="assistant", content=message.content))
        else:
            params.append(UserMessageParam(role="user", content=message.content))
    return params


def tool_params(tools: Sequence[ToolSpec]) -> list[ToolParam]:
    """The tool definitions; the last one is a cache breakpoint, so the whole list is cached as one prefix."""
    params: list[ToolParam] = [
        {"name": tool.name, "description": tool.description, "input_schema": dict(tool.input_schema)} for tool in tools
    ]
    if params:
        params[-1]["cache_control"] = {"type": "ephemeral"}
    return params


def round_params(rounds: Sequence[ToolRound]) -> list[MessageParam]:
    """Each round as the API wants it: the model's text and `tool_use` blocks, then the matching `tool_result`s."""
    params: list[MessageParam] = []
    for round_ in rounds:
        asked: list[ContentBlockParam] = [{"type": "text", "text": round_.said}] if round_.said.strip() else []
        asked += [_tool_use(call) for call in round_.calls]
        results: list[ContentBlockParam] = [
            ToolResultBlockParam(
                type="tool_result", tool_use_id=result.call_id, content=result.content, is_error=result.is_error
            )
            for result in round_.results
        ]
        params += [
            AssistantMessageParam(role="assistant", content=asked),
            UserMessageParam(role="user", content=results),
        ]
    return params


def _tool_use(call: ToolCall) -> ToolUseBlockParam:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.input)}


def _response(message: Message, model: str) -> LLMResponse:
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise LLMOutputError("Anthropic's answer had no content list; try again, and report it if it persists.")
    texts = [block.text for block in content if getattr(block, "type", None) == "text" and hasattr(block, "text")]
    text = "".join(t for t in texts if isinstance(t, str)).strip()
    calls = tuple(_tool_calls(content))
    if not text and not calls:
        reason = getattr(message, "stop_reason", None)
        raise LLMOutputError(f"Anthropic's answer held no text (stop reason: {reason}); try again or rephrase.")
    return LLMResponse(
        text=text, usage=_usage(message), model=str(getattr(message, "model", "") or model), tool_calls=calls
    )


def _tool_calls(content: list[Any]) -> list[ToolCall]:
    """The answer's `tool_use` blocks as calls (each needs an id, a name and an object input)."""
    calls = []
    for block in content:
        if getattr(block, "type", None) != "tool_use":
            continue
        ident, name, given = getattr(block, "id", None), getattr(block, "name", None), getattr(block, "input", None)
        if not isinstance(ident, str) or not isinstance(name, str) or not isinstance(given, dict):
            raise LLMOutputError(
                "Anthropic's answer held a malformed tool call; try again, and report it if it persists."
            )
        calls.append(ToolCall(ident, name, given))
    return calls


def _usage(message: Message) -> Usage:
    usage = getattr(message, "usage", None)

    def count(name: str) -> int:
        value = getattr(usage, name, None)
        return value if isinstance(value, int) else 0

    return Usage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_read_tokens=count("cache_read_input_tokens"),
        cache_write_tokens=count("cache_creation_input_tokens"),
    )


def _retryable(response: httpx2.Response) -> bool:
    verdict = response.headers.get("x-should-retry")
    if verdict in ("true", "false"):
        return verdict == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def _retry_after(headers: httpx2.Headers) -> float | None:
    """The wait the server asked for, in seconds (`retry-after-ms` first, then `retry-after`); None if not given."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) / scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def _backoff(attempt: int) -> float:
    # Jitter spreads the retries of many workers that failed at the same moment.
    return min(INITIAL_BACKOFF * 2.0**attempt, MAX_BACKOFF) * random.uniform(0.75, 1.0)


def _tries(attempt: int) -> str:
    return "" if attempt == 0 else f" after {attempt} {'retry' if attempt == 1 else 'retries'}"


_REFUSALS = {
    401: "Anthropic rejected the API key (401); check ANTHROPIC_API_KEY{detail}.",
    403: "Anthropic refused access to model {model!r} (403); check ANTHROPIC_API_KEY's permissions{detail}.",
    404: "Anthropic does not know model {model!r} (404); check NIGHTWATCH_MODEL or the persona's model.",
}


def _status_error(error: anthropic.APIStatusError, model: str, attempt: int) -> LLMUnavailableError:
    """A message a person can act on; never the request headers (the key lives there)."""
    status, tries = error.status_code, _tries(attempt)
    detail = f": {error.api_message}" if error.api_message else ""
    if status in _REFUSALS:
        return LLMUnavailableError(_REFUSALS[status].format(model=model, detail=detail))
    if status == 429:
        wait = _retry_after(error.response.headers)
        later = f"in {wait:.0f} s" if wait and wait > MAX_RETRY_AFTER else "in a minute"
        return LLMUnavailableError(f"Anthropic's rate limit was reached (429){tries}; try again {later}.")
    if status == 529:
        return LLMUnavailableError(f"Anthropic is overloaded (529){tries}; try again in a minute.")
    if status >= 500:
        return LLMUnavailableError(f"Anthropic had a server error ({status}){tries}; try again in a minute.")
    return LLMUnavailableError(f"Anthropic refused the request ({status}{detail}); check the model and the prompt.")
