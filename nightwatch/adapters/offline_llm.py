"""The offline model: a deterministic stand-in for Claude that needs no key and no network.

It answers every Purpose in the shape the domain parsers expect, from what the request says: the persona's soul and
style, the topic, the thread and the instruction (see offline_text for the cues it reads). No randomness, no clock:
the same request gives the same answer. Every text a person will read starts with "[offline]", JSON fields included;
compaction is the one exception, because it returns the persona's existing lessons unchanged (their ids are hashes
of their text).

Consensus rule: no concern raised -> APPROVE. Concerns (statements with risk, must, block, missing, vulnerab...,
flaky, regression, rollback, leak, exploit, insecure, unsafe, liability) before the final round -> CHANGES, with the
concerns as action items. Concerns still there in the final round -> HUMAN when one of them blocks or names a
vulnerability or exploit (a person should decide), else APPROVE with the concerns as action items.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from nightwatch.adapters import offline_voice
from nightwatch.adapters.offline_text import (
    CONCERN,
    MARK,
    ThreadLine,
    at_most,
    clip,
    everything,
    instruction,
    is_final_round,
    last_bullets,
    memory_lessons,
    nested_bullets,
    round_number,
    sentences,
    thread,
)
from nightwatch.domain.models import Decision, LLMRequest, LLMResponse, Purpose, Usage
from nightwatch.domain.tokens import estimate_tokens

MODEL_NAME = "offline"
MAX_ACTION_ITEMS = 3
SUMMARY_WORDS = 120
_REFERS_BACK = re.compile(r"^(On [^:]{1,60}'s point|On the earlier point|From memory:)")
_SEVERE = re.compile(r"\b(block|vulnerab|exploit)\w*", re.IGNORECASE)
_OUTCOME = re.compile(r"\bOutcome:\s*(APPROVE|CHANGES|HUMAN)\b")
_PIN = "[pinned]"


class OfflineLLM:
    """Answers LLM requests without a model: deterministic, labelled "[offline]"."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer `request` in the shape its purpose asks for."""
        text = self._answer(request)
        prompt = request.system.text + "".join(m.content for m in request.messages)
        usage = Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))
        return LLMResponse(text=text, usage=usage, model=MODEL_NAME, offline=True)

    def _answer(self, request: LLMRequest) -> str:
        topic = request.topic or clip(instruction(request), 20)
        return _ANSWERS[request.purpose](request, topic)


def _turn(request: LLMRequest, topic: str) -> str:
    if request.persona is None:
        return f"{MARK} On “{clip(topic, 10)}”: worth a closer look before we decide."
    remembered = memory_lessons(request.system.text)
    return offline_voice.turn(request.persona, topic, thread(request), round_number(request), remembered)


def _consensus(request: LLMRequest, topic: str) -> str:
    return json.dumps(consensus(thread(request), instruction(request), topic), ensure_ascii=False)


def _compaction(request: LLMRequest, topic: str) -> str:
    return compaction(everything(request))


def _summary(request: LLMRequest, topic: str) -> str:
    lines = thread(request) or [ThreadLine("", said) for said in sentences(instruction(request))[1:]]
    return summary(lines)


def _proactive(request: LLMRequest, topic: str) -> str:
    lessons = memory_lessons(request.system.text)
    return offline_voice.proactive(lessons, request.topic, nested_bullets(instruction(request)))


def _curation(request: LLMRequest, topic: str) -> str:
    return json.dumps({"action": "create", "target": None})


def consensus(lines: list[ThreadLine], asked: str, topic: str) -> dict[str, object]:
    """A verdict from the concerns raised in the thread (the rule is in the module docstring)."""
    concerns = _concerns(lines)
    names = ", ".join(dict.fromkeys(line.author for line in lines if line.author)) or "nobody"
    raisers = ", ".join(dict.fromkeys(author or "someone" for author, _ in concerns))
    about = f"“{clip(topic, 10)}”"
    raised = [f"{MARK} {author or 'Someone'} raised: {clip(text, 20)}" for author, text in concerns]
    items = [f"{MARK} {author or 'Team'}: address “{clip(text, 16)}”" for author, text in concerns]
    if not concerns:
        decision = Decision.APPROVE
        headline = f"{MARK} APPROVE: no open risk on {about}."
        reasons = [f"{MARK} Heard {names}; nobody raised a risk or a missing piece."]
    elif not is_final_round(asked):
        decision = Decision.CHANGES
        headline = f"{MARK} CHANGES: {len(concerns)} concern(s) from {raisers} on {about} need another round."
        reasons = raised
    elif any(_SEVERE.search(text) for _, text in concerns):
        decision = Decision.HUMAN
        headline = f"{MARK} HUMAN: a blocking concern on {about} is still open after the final round."
        reasons = [f"{MARK} A person should decide: the team cannot close a blocker by itself.", *raised]
    else:
        decision = Decision.APPROVE
        headline = f"{MARK} APPROVE with follow-ups: the concerns on {about} are not blocking."
        reasons = [f"{MARK} After the final round no concern blocks; each stays as an action item.", *raised]
    return {
        "decision": decision.value,
        "summary": headline,
        "reasons": reasons[:MAX_ACTION_ITEMS],
        "action_items": items[:MAX_ACTION_ITEMS],
    }


def _concerns(lines: list[ThreadLine]) -> list[tuple[str, str]]:
    """(author, sentence) for each statement naming a concern, each once, in thread order.

    Questions and short fragments (under five words) only mention a concern word; they do not raise one. Nor do
    replies to an earlier point ("On Maya's point ...") or recalled lessons ("From memory: ..."): they refer back.
    """
    found: dict[str, tuple[str, str]] = {}
    for line in lines:
        for said in sentences(line.text):
            if _raises_concern(said):
                found.setdefault(said.lower(), (line.author, said))
    return list(found.values())


def _raises_concern(said: str) -> bool:
    if said.endswith("?") or len(said.split()) < 5 or _REFERS_BACK.match(said):
        return False
    return bool(CONCERN.search(said))


def reflection(request: LLMRequest, topic: str) -> str:
    """1-3 `- ` lessons from the persona's angle, knowing the outcome the instruction names."""
    outcome = _OUTCOME.search(everything(request))
    if request.persona is None:
        return f"- {MARK} “{clip(topic, 8)}” is worth remembering for next time."
    lessons = offline_voice.reflection(request.persona, topic, outcome.group(1) if outcome else "")
    return "\n".join(f"- {lesson}" for lesson in lessons)


def compaction(asked: str) -> str:
    """The listed lessons, pinned first (without their mark), then the others in order, up to the named limit."""
    lessons = last_bullets(asked)
    pinned = [_unpin(lesson) for lesson in lessons if lesson.startswith((_PIN, "📌"))]
    others = [lesson for lesson in lessons if not lesson.startswith((_PIN, "📌"))]
    limit = at_most(asked)
    kept = pinned + others
    return "\n".join(f"- {lesson}" for lesson in kept[: limit if limit is not None else len(kept)])


def _unpin(lesson: str) -> str:
    """A pinned lesson word for word: a `[pinned]` mark goes (the prompt added it), a 📌 in the text stays."""
    return lesson[len(_PIN) :].strip() if lesson.startswith(_PIN) else lesson


def summary(lines: list[ThreadLine]) -> str:
    """Who said what, one clipped first sentence each, in order, within SUMMARY_WORDS words."""
    if not lines:
        return f"{MARK} Nothing has been said yet."
    parts: list[str] = []
    budget = SUMMARY_WORDS
    for line in lines:
        first = sentences(line.text)[0] if sentences(line.text) else line.text
        part = f"{line.author}: {clip(first, 15)}" if line.author else clip(first, 15)
        budget -= len(part.split())
        if budget < 0:
            parts.append("…")
            break
        parts.append(part)
    return f"{MARK} Summary of {len(lines)} message{'s' if len(lines) != 1 else ''}: " + "; ".join(parts) + "."


_ANSWERS: dict[Purpose, Callable[[LLMRequest, str], str]] = {
    Purpose.TURN: _turn,
    Purpose.CONSENSUS: _consensus,
    Purpose.REFLECTION: reflection,
    Purpose.COMPACTION: _compaction,
    Purpose.SUMMARY: _summary,
    Purpose.PROACTIVE: _proactive,
    Purpose.CURATION: _curation,
}
