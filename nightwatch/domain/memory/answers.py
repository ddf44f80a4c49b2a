"""Lessons in a model's answer, read leniently: each a candidate with an abstract, and a category and overview when
the answer gives them.

The form the prompts ask for mirrors the memory file: a bullet with the category in brackets, and the overview on the
indented `>` line(s) under it:

    - [cases] The billing worker double-charged because retries reused no idempotency key; always send one.
      > Found in the March incident review: ...

Also read: the category as `(cases)` or `cases:`, overview lines indented without `>` (or labelled `Overview:`),
"*", "•" and "1." bullets, and JSON: a list of strings, or of objects with `category`, `abstract` (or `text`,
`lesson`) and `overview`, alone or under "lessons". An answer in the older one-line form (bullets only) gives
candidates without category or overview. Prose lines are ignored, so an answer with no bullets gives no lessons.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from nightwatch.domain.memory.format import clean_lesson_text, clean_overview, lesson_id, normalise
from nightwatch.domain.memory.lesson_text import OVERVIEW_MAX
from nightwatch.domain.memory.models import CATEGORIES
from nightwatch.domain.models import Category

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
