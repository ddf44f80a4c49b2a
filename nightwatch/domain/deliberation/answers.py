"""A persona's answer for its turn, asked once more with the problem fed back when it fails (error as input).

An answer fails when the model call fails (LLMUnavailableError once the adapter's own retries are spent, or
LLMOutputError: no text, not a valid response) or when it cannot be a turn at all (`reply_problem`: empty, only a
tag, or a script that speaks for another persona too). It is then asked for once more, with the problem stated in
the next user message (templates/turn_retry.md.j2), as the lead's decision is in consensus.py; how many times is the
policy's `turn_retries` (NIGHTWATCH_TURN_RETRIES, 0-3, default 1). When the last try fails too, the turn is skipped
(turns.py posts the notice). SKIP, a repeat and an over-long answer are not failures.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import ClassVar

from nightwatch.domain.deliberation.replies import reply_problem
from nightwatch.domain.errors import LLMError, LLMOutputError
from nightwatch.domain.llm import ChatMessage, LLMRequest, LLMResponse
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

TURN_RETRIES = 1  # by default the first answer and one retry with the problem fed back
TURN_RETRIES_MAX = 3


@dataclass(frozen=True)
class TurnRetryPrompt(Prompt):
    """Tell a persona why its answer could not be used, and ask for its turn again."""

    template: ClassVar[str] = "turn_retry.md.j2"
    name: str
    problem: str
    words: int

    @classmethod
    def example(cls) -> TurnRetryPrompt:
        return cls(name="Maya", problem="the answer also spoke for Carlos, as a script of several voices", words=150)


@dataclass(frozen=True)
class Answer:
    """A turn's answer: its text when usable, else why not (`problem`, in plain words)."""

    text: str
    attempts: int
    problem: str | None = None


def answer_turn(
    ask: Callable[[LLMRequest], LLMResponse],
    request: LLMRequest,
    *,
    speaker: str,
    others: Iterable[str],
    words: int,
    retries: int = TURN_RETRIES,
) -> Answer:
    """Ask for `speaker`'s turn; when the answer fails, ask again (`retries` times at most) with the problem fed back.

    `ask` is the turn's tool loop (or a model's `complete`); counting the usage is its job (a tool loop counts every
    model call it makes, in both attempts).
    """
    names = tuple(others)
    attempts = 1 + min(max(0, retries), TURN_RETRIES_MAX)
    messages = request.messages
    problem = ""
    for attempt in range(1, attempts + 1):
        try:
            response = ask(replace(request, messages=messages))
        except LLMError as error:
            problem, text = call_problem(error), ""
        else:
            text = response.text
            found = reply_problem(text, speaker=speaker, others=names)
            if found is None:
                return Answer(text, attempt)
            problem = found
        log.info("%s's turn could not be used (attempt %d of %d): %s", speaker, attempt, attempts, problem)
        if attempt == attempts:
            break
        retry = TurnRetryPrompt(name=speaker, problem=problem, words=words).render()
        messages = (*request.messages, ChatMessage("assistant", text or "(no answer)"), ChatMessage("user", retry))
    return Answer("", attempts, problem)


def call_problem(error: LLMError) -> str:
    """A failed model call in plain words, with the adapter's own message (which says what to do) in brackets."""
    detail = str(error).strip().rstrip(".")
    if isinstance(error, LLMOutputError):
        return f"the model's answer could not be read ({detail})"
    return f"the model could not answer ({detail})"


def skip_notice(name: str, problem: str, attempts: int = 2) -> str:
    """The thread's notice for a turn skipped after its retries: who, and why in plain words."""
    tried = _TRIES.get(attempts, f"{attempts} tries")
    return f"{name} was skipped this turn{tried}: {problem}. The others carry on."


_TRIES = {1: "", 2: ", even after a second try", 3: ", even after a third try", 4: ", even after a fourth try"}
