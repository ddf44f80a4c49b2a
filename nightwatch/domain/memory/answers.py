"""Lessons coming into memory, each a candidate: asked of the model and read leniently from its answer (an abstract,
and a category and overview when the answer gives them), or given by a person; and the junk guard that keeps text
that is no lesson out.

The form the prompts ask for mirrors the memory file: a bullet with the category in brackets, and the overview on the
indented `>` line(s) under it:

    - [cases] The billing worker double-charged because retries reused no idempotency key; always send one.
      > Found in the March incident review: ...

Also read: the category as `(cases)` or `cases:`, overview lines indented without `>` (or labelled `Overview:`),
"*", "•" and "1." bullets, and JSON: a list of strings, or of objects with `category`, `abstract` (or `text`,
`lesson`) and `overview`, alone or under "lessons". An answer in the older one-line form (bullets only) gives
candidates without category or overview. Prose lines are ignored, so an answer with no bullets gives no lessons.

The junk guard turns away greetings, refusals, placeholders, echoes of the reflection prompt or of the interaction
itself, and text Night Watch itself injected (the "X remembered:" notes, the memory block's heading and introduction,
file markup, several remembered lessons stitched together), which would otherwise feed back into memory as if it had
been learned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory.lesson_text import (
    OVERVIEW_MAX,
    clean_lesson_text,
    clean_overview,
    lesson_id,
    normalise,
    valid_author,
    validate_lesson,
    validate_overview,
)
from nightwatch.domain.memory.models import CATEGORIES, validate_category
from nightwatch.domain.models import Category, Lesson, Persona

_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+(.+?)\s*$")
_MORE = re.compile(r"^(?:\s+>?|>)\s*(?:\*{0,2}overview\*{0,2}\s*:\s*)?(.*?)\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```")
_QUOTES = "\"'“”‘’`"
_WRAPPING = re.compile(rf"^[{_QUOTES}]+|[{_QUOTES}]+$")
_NAMES = "|".join(CATEGORIES)
_CATEGORY = re.compile(rf"^(?:\[\s*({_NAMES})\s*\]|\(\s*({_NAMES})\s*\)|\*{{0,2}}({_NAMES})\*{{0,2}}\s*:)\s*", re.I)
_BY_NAME: dict[str, Category] = {category: category for category in CATEGORIES}


@dataclass(frozen=True)
class Candidate:
    """A lesson about to be recorded: its abstract (the bullet's text), and its category and overview when known."""

    text: str
    category: Category | None = None
    overview: str | None = None


def parse_candidates(
    answer: str, *, max_chars: int, overview_chars: int = OVERVIEW_MAX, limit: int | None = None
) -> list[Candidate]:
    """The lessons in a model's answer (see the module docstring), each cleaned to one line and capped, an overview
    at `overview_chars`; a lesson repeated (the same id) is kept once."""
    text = "\n".join(line for line in answer.strip().splitlines() if not _FENCE.match(line))
    items = _json_items(text)
    if items is None:
        items = _bullet_items(text)
    found: list[Candidate] = []
    ids: set[str] = set()
    for raw_text, raw_category, raw_overview in items:
        candidate = _candidate(raw_text, raw_category, raw_overview, max_chars, overview_chars)
        if candidate is None or lesson_id(candidate.text) in ids:
            continue
        ids.add(lesson_id(candidate.text))
        found.append(candidate)
        if limit is not None and len(found) >= limit:
            break
    return found


def parse_lessons(answer: str, *, max_chars: int, limit: int | None = None) -> list[str]:
    """Only the abstracts of `parse_candidates`."""
    return [candidate.text for candidate in parse_candidates(answer, max_chars=max_chars, limit=limit)]


def cap_length(text: str, max_chars: int) -> str:
    """Shorten text to at most `max_chars`, at a word boundary when one is near, marking the cut with an ellipsis."""
    if len(text) <= max_chars:
        return text
    cut = text[: max(max_chars - 1, 0)]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def category_of(value: object) -> Category | None:
    """`value` as a category when it names one (case and spaces ignored), else None: a model's guess is not an error."""
    return _BY_NAME.get(value.strip().lower()) if isinstance(value, str) else None


def _candidate(
    raw_text: str, raw_category: str | None, raw_overview: str, max_chars: int, overview_chars: int
) -> Candidate | None:
    body = _WRAPPING.sub("", raw_text.strip()).strip()
    named = _CATEGORY.match(body)
    if named:
        raw_category = raw_category or next(group for group in named.groups() if group)
        body = body[named.end() :]
    abstract = cap_length(_WRAPPING.sub("", clean_lesson_text(body)).strip(), max_chars)
    if not abstract:
        return None
    overview = cap_length(clean_overview(_unquoted(raw_overview.strip())), overview_chars)
    if not overview or normalise(overview) == normalise(abstract):
        overview = ""
    return Candidate(abstract, category_of(raw_category), overview or None)


def _unquoted(text: str) -> str:
    """Text without the quotes around all of it (a quote that only ends it is kept: it closes a quotation)."""
    return _WRAPPING.sub("", text) if text[:1] in _QUOTES and text[-1:] in _QUOTES else text


def _bullet_items(text: str) -> list[tuple[str, str | None, str]]:
    """(text, category, overview) of each bullet; the indented or quoted lines right under one are its overview."""
    items: list[tuple[str, str | None, str]] = []
    more: list[str] = []
    for line in text.splitlines():
        bullet = None if line.lstrip().startswith(">") else _BULLET.match(line)
        if bullet is not None:
            _close(items, more)
            items.append((bullet.group(1), None, ""))
            continue
        extra = _MORE.match(line) if items else None
        if extra is not None and extra.group(1):
            more.append(extra.group(1))
        elif line[:1].strip():  # prose at the margin ends the bullet's overview
            _close(items, more)
    _close(items, more)
    return items


def _close(items: list[tuple[str, str | None, str]], more: list[str]) -> None:
    if items and more:
        text, category, overview = items[-1]
        items[-1] = (text, category, " ".join(part for part in (overview, *more) if part))
    more.clear()


def _json_items(text: str) -> list[tuple[str, str | None, str]] | None:
    if not text.startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        data = data.get("lessons")
    if not isinstance(data, list):
        return None
    items: list[tuple[str, str | None, str]] = []
    for item in data:
        if isinstance(item, str):
            items.append((item, None, ""))
        elif isinstance(item, dict):
            text = next((item[key] for key in ("abstract", "text", "lesson") if isinstance(item.get(key), str)), "")
            category = item.get("category")
            overview = item.get("overview")
            category = category if isinstance(category, str) else None
            items.append((text, category, overview if isinstance(overview, str) else ""))
    return items


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


def given_lesson(
    text: str, category: Category | None, overview: str | None, author: str | None, max_chars: int
) -> Candidate:
    """A lesson a person gave, as a candidate; InvalidInputError says what is wrong with it (junk included)."""
    kind_of = validate_category(category) if category is not None else None
    lesson = validate_lesson(text, max_chars)
    detail = validate_overview(overview) if overview is not None else None
    if author is not None and not valid_author(author):
        raise InvalidInputError(
            f"{author!r} cannot be kept as a lesson's author: use one word of letters, digits, '.', '_' or '-'."
        )
    reason = junk_reason(lesson)
    if reason:
        raise InvalidInputError(f"Not remembered: {reason}. Write a lesson a teammate could act on.")
    return Candidate(lesson, kind_of, detail or None)


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


def ask(llm: LLM, purpose: Purpose, persona: Persona, prompt: str, *, topic: str, max_tokens: int) -> str:
    """Send a memory prompt to the model as the persona; LLMError propagates to the caller."""
    request = LLMRequest(
        purpose=purpose,
        system=SystemPrompt((PromptBlock(prompt),)),
        messages=(ChatMessage(role="user", content="Answer now, in the form asked for."),),
        max_tokens=max_tokens,
        model=persona.model,
        persona=persona,
        topic=topic,
    )
    return llm.complete(request).text
