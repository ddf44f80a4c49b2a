"""Edits of one memory that touch lessons already there: forgetting one, counting injections.

Each runs inside the store's update, on the text it finds there, so a concurrent writer loses nothing; a lesson
nobody changed keeps its lines (overview and all), and one that changed is written back with its category and
overview.
"""

from __future__ import annotations

from dataclasses import replace

from nightwatch.domain.errors import NotFoundError
from nightwatch.domain.memory.cache import DocumentCache
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.models import Lesson, Persona


def forget(store: MemoryStore, cache: DocumentCache, persona: Persona, project: str, wanted: str) -> Lesson:
    """Remove the lesson with the id `wanted` (live or superseded); NotFoundError when there is none."""
    removed: list[Lesson] = []

    def drop(lesson: Lesson) -> Lesson | None:
        if lesson.id != wanted:
            return lesson
        removed.append(lesson)
        return None

    def change(text: str) -> str:
        removed.clear()
        kept = cache.document(persona.slug, project, text).map_lessons(drop)
        return kept.render() if removed else text

    store.update(persona.slug, project, change)
    if not removed:
        raise NotFoundError(
            f"{persona.name} has no lesson with id {wanted!r} in its memory of {project}; "
            "list its lessons to see their ids."
        )
    return removed[0]


def note_injected(store: MemoryStore, cache: DocumentCache, persona: Persona, project: str, wanted: set[str]) -> None:
    """Count one more injection for each live lesson whose id is in `wanted` (a ranking signal)."""

    def bump(lesson: Lesson) -> Lesson:
        return replace(lesson, injected=lesson.injected + 1) if lesson.id in wanted and not lesson.stale else lesson

    def change(text: str) -> str:
        return cache.document(persona.slug, project, text).map_lessons(bump).render() if text else text

    if wanted:
        store.update(persona.slug, project, change)
