"""The offline model: a deterministic stand-in for Claude that needs no key and no network.

It answers every Purpose in the shape the domain parsers expect, from what the request says: the persona's soul and
style, the topic, the thread and the instruction (see text.py for the cues it reads). No randomness, no clock:
the same request gives the same answer. Every text a person will read starts with "[offline]", JSON fields included;
compaction and teaching are the exceptions: compaction returns the persona's existing lessons unchanged (their ids
are hashes of their text), and teaching returns what a person said, read by the phrase rules the domain falls back
on (a lesson taught is the teacher's words, not the model's).

A turn whose topic asks about the past, with the memory tools offered, first calls `memory_recall` and then answers
from what it found (recall.py); no other answer calls a tool.

Who says what lives beside it: voice.py (turns), consensus.py (the lead's reading of the thread and its
verdict: a check asked for or a risk named before the last round -> CHANGES with it as an action item; in the last
round, HUMAN while one still blocks, else APPROVE with follow-ups), lessons.py (reflections, extraction, proactive
notes); categories.py gives each lesson its category, and a reflection's overview says where it was learned and why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from nightwatch.adapters.offline import consensus as offline_consensus
from nightwatch.adapters.offline import lessons as offline_lessons
from nightwatch.adapters.offline import recall as offline_recall
from nightwatch.adapters.offline import voice as offline_voice
from nightwatch.adapters.offline.categories import category_for
from nightwatch.adapters.offline.text import (
    MARK,
    ThreadLine,
    at_most,
    block_lines,
    clip,
    everything,
    instruction,
    is_last_round,
    last_bullets,
    memory_lessons,
    nested_bullets,
    numbered_items,
    round_number,
    sentences,
    thread,
    unmark,
)
from nightwatch.adapters.offline.topic import topic_phrase
from nightwatch.domain.llm import LLMRequest, LLMResponse, Purpose, Usage
from nightwatch.domain.teaching import parse_teaching
from nightwatch.domain.tokens import estimate_tokens

MODEL_NAME = "offline"
SUMMARY_WORDS = 120
_OUTCOME = re.compile(r"\bOutcome:\s*(APPROVE|CHANGES|HUMAN)\b")
_KIND = re.compile(r"^Kind:\s*(\S.*)$", re.MULTILINE)
_LEADS = re.compile(r"\byou lead this discussion\b", re.IGNORECASE)
_PIN = "[pinned]"


class OfflineLLM:
    """Answers LLM requests without a model: deterministic, labelled "[offline]"."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer `request` in the shape its purpose asks for, or with the memory recall it needs first."""
        prompt = request.system.text + "".join(m.content for m in request.messages)
        call = offline_recall.recall_call(request)
        if call is not None:
            usage = Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(str(call.input)))
            return LLMResponse(text="", usage=usage, model=MODEL_NAME, offline=True, tool_calls=(call,))
        text = self._answer(request)
        usage = Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))
        return LLMResponse(text=text, usage=usage, model=MODEL_NAME, offline=True)

    def _answer(self, request: LLMRequest) -> str:
        topic = request.topic or clip(instruction(request), 20)
        return _ANSWERS[request.purpose](request, topic)


def _turn(request: LLMRequest, topic: str) -> str:
    if request.persona is None:
        return f"{MARK} On {topic_phrase(topic).phrase}: worth a closer look before we decide."
    asked = instruction(request)
    cue = offline_voice.TurnCue(
        round_no=round_number(request),
        as_lead=bool(_LEADS.search(asked)),
        final=is_last_round(request),
        items=tuple(numbered_items(asked)),
    )
    found = offline_recall.recalled(request)
    if found is None:
        return offline_voice.turn(request.persona, topic, thread(request), cue, memory_lessons(request.system.text))
    said = offline_voice.turn(request.persona, topic, thread(request), cue, [])  # the recall says what it remembers
    return offline_recall.from_memory(*found, said)


def _consensus(request: LLMRequest, topic: str) -> str:
    decided = offline_consensus.verdict(thread(request), final=is_last_round(request), topic=topic_phrase(topic))
    return json.dumps(decided, ensure_ascii=False)


def _compaction(request: LLMRequest, topic: str) -> str:
    return compaction(everything(request))


def _summary(request: LLMRequest, topic: str) -> str:
    lines = thread(request) or [ThreadLine("", said) for said in sentences(instruction(request))[1:]]
    return summary(lines)


def _proactive(request: LLMRequest, topic: str) -> str:
    lessons = memory_lessons(request.system.text)
    return offline_lessons.proactive(lessons, request.topic, nested_bullets(instruction(request)))


def _curation(request: LLMRequest, topic: str) -> str:
    return json.dumps({"action": "create", "target": None})


def _teaching(request: LLMRequest, topic: str) -> str:
    """The message (the request's topic) read by the phrase rules, as the JSON the teaching prompt asks for."""
    return parse_teaching(request.topic).as_json()


def reflection(request: LLMRequest, topic: str) -> str:
    """1-3 lessons from the persona's angle, knowing the outcome the prompt names, in the structured form: each a
    `- [category] lesson` line and an indented `> overview` line (see domain/memory/answers.py)."""
    asked = everything(request)
    if request.persona is None:
        return f"- {MARK} {clip(topic_phrase(topic).phrase, 8)} is worth remembering for next time."
    found = _OUTCOME.search(asked)
    outcome = found.group(1) if found else ""
    kind = _KIND.search(asked)
    where = f"the {kind.group(1).strip()}" if kind else "a discussion"
    ended = f", which ended {outcome}" if outcome else ""
    lessons = offline_lessons.reflection(request.persona, topic, outcome, asked)
    subject = topic_phrase(topic).subject
    return "\n".join(
        _structured(lesson, f"{MARK} Learned in {where} on {subject}{ended}: {why}.") for lesson, why in lessons
    )


def _extraction(request: LLMRequest, topic: str) -> str:
    """Up to 3 structured lessons from the messages being summarised away, or NONE (see lessons.extraction)."""
    if request.persona is None:
        return "NONE"
    lines = block_lines(request.system.text, "messages")
    found = offline_lessons.extraction(request.persona, topic, lines)
    return "\n".join(_structured(lesson, overview) for lesson, overview in found) or "NONE"


def _structured(lesson: str, overview: str) -> str:
    return f"- [{category_for(unmark(lesson))}] {lesson}\n  > {overview}"


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
    Purpose.TEACHING: _teaching,
    Purpose.EXTRACTION: _extraction,
}
