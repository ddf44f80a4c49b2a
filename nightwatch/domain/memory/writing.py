"""Writing lessons into one memory: curation advice and vectors before the lock, recording under it, vectors after.

Before a memory's own lessons are written, what a storage fault kept for it is written first, oldest first; when
writing fails on storage, the lessons are kept for a retry and the caller hears so (KeptLessons, below). A write the
store refuses because the persona was renamed or deleted meanwhile (MemoryMovedError) is not kept: it fails loudly.

Lessons a storage fault kept out of memory are held through the PendingLessons port and written later, in order: the
next write to that persona's memory of that project first writes what is kept for it, oldest first, and `nightwatch
memory retry` does the same on demand. Each kept lesson goes through the normal write path and is removed only once
written; if even keeping them fails, the error lists the lessons so a person can add them by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nightwatch.domain.errors import LessonsPendingError, MemoryMovedError, StorageError
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory.answers import Candidate
from nightwatch.domain.memory.cache import DocumentCache
from nightwatch.domain.memory.format import new_document
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.ports import MemoryStore, PendingLessons
from nightwatch.domain.memory.recording import Entry, Recorded, Tally, advise, record_all
from nightwatch.domain.memory.vectors import MemoryVectors, restates_by
from nightwatch.domain.models import Persona
from nightwatch.domain.ports import Clock

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
        tally: Tally | None = None,
    ) -> None:
        self._tally = tally or Tally(None)
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
        snap = self._cache.snapshot(persona.slug, project, self._store.read(persona.slug, project))
        live, texts = snap.live, [candidate.text for candidate in candidates]
        known = snap.doc.all_lessons()  # retired ones too: an update of one updates its chain's current lesson
        table = self._vectors.completed(persona.slug, project, [*texts, *(lesson.text for lesson in known)])
        hints = advise(self._llm, persona, project, candidates, live, table) if self._use_model else {}
        restates = restates_by(self._vectors.read_together(texts, live, table))
        outcomes: list[Recorded] = []

        def change(text: str) -> str:
            title = f"{persona.name} · memory for {project}"
            base = self._cache.document(persona.slug, project, text) if text else new_document(title)
            doc, done = record_all(base, candidates, hints, entry, table, allow_skip=allow_skip, restates=restates)
            outcomes[:] = done
            return doc.render() if any(outcome.action != "skip" for outcome in done) else text

        new_text = self._store.update(persona.slug, project, change)
        if table is not None:
            try:
                written = self._cache.document(persona.slug, project, new_text).all_lessons()
                self._vectors.keep(persona.slug, project, table, written)
            except StorageError as err:  # the lessons are written; their vectors are made again at a later write
                log.warning("Could not store the vectors of %s's lessons on %s: %s", persona.name, project, err)
        self._tally.recorded(outcomes)  # written (a retry's too): count what became of each
        for outcome in outcomes:
            if outcome.action == "skip":
                log.info("%s did not record a lesson on %s: %s", persona.name, project, outcome.reason)
        return outcomes, new_text


log = logging.getLogger(__name__)

RETRY = "`nightwatch memory retry`"

Write = Callable[[list[Candidate], Entry], object]  # writes lessons to one memory; raises StorageError (or OSError)


@dataclass(frozen=True)
class Retried:
    """What a retry of one persona's kept lessons for one project did."""

    persona: str  # the persona's name
    project: str
    written: int
    waiting: int  # still kept: the first of them failed again
    error: str = ""


class KeptLessons:
    """Keeps the lessons of writes that failed on storage, and writes them again in order."""

    def __init__(self, *, pending: PendingLessons | None, clock: Clock) -> None:
        self._pending = pending
        self._clock = clock

    def keep(
        self, persona: Persona, project: str, candidates: Sequence[Candidate], entry: Entry, err: Exception
    ) -> StorageError:
        """Keep these lessons for a retry; return the error telling a person what failed and that they are kept."""
        texts = [candidate.text for candidate in candidates]
        reason = describe(err)
        whose = f"{persona.name}'s lesson" + ("s" if len(texts) != 1 else "")
        if self._pending is None:
            return StorageError(f"{whose} could not be saved ({reason}); add {_them(texts)} again once it is fixed.")
        now = self._clock.now()
        rows = [
            PendingLesson(
                persona.slug,
                project,
                candidate.text,
                entry.kind,
                entry.day,
                entry.link,
                reason,
                now,
                author=entry.author,
                category=candidate.category,
                overview=candidate.overview,
            )
            for candidate in candidates
        ]
        try:
            self._pending.keep(rows)
        except StorageError as keep_err:
            log.exception("%s could not be saved nor kept for a retry; they were: %s", whose, list(texts))
            return StorageError(
                f"{whose} could not be saved ({reason}), and keeping {_them(texts)} for a retry failed too "
                f"({describe(keep_err)}). Add {_them(texts)} again by hand once that is fixed: " + " | ".join(texts)
            )
        log.warning("%s on %s kept for a retry: %s", whose, project, reason)
        verb = "it is" if len(texts) == 1 else "they are"
        return LessonsPendingError(
            f"{whose} could not be saved ({reason}); {verb} kept and will be retried: {RETRY}",
            persona=persona.name,
            project=project,
            count=len(texts),
        )

    def write_waiting(self, persona: Persona, project: str, write: Write) -> int:
        """Write what is kept for this persona and project, oldest first; returns how many.

        Raises the storage error of the first batch that fails (its lessons and the later ones stay kept). A
        failing PendingLessons store only logs: it must not stop new lessons from being written.
        """
        pending = self._pending
        if pending is None:
            return 0
        try:
            waiting = pending.waiting(persona.slug, project)
        except StorageError as err:
            log.warning("Could not look for %s's kept lessons on %s: %s", persona.name, project, err)
            return 0
        written = 0
        for batch in _batches(waiting):
            try:
                write([Candidate(lesson.text, lesson.category, lesson.overview) for lesson in batch], _entry(batch[0]))
            except (StorageError, OSError) as err:
                _note_failure(pending, waiting[written:], describe(err))
                raise
            _forget(pending, batch)
            written += len(batch)
        return written

    def retry(self, persona: Persona, project: str | None, write_to: Callable[[str], Write]) -> list[Retried]:
        """Write what is kept for the persona (one project, or each of its projects); report each project."""
        pending = self._pending
        if pending is None:
            return []
        kept = pending.waiting(persona.slug, project)
        report: list[Retried] = []
        for name in dict.fromkeys(lesson.project for lesson in kept):
            before = sum(lesson.project == name for lesson in kept)
            try:
                written = self.write_waiting(persona, name, write_to(name))
            except (StorageError, OSError) as err:
                left = len(pending.waiting(persona.slug, name))
                report.append(Retried(persona.name, name, max(0, before - left), left, describe(err)))
            else:
                report.append(Retried(persona.name, name, written, 0))
        return report

    def waiting(self, persona_slug: str | None = None) -> list[PendingLesson]:
        """Every kept lesson (or one persona's), oldest first."""
        return self._pending.waiting(persona_slug) if self._pending is not None else []


def _forget(pending: PendingLessons, batch: Sequence[PendingLesson]) -> None:
    try:
        pending.remove([lesson.id for lesson in batch if lesson.id is not None])
    except StorageError as err:  # they are written: a later retry merges each into itself, losing nothing
        log.warning("Written lessons stay kept for now (%s); a retry will find them already remembered", err)


def _note_failure(pending: PendingLessons, lessons: Sequence[PendingLesson], error: str) -> None:
    try:
        pending.failed([lesson.id for lesson in lessons if lesson.id is not None], error)
    except StorageError as err:
        log.warning("Could not record why a retry failed (%s): %s", error, err)


def orphans(kept: Sequence[PendingLesson], project: str | None = None) -> list[Retried]:
    """Report kept lessons whose persona is gone (its slug matches none): there is no memory to write them to."""
    report: list[Retried] = []
    for name in dict.fromkeys(lesson.project for lesson in kept if project in (None, lesson.project)):
        slug = next(lesson.persona for lesson in kept if lesson.project == name)
        count = sum(lesson.project == name for lesson in kept)
        error = (
            f"no persona has the slug {slug!r}; create one whose name gives that slug and retry, "
            f"and the lessons go to agents/{slug}/memories/{name}/main.md"
        )
        report.append(Retried(slug, name, 0, count, error))
    return report


def describe(err: Exception) -> str:
    """An error as a clause for a longer message: its text without the final full stop."""
    if isinstance(err, OSError):
        where = f" ({err.filename})" if err.filename else ""
        return f"the memory store failed{where}: {err.strerror or err}"
    return str(err).rstrip(". ")


def _batches(lessons: Sequence[PendingLesson]) -> list[list[PendingLesson]]:
    """Runs of consecutive lessons from one interaction (same day, kind, link and author), in order."""
    batches: list[list[PendingLesson]] = []
    for lesson in lessons:
        last = batches[-1][0] if batches else None
        if last is not None and _entry(last) == _entry(lesson):
            batches[-1].append(lesson)
        else:
            batches.append([lesson])
    return batches


def _entry(lesson: PendingLesson) -> Entry:
    """Where a kept lesson goes when written: its interaction's section, and its author."""
    return Entry(lesson.day, lesson.kind, lesson.link, lesson.author)


def _them(texts: Sequence[str]) -> str:
    return "it" if len(texts) == 1 else "them"
