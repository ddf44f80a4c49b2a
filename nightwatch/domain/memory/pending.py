"""Lessons a storage fault kept out of memory: held through the PendingLessons port, written later, in order.

When writing lessons fails on storage (a folder or a link where main.md should be, a full disk, no permission), the
lessons are kept, with their category and overview, the interaction's kind, link and day and the error, and the
caller gets a LessonsPendingError saying so. The next write to that persona's memory of that project first writes
what is kept for it, oldest first, and `nightwatch memory retry` does the same on demand. Each kept lesson goes
through the normal write path (junk guard already passed, dedup and curation apply), filed under its own day, and is
removed only once written. If even keeping them fails (the database is down too), the error lists the lessons so a
person can add them by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nightwatch.domain.errors import LessonsPendingError, StorageError
from nightwatch.domain.memory.answers import Candidate
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.ports import PendingLessons
from nightwatch.domain.memory.recording import Entry
from nightwatch.domain.models import Persona
from nightwatch.domain.ports import Clock

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
