"""One lesson's text and lines: its normalised form and id, the cleaning that makes text safe as a bullet, an
overview line or a section header's part, and the bullet (with its overview) read and written.

A lesson is a bullet in any form a person types (`-`, `*`, `+`, `•`, `1.`, `2)`, indented or not); its text is the
lesson's abstract, its trailing comment holds its metadata (`cat:` its category), and a bullet whose comment is
malformed is not read as a lesson. The indented `> ` lines right under a bullet are its overview (a person may wrap
it over several; Night Watch writes one): a quote inside the list item in any markdown viewer. format.py reads the
lines around it.

What a person may give memory is checked here too: a lesson's text and overview, a lesson's id, and a search query
with how many hits to show.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import lru_cache

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable, check_text, shown, whole_number
from nightwatch.domain.memory.models import CATEGORIES, LESSON_MAX
from nightwatch.domain.models import Category, Lesson

OVERVIEW_MAX = 600  # characters of an overview
QUERY_MAX = 500
SEARCH_MAX = 100

_LESSON_ID = re.compile(r"[0-9a-f]{8}")
COMMENT = re.compile(r"\s*<!--(.*?)-->\s*$")  # a bullet's trailing metadata comment
PIN_MARK = re.compile(r"^(?:📌\ufe0f?|\[pinned\])\s*", re.IGNORECASE)
STRUCK = re.compile(r"^~~(.+?)~~(.*)$")  # a crossed-out (superseded) lesson
_TRAILING_PUNCT = re.compile(r"[\s.,;:!?…]+$")
_TRAILING_CHARS = frozenset(".,;:!?…")  # the characters _TRAILING_PUNCT removes (white space is already collapsed)
_AUTHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit, as str.isalnum reads one
UNDATED = datetime(1970, 1, 1, tzinfo=UTC)  # the day of lessons written above any dated section
_MARKS = frozenset("-*+•")
BULLET_STARTS = frozenset("-*+•0123456789 \t")  # the first characters of a line that may be a bullet
_NUMBERED = re.compile(r"\d{1,3}[.)](?:\s+|$)")
_CATEGORIES: dict[str, Category] = {category: category for category in CATEGORIES}
PIN = "📌"
OVERVIEW_MARK = "  > "  # how an overview line starts: a quote inside the bullet's list item


def normalise(text: str) -> str:
    """Lower-case, collapse whitespace, drop markers and trailing punctuation: the text an id is made from."""
    body = text.strip()
    if "<!--" in body:
        body = COMMENT.sub("", body)
    body = PIN_MARK.sub("", body.strip()) if may_be_pinned(body) else body.strip()
    struck = STRUCK.match(body) if body.startswith("~~") else None
    if struck:
        body = struck.group(1) + struck.group(2)
    body = " ".join(body.lower().split())
    return _TRAILING_PUNCT.sub("", body) if body[-1:] in _TRAILING_CHARS else body


def may_be_pinned(body: str) -> bool:
    """Whether the text may start with a pin mark (a cheap test before the regex)."""
    return body.startswith("📌") or body[:1] == "["


def lesson_id(text: str) -> str:
    """Return the lesson's id: 8 hex characters of a hash of its normalised text."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:8]


def clean_lesson_text(text: str) -> str:
    """Make text safe as one bullet: one line, no file markup (comments, pins, strike-through, bullet marks)."""
    body = " ".join(text.replace("<!--", " ").replace("-->", " ").split())
    body = re.sub(r"^(?:[-*+•]\s+|\d+[.)]\s+)", "", body)
    previous = None
    while previous != body:
        previous = body
        body = PIN_MARK.sub("", body).strip()
    return body.replace("~~", "").strip()


def clean_overview(text: str) -> str:
    """Make text safe as a lesson's overview line: one line, no comment markup ('' when nothing is left)."""
    body = " ".join(text.replace("<!--", " ").replace("-->", " ").split())
    return body if has_word(body) else ""


def valid_author(author: str) -> bool:
    """True when `author` fits a lesson's metadata: one word of letters, digits, '.', '_' or '-' (a Slack user id)."""
    return bool(_AUTHOR.fullmatch(author))


def header_part(text: str) -> str:
    """Make text usable as one part of a section header (no newlines, no ' · ' separator)."""
    return " ".join(text.replace("·", "-").split())


def has_word(text: str) -> bool:
    """Whether the text holds a letter or a digit."""
    return _ALNUM.search(text) is not None


@lru_cache(maxsize=32768)
def read_lesson(
    raw: str, day: date | None, kind: str, link: str | None, history: bool, overview: str | None = None
) -> Lesson | None:
    """One bullet line (and the overview under it) as a lesson; None for any other line, and for a bullet it cannot
    use (see `unread_lines`).

    Cached: a rewrite re-parses mostly unchanged lines.
    """
    body = bullet_text(raw)
    if not body:
        return None
    parsed = _metadata(body) if "<!--" in body else ({}, body)
    if parsed is None:
        return None
    fields, body = parsed
    pinned = False
    while may_be_pinned(body) and (mark := PIN_MARK.match(body)):
        pinned, body = True, body[mark.end() :]
    superseded_by = fields.get("superseded-by") or None
    struck = STRUCK.match(body.strip()) if "~~" in body else None
    if struck:
        body = struck.group(1) + struck.group(2)
        superseded_by = superseded_by or "manual"  # a person crossed it out by hand
    if history and superseded_by is None:
        superseded_by = "manual"
    text = body.strip()
    if not has_word(text):
        return None
    when = _day(fields.get("on")) if superseded_by and fields.get("on") else day
    return Lesson(
        id=lesson_id(text),
        text=text,
        recorded_at=datetime(when.year, when.month, when.day, tzinfo=UTC) if when else UNDATED,
        kind=kind,
        link=link,
        pinned=pinned,
        seen=_count(fields.get("seen"), 1),
        injected=_count(fields.get("injected"), 0),
        superseded_by=superseded_by,
        author=fields.get("by"),
        category=_CATEGORIES.get(fields.get("cat", "").lower()),
        overview=overview,
        last_seen=_day(fields.get("last")),
    )


def overview_text(raw: str) -> str | None:
    """The text of an overview line (`  > text`), or None when the line is not one (no words, or markup in it)."""
    body = raw.lstrip(" \t")
    if body[:1] != ">" or len(body) == len(raw):
        return None
    text = body[1:].strip()
    return text if has_word(text) and "<!--" not in text and "-->" not in text else None


def marks_in(line: str) -> tuple[Category | None, date | None]:
    """The category and the day last seen again a lesson's bullet line names in its comment (None: none)."""
    body = bullet_text(line) if "cat:" in line or "last:" in line else None
    fields = (_metadata(body) or ({}, ""))[0] if body and "<!--" in body else {}
    return _CATEGORIES.get(fields.get("cat", "").lower()), _day(fields.get("last"))


def bullet_text(raw: str) -> str | None:
    """The text after a line's bullet mark ('', for a bare mark), or None when the line is not a bullet.

    A bullet is `-`, `*`, `+` or `•`, or a number with `.` or `)` (`1.`, `2)`), then white space, at any
    indentation. No regex for the common case: this runs for every line of a cold read.
    """
    if raw[:1] in _MARKS and raw[1:2] == " ":  # the form Night Watch writes, by far the most common
        return raw[2:].strip()
    line = raw.strip()
    first = line[:1]
    if first in _MARKS:
        return line[1:].lstrip() if len(line) == 1 or line[1].isspace() else None
    if first.isdigit():
        number = _NUMBERED.match(line)
        return line[number.end() :].lstrip() if number else None
    return None


def _metadata(body: str) -> tuple[dict[str, str], str] | None:
    """The trailing `<!-- key:value ... -->` of a bullet's text as fields, and the text before it.

    None when the comment is malformed: not closed at the end of the line, another comment left in the text, an item
    that is not `key:value`, a key Night Watch does not write, or a value of the wrong shape.
    """
    comment = COMMENT.search(body)
    if comment is None or "<!--" in body[: comment.start()]:
        return None
    fields: dict[str, str] = {}
    for item in comment.group(1).split():
        key, _, value = item.partition(":")
        check = _FIELDS.get(key.lower())
        if check is None or not check(value):
            return None
        fields[key.lower()] = value
    return fields, body[: comment.start()]


def _is_date(value: str) -> bool:
    return _day(value) is not None


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def _count(value: str | None, default: int) -> int:
    return int(value) if value and _is_count(value) else default


def _is_count(value: str) -> bool:
    return value.isascii() and value.isdigit() and len(value) < 10


# The keys a lesson's metadata comment may hold, each with the check its value must pass.
_FIELDS: dict[str, Callable[[str], bool]] = {
    "seen": _is_count,
    "injected": _is_count,
    "superseded-by": bool,
    "on": _is_date,
    "last": _is_date,  # the day it was last seen again
    "by": valid_author,
    "cat": lambda value: value.lower() in _CATEGORIES,  # one of the six names
}


def render_lesson(lesson: Lesson | None) -> str:
    """One bullet line for a lesson, with metadata in a trailing HTML comment only when it is not the default, and
    its overview (when it has one) as an indented `> ` line under it."""
    if lesson is None:
        return ""
    meta: list[str] = []
    if lesson.stale:
        meta.append(f"superseded-by:{lesson.superseded_by}")
        meta.append(f"on:{lesson.recorded_at.date().isoformat()}")
    if lesson.category:
        meta.append(f"cat:{lesson.category}")
    if lesson.author:
        meta.append(f"by:{lesson.author}")
    if lesson.seen != 1:
        meta.append(f"seen:{lesson.seen}" + (f" last:{lesson.last_seen.isoformat()}" if lesson.last_seen else ""))
    if lesson.injected:
        meta.append(f"injected:{lesson.injected}")
    body = f"~~{lesson.text}~~" if lesson.stale else lesson.text
    pin = f"{PIN} " if lesson.pinned else ""
    comment = f" <!-- {' '.join(meta)} -->" if meta else ""
    overview = f"\n{OVERVIEW_MARK}{lesson.overview}" if lesson.overview else ""
    return f"- {pin}{body}{comment}{overview}"


def validate_lesson(raw: object, limit: int = LESSON_MAX) -> str:
    """Return the lesson as one clean line, or raise InvalidInputError: 1-`limit` characters of printable text."""
    lesson = clean_lesson_text(raw) if isinstance(raw, str) else ""
    if not lesson:
        raise InvalidInputError("A lesson cannot be empty: write one sentence worth remembering.")
    if len(lesson) > limit:
        raise InvalidInputError(f"That lesson is {len(lesson)} characters long; shorten it to at most {limit}.")
    return check_printable(lesson, what="The lesson")


def validate_overview(raw: object, limit: int = OVERVIEW_MAX) -> str:
    """Return a lesson's overview as one clean line ('' for none), or raise InvalidInputError: at most `limit`
    characters of printable text."""
    overview = clean_overview(raw) if isinstance(raw, str) else ""
    if len(overview) > limit:
        raise InvalidInputError(f"That overview is {len(overview)} characters long; shorten it to at most {limit}.")
    return check_printable(overview, what="The overview") if overview else ""


def is_lesson_id(text: str) -> bool:
    """Whether `text` is a lesson id (8 hex characters, either case), such as 3f9a2c1d."""
    return _LESSON_ID.fullmatch(text.strip().lower()) is not None


def validate_lesson_id(raw: object) -> str:
    """Return the lesson id in lower case, or raise InvalidInputError: an id is 8 hex characters like 3f9a2c1d."""
    wanted = raw.strip().lower() if isinstance(raw, str) else ""
    if not is_lesson_id(wanted):
        raise InvalidInputError(
            f"A lesson id is 8 characters from 0-9 and a-f, such as 3f9a2c1d (got {shown(raw)}); "
            "list the persona's lessons to see their ids."
        )
    return wanted


def validate_query(raw: object) -> str:
    """Return the search query without outer white space: 1-500 characters of printable text."""
    return check_text(raw, what="The search query", limit=QUERY_MAX, example='"session store"')


def validate_search_limit(raw: object) -> int:
    """Return how many hits a search may show: a whole number from 1 to 100."""
    return whole_number(raw, what="The number of search results", low=1, high=SEARCH_MAX)
