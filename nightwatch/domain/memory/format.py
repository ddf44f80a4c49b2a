"""Parse a persona's memory file into a document, and merge a file a person brings back into the one kept now.

    # Carlos · memory for night-watch

    ## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
    - The auth module couples to the session store; review changes to both together.
    - 📌 Never merge a migration without a rollback script. <!-- cat:patterns seen:3 injected:12 -->
      > A migration merged without one in March took the billing tables down for an hour; the rollback was
      > written by hand under pressure.
    - Staging data is wiped every Monday. <!-- by:U123ABC -->

    ## Superseded
    - ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 -->

A `## ` header opens a section (dated: `day · kind · link`; or the history); each bullet is read as a lesson with the
overview lines under it (lesson_text.py reads one lesson's lines). Every line that is not a lesson is kept verbatim (see
document.py), and so is every lesson nobody changed, overview lines included; a rewritten lesson is written back in the
`- ` form. Parsing never raises.

`merge_imported` keeps markdown a person's tool: memory can be exported as files, edited or moved, and imported again.
Importing never drops a lesson: a lesson only the kept memory has stays; a lesson only the file has is added under its
own dated section (or into the history when it is superseded); a lesson both have takes the file's marks (pin, seen and
injected counts, superseded, author, category, overview), since the file is what a person last looked at. Into an empty
memory the file goes in verbatim, so an export imported elsewhere is the same text, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from nightwatch.domain.memory.document import HISTORY_TITLE, Line, MemoryDocument, Section, new_document
from nightwatch.domain.memory.lesson_text import (
    BULLET_STARTS,
    PIN,
    UNDATED,
    bullet_text,
    clean_lesson_text,
    clean_overview,
    header_part,
    lesson_id,
    marks_in,
    normalise,
    overview_text,
    read_lesson,
    render_lesson,
    valid_author,
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
    "clean_overview",
    "header_part",
    "header_section",
    "is_header",
    "lesson_block",
    "lesson_id",
    "lesson_in",
    "live_line_count",
    "marks_in",
    "new_document",
    "normalise",
    "overview_at",
    "parse",
    "render_lesson",
    "valid_author",
]

CLI_AUTHOR = "cli"  # the author of a lesson a person added on the command line (in Slack it is their user id)

_HEADER = re.compile(r"^##(?!#)\s*(.*?)\s*$")
_DOT = re.compile(r"\s*·\s*")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HISTORY_NAMES = frozenset({"superseded", "history"})
_INDENT = frozenset(" \t")  # an overview line (`  > text`, the overview of the bullet above) starts with one


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


def section_link(link: str | None) -> str | None:
    """A link as the last part of a section header; None when there is none."""
    return header_part(link) if link and link.strip() else None


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
        if raw[:1] not in BULLET_STARTS:
            lines.append(Line(raw=raw))
            continue
        below = at
        while below < end and raw_lines[below][:1] in _INDENT and overview_text(raw_lines[below]) is not None:
            below += 1
        if below == at:
            lines.append(
                Line(raw=raw, lesson=read_lesson(raw, current.day, current.kind, current.link, current.history))
            )
            continue
        overview = " ".join(overview_text(line) or "" for line in raw_lines[at:below])
        lesson = read_lesson(raw, current.day, current.kind, current.link, current.history, overview)
        if lesson is not None:  # a bullet that is no lesson has no overview: its quote lines stay lines of their own
            raw, at = "\n".join(raw_lines[at - 1 : below]), below
        lines.append(Line(raw=raw, lesson=lesson))
    sections.append(_with_lines(current, lines))
    return MemoryDocument(sections=tuple(sections), trailing_newline=trailing or not text)


def lesson_block(raw: str, section: Section) -> Lesson | None:
    """The lesson a bullet line and its overview lines (`raw`, joined by newlines) hold in `section`, as `parse`
    reads them there; None when `raw` is not exactly one lesson."""
    first, *rest = raw.split("\n")
    if first[:1] not in BULLET_STARTS:
        return None
    parts = [overview_text(line) for line in rest]
    if any(part is None for part in parts):
        return None
    overview = " ".join(part for part in parts if part is not None) or None
    return read_lesson(first, section.day, section.kind, section.link, section.history, overview)


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
    if line[:1] not in BULLET_STARTS or "\n" in line:
        return None
    return read_lesson(line, section.day, section.kind, section.link, section.history, overview)


def overview_at(text: str, at: int) -> str | None:
    """The overview whose lines start at offset `at` of `text` (the line under a lesson's bullet), as `parse` joins
    them; None when that line is no overview line."""
    parts: list[str] = []
    while at < len(text) and text[at] in _INDENT:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        part = overview_text(text[at:end])
        if part is None:
            break
        parts.append(part)
        at = end + 1
    return " ".join(parts) if parts else None


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


@dataclass(frozen=True)
class Merged:
    """The merged text and what the merge did: lessons added, lessons whose marks the file changed, lessons kept."""

    text: str
    added: int = 0
    updated: int = 0
    kept: int = 0


def merge_imported(current: str, imported: str) -> Merged:
    """The kept memory `current` with the lessons of the file `imported` merged in by id (see the module doc)."""
    if not current.strip():
        return Merged(imported, added=len(parse(imported).all_lessons()))
    mine, theirs = parse(current), parse(imported)
    by_id = {lesson.id: lesson for lesson in theirs.all_lessons()}
    known = {lesson.id for lesson in mine.all_lessons()}
    updated: set[str] = set()

    def take_marks(lesson: Lesson) -> Lesson:
        other = by_id.get(lesson.id)
        if other is None or _marks(other) == _marks(lesson):
            return lesson
        updated.add(lesson.id)
        return replace(
            lesson,
            pinned=other.pinned,
            seen=other.seen,
            last_seen=other.last_seen,
            injected=other.injected,
            superseded_by=other.superseded_by,
            author=other.author,
            category=other.category,
            overview=other.overview,
        )

    merged = mine.map_lessons(take_marks)
    added = 0
    for section in theirs.sections:
        new = [lesson for lesson in section.lessons() if lesson.id not in known]
        known.update(lesson.id for lesson in new)
        added += len(new)
        merged = _add(merged, section, new)
    kept = sum(lesson.id not in by_id for lesson in mine.all_lessons())
    text = merged.render() if added or updated else current
    return Merged(text, added=added, updated=len(updated), kept=kept)


def _marks(lesson: Lesson) -> tuple[object, ...]:
    marks = (lesson.pinned, lesson.seen, lesson.injected, lesson.superseded_by, lesson.author)
    return (*marks, lesson.category, lesson.overview, lesson.last_seen)


def _add(document: MemoryDocument, section: Section, lessons: Sequence[Lesson]) -> MemoryDocument:
    """Add lessons where they were in the file: their dated section, the history, or the top of the file."""
    if not lessons:
        return document
    if section.history:
        return document.add_history(lessons)
    if section.day is not None:
        return document.append(lessons, section.day, section.kind, section.link)
    first, *rest = document.sections  # undated bullets (under the title) join the kept file's undated ones
    lines = first.lines + tuple(Line(lesson=lesson) for lesson in lessons)
    return replace(document, sections=(replace(first, lines=lines), *rest))
