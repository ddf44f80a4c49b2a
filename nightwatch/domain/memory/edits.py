"""A hand edit made whole: lines a person appended at the end of a memory file are live lessons.

A memory file ends with its `## Superseded` section once anything was superseded, so a lesson a person types at
the end of the file (`nightwatch memory edit`) lands under that header. Night Watch writes every history entry
struck through (`~~…~~`) with its `superseded-by` mark, so a new, plain bullet after the last of them was not
meant as history: it is moved into a dated section of its own (`## <day> · edit`). A bullet put among the history
entries, above the last one that was there before, stays history, as the header says.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from nightwatch.domain.memory.document import Line
from nightwatch.domain.memory.format import parse

EDIT_KIND = "edit"


def settle_appended(before: str, after: str, day: date) -> str:
    """`after` with the new plain lessons that trail its history section moved into a live section dated `day`."""
    doc = parse(after)
    if not doc.sections or not doc.sections[-1].history:
        return after
    history = doc.sections[-1]
    known = {lesson.id for lesson in parse(before).all_lessons()}
    lines = list(history.lines)
    end = len(lines)
    while end and lines[end - 1].lesson is None and not (lines[end - 1].raw or "").strip():
        end -= 1
    start = end
    while start and _appended(lines[start - 1], known):
        start -= 1
    if start == end:
        return after
    fresh = [replace(line.lesson, superseded_by=None) for line in lines[start:end] if line.lesson is not None]
    kept = replace(history, lines=tuple(lines[:start] + lines[end:]))
    return replace(doc, sections=(*doc.sections[:-1], kept)).append(fresh, day, EDIT_KIND, None).render()


def _appended(line: Line, known: set[str]) -> bool:
    """Whether the line is a lesson a person added plainly: new, neither struck through nor marked superseded."""
    raw = line.raw or ""
    return line.lesson is not None and line.lesson.id not in known and "~~" not in raw and "superseded-by:" not in raw
