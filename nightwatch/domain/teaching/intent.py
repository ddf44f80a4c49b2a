"""Teaching in plain words: what a message addressed to the app asks (remember, forget, or neither), and the prompt
that asks a model, with the reading of its answer.

A model is asked only about a message that may be a teaching at all (`may_teach`: it uses one of the words a
teaching needs), so an ordinary topic costs no call. Its answer is one small JSON object; `read_teaching` accepts it
only when every field has the shape asked for, and keeps only the persona names the message itself contains, so a
model cannot add an audience. When the answer is unusable, or the call fails, the phrase rules decide
(teaching_phrases.py); the offline model answers with those same rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from nightwatch.domain.memory import LESSON_MAX
from nightwatch.domain.quoting import as_data
from nightwatch.prompts import Prompt

NAMES_MAX = 10  # personas one teaching may address
NAME_MAX = 40
TEXT_MAX = 2 * LESSON_MAX  # longer answers are not a lesson or a thing to forget; the rules decide instead

# A teaching uses one of these words; anything else is a topic without asking anyone.
_CUES = re.compile(
    r"\b(?:remember|forget|note|keep in mind|bear in mind|no longer|not true|isn['’]?t true|not right|"
    r"not correct|not the case|not valid)\b",
    re.IGNORECASE,
)


class Intent(StrEnum):
    """What a message asks of the app's memory."""

    REMEMBER = "remember"
    FORGET = "forget"
    NONE = "none"


@dataclass(frozen=True)
class Teaching:
    """What a message asks: the intent, the personas it addresses by name (as written), and the lesson to remember
    or the thing to forget ("" when it names none: "forget about it")."""

    intent: Intent
    personas: tuple[str, ...] = ()
    text: str = ""

    @classmethod
    def none(cls) -> Teaching:
        return cls(Intent.NONE)

    @property
    def is_teaching(self) -> bool:
        return self.intent is not Intent.NONE

    def as_json(self) -> str:
        """The answer a model gives for this teaching (the offline model's answer)."""
        return json.dumps({"intent": self.intent.value, "personas": list(self.personas), "text": self.text})


@dataclass(frozen=True)
class TeachingPrompt(Prompt):
    """The prompt that asks a model whether a message asks the app to remember or forget something."""

    template: ClassVar[str] = "teaching.md.j2"

    message: str
    personas: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", as_data(self.message))  # data inside its <message> block

    @classmethod
    def example(cls) -> TeachingPrompt:
        return cls(message="Maya, remember that we deploy on Thursdays now.", personas="Maya, Carlos, Priya, Dev")


def may_teach(message: str) -> bool:
    """Whether the message uses a word a teaching needs; False means a topic, without asking a model."""
    return bool(_CUES.search(message))


def read_teaching(answer: str, message: str) -> Teaching | None:
    """The model's JSON answer as a Teaching; None when it is not the shape asked for.

    Persona names the message does not contain are dropped (a model may not widen who learns something).
    """
    data = _json_object(answer)
    intent = _intent(data.get("intent")) if data is not None else None
    if data is None or intent is None:
        return None
    if intent is Intent.NONE:
        return Teaching.none()
    names, text = data.get("personas", []), data.get("text", "")
    if not _names_shape(names) or not isinstance(text, str):
        return None
    text = " ".join(text.split())
    if len(text) > TEXT_MAX or (intent is Intent.REMEMBER and not text):
        return None
    said = [name.strip().lstrip("@") for name in names]
    return Teaching(intent, tuple(dict.fromkeys(name for name in said if _contains(message, name))), text)


def _intent(raw: object) -> Intent | None:
    try:
        return Intent(raw.strip().lower()) if isinstance(raw, str) else None
    except ValueError:
        return None


def _names_shape(names: object) -> bool:
    """A list of at most NAMES_MAX names of 1-NAME_MAX characters."""
    return (
        isinstance(names, list)
        and len(names) <= NAMES_MAX
        and all(isinstance(name, str) and 0 < len(name.strip()) <= NAME_MAX for name in names)
    )


def _json_object(answer: str) -> dict[str, Any] | None:
    match = re.search(r"\{.*\}", answer, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _contains(message: str, name: str) -> bool:
    """Whether `name` occurs in the message as a word (any case)."""
    return bool(name) and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", message, re.IGNORECASE) is not None
