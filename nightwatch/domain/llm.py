"""What the domain asks of a language model: the LLM port, and the request and response values it takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from nightwatch.domain.models import Persona
from nightwatch.domain.tool_use import ToolCall, ToolRound, ToolSpec


class LLM(Protocol):
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer one request; raise LLMUnavailableError / LLMOutputError when it cannot."""
        ...


class Purpose(StrEnum):
    """Why a model is called; adapters may choose limits by it and the offline model shapes its answer by it."""

    TURN = "turn"
    CONSENSUS = "consensus"
    REFLECTION = "reflection"
    COMPACTION = "compaction"
    SUMMARY = "summary"
    PROACTIVE = "proactive"
    CURATION = "curation"
    TEACHING = "teaching"  # does a message ask to remember or forget something?
    EXTRACTION = "extraction"  # lessons from a thread's older messages, as they are summarised away


@dataclass(frozen=True)
class PromptBlock:
    """A piece of the system prompt; `cache` marks the end of a stable prefix worth caching."""

    text: str
    cache: bool = False


@dataclass(frozen=True)
class SystemPrompt:
    blocks: tuple[PromptBlock, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(block.text for block in self.blocks if block.text)


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True)
class LLMRequest:
    purpose: Purpose
    system: SystemPrompt
    messages: tuple[ChatMessage, ...]
    max_tokens: int = 400
    model: str | None = None
    persona: Persona | None = None
    topic: str = ""
    tools: tuple[ToolSpec, ...] = ()  # tools the model may call (see tool_use.py)
    tool_rounds: tuple[ToolRound, ...] = ()  # the calls made so far and their results, after `messages`
    answer_now: bool = False  # the tools stay defined, but the model must answer in text without calling one


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class LLMResponse:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    offline: bool = False
    tool_calls: tuple[ToolCall, ...] = ()  # the model asks for these before it answers; `text` may then be ''
