"""Compacting a memory file: by the rules, or from a model's condensed list of lessons validated before anything is
written.

Without a model (the offline one) the rules compact (retention.py): restatements merged, then the pinned lessons,
those recorded in the current deliberation and the newest kept up to the target, and a tenth more for the most
used. With a model, lessons it kept word for word stay in their dated sections with their counts, category and
overview; new condensed lessons go under `## <date> · compaction`, with the category the model gave each (no
overview); pinned lessons are always kept; and a result that drops a recent, pinned or just-recorded lesson is
refused: the rules compact instead. Either way the history section keeps its newest entries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from nightwatch.domain.errors import LLMError, NotFoundError, StorageError
from nightwatch.domain.llm import LLM, Purpose
from nightwatch.domain.memory.answers import Candidate, ask, parse_candidates
from nightwatch.domain.memory.cache import DocumentCache
from nightwatch.domain.memory.format import MemoryDocument, lesson_id, new_document, parse
from nightwatch.domain.memory.models import CompactionResult, flavour_for
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.reflection import CompactionItem, CompactionPrompt
from nightwatch.domain.memory.retention import apply, recent, refusal, retain
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.vectors import VectorTable

log = logging.getLogger(__name__)

Vectors = Callable[[str, str, Sequence[str]], VectorTable | None]  # (persona slug, project, texts) -> their vectors


@dataclass(frozen=True)
class Compacted:
    """The outcome of validating a model's answer: the new document, or None and the reason it was refused."""

    document: MemoryDocument | None
    message: str
    kept: int = 0


class Compactor:
    """Condenses one memory file (by the rules, or with the model and checked), keeping the previous version so it
    can be rolled back."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        llm: LLM,
        cache: DocumentCache,
        target: int,
        max_lesson_chars: int,
        use_model: bool = True,
        vectors: Vectors | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self.cache = cache
        self.target = target
        self.max_lesson_chars = max_lesson_chars
        self.use_model = use_model
        self.vectors = vectors

    def compact(
        self, persona: Persona, project: str, day: date, protect: Collection[str] = frozenset()
    ) -> CompactionResult:
        """Condense the memory to the target; the file changes only if the result passes validation.

        `protect` names lessons that must stay (those recorded in the current deliberation).
        """
        text = self.store.read(persona.slug, project)
        doc = self.cache.document(persona.slug, project, text)
        live = doc.live()
        before = _lines(text)
        if len(live) <= self.target:
            message = f"{len(live)} lessons is within the target of {self.target}; nothing to compact."
            return CompactionResult(before, before, False, message)
        answer: list[Candidate] | None = None
        if self.use_model:
            try:
                reply = self._ask(persona, project, live)
            except LLMError as err:
                log.warning("Compaction of %s's memory of %s failed: %s", persona.name, project, err)
                return CompactionResult(before, before, False, f"Memory left as it was: the model failed ({err}).")
            answer = parse_candidates(reply, max_chars=self.max_lesson_chars)
        result = self._build(persona, project, doc, answer, day, set(protect))
        if result.document is None:
            log.warning("Compaction of %s's memory of %s refused: %s", persona.name, project, result.message)
            return CompactionResult(before, before, False, f"Memory left as it was: {result.message}.")
        if self.store.replace_keeping_previous(persona.slug, project, text, result.document.render()):
            return _done(before, result)
        # The file changed while the model worked: rebuild once on the new text, keeping what others wrote.
        current = self.store.read(persona.slug, project)
        now_doc = self.cache.document(persona.slug, project, current)
        old, new = {lesson.id for lesson in live}, {lesson.id for lesson in now_doc.live()}
        retry = self._build(persona, project, now_doc, answer, day, set(protect) | (new - old), exclude=old - new)
        if retry.document is not None and self.store.replace_keeping_previous(
            persona.slug, project, current, retry.document.render()
        ):
            return _done(before, retry)
        return CompactionResult(before, before, False, "Memory left as it was: it kept changing; run compact again.")

    def _build(
        self,
        persona: Persona,
        project: str,
        doc: MemoryDocument,
        answer: list[Candidate] | None,
        day: date,
        protect: set[str],
        exclude: set[str] | None = None,
    ) -> Compacted:
        """The model's compaction when there is one and it keeps what must stay; else the rules' compaction."""
        if answer is not None:
            result = compacted(doc, answer, target=self.target, day=day, protect=protect, exclude=exclude or set())
            if result.document is None:
                return result
            live = doc.live()
            must = {lesson.id for lesson in live if lesson.pinned} | protect | recent(live, self.target, day)
            reason = refusal(live, result.document.live(), must)
            if reason is None:
                return result
            log.warning("Compaction of %s's memory of %s: %s; the rules compact instead", persona.name, project, reason)
        texts = [lesson.text for lesson in doc.live()]
        table = self.vectors(persona.slug, project, texts) if self.vectors is not None else None
        return by_rules(doc, target=self.target, protect=protect, table=table)

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
    pinned = {lesson.id for lesson in live if lesson.pinned} | (set(protect) & known)
    fresh = [item for item in answer if lesson_id(item.text) not in known and lesson_id(item.text) not in exclude]
    kept = [lesson_id(item.text) for item in answer if lesson_id(item.text) in known]
    readded = pinned - set(kept)
    overflow = len(kept) + len(fresh) + len(readded) - target
    # Re-added pinned (and protected) lessons make room by dropping the model's last new lessons, then its last kept.
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
    note = f"; re-added {len(readded)} pinned or just-recorded lesson(s) the model left out" if readded else ""
    return Compacted(result, f"compacted {len(live)} lessons to {count}{note}", kept=count)


def by_rules(
    doc: MemoryDocument, *, target: int, protect: Collection[str] = (), table: VectorTable | None = None
) -> Compacted:
    """The rules' compaction (see retention.py): restatements merged, the lessons that matter kept, in place."""
    live = doc.live()
    retention = retain(live, target, protect, table)
    result = _trim_history(_drop_empty_sections(apply(doc, retention)), target)
    count = len(result.live())
    merged = f", {len(retention.merged)} restatement(s) merged" if retention.merged else ""
    message = f"compacted {len(live)} lessons to {count} (pinned, just recorded, newest and most used kept{merged})"
    return Compacted(result, message, kept=count)


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


def clear(store: MemoryStore, persona: Persona, project: str) -> int:
    """Empty a memory down to its title, keeping what it held as the previous version (as a compaction does, so
    `rollback` brings it back); returns how many lessons it held. NotFoundError when there is nothing to clear.
    """
    for _ in range(3):  # a write between the read and the replace: read again
        text = store.read(persona.slug, project)
        held = len(parse(text).all_lessons()) if text else 0
        if not held:
            raise NotFoundError(f"{persona.name} has no memory of {project} to clear.")
        if store.replace_keeping_previous(
            persona.slug, project, text, new_document(f"{persona.name} · memory for {project}").render()
        ):
            return held
    raise StorageError(f"{persona.name}'s memory of {project} kept changing; run clear again.")
