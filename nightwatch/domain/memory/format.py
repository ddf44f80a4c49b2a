"""Parse and render a persona's memory file: markdown a person can read and edit.

    # Carlos · memory for night-watch

    ## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
    - The auth module couples to the session store; review changes to both together.
    - 📌 Never merge a migration without a rollback script. <!-- cat:patterns seen:3 injected:12 -->
      > A migration merged without one in March took the billing tables down for an hour; the rollback was
      > written by hand under pressure.
    - Staging data is wiped every Monday. <!-- by:U123ABC -->

    ## Superseded
    - ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 -->

A lesson is a bullet in any form a person types (`-`, `*`, `+`, `•`, `1.`, `2)`, indented or not); its text is the
lesson's abstract, its trailing comment holds its metadata (`cat:` its category), and a bullet whose comment is
malformed is not read as a lesson. The indented `> ` lines right under a bullet are its overview (a person may wrap
it over several; Night Watch writes one): a quote inside the list item in any markdown viewer. Every line that is
not a lesson is kept verbatim (see document.py), and so is every lesson nobody changed, overview lines included; a
rewritten lesson is written back in the `- ` form. Parsing never raises; unread.py finds the kept lines worth
telling a person about (an overview line without words, or with a comment in it, is one of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import lru_cache

from nightwatch.domain.memory.document import (
    HISTORY_TITLE,
    PIN,
    Line,
    MemoryDocument,
    Section,
    new_document,
    render_lesson,
)
from nightwatch.domain.memory.lesson_text import (
    COMMENT,
    PIN_MARK,
    STRUCK,
    clean_lesson_text,
    clean_overview,
    has_word,
    header_part,
    lesson_id,
    may_be_pinned,
    normalise,
    valid_author,
)
from nightwatch.domain.memory.models import CATEGORIES
from nightwatch.domain.models import Category, Lesson

__all__ = [
    "CLI_AUTHOR",
    "HISTORY_TITLE",
    "PIN",
    "UNDATED",
    "Line",
    "MemoryDocument",
    "Section",
    "bullet_text",
    "category_in",
    "clean_lesson_text",
    "clean_overview",
    "header_part",
    "header_section",
    "is_header",
    "lesson_block",
    "lesson_id",
    "lesson_in",
    "live_line_count",
    "new_document",
    "normalise",
    "overview_at",
    "parse",
    "render_lesson",
    "valid_author",
]

CLI_AUTHOR = "cli"  # the author of a lesson a person added on the command line (in Slack it is their user id)
UNDATED = datetime(1970, 1, 1, tzinfo=UTC)  # lessons written above any dated section

_HEADER = re.compile(r"^##(?!#)\s*(.*?)\s*$")
_DOT = re.compile(r"\s*·\s*")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HISTORY_NAMES = frozenset({"superseded", "history"})
_MARKS = frozenset("-*+•")
_FIRST = frozenset("-*+•0123456789 \t")  # the first characters of a line that may be a bullet
_NUMBERED = re.compile(r"\d{1,3}[.)](?:\s+|$)")
_INDENT = frozenset(" \t")  # an overview line (`  > text`, the overview of the bullet above) starts with one
_CATEGORIES: dict[str, Category] = {category: category for category in CATEGORIES}


def live_line_count(text: str) -> int:
    """Lines outside the history section, counted without a full parse (the compaction trigger).

    An overview line counts with its lesson, not on its own: a lesson with an overview is one line of the limit.
    """
    count = 0
    history = False
    for raw in text.splitlines():
        header = _HEADER.match(raw)
        if header:
            history = header.group(1).strip().lower() in _HISTORY_NAMES
        count += not history and not (raw[:1] in _INDENT and raw.lstrip(" \t")[:1] == ">")
    return count


def parse(text: str) -> MemoryDocument:
    """Parse a memory file; never raises. Lines that are not lessons are kept verbatim."""
    raw_lines = text.split("\n")
    trailing = bool(raw_lines) and raw_lines[-1] == ""
    if trailing:
        raw_lines.pop()
    sections: list[Section] = []
    current = Section(header=None)
    lines: list[Line] = []
    at, end = 0, len(raw_lines)
    while at < end:
        raw = raw_lines[at]
        at += 1
        header = _HEADER.match(raw) if raw.startswith("##") else None
        if header:
            sections.append(_with_lines(current, lines))
            current, lines = _section(raw, header.group(1)), []
            continue
        # Only a line that starts with a bullet mark, a digit or indentation can be a lesson: prose skips the parser.
        if raw[:1] not in _FIRST:
            lines.append(Line(raw=raw))
            continue
        below = at
        while below < end and raw_lines[below][:1] in _INDENT and _overview_line(raw_lines[below]) is not None:
            below += 1
        if below == at:
            lines.append(Line(raw=raw, lesson=_lesson(raw, current.day, current.kind, current.link, current.history)))
            continue
        overview = " ".join(_overview_line(line) or "" for line in raw_lines[at:below])
        lesson = _lesson(raw, current.day, current.kind, current.link, current.history, overview)
        if lesson is not None:  # a bullet that is no lesson has no overview: its quote lines stay lines of their own
            raw, at = "\n".join(raw_lines[at - 1 : below]), below
        lines.append(Line(raw=raw, lesson=lesson))
    sections.append(_with_lines(current, lines))
    return MemoryDocument(sections=tuple(sections), trailing_newline=trailing or not text)


def lesson_block(raw: str, section: Section) -> Lesson | None:
    """The lesson a bullet line and its overview lines (`raw`, joined by newlines) hold in `section`, as `parse`
    reads them there; None when `raw` is not exactly one lesson."""
    first, *rest = raw.split("\n")
    if first[:1] not in _FIRST:
        return None
    parts = [_overview_line(line) for line in rest]
    if any(part is None for part in parts):
        return None
    overview = " ".join(part for part in parts if part is not None) or None
    return _lesson(first, section.day, section.kind, section.link, section.history, overview)


def _overview_line(raw: str) -> str | None:
    """The text of an overview line (`  > text`), or None when the line is not one (no words, or markup in it)."""
    body = raw.lstrip(" \t")
    if body[:1] != ">" or len(body) == len(raw):
        return None
    text = body[1:].strip()
    return text if has_word(text) and "<!--" not in text and "-->" not in text else None


def is_header(line: str) -> bool:
    """Whether `parse` reads this line as a section header: `##` not followed by a third `#` (what `_HEADER`
    matches, without running it: this is asked of every line of a big file)."""
    return line.startswith("##") and line[2:3] != "#"


def header_section(header: str | None) -> Section | None:
    """The section a header line opens, as `parse` reads it (None: above every header); None when it is not one."""
    if header is None:
        return Section(header=None)
    found = _HEADER.match(header) if header.startswith("##") and "\n" not in header else None
    return _section(header, found.group(1)) if found else None


def lesson_in(line: str, section: Section, overview: str | None = None) -> Lesson | None:
    """The lesson one line holds in `section` (with the overview the lines under it give, see `overview_at`), read
    exactly as `parse` reads it there; None for any other line."""
    if line[:1] not in _FIRST or "\n" in line:
        return None
    return _lesson(line, section.day, section.kind, section.link, section.history, overview)


def overview_at(text: str, at: int) -> str | None:
    """The overview whose lines start at offset `at` of `text` (the line under a lesson's bullet), as `parse` joins
    them; None when that line is no overview line."""
    parts: list[str] = []
    while at < len(text) and text[at] in _INDENT:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        part = _overview_line(text[at:end])
        if part is None:
            break
        parts.append(part)
        at = end + 1
    return " ".join(parts) if parts else None


def category_in(line: str) -> Category | None:
    """The category a lesson's bullet line names in its metadata comment (None: none, or no lesson)."""
    body = bullet_text(line) if "cat:" in line else None
    parsed = _metadata(body) if body and "<!--" in body else None
    return _CATEGORIES.get(parsed[0].get("cat", "").lower()) if parsed is not None else None


def _with_lines(section: Section, lines: list[Line]) -> Section:
    """The section with these lines (built directly: a file of 5,000 sections is parsed on a cold read)."""
    return Section(section.header, tuple(lines), section.day, section.kind, section.link, section.history)


def _section(raw: str, body: str) -> Section:
    parts = [part.strip() for part in _DOT.split(body)]
    if body.strip().lower() in _HISTORY_NAMES:
        return Section(header=raw, history=True)
    day = None
    if parts and _DATE.match(parts[0]):
        try:
            day = date.fromisoformat(parts[0])
        except ValueError:
            day = None
    if day is None:
        return Section(header=raw)
    kind = parts[1] if len(parts) > 1 and parts[1] else "note"
    link = " · ".join(parts[2:]).strip("<>") or None
    return Section(header=raw, day=day, kind=kind, link=link)


@lru_cache(maxsize=32768)
def _lesson(
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
    )


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
    "by": valid_author,
    "cat": lambda value: value.lower() in _CATEGORIES,  # one of the six names
}
