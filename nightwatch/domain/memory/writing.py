"""Writing lessons into one memory: curation advice and vectors before the lock, recording under it, vectors after.

Before a memory's own lessons are written, what a storage fault kept for it is written first, oldest first; when
writing fails on storage, the lessons are kept for a retry and the caller hears so (see pending.py). A write the
store refuses because the persona was renamed or deleted meanwhile (MemoryMovedError) is not kept: it fails loudly.
"""

from __future__ import annotations

import logging

from nightwatch.domain.errors import MemoryMovedError, StorageError
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory.answers import Candidate
from nightwatch.domain.memory.cache import DocumentCache
from nightwatch.domain.memory.format import new_document
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.pending import KeptLessons, Retried, Write
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.recording import Entry, Recorded, advise, record_all
from nightwatch.domain.memory.vectors import MemoryVectors
from nightwatch.domain.models import Persona

log = logging.getLogger(__name__)


class LessonWriter:
    """Records lessons into a persona's memory of a project, keeping them for a retry when storage fails."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        llm: LLM,
        cache: DocumentCache,
        vectors: MemoryVectors,
        kept: KeptLessons,
        use_model: bool,
    ) -> None:
        self._store = store
        self._llm = llm
        self._cache = cache
        self._vectors = vectors
        self._kept = kept
        self._use_model = use_model

    def record(
        self, persona: Persona, project: str, candidates: list[Candidate], entry: Entry, *, allow_skip: bool
    ) -> tuple[list[Recorded], str]:
        """Write what is kept for this memory, then these lessons; returns what happened and the memory's text.

        On a storage fault the lessons are kept for a retry and the LessonsPendingError saying so is raised.
        """
        if not candidates:
            return [], ""
        try:
            self._kept.write_waiting(persona, project, self._for_retry(persona, project))
            return self._write(persona, project, candidates, entry, allow_skip=allow_skip)
        except MemoryMovedError as err:  # kept under the old slug, they would be lost again: say which they were
            texts = "; ".join(repr(candidate.text) for candidate in candidates)
            raise MemoryMovedError(f"{err} Not remembered: {texts}.") from err
        except (StorageError, OSError) as err:
            raise self._kept.keep(persona, project, candidates, entry, err) from err

    def retry(self, persona: Persona, project: str | None) -> list[Retried]:
        """Write what storage faults kept for the persona (one project, or each); report each project."""
        return self._kept.retry(persona, project, lambda name: self._for_retry(persona, name))

    def waiting(self, persona_slug: str | None) -> list[PendingLesson]:
        """Lessons kept after storage faults (one persona's, or all), oldest first."""
        return self._kept.waiting(persona_slug)

    def _for_retry(self, persona: Persona, project: str) -> Write:
        """Writes kept lessons: one already judged worth keeping is not skipped on a model's advice now."""
        return lambda candidates, entry: self._write(persona, project, candidates, entry, allow_skip=False)

    def _write(
        self, persona: Persona, project: str, candidates: list[Candidate], entry: Entry, *, allow_skip: bool
    ) -> tuple[list[Recorded], str]:
        live = self._cache.snapshot(persona.slug, project, self._store.read(persona.slug, project)).live
        texts = [candidate.text for candidate in candidates]
        table = self._vectors.completed(persona.slug, project, [*texts, *(lesson.text for lesson in live)])
        hints = advise(self._llm, persona, project, candidates, live, table) if self._use_model else {}
        outcomes: list[Recorded] = []

        def change(text: str) -> str:
            title = f"{persona.name} · memory for {project}"
            base = self._cache.document(persona.slug, project, text) if text else new_document(title)
            doc, done = record_all(base, candidates, hints, entry, table, allow_skip=allow_skip)
            outcomes[:] = done
            return doc.render() if any(outcome.action != "skip" for outcome in done) else text

        new_text = self._store.update(persona.slug, project, change)
        if table is not None:
            try:
                written = self._cache.snapshot(persona.slug, project, new_text).live
                self._vectors.keep(persona.slug, project, table, written)
            except StorageError as err:  # the lessons are written; their vectors are made again at a later write
                log.warning("Could not store the vectors of %s's lessons on %s: %s", persona.name, project, err)
        for outcome in outcomes:
            if outcome.action == "skip":
                log.info("%s did not record a lesson on %s: %s", persona.name, project, outcome.reason)
        return outcomes, new_text
