"""Recording a lesson into a memory document: create it, merge it into a restatement, or supersede what it updates.

Runs inside the store's lock (pure and fast); a model's advice, when there is any, was fetched before the lock, and so
were the vectors of the candidates and of the lessons they are compared with (a `VectorTable`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from nightwatch.domain.errors import LLMError
from nightwatch.domain.memory.curation import (
    Curation,
    CurationPrompt,
    Neighbour,
    RelatedLesson,
    decide,
    neighbours,
    parse_curation,
)
from nightwatch.domain.memory.format import MemoryDocument, lesson_id
from nightwatch.domain.memory.junk import copies_several
from nightwatch.domain.memory.reflection import ask
from nightwatch.domain.models import Lesson, Persona, Purpose
from nightwatch.domain.ports import LLM
from nightwatch.domain.vectors import VectorTable, vector_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recorded:
    """What happened to one candidate: `lesson` is the new, merged or (for skips) None lesson."""

    action: str
    lesson: Lesson | None
    reason: str = ""

    @property
    def created(self) -> bool:
        return self.action in ("create", "supersede")


@dataclass(frozen=True)
class Entry:
    """Where new lessons go (the dated section header's parts) and who wrote them (None: the persona itself)."""

    day: date
    kind: str
    link: str | None
    author: str | None = None


def near(candidate: str, live: Sequence[Lesson], table: VectorTable | None) -> list[Neighbour]:
    """The candidate's nearest lessons, by meaning where the table holds both vectors."""
    if table is None or vector_key(candidate) not in table:
        return neighbours(candidate, None, live, None)
    probe = table.matrix[table.rows[vector_key(candidate)]]
    return neighbours(candidate, probe, live, table.aligned([vector_key(lesson.text) for lesson in live]))


def choose(
    doc: MemoryDocument,
    candidate: str,
    hint: Curation | None,
    table: VectorTable | None = None,
    *,
    allow_skip: bool = True,
) -> Curation:
    """Restatements always merge; otherwise a model's valid advice wins over the deterministic rule."""
    live = doc.live()
    if copies_several(candidate, live):
        return Curation("skip", None)
    rule = decide(candidate, live, near(candidate, live, table))
    if rule.action == "merge" or hint is None:
        return rule
    live_ids = {lesson.id for lesson in live}
    if hint.action == "skip" and not allow_skip:
        return rule
    if hint.action in ("merge", "supersede") and hint.target not in live_ids:
        return rule  # the lesson the model named went away meanwhile
    if hint.action == "supersede" and hint.target == lesson_id(candidate):
        return rule
    return hint


def record(doc: MemoryDocument, candidate: str, decision: Curation, entry: Entry) -> tuple[MemoryDocument, Recorded]:
    """Apply one decision to the document."""
    if decision.action == "skip":
        return doc, Recorded("skip", None, "it copies lessons already remembered or is not worth keeping")
    if decision.action == "merge" and decision.target is not None:
        return _merge(doc, decision.target)
    lesson = Lesson(
        id=lesson_id(candidate),
        text=candidate,
        recorded_at=datetime(entry.day.year, entry.day.month, entry.day.day, tzinfo=UTC),
        kind=entry.kind,
        link=entry.link,
        author=entry.author,
    )
    doc = doc.append([lesson], entry.day, entry.kind, entry.link)
    if decision.action == "supersede" and decision.target is not None:
        doc = doc.supersede(decision.target, lesson.id, entry.day)
        return doc, Recorded("supersede", lesson)
    return doc, Recorded("create", lesson)


def record_all(
    doc: MemoryDocument,
    candidates: Sequence[str],
    hints: dict[str, Curation],
    entry: Entry,
    table: VectorTable | None = None,
    *,
    allow_skip: bool = True,
) -> tuple[MemoryDocument, list[Recorded]]:
    """Record candidates one after another, each seeing the ones before it."""
    outcomes: list[Recorded] = []
    for candidate in candidates:
        decision = choose(doc, candidate, hints.get(candidate), table, allow_skip=allow_skip)
        doc, outcome = record(doc, candidate, decision, entry)
        outcomes.append(outcome)
    return doc, outcomes


def _merge(doc: MemoryDocument, target: str) -> tuple[MemoryDocument, Recorded]:
    merged: list[Lesson] = []

    def bump(lesson: Lesson) -> Lesson:
        if lesson.id != target or lesson.stale:
            return lesson
        bumped = replace(lesson, seen=lesson.seen + 1)
        merged.append(bumped)
        return bumped

    doc = doc.map_lessons(bump)
    return doc, Recorded("merge", merged[0] if merged else None)


def advise(
    llm: LLM,
    persona: Persona,
    project: str,
    texts: Sequence[str],
    live: Sequence[Lesson],
    table: VectorTable | None = None,
) -> dict[str, Curation]:
    """Ask the model how each candidate relates to its nearest lessons, where the rule alone is not certain.

    A failed or malformed answer gives no advice for that candidate, so the deterministic rule decides.
    """
    advice: dict[str, Curation] = {}
    for text in texts:
        found = near(text, live, table)
        close = [neighbour.lesson for neighbour in found]
        if not close or decide(text, live, found).action == "merge":
            continue
        prompt = CurationPrompt(
            persona_name=persona.name,
            role=persona.role,
            project=project,
            candidate=text,
            related=tuple(RelatedLesson(lesson.id, lesson.text) for lesson in close),
        )
        try:
            answer = ask(llm, Purpose.CURATION, persona, prompt.render(), topic=text, max_tokens=100)
        except LLMError as err:
            log.warning("Curation advice for %s failed; the rule decides instead: %s", persona.name, err)
            continue
        decision = parse_curation(answer, (lesson.id for lesson in close))
        if decision is None:
            log.warning("Curation advice for %s was malformed; the rule decides instead: %r", persona.name, answer)
        else:
            advice[text] = decision
    return advice
