"""A memory file as a document: sections of lines, each a lesson or a line kept verbatim; its rendering, and the
lines in it Night Watch could not read.

Editing methods return a new document. A lesson nobody changed keeps its original line, so a rewrite touches only
the lines it means to; `format.parse` builds documents from text.

`unread_lines` finds the kept lines worth telling a person about, so that they are told instead of losing them.
Read without being lessons: blank lines, the title and other headings, section headers, whole-line comments,
horizontal rules, all of the history section, and prose outside dated sections (a person's own notes). Not read: any
other line in a dated section (prose, a bullet with no words, a lesson whose metadata comment is malformed, a `> `
overview line with no lesson right above it, or with no words or a comment in it), and a bullet anywhere else that
could not be read as a lesson.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from nightwatch.domain.memory.lesson_text import bullet_text, render_lesson
from nightwatch.domain.memory.models import UnreadLine
from nightwatch.domain.models import Lesson

HISTORY_TITLE = "Superseded"


@dataclass(frozen=True)
class Line:
    """One line of the file: a lesson (with its original text while nobody changed it: the bullet and its overview
    lines, joined by newlines) or a line kept verbatim."""

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

    def current(self, lesson_id: str) -> Lesson | None:
        """The live lesson that holds what `lesson_id` said: itself, or the end of its chain of successors."""
        by_id = {lesson.id: lesson for lesson in self.all_lessons()}
        lesson, seen = by_id.get(lesson_id), set[str]()
        while lesson is not None and lesson.superseded_by is not None and lesson.id not in seen:
            seen.add(lesson.id)
            lesson = by_id.get(lesson.superseded_by)
        return lesson if lesson is not None and not lesson.stale else None

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
        if (
            newest is not None
            and newest.header is not None
            and (newest.day, newest.kind, newest.link)
            == (
                day,
                kind,
                link,
            )
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


_WHOLE_COMMENT = re.compile(r"<!--.*-->")
_RULE = re.compile(r"([-*_])(?:[ \t]*\1){2,}")  # a markdown horizontal rule: ---, ***, _ _ _


def unread_lines(doc: MemoryDocument) -> list[UnreadLine]:
    """The lines of `doc` that are neither lessons nor structure, numbered as in the text `doc.render()` gives."""
    found: list[UnreadLine] = []
    number = 0
    for section in doc.sections:
        number += section.header is not None
        for line in section.lines:
            number += 1
            raw = line.raw
            if line.lesson is not None:  # a lesson with an overview spans several lines
                number += raw.count("\n") if raw is not None else bool(line.lesson.overview)
            elif raw is not None and not section.history and _unread(raw, section.day):
                found.append(UnreadLine(number, raw))
    return found


def unread_summary(lines: Sequence[UnreadLine], width: int = 60) -> str:
    """One line for a person: '2 lines not understood: line 14 "…", line 20 "…"' ('' when there are none)."""
    if not lines:
        return ""
    shown = ", ".join(f'line {line.number} "{_clip(line.text.strip(), width)}"' for line in lines)
    return f"{len(lines)} line{'' if len(lines) == 1 else 's'} not understood: {shown}"


def _unread(raw: str, day: date | None) -> bool:
    line = raw.strip()
    if not line or line.startswith("#") or _WHOLE_COMMENT.fullmatch(line) or _RULE.fullmatch(line):
        return False
    return day is not None or bullet_text(line) is not None


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
