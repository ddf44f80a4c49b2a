"""Merging a memory file a person brings back (`nightwatch memory import`) into the memory kept now, by lesson id.

Markdown stays a person's tool: memory can be exported as files, edited or moved, and imported again. Importing
never drops a lesson: a lesson only the kept memory has stays; a lesson only the file has is added under its own
dated section (or into the history when it is superseded); a lesson both have takes the file's marks (pin, seen
and injected counts, superseded, author, category, overview), since the file is what a person last looked at. Into
an empty memory the file goes in verbatim, so an export imported elsewhere is the same text, byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from nightwatch.domain.memory.document import Line, MemoryDocument, Section
from nightwatch.domain.memory.edits import settle_appended
from nightwatch.domain.memory.format import parse
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.personas import check_slug


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
    return (*marks, lesson.category, lesson.overview)


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


class MemoryTransfer:
    """Memory as whole documents: read one, import a file into one, or replace one that nobody changed meanwhile."""

    def __init__(self, *, store: MemoryStore, memory: MemoryService) -> None:
        self._store = store
        self._memory = memory

    def text(self, persona: Persona, project: str) -> str:
        """The document's text as stored ('' when there is none)."""
        return self._store.read(persona.slug, check_slug(project))

    def documents(self, persona: Persona) -> list[tuple[str, str]]:
        """Every (project, text) of the persona's memory that holds anything."""
        found = ((project, self._store.read(persona.slug, project)) for project in self._store.projects(persona.slug))
        return [(project, text) for project, text in found if text]

    def merge_in(self, persona: Persona, project: str, imported: str) -> Merged:
        """Merge a file's text into the persona's memory of `project` (see merge_imported), then embed new lessons."""
        project = check_slug(project)
        outcome: list[Merged] = []

        def change(current: str) -> str:
            outcome[:] = [merge_imported(current, imported)]  # a store may apply `change` again after a race
            return outcome[0].text

        self._store.update(persona.slug, project, change)
        if outcome[0].added:
            self._memory.backfill(persona.slug, project)
        return outcome[0]

    def replace(self, persona: Persona, project: str, expected: str, text: str) -> bool:
        """Write `text` if the document still holds `expected`; False (nothing written) when someone wrote meanwhile."""
        project = check_slug(project)
        text = settle_appended(expected, text, self._memory.clock.now().date())
        written: list[bool] = []

        def change(current: str) -> str:
            written[:] = [current == expected]
            return text if written[0] else current

        self._store.update(persona.slug, project, change)
        if written[0] and text != expected:
            self._memory.backfill(persona.slug, project)
        return written[0]
