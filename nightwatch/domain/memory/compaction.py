"""Rebuilding a memory file from a model's condensed list of lessons, validated before anything is written.

Lessons the model kept word for word stay in their dated sections with their counts, category and overview; new
condensed lessons go under `## <date> · compaction`, with the category the model gave each (no overview); pinned
lessons are always kept; the history section keeps its newest entries.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from nightwatch.domain.errors import LLMError, NotFoundError, StorageError
from nightwatch.domain.llm import LLM, Purpose
from nightwatch.domain.memory.answers import Candidate, ask, parse_candidates
from nightwatch.domain.memory.cache import DocumentCache
from nightwatch.domain.memory.format import MemoryDocument, lesson_id, new_document
from nightwatch.domain.memory.models import CompactionResult, flavour_for
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.reflection import CompactionItem, CompactionPrompt
from nightwatch.domain.models import Lesson, Persona

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Compacted:
    """The outcome of validating a model's answer: the new document, or None and the reason it was refused."""

    document: MemoryDocument | None
    message: str
    kept: int = 0


class Compactor:
    """Condenses one memory file with the model, keeping the previous version so it can be rolled back."""

    def __init__(
        self, *, store: MemoryStore, llm: LLM, cache: DocumentCache, target: int, max_lesson_chars: int
    ) -> None:
        self.store = store
        self.llm = llm
        self.cache = cache
        self.target = target
        self.max_lesson_chars = max_lesson_chars

    def compact(self, persona: Persona, project: str, day: date) -> CompactionResult:
        """Ask the persona to condense its memory; the file changes only if the answer passes validation."""
        text = self.store.read(persona.slug, project)
        doc = self.cache.document(persona.slug, project, text)
        live = doc.live()
        before = _lines(text)
        if len(live) <= self.target:
            message = f"{len(live)} lessons is within the target of {self.target}; nothing to compact."
            return CompactionResult(before, before, False, message)
        try:
            answer = self._ask(persona, project, live)
        except LLMError as err:
            log.warning("Compaction of %s's memory of %s failed: %s", persona.name, project, err)
            return CompactionResult(before, before, False, f"Memory left as it was: the model failed ({err}).")
        lessons = parse_candidates(answer, max_chars=self.max_lesson_chars)
        result = compacted(doc, lessons, target=self.target, day=day)
        if result.document is None:
            log.warning("Compaction of %s's memory of %s refused: %s", persona.name, project, result.message)
            return CompactionResult(before, before, False, f"Memory left as it was: {result.message}.")
        if self.store.replace_keeping_previous(persona.slug, project, text, result.document.render()):
            return _done(before, result)
        # The file changed while the model worked: rebuild once on the new text, keeping what others wrote.
        current = self.store.read(persona.slug, project)
        now_doc = self.cache.document(persona.slug, project, current)
        old, new = {lesson.id for lesson in live}, {lesson.id for lesson in now_doc.live()}
        retry = compacted(now_doc, lessons, target=self.target, day=day, protect=new - old, exclude=old - new)
        if retry.document is not None and self.store.replace_keeping_previous(
            persona.slug, project, current, retry.document.render()
        ):
            return _done(before, retry)
        return CompactionResult(before, before, False, "Memory left as it was: it kept changing; run compact again.")

    def _ask(self, persona: Persona, project: str, live: list[Lesson]) -> str:
        prompt = CompactionPrompt(
            persona_name=persona.name,
            role=persona.role,
            flavour=flavour_for(persona.role).value,
            project=project,
            target=self.target,
            lessons=tuple(CompactionItem(lesson.text, lesson.pinned, lesson.category or "") for lesson in live),
        )
        budget = min(8000, 200 + 120 * self.target)
        return ask(self.llm, Purpose.COMPACTION, persona, prompt.render(), topic=project, max_tokens=budget)


def compacted(
    doc: MemoryDocument,
    answer: list[Candidate],
    *,
    target: int,
    day: date,
    protect: frozenset[str] | set[str] = frozenset(),
    exclude: frozenset[str] | set[str] = frozenset(),
) -> Compacted:
    """Build the compacted document from the model's lessons; refuse (document None) when the answer is unusable.

    `protect` names lessons written after the model read the file (always kept); `exclude` names lessons removed
    meanwhile (never brought back).
    """
    if not answer:
        return Compacted(None, "the model gave no lessons in the expected '- ' form")
    if len(answer) > target:
        return Compacted(None, f"the model gave {len(answer)} lessons, more than the target of {target}")
    live = doc.live()
    known = {lesson.id for lesson in live}
    pinned = {lesson.id for lesson in live if lesson.pinned}
    fresh = [item for item in answer if lesson_id(item.text) not in known and lesson_id(item.text) not in exclude]
    kept = [lesson_id(item.text) for item in answer if lesson_id(item.text) in known]
    readded = pinned - set(kept)
    overflow = len(kept) + len(fresh) + len(readded) - target
    # Re-added pinned lessons make room by dropping the model's last new lessons, then its last kept ones.
    while overflow > 0 and fresh:
        fresh.pop()
        overflow -= 1
    for lid in reversed([lid for lid in kept if lid not in pinned]):
        if overflow <= 0:
            break
        kept.remove(lid)
        overflow -= 1
    keep = set(kept) | pinned | set(protect)

    def change(lesson: Lesson) -> Lesson | None:
        return lesson if lesson.stale or lesson.id in keep else None

    result = _drop_empty_sections(doc.map_lessons(change))
    result = _trim_history(result, target)
    condensed = (
        Lesson(
            id=lesson_id(item.text),
            text=item.text,
            recorded_at=_midnight(day),
            kind="compaction",
            category=item.category,
            overview=item.overview,
        )
        for item in fresh
    )
    result = result.append(condensed, day, "compaction", None)
    count = len(result.live())
    note = f"; re-added {len(readded)} pinned lesson(s) the model left out" if readded else ""
    return Compacted(result, f"compacted {len(live)} lessons to {count}{note}", kept=count)


def _drop_empty_sections(doc: MemoryDocument) -> MemoryDocument:
    """Remove dated sections left with no lesson and no line a person wrote; the preamble and hand-titled ones stay."""
    sections = [
        section
        for section in doc.sections
        if section.history
        or section.day is None
        or any(line.lesson is not None or (line.raw or "").strip() for line in section.lines)
    ]
    return replace(doc, sections=tuple(sections))


def _trim_history(doc: MemoryDocument, keep: int) -> MemoryDocument:
    """Keep the newest `keep` superseded lessons, so history cannot grow without bound."""
    history = [lesson for section in doc.sections if section.history for lesson in section.lessons()]
    if len(history) <= keep:
        return doc
    dropped = {id(lesson) for lesson in history[: len(history) - keep]}
    sections = tuple(
        replace(section, lines=tuple(line for line in section.lines if id(line.lesson) not in dropped))
        if section.history
        else section
        for section in doc.sections
    )
    return replace(doc, sections=sections)


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _done(before: int, result: Compacted) -> CompactionResult:
    after = _lines(result.document.render()) if result.document is not None else before
    return CompactionResult(before, after, True, f"{result.message[:1].upper()}{result.message[1:]}.")


def _lines(text: str) -> int:
    return len(text.splitlines())


def clear(store: MemoryStore, cache: DocumentCache, persona: Persona, project: str) -> int:
    """Empty a memory down to its title, keeping what it held as the previous version (as a compaction does, so
    `rollback` brings it back); returns how many lessons it held. NotFoundError when there is nothing to clear.
    """
    for _ in range(3):  # a write between the read and the replace: read again
        text = store.read(persona.slug, project)
        held = len(cache.document(persona.slug, project, text).all_lessons()) if text else 0
        if not held:
            raise NotFoundError(f"{persona.name} has no memory of {project} to clear.")
        if store.replace_keeping_previous(
            persona.slug, project, text, new_document(f"{persona.name} · memory for {project}").render()
        ):
            return held
    raise StorageError(f"{persona.name}'s memory of {project} kept changing; run clear again.")
