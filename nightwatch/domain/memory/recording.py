"""Recording a lesson into a memory document: create it, merge it into a restatement, or supersede what it updates.

Runs inside the store's lock (pure and fast); a model's advice, when there is any, was fetched before the lock, and so
were the vectors of the candidates and of the lessons they are compared with (a `VectorTable`). A candidate's
category may fix the outcome whatever the advice (curation.by_category).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from nightwatch.domain.errors import LLMError
from nightwatch.domain.llm import LLM, Purpose
from nightwatch.domain.memory.answers import Candidate, ask, copies_several
from nightwatch.domain.memory.curation import (
    Action,
    Curation,
    CurationPrompt,
    Neighbour,
    RelatedLesson,
    Restates,
    advice_holds,
    by_category,
    decide,
    neighbours,
    updates,
)
from nightwatch.domain.memory.format import MemoryDocument, lesson_id
from nightwatch.domain.memory.models import Remembered
from nightwatch.domain.memory.ports import LessonOutcome, LessonTally
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.vectors import VectorTable, vector_key

log = logging.getLogger(__name__)

ACTIONS: frozenset[str] = frozenset({"create", "merge", "skip", "supersede"})  # what a model may answer


@dataclass(frozen=True)
class Recorded:
    """What happened to one candidate: `lesson` is the new, merged or (for skips) None lesson; `replaced` is the id
    of the lesson a supersede or an update moved to the history."""

    action: str
    lesson: Lesson | None
    reason: str = ""
    replaced: str | None = None


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


def fixed_by_category(candidate: Candidate, live: Sequence[Lesson], table: VectorTable | None) -> Curation | None:
    """The outcome the candidate's category fixes, which no advice changes; None where the meaning rule decides."""
    if candidate.category is None:
        return None
    same: list[Neighbour] = []
    if candidate.category in ("profile", "preferences"):
        same = near(candidate.text, [lesson for lesson in live if lesson.category == candidate.category], table)
    return by_category(candidate.text, candidate.category, live, same)


def choose(
    doc: MemoryDocument,
    candidate: Candidate,
    hint: Curation | None,
    table: VectorTable | None = None,
    *,
    allow_skip: bool = True,
    restates: Restates | None = None,
) -> Curation:
    """The category's rule where it applies; else the rules' merge (or `restates`'s) or supersession stands, and where
    they would create, a model's valid advice that the rules let stand (`curation.advice_holds`) wins."""
    live = doc.live()
    text = candidate.text
    if copies_several(text, live):
        return Curation("skip", None)
    fixed = fixed_by_category(candidate, live, table)
    if fixed is not None:
        return fixed
    close = near(text, live, table)
    rule = through_history(doc, text, table, close, decide(text, live, close, restates))
    if rule.action != "create" or hint is None or not _usable(hint, text, live, allow_skip=allow_skip):
        return rule  # what the rules found stands; a model may find what they missed
    if hint.action not in ("merge", "supersede"):
        return hint
    target = next((n for n in close if n.lesson.id == hint.target), None)
    return hint if target is not None and advice_holds(hint.action, target, text) else rule


def through_history(
    doc: MemoryDocument, text: str, table: VectorTable | None, close: Sequence[Neighbour], rule: Curation
) -> Curation:
    """A value changed twice: an update closer to a retired lesson than to what the rule would supersede (if anything)
    updates its chain's live end (`MemoryDocument.current`) when that end is among `close`, else nothing."""
    if table is None or rule.action not in ("create", "supersede"):
        return rule
    retired = [lesson for lesson in doc.stale() if vector_key(lesson.text) in table]
    found = near(text, retired, table)[:1] if retired else []
    cosine = found[0].similarity if found else None
    if cosine is None or not updates(found[0].lesson.text, cosine, text):
        return rule
    target = next((n.similarity or 0.0 for n in close if n.lesson.id == rule.target), 0.0)
    holder = doc.current(found[0].lesson.id)
    if holder is None or target >= cosine:
        return rule
    return Curation("supersede", holder.id) if holder.id in {n.lesson.id for n in close} else Curation("create")


def _usable(hint: Curation, text: str, live: Sequence[Lesson], *, allow_skip: bool) -> bool:
    """Whether a model's advice can be followed now."""
    if hint.action == "skip":
        return allow_skip
    if hint.action in ("merge", "supersede") and hint.target not in {lesson.id for lesson in live}:
        return False  # the lesson the model named went away meanwhile
    return not (hint.action == "supersede" and hint.target == lesson_id(text))


def record(
    doc: MemoryDocument, candidate: Candidate, decision: Curation, entry: Entry
) -> tuple[MemoryDocument, Recorded]:
    """Apply one decision to the document."""
    if decision.action == "skip":
        return doc, Recorded("skip", None, "it copies lessons already remembered or is not worth keeping")
    if decision.action == "merge" and decision.target is not None:
        return _merge(doc, decision.target, candidate, entry.day)
    updated = decision.action == "update"
    old = next((kept for kept in doc.live() if kept.id == decision.target), None) if updated else None
    lesson = Lesson(
        id=lesson_id(candidate.text),
        text=candidate.text,
        recorded_at=datetime(entry.day.year, entry.day.month, entry.day.day, tzinfo=UTC),
        kind=entry.kind,
        link=entry.link,
        author=entry.author,
        category=candidate.category,
        overview=candidate.overview,
    )
    if old is not None:  # the same entry in newer words: it keeps its pin and counts
        lesson = replace(lesson, pinned=old.pinned, seen=old.seen + 1, injected=old.injected)
    doc = doc.append([lesson], entry.day, entry.kind, entry.link)
    if decision.action in ("supersede", "update") and decision.target is not None:
        doc = doc.supersede(decision.target, lesson.id, entry.day)
        return doc, Recorded(decision.action, lesson, replaced=decision.target)
    return doc, Recorded("create", lesson)


def record_all(
    doc: MemoryDocument,
    candidates: Sequence[Candidate],
    hints: dict[str, Curation],
    entry: Entry,
    table: VectorTable | None = None,
    *,
    allow_skip: bool = True,
    restates: Restates | None = None,
) -> tuple[MemoryDocument, list[Recorded]]:
    """Record candidates one after another, each seeing the ones before it."""
    outcomes: list[Recorded] = []
    for candidate in candidates:
        decision = choose(doc, candidate, hints.get(candidate.text), table, allow_skip=allow_skip, restates=restates)
        doc, outcome = record(doc, candidate, decision, entry)
        outcomes.append(outcome)
    return doc, outcomes


def _merge(doc: MemoryDocument, target: str, candidate: Candidate, day: date) -> tuple[MemoryDocument, Recorded]:
    """Count the kept lesson as seen again, on `day`; it gains the candidate's category and overview if it had none."""
    merged: list[Lesson] = []

    def bump(lesson: Lesson) -> Lesson:
        if lesson.id != target or lesson.stale:
            return lesson
        bumped = replace(
            lesson,
            seen=lesson.seen + 1,
            last_seen=max(day, lesson.last_seen or day) if day > lesson.recorded_at.date() else lesson.last_seen,
            category=lesson.category or candidate.category,
            overview=lesson.overview or candidate.overview,
        )
        merged.append(bumped)
        return bumped

    doc = doc.map_lessons(bump)
    return doc, Recorded("merge", merged[0] if merged else None)


def advise(
    llm: LLM,
    persona: Persona,
    project: str,
    candidates: Sequence[Candidate],
    live: Sequence[Lesson],
    table: VectorTable | None = None,
) -> dict[str, Curation]:
    """Ask the model how each candidate relates to its nearest lessons, where the rules alone are not certain. A failed
    or malformed answer gives no advice for that candidate, so the deterministic rule decides."""
    advice: dict[str, Curation] = {}
    for candidate in candidates:
        text = candidate.text
        found = near(text, live, table)
        close = [neighbour.lesson for neighbour in found]
        if not close or fixed_by_category(candidate, live, table) or decide(text, live, found).action == "merge":
            continue
        prompt = CurationPrompt(
            persona_name=persona.name,
            role=persona.role,
            project=project,
            candidate=text,
            related=tuple(RelatedLesson(lesson.id, lesson.text, lesson.category or "") for lesson in close),
            category=candidate.category or "",
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


def remembered(outcome: Recorded, lesson: Lesson) -> Remembered:
    """What recording a lesson did, as a person is told: created, merged, or superseded (with what)."""
    if outcome.action == "merge":
        return Remembered(lesson, "merged")
    if outcome.replaced is not None:
        return Remembered(lesson, "superseded", outcome.replaced)
    return Remembered(lesson, "created")


def parse_curation(answer: str, allowed: Iterable[str]) -> Curation | None:
    """Read the model's JSON decision; None when it is malformed or names a lesson it was not shown."""
    match = re.search(r"\{.*\}", answer, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("action") not in ACTIONS:
        return None
    action: Action = data["action"]
    target = data.get("target")
    if action not in ("merge", "supersede"):
        return Curation(action)
    shown = isinstance(target, str) and target.strip().lower() in set(allowed)
    return Curation(action, str(target).strip().lower()) if shown else None


# Recorded.action -> the outcome an operator counts ("update", an entry in newer words, supersedes the old one)
OUTCOMES: dict[str, LessonOutcome] = {"create": "created", "merge": "merged", "supersede": "superseded"}
OUTCOMES |= {"update": "superseded", "skip": "refused"}


class Tally:
    """Counts what became of the lessons offered to memory in a LessonTally (or nowhere); never fails a write."""

    def __init__(self, counter: LessonTally | None) -> None:
        self._counter = counter

    def recorded(self, outcomes: Sequence[Recorded]) -> None:
        """Count each recorded candidate by what became of it."""
        for outcome, count in Counter(OUTCOMES[done.action] for done in outcomes if done.action in OUTCOMES).items():
            self._count(outcome, count)

    def refused(self, count: int) -> None:
        """Count candidates refused before recording (the junk guard)."""
        if count > 0:
            self._count("refused", count)

    def _count(self, outcome: LessonOutcome, count: int) -> None:
        if self._counter is None:
            return
        try:
            self._counter.lessons_counted(outcome, count)
        except Exception:  # a metric is never worth a lesson
            log.exception("could not count %d %s lesson(s)", count, outcome)
