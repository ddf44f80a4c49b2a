"""The thread context of a turn: recent messages within a token budget, older ones folded into a stored summary.

A sliding window keeps long threads inside the model's context. Messages that fall out of the window are summarised
once and the summary is stored per thread; later turns reuse it and only summarise again when more messages fall
out. When a new summary is made it covers half the window too, so the next summary is not needed at the very next
turn but only after the window has filled again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.errors import LLMError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt, Usage
from nightwatch.domain.models import ThreadMessage
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

SUMMARY_WORDS = 150
SUMMARY_SYSTEM = "You summarise a software team's Slack thread accurately and briefly, in plain text."
CHARS_PER_TOKEN = 3  # a conservative clip for one oversized message, so it alone cannot blow the budget


@dataclass(frozen=True)
class SummaryPrompt(Prompt):
    """Ask the model to fold older thread messages into the running summary."""

    template: ClassVar[str] = "summary.md.j2"
    topic: str
    previous: str
    messages: tuple[ThreadMessage, ...]
    words: int = SUMMARY_WORDS

    @classmethod
    def example(cls) -> SummaryPrompt:
        return cls(
            topic="Move sessions to Redis?",
            previous="Maya worried about session fixation.",
            messages=(
                ThreadMessage(author="Dev", text="I can add rotation on login.", persona="Dev"),
                ThreadMessage(author="alice", text="What about the cost?"),
            ),
        )


@dataclass(frozen=True)
class ThreadPrompt(Prompt):
    """The thread as a turn sees it: the summary of older messages, then the recent messages."""

    template: ClassVar[str] = "thread.md.j2"
    summary: str
    messages: tuple[ThreadMessage, ...]

    @classmethod
    def example(cls) -> ThreadPrompt:
        return cls(
            summary="Maya asked for session rotation on login.",
            messages=(
                ThreadMessage(author="alice", text="Can we ship this week?"),
                ThreadMessage(author="Dev", text="Yes, behind a flag.\nRollout plan in the PR.", persona="Dev"),
            ),
        )


@dataclass(frozen=True)
class ThreadWindow:
    """What a turn sees of the thread: a summary of the first `covered` messages, then the recent ones."""

    summary: str
    covered: int
    recent: tuple[ThreadMessage, ...]
    usage: Usage = field(default_factory=Usage)

    def recent_text(self, limit: int = 4, chars: int = 1200) -> str:
        """The last few messages as plain text (used to rank memory for the turn)."""
        text = "\n".join(message.text for message in self.recent[-limit:])
        return text[-chars:]


@dataclass(frozen=True)
class ThreadView:
    """The thread as the next call sees it: every message so far, and the window of them the call carries."""

    messages: tuple[ThreadMessage, ...]
    window: ThreadWindow


def window_start(messages: Sequence[ThreadMessage], *, context_tokens: int, recent_messages: int) -> int:
    """Index of the oldest message that still fits the window (the newest message always fits)."""
    spent = 0
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        cost = message_tokens(messages[index])
        if start < len(messages) and (len(messages) - index > recent_messages or spent + cost > context_tokens):
            break
        spent += cost
        start = index
    return start


@lru_cache(maxsize=4096)
def message_tokens(message: ThreadMessage) -> int:
    """What one message costs in the window (cached: every turn re-measures the same recent messages)."""
    return estimate_tokens(f"- {message.author}: {message.text}")


def clip_message(message: ThreadMessage, context_tokens: int) -> ThreadMessage:
    """Shorten a message that alone exceeds the budget (a pasted log, a huge diff)."""
    limit = context_tokens * CHARS_PER_TOKEN
    if len(message.text) <= limit:
        return message
    return ThreadMessage(message.author, message.text[:limit] + " …[cut]", message.persona, message.ts)


class ThreadContext:
    """Builds the window of a thread for one turn, summarising what fell out of it once per thread."""

    def __init__(self, *, llm: LLM, log: DeliberationLog, context_tokens: int, recent_messages: int) -> None:
        self._llm = llm
        self._log = log
        self._context_tokens = context_tokens
        self._recent_messages = recent_messages

    def window(self, thread: str, messages: Sequence[ThreadMessage], topic: str) -> ThreadWindow:
        """The window for the next turn; calls the model only when messages fell out since the stored summary."""
        start = window_start(messages, context_tokens=self._context_tokens, recent_messages=self._recent_messages)
        if start == 0:
            return self._make("", 0, messages)
        stored = self._log.summary(thread)
        if stored is not None and start <= stored[0] <= len(messages):
            return self._make(stored[1], stored[0], messages)
        previous = stored if stored is not None and stored[0] < start else (0, "")
        covered = len(messages) - max(1, (len(messages) - start) // 2)
        return self._summarise(thread, topic, messages, previous, covered)

    def peek(self, thread: str, messages: Sequence[ThreadMessage]) -> ThreadWindow:
        """The window as stored, without calling the model (for `nightwatch context`)."""
        start = window_start(messages, context_tokens=self._context_tokens, recent_messages=self._recent_messages)
        stored = self._log.summary(thread)
        if start > 0 and stored is not None and stored[0] <= len(messages):
            return self._make(stored[1], max(stored[0], start), messages)
        return self._make("", start, messages)

    def _summarise(
        self,
        thread: str,
        topic: str,
        messages: Sequence[ThreadMessage],
        previous: tuple[int, str],
        covered: int,
    ) -> ThreadWindow:
        prompt = SummaryPrompt(
            topic=topic,
            previous=previous[1],
            messages=tuple(clip_message(m, self._context_tokens) for m in messages[previous[0] : covered]),
        )
        request = LLMRequest(
            purpose=Purpose.SUMMARY,
            system=SystemPrompt((PromptBlock(SUMMARY_SYSTEM),)),
            messages=(ChatMessage("user", prompt.render()),),
            max_tokens=SUMMARY_WORDS * 2,
            topic=topic,
        )
        try:
            response = self._llm.complete(request)
        except LLMError as error:
            log.warning("could not summarise thread %s (%s); older messages are left out", thread, error)
            return self._make(previous[1], covered, messages)
        summary = response.text.strip()
        self._log.save_summary(thread, covered, summary)
        return self._make(summary, covered, messages, response.usage)

    def _make(
        self, summary: str, covered: int, messages: Sequence[ThreadMessage], usage: Usage | None = None
    ) -> ThreadWindow:
        recent = tuple(clip_message(m, self._context_tokens) for m in messages[covered:])
        return ThreadWindow(summary, covered, recent, usage or Usage())
