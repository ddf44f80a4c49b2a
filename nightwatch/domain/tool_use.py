"""Tool use, whatever the model: a tool's definition, a call the model made, what went back, and a round of both.

A request may let the model call tools: it carries their definitions (`LLMRequest.tools`) and the rounds of calls
and results so far (`LLMRequest.tool_rounds`). An answer that calls tools carries the calls (`LLMResponse.tool_calls`);
the caller runs them and asks again with one more round, until the model answers in text. Each model adapter
translates these values into its own protocol (Anthropic's `tool_use` and `tool_result` blocks), and nothing here
knows which model answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it is for (for the model), and the JSON Schema of its input."""

    name: str
    description: str
    input_schema: Mapping[str, object]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for; `id` pairs it with its result."""

    id: str
    name: str
    input: Mapping[str, object]


@dataclass(frozen=True)
class ToolResult:
    """What went back to the model for one call: text for the model, flagged when the call failed."""

    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolRound:
    """One exchange: what the model wrote with its calls ('' when nothing), the calls, and one result for each."""

    said: str
    calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]


@dataclass(frozen=True)
class ToolTrace:
    """One tool call of a turn, as people see it: which tool, with what input, and a short result."""

    name: str
    input: Mapping[str, object]
    result: str
    error: bool = False
