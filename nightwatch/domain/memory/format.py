"""Parse and render a persona's memory file: markdown a person can read and edit.

    # Carlos · memory for night-watch

    ## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
    - The auth module couples to the session store; review changes to both together.
    - 📌 Never merge a migration without a rollback script. <!-- seen:3 injected:12 -->
    - Staging data is wiped every Monday. <!-- by:U123ABC -->

    ## Superseded
    - ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 -->

A lesson is a bullet in any form a person types (`-`, `*`, `+`, `•`, `1.`, `2)`, indented or not); its trailing
comment holds its metadata, and a bullet whose comment is malformed is not read as a lesson. Every line that is not
a lesson is kept verbatim (see document.py), and so is every lesson nobody changed; a rewritten lesson is written
back in the `- ` form. Parsing never raises; unread.py finds the kept lines worth telling a person about.
"""

from __future__ import annotations

import hashlib
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
from nightwatch.domain.models import Lesson

__all__ = [
    "CLI_AUTHOR",
    "HISTORY_TITLE",
    "PIN",
    "UNDATED",
    "Line",
    "MemoryDocument",
    "Section",
    "bullet_text",
    "clean_lesson_text",
    "header_part",
    "header_section",
    "is_header",
    "lesson_id",
    "lesson_in",
    "live_line_count",
    "new_document",
    "normalise",
    "parse",
    "render_lesson",
    "valid_author",
]

CLI_AUTHOR = "cli"  # the author of a lesson a person added on the command line (in Slack it is their user id)
UNDATED = datetime(1970, 1, 1, tzinfo=UTC)  # lessons written above any dated section

_HEADER = re.compile(r"^##(?!#)\s*(.*?)\s*$")
_DOT = re.compile(r"\s*·\s*")
_COMMENT = re.compile(r"\s*<!--(.*?)-->\s*$")
_PIN_MARK = re.compile(r"^(?:📌\ufe0f?|\[pinned\])\s*", re.IGNORECASE)
_STRUCK = re.compile(r"^~~(.+?)~~(.*)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HISTORY_NAMES = frozenset({"superseded", "history"})
_TRAILING_PUNCT = re.compile(r"[\s.,;:!?…]+$")
_TRAILING_CHARS = frozenset(".,;:!?…")  # the characters _TRAILING_PUNCT removes (white space is already collapsed)
_AUTHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_MARKS = frozenset("-*+•")
_FIRST = frozenset("-*+•0123456789 \t")  # the first characters of a line that may be a bullet
_NUMBERED = re.compile(r"\d{1,3}[.)](?:\s+|$)")


def normalise(text: str) -> str:
    """Lower-case, collapse whitespace, drop markers and trailing punctuation: the text an id is made from."""
    body = text.strip()
    if "<!--" in body:
        body = _COMMENT.sub("", body)
    body = _PIN_MARK.sub("", body.strip()) if _may_be_pinned(body) else body.strip()
    struck = _STRUCK.match(body) if body.startswith("~~") else None
    if struck:
        body = struck.group(1) + struck.group(2)
    body = " ".join(body.lower().split())
    return _TRAILING_PUNCT.sub("", body) if body[-1:] in _TRAILING_CHARS else body


def _may_be_pinned(body: str) -> bool:
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
        body = _PIN_MARK.sub("", body).strip()
    return body.replace("~~", "").strip()


def valid_author(author: str) -> bool:
    """True when `author` fits a lesson's metadata: one word of letters, digits, '.', '_' or '-' (a Slack user id)."""
    return bool(_AUTHOR.fullmatch(author))


def header_part(text: str) -> str:
    """Make text usable as one part of a section header (no newlines, no ' · ' separator)."""
    return " ".join(text.replace("·", "-").split())


def live_line_count(text: str) -> int:
    """Lines outside the history section, counted without a full parse (the compaction trigger)."""
    count = 0
    history = False
    for raw in text.splitlines():
        header = _HEADER.match(raw)
        if header:
            history = header.group(1).strip().lower() in _HISTORY_NAMES
        count += not history
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
    for raw in raw_lines:
        header = _HEADER.match(raw) if raw.startswith("##") else None
        if header:
            sections.append(_with_lines(current, lines))
            current, lines = _section(raw, header.group(1)), []
            continue
        # Only a line that starts with a bullet mark, a digit or indentation can be a lesson: prose skips the parser.
        lesson = _lesson(raw, current.day, current.kind, current.link, current.history) if raw[:1] in _FIRST else None
        lines.append(Line(raw=raw, lesson=lesson))
    sections.append(_with_lines(current, lines))
    return MemoryDocument(sections=tuple(sections), trailing_newline=trailing or not text)


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


def lesson_in(line: str, section: Section) -> Lesson | None:
    """The lesson one line holds in `section`, read exactly as `parse` reads it there; None for any other line."""
    if line[:1] not in _FIRST or "\n" in line:
        return None
    return _lesson(line, section.day, section.kind, section.link, section.history)


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
def _lesson(raw: str, day: date | None, kind: str, link: str | None, history: bool) -> Lesson | None:
    """One bullet line as a lesson; None for any other line, and for a bullet it cannot use (see `unread_lines`).

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
    while _may_be_pinned(body) and (mark := _PIN_MARK.match(body)):
        pinned, body = True, body[mark.end() :]
    superseded_by = fields.get("superseded-by") or None
    struck = _STRUCK.match(body.strip()) if "~~" in body else None
    if struck:
        body = struck.group(1) + struck.group(2)
        superseded_by = superseded_by or "manual"  # a person crossed it out by hand
    if history and superseded_by is None:
        superseded_by = "manual"
    text = body.strip()
    if not _has_word(text):
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
    comment = _COMMENT.search(body)
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


def _has_word(text: str) -> bool:
    return any(char.isalnum() for char in text)


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
}
