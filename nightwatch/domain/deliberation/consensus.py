"""The lead's decision: APPROVE, CHANGES or HUMAN, parsed from a JSON answer, with bounded retries.

An answer that cannot be parsed is sent back to the model with the parse error as the next user message
(error-as-input), at most `retries` times; after that, or when the model is unavailable, a person decides (HUMAN).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from nightwatch.domain.deliberation.models import Decision, Verdict
from nightwatch.domain.errors import LLMError, LLMOutputError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, Usage
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

MAX_ITEMS = 5
MAX_ITEM_CHARS = 300
MAX_SUMMARY_CHARS = 600
DECISION_LABELS = {
    Decision.APPROVE: "Approved",
    Decision.CHANGES: "Changes needed",
    Decision.HUMAN: "A person needs to decide",
}


@dataclass(frozen=True)
class ConsensusPrompt(Prompt):
    """Ask the lead for its decision, as JSON only."""

    template: ClassVar[str] = "consensus.md.j2"
    kind: str
    round: int
    final_round: bool

    @classmethod
    def example(cls) -> ConsensusPrompt:
        return cls(kind="deliberation", round=2, final_round=True)


@dataclass(frozen=True)
class ConsensusRetryPrompt(Prompt):
    """Feed a parse error back to the lead and ask again."""

    template: ClassVar[str] = "consensus_retry.md.j2"
    error: str
    final_round: bool

    @classmethod
    def example(cls) -> ConsensusRetryPrompt:
        return cls(error='"decision" must be one of APPROVE, CHANGES, HUMAN; got "MAYBE".', final_round=False)


@dataclass(frozen=True)
class ClosingPrompt(Prompt):
    """The lead's closing summary posted in the thread: decision, reasons, action items."""

    template: ClassVar[str] = "closing.md.j2"
    label: str
    summary: str
    reasons: tuple[str, ...]
    action_items: tuple[str, ...]

    @classmethod
    def example(cls) -> ClosingPrompt:
        return cls(
            label="Changes needed",
            summary="Ship after the token TTL lands.",
            reasons=("Tokens never expire today.",),
            action_items=("Dev: add a 15-minute TTL.", "Priya: test expiry."),
        )

    @classmethod
    def of(cls, verdict: Verdict) -> ClosingPrompt:
        return cls(DECISION_LABELS[verdict.decision], verdict.summary, verdict.reasons, verdict.action_items)


@dataclass(frozen=True)
class Decided:
    """The lead's verdict, the usage of every attempt, and why it fell back to HUMAN (None when it did not)."""

    verdict: Verdict
    usage: Usage
    attempts: int
    fallback: str | None = None


def parse_verdict(text: str) -> Verdict:
    """Read the lead's JSON answer; raise LLMOutputError saying exactly what is wrong with it."""
    data = _json_object(text)
    decision = str(data.get("decision", "")).strip().upper()
    if decision not in Decision.__members__:
        raise LLMOutputError(f'"decision" must be one of APPROVE, CHANGES, HUMAN; got {decision or "nothing"!r}.')
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise LLMOutputError('"summary" must be a non-empty string of one or two sentences.')
    return Verdict(
        decision=Decision(decision),
        summary=_clip(summary.strip(), MAX_SUMMARY_CHARS),
        reasons=_strings(data, "reasons"),
        action_items=_strings(data, "action_items"),
    )


def _json_object(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise LLMOutputError("The answer held no JSON object; answer with a single JSON object and nothing else.")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        raise LLMOutputError(
            f"The JSON did not parse: {error.msg} (line {error.lineno}, column {error.colno})."
        ) from None
    return data  # type: ignore[no-any-return]  # text from "{" to "}" that parses is always an object


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise LLMOutputError(f'"{key}" must be a list of strings.')
    items = [_clip(item.strip(), MAX_ITEM_CHARS) for item in value if item.strip()]
    return tuple(items[:MAX_ITEMS])


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def human_verdict(reason: str) -> Verdict:
    """The fallback when the lead cannot give a usable decision."""
    return Verdict(
        decision=Decision.HUMAN,
        summary="The lead could not give a clear decision; a person should read the thread and decide.",
        reasons=(reason,),
    )


def decide(llm: LLM, request: LLMRequest, *, retries: int, final_round: bool) -> Decided:
    """Ask for the verdict; feed parse errors back at most `retries` times, then fall back to HUMAN."""
    usage = Usage()
    messages = request.messages
    problem = ""
    for attempt in range(1, retries + 2):
        try:
            response = llm.complete(replace(request, messages=messages))
        except LLMOutputError as error:
            problem, answer = str(error), ""
        except LLMError as error:
            log.warning("the lead's decision failed: %s", error)
            return Decided(human_verdict(f"The model was unavailable: {error}"), usage, attempt, str(error))
        else:
            usage += response.usage
            answer = response.text
            try:
                return Decided(parse_verdict(answer), usage, attempt)
            except LLMOutputError as error:
                problem = str(error)
        log.info("the lead's decision could not be used (attempt %d): %s", attempt, problem)
        retry = ConsensusRetryPrompt(error=problem, final_round=final_round).render()
        messages = (*messages, ChatMessage("assistant", answer or "(no answer)"), ChatMessage("user", retry))
    return Decided(
        human_verdict(f"No usable decision after {retries + 1} attempts: {problem}"), usage, retries + 1, problem
    )
