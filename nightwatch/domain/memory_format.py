"""Parse and render a persona's memory file: markdown a person can read and edit.

    # Carlos · memory for night-watch

    ## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
    - The auth module couples to the session store; review changes to both together.
    - 📌 Never merge a migration without a rollback script. <!-- seen:3 injected:12 -->

    ## Superseded
    - ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 -->

Every line that is not a lesson bullet is kept verbatim, and so is every lesson bullet nobody changed, so a rewrite
touches only the lines it means to. Parsing never raises: odd lines are simply kept as they are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from nightwatch.domain.models import Lesson

HISTORY_TITLE = "Superseded"
UNDATED = datetime(1970, 1, 1, tzinfo=UTC)  # lessons written above any dated section
PIN = "📌"

_HEADER = re.compile(r"^##(?!#)\s*(.*?)\s*$")
_BULLET = re.compile(r"^[-*+]\s+(.*?)\s*$")
_COMMENT = re.compile(r"\s*<!--(.*?)-->\s*$")
_PIN_MARK = re.compile(r"^(?:📌\ufe0f?|\[pinned\])\s*", re.IGNORECASE)
_STRUCK = re.compile(r"^~~(.+?)~~(.*)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HISTORY_NAMES = frozenset({"superseded", "history"})
_TRAILING_PUNCT = re.compile(r"[\s.,;:!?…]+$")


def normalise(text: str) -> str:
    """Lower-case, collapse whitespace, drop markers and trailing punctuation: the text an id is made from."""
    body = _COMMENT.sub("", text.strip())
    body = _PIN_MARK.sub("", body.strip())
    struck = _STRUCK.match(body)
    if struck:
        body = struck.group(1) + struck.group(2)
    body = " ".join(body.lower().split())
    return _TRAILING_PUNCT.sub("", body)


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


def header_part(text: str) -> str:
    """Make text usable as one part of a section header (no newlines, no ' · ' separator)."""
    return " ".join(text.replace("·", "-").split())


@dataclass(frozen=True)
class Line:
    """One line of the file: a lesson (with its original text while nobody changed it) or a line kept verbatim."""

    raw: str | None = None
    lesson: Lesson | None = None


@dataclass(frozen=True)
class Section:
    """A run of lines under one `## ...` header; the first section of a file (the preamble) has no header."""

    header: str | None
    lines: tuple[Line, ...] = ()
    day: date | None = None
    kind: str = "note"
    link: str | None = None
    history: bool = False

    def lessons(self) -> Iterator[Lesson]:
        return (line.lesson for line in self.lines if line.lesson is not None)


@dataclass(frozen=True)
class MemoryDocument:
    """A parsed memory file. Editing methods return a new document; `render()` gives the file's text."""

    sections: tuple[Section, ...]
    trailing_newline: bool = True

    # --- reading ------------------------------------------------------------------------------------------------

    def all_lessons(self) -> list[Lesson]:
        return [lesson for section in self.sections for lesson in section.lessons()]

    def live(self) -> list[Lesson]:
        return [lesson for lesson in self.all_lessons() if not lesson.stale]

    def stale(self) -> list[Lesson]:
        return [lesson for lesson in self.all_lessons() if lesson.stale]

    def find(self, lesson_id_: str) -> Lesson | None:
        return next((lesson for lesson in self.all_lessons() if lesson.id == lesson_id_), None)

    def line_count(self, *, include_history: bool = True) -> int:
        sections = self.sections if include_history else [s for s in self.sections if not s.history]
        return sum(len(s.lines) + (s.header is not None) for s in sections)

    # --- editing ------------------------------------------------------------------------------------------------

    def map_lessons(self, change: Callable[[Lesson], Lesson | None]) -> MemoryDocument:
        """Apply `change` to every lesson: the same object keeps its line, a new one is re-rendered, None drops it."""
        sections = []
        for section in self.sections:
            lines: list[Line] = []
            for line in section.lines:
                if line.lesson is None:
                    lines.append(line)
                    continue
                changed = change(line.lesson)
                if changed is line.lesson:
                    lines.append(line)
                elif changed is not None:
                    lines.append(Line(lesson=changed))
            sections.append(replace(section, lines=tuple(lines)))
        return replace(self, sections=tuple(sections))

    def append(self, lessons: Iterable[Lesson], day: date, kind: str, link: str | None) -> MemoryDocument:
        """Add lessons under `## <day> · <kind> · <link>`, reusing that section when it is the newest one."""
        new_lines = tuple(Line(lesson=lesson) for lesson in lessons)
        if not new_lines:
            return self
        sections = list(self.sections)
        at = next((i for i, s in enumerate(sections) if s.history), len(sections))
        newest = sections[at - 1] if at > 0 else None
        if newest is not None and newest.header is not None and (newest.day, newest.kind, newest.link) == (
            day,
            kind,
            link,
        ):
            body, blanks = _split_trailing_blanks(newest.lines)
            sections[at - 1] = replace(newest, lines=body + new_lines + blanks)
            return replace(self, sections=tuple(sections))
        header = " · ".join(part for part in (day.isoformat(), kind, link) if part)
        _ensure_blank_before(sections, at)
        blank = (Line(raw=""),) if at < len(sections) else ()
        section = Section(header=f"## {header}", lines=new_lines + blank, day=day, kind=kind, link=link)
        sections.insert(at, section)
        return replace(self, sections=tuple(sections))

    def supersede(self, old_id: str, new_id: str, day: date) -> MemoryDocument:
        """Move every live lesson with `old_id` into the history section, marked as replaced by `new_id`."""
        moved = [lesson for lesson in self.live() if lesson.id == old_id]
        if not moved:
            return self
        kept = self.map_lessons(lambda lesson: None if lesson.id == old_id and not lesson.stale else lesson)
        stale = [
            replace(lesson, superseded_by=new_id, recorded_at=datetime(day.year, day.month, day.day, tzinfo=UTC))
            for lesson in moved
        ]
        return kept.add_history(stale)

    def add_history(self, lessons: Iterable[Lesson]) -> MemoryDocument:
        new_lines = tuple(Line(lesson=lesson) for lesson in lessons)
        if not new_lines:
            return self
        sections = list(self.sections)
        at = next((i for i, s in enumerate(sections) if s.history), None)
        if at is None:
            _ensure_blank_before(sections, len(sections))
            sections.append(Section(header=f"## {HISTORY_TITLE}", lines=new_lines, history=True))
        else:
            body, blanks = _split_trailing_blanks(sections[at].lines)
            sections[at] = replace(sections[at], lines=body + new_lines + blanks)
        return replace(self, sections=tuple(sections))

    # --- writing ------------------------------------------------------------------------------------------------

    def render(self) -> str:
        """The file's text; untouched lines come back exactly as they were read."""
        out: list[str] = []
        for section in self.sections:
            if section.header is not None:
                out.append(section.header)
            out.extend(line.raw if line.raw is not None else render_lesson(line.lesson) for line in section.lines)
        text = "\n".join(out)
        return text + "\n" if self.trailing_newline and out else text


def new_document(title: str) -> MemoryDocument:
    """An empty memory file with a title line."""
    return MemoryDocument(sections=(Section(header=None, lines=(Line(raw=f"# {title}"), Line(raw=""))),))


def render_lesson(lesson: Lesson | None) -> str:
    """One bullet line for a lesson, with metadata in a trailing HTML comment only when it is not the default."""
    if lesson is None:
        return ""
    meta: list[str] = []
    if lesson.stale:
        meta.append(f"superseded-by:{lesson.superseded_by}")
        meta.append(f"on:{lesson.recorded_at.date().isoformat()}")
    if lesson.seen != 1:
        meta.append(f"seen:{lesson.seen}")
    if lesson.injected:
        meta.append(f"injected:{lesson.injected}")
    body = f"~~{lesson.text}~~" if lesson.stale else lesson.text
    pin = f"{PIN} " if lesson.pinned else ""
    comment = f" <!-- {' '.join(meta)} -->" if meta else ""
    return f"- {pin}{body}{comment}"


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
        header = _HEADER.match(raw)
        if header:
            sections.append(replace(current, lines=tuple(lines)))
            current, lines = _section(raw, header.group(1)), []
            continue
        lesson = _lesson(raw, current)
        lines.append(Line(raw=raw, lesson=lesson))
    sections.append(replace(current, lines=tuple(lines)))
    return MemoryDocument(sections=tuple(sections), trailing_newline=trailing or not text)


def _section(raw: str, body: str) -> Section:
    parts = [part.strip() for part in re.split(r"\s*·\s*", body)]
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


def _lesson(raw: str, section: Section) -> Lesson | None:
    bullet = _BULLET.match(raw.rstrip("\r"))
    if not bullet:
        return None
    body = bullet.group(1)
    meta: dict[str, str] = {}
    comment = _COMMENT.search(body)
    if comment:
        body = body[: comment.start()]
        for item in comment.group(1).split():
            key, _, value = item.partition(":")
            meta[key.lower()] = value
    pinned = False
    while mark := _PIN_MARK.match(body):
        pinned, body = True, body[mark.end() :]
    superseded_by = meta.get("superseded-by") or None
    struck = _STRUCK.match(body.strip())
    if struck:
        body = struck.group(1) + struck.group(2)
        superseded_by = superseded_by or "manual"  # a person crossed it out by hand
    if section.history and superseded_by is None:
        superseded_by = "manual"
    text = body.strip()
    if not text:
        return None
    when = _day(meta.get("on")) if superseded_by and meta.get("on") else section.day
    recorded = datetime(when.year, when.month, when.day, tzinfo=UTC) if when else UNDATED
    return Lesson(
        id=lesson_id(text),
        text=text,
        recorded_at=recorded,
        kind=section.kind,
        link=section.link,
        pinned=pinned,
        seen=_count(meta.get("seen"), 1),
        injected=_count(meta.get("injected"), 0),
        superseded_by=superseded_by,
    )


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def _count(value: str | None, default: int) -> int:
    return int(value) if value and value.isdigit() and len(value) < 10 else default


def _split_trailing_blanks(lines: tuple[Line, ...]) -> tuple[tuple[Line, ...], tuple[Line, ...]]:
    end = len(lines)
    while end > 0 and lines[end - 1].lesson is None and not (lines[end - 1].raw or "").strip():
        end -= 1
    return lines[:end], lines[end:]


def _ensure_blank_before(sections: list[Section], at: int) -> None:
    """Make the section before index `at` end with a blank line, so a new header stands apart."""
    if at == 0:
        return
    before = sections[at - 1]
    last = before.lines[-1] if before.lines else None
    if last is not None and last.lesson is None and not (last.raw or "").strip():
        return
    if before.header is None and not before.lines:
        return
    sections[at - 1] = replace(before, lines=(*before.lines, Line(raw="")))
