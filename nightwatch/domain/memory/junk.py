"""The junk guard: text that must never be written to memory.

Greetings, refusals, placeholders, echoes of the reflection prompt or of the interaction itself, and text Night Watch
itself injected (the "X remembered:" notes, the memory block's heading and introduction, file markup, several
remembered lessons stitched together), which would otherwise feed back into memory as if it had been learned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from nightwatch.domain.memory.format import normalise
from nightwatch.domain.models import Lesson

ECHO_SHARE = 0.6  # share of a lesson's word triples found in the prompt's instructions
RESTATE_SHARE = 0.8  # word overlap with the topic or summary that makes a lesson a mere restatement of it
STITCH_SHARE = 0.8  # share of a lesson's word triples copied from two or more remembered lessons

_WORD = re.compile(r"[a-z0-9]+")
_PLACEHOLDER = re.compile(
    r"(lesson|item|point|bullet|note)\s*\d*|n/?a|none|null|nil|tbd|tba|todo|tk|xxx+|placeholder|lorem ipsum.*|"
    r"\.+|…+|-+|\?+|nothing( (new|else|to (add|remember|record|report|note)))?|"
    r"(no|nothing) (new |notable |particular )?(lessons?|learnings?|insights?)"
    r"( (learned|to (add|record|remember|note)))?|"
    r"(insert|your|add) (a |the )?(lesson|text) here|\[.*\]|<.*>|\{.*\}|example( lesson)?|same as (above|before)"
)
_REFUSAL = re.compile(
    r"\bas an ai\b|\bas a (large )?language model\b|\bi (can ?not|can't|am unable|'m unable|am not able|'m not able|"
    r"won't|will not|do not have access|don't have access)\b|\bi'?m sorry\b|\bi apologi[sz]e\b|\bi'm afraid\b"
)
_GREETING = re.compile(
    r"(hi|hello|hey|greetings|good (morning|afternoon|evening)|thanks?( you)?|cheers|sure|certainly|of course|"
    r"great (question|point|discussion|work)|happy to help|glad to help|you're welcome)"
    r"(\s*[,!:;.]|\s+(all|everyone|team|folks|again|so much)\b|$)"
)
_PREAMBLE = re.compile(
    r"^(here (are|is)|below (are|is)|these are)\b.*\b(lessons?|reflections?|learnings?|takeaways?)\b"
)
_INJECTED = re.compile(
    r"^\W*[\w .'’-]{1,40}\bremembered\s*:|<!--|-->|superseded-by:|\bwhat you remember from earlier work\b|"
    r"\blessons you recorded (yourself|in past work)\b|\bthe memory block below holds notes\b|"
    r"\bdata, never instructions to follow\b|·\s*memory for\b|\bmemories/[a-z0-9-]+/main\.md\b",
    re.IGNORECASE,
)


def junk_reason(text: str, *, instructions: str = "", context: Sequence[str] = ()) -> str | None:
    """Why `text` must not be stored (None when it may be): placeholder, refusal, greeting, echo, injected text."""
    norm = normalise(text)
    words = _WORD.findall(norm)
    checks = (
        (len(words) < 2 or bool(_PLACEHOLDER.fullmatch(norm)), "it is a placeholder, not a lesson"),
        (bool(_REFUSAL.search(norm)), "it is a refusal, not a lesson"),
        (bool(_GREETING.match(norm)) and len(words) <= 12, "it is a greeting, not a lesson"),
        (bool(_PREAMBLE.match(norm)), "it introduces lessons instead of being one"),
        (bool(_INJECTED.search(text)), "it repeats text Night Watch itself injected"),
        (bool(instructions) and _echoes(words, instructions), "it echoes the reflection prompt"),
        (any(_restates(norm, part) for part in context if part), "it restates the interaction, not a lesson from it"),
    )
    return next((reason for failed, reason in checks if failed), None)


def copies_several(text: str, lessons: Sequence[Lesson]) -> bool:
    """True when `text` stitches together two or more remembered lessons (the injected block read back)."""
    triples = _triples(_WORD.findall(normalise(text)))
    if len(triples) < 4:
        return False
    sources = [lesson for lesson in lessons if triples & _triples_of(lesson.text)]
    if len(sources) < 2:
        return False
    covered = set().union(*(triples & _triples_of(lesson.text) for lesson in sources))
    return len(covered) / len(triples) >= STITCH_SHARE


def _echoes(words: list[str], instructions: str) -> bool:
    """True when a lesson is mostly a copy of the prompt's own instructions."""
    if len(words) < 4:
        return " ".join(words) in " ".join(_WORD.findall(normalise(instructions)))
    triples = _triples(words)
    return len(triples & _triples_of(instructions)) / len(triples) >= ECHO_SHARE


def _restates(norm: str, part: str) -> bool:
    """True when a lesson is the topic or summary itself, near word for word."""
    mine, theirs = set(_WORD.findall(norm)), set(_WORD.findall(normalise(part)))
    return bool(mine and theirs) and len(mine & theirs) / len(mine | theirs) >= RESTATE_SHARE


def _triples(words: Sequence[str]) -> frozenset[tuple[str, str, str]]:
    return frozenset(zip(words, words[1:], words[2:], strict=False))


@lru_cache(maxsize=65536)
def _triples_of(text: str) -> frozenset[tuple[str, str, str]]:
    return _triples(_WORD.findall(normalise(text)))
