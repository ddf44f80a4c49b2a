"""Per-persona, per-project memory: the block read before a turn, reflection after it (and extraction from a long
thread's messages as they are summarised away: reflection.py), and the explicit use cases.

Every write goes through `MemoryStore.update`, whose change function parses the file, edits it and renders it, so
concurrent writers lose nothing (writing.py); lessons a storage fault keeps out of the file are kept for a retry
(writing.py). Model calls (reflection, extraction, curation advice, compaction) and embedding happen outside that
lock. Each lesson's vector is computed when it is written and stored beside the memory; a lesson first seen without
one (a hand edit) is embedded in the background (see vectors.py), never by a read.
Nothing here depends on which persona it is: a custom persona gets memory exactly like a default one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from nightwatch.domain.errors import InvalidInputError, NightWatchError
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory.answers import Candidate, given_lesson
from nightwatch.domain.memory.cache import DocumentCache, MemoryReader, Snapshot, forget, injectable, note_injected
from nightwatch.domain.memory.compaction import Compactor
from nightwatch.domain.memory.document import unread_lines
from nightwatch.domain.memory.format import header_part, live_line_count, section_link
from nightwatch.domain.memory.lesson_text import validate_lesson_id, validate_search_limit
from nightwatch.domain.memory.models import (
    CompactionResult,
    Discarded,
    MemoryBlock,
    MemoryPolicy,
    PendingLesson,
    ReflectionContext,
    Remembered,
    UnreadLine,
    section_text,
)
from nightwatch.domain.memory.ports import LessonTally, MemoryStore, PendingLessons
from nightwatch.domain.memory.recording import Entry, Recorded, Tally, remembered
from nightwatch.domain.memory.reflection import Learner
from nightwatch.domain.memory.retention import protected
from nightwatch.domain.memory.vectors import Backfill, BackgroundBackfill, MemoryVectors
from nightwatch.domain.memory.writing import KeptLessons, LessonWriter, Retried
from nightwatch.domain.models import Category, Lesson, Persona
from nightwatch.domain.names import check_slug
from nightwatch.domain.ports import Clock
from nightwatch.domain.recall import Recall, Scored, terms
from nightwatch.domain.tokens import estimate_tokens

log = logging.getLogger(__name__)


class MemoryService:
    """The memory use cases, for any persona and project."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        llm: LLM,
        clock: Clock,
        recall: Recall,
        policy: MemoryPolicy,
        backfill: Backfill | None = None,
        pending: PendingLessons | None = None,
        tally: LessonTally | None = None,  # counts what became of each lesson (the metrics)
    ) -> None:
        self.store = store
        self.llm = llm
        self.clock = clock
        self.recall = recall
        self.policy = policy
        self._cache = DocumentCache()
        self._reader = MemoryReader(cache=self._cache, store=store, recall=recall)
        self._vectors = MemoryVectors(
            store=store, recall=recall, backfill=backfill or BackgroundBackfill(self.backfill)
        )
        self._compactor = Compactor(
            store=store,
            llm=llm,
            cache=self._cache,
            target=policy.compaction_target,
            max_lesson_chars=policy.max_lesson_chars,
            use_model=policy.use_model_for_compaction,
            vectors=self._vectors.completed,
        )
        self._overhead = estimate_tokens(section_text(""))
        kept, counted = KeptLessons(pending=pending, clock=clock), Tally(tally)
        self._writer = LessonWriter(
            store=store, llm=llm, cache=self._cache, vectors=self._vectors, kept=kept, tally=counted,
            use_model=policy.use_model_for_curation,
        )  # fmt: skip
        self._learner = Learner(
            llm=llm,
            clock=clock,
            record=lambda persona, project, found, entry: self._record(persona, project, found, entry, allow_skip=True),
            max_chars=policy.max_lesson_chars,
            tally=counted,
        )

    # --- reading ------------------------------------------------------------------------------------------------

    def read(
        self, persona: Persona, project: str, topic: str, thread: str = "", *, budget: int | None = None
    ) -> MemoryBlock:
        """The most relevant lessons for the topic (and recent thread) that fit the token budget, rendered.

        `budget` overrides the policy's for this read (a deliberation passes the budget it started with).
        """
        snap = self._reader.ranked(persona.slug, check_slug(project))
        if not snap.live:
            return MemoryBlock()
        query = "\n".join(part for part in (topic, thread) if part.strip())
        budget = self.policy.token_budget if budget is None else budget
        vectors = self._vectors.for_read(persona.slug, check_slug(project), snap)
        live, vectors, prepared = injectable(snap, vectors, keep_offline=self.policy.inject_offline_lessons)
        room = budget - self._overhead
        now, about = self.clock.now(), topic or query
        chosen = self.recall.select(live, query, now, room, snap.cost, vectors, about=about, prepared=prepared)
        return MemoryBlock.fitted(chosen, budget, len(snap.live), wrap=section_text)  # its header counted too

    def rank_shared(self, persona: Persona, project: str, topic: str, thread: str = "") -> list[Scored]:
        """`persona`'s live lessons ranked for a teammate's turn as its own read ranks them; strictly read-only.

        For shared knowledge (shares.py): nothing is written to `persona`'s memory, no injection is counted and no
        backfill is asked for, so a lesson without a stored vector is ranked on its words until its owner's own
        read or write embeds it.
        """
        snap = self._snapshot(persona, project)
        if not snap.live:
            return []
        query = "\n".join(part for part in (topic, thread) if part.strip())
        vectors = self._vectors.for_read(persona.slug, check_slug(project), snap, backfill=False)
        live, vectors, prepared = injectable(snap, vectors, keep_offline=self.policy.inject_offline_lessons)
        now, about = self.clock.now(), topic or query
        return self.recall.rank(live, query, now, vectors, about=about, prepared=prepared)

    def lessons(self, persona: Persona, project: str, *, category: Category | None = None) -> list[Lesson]:
        """Live lessons, in file order; only those of `category` when one is given."""
        return [lesson for lesson in self._snapshot(persona, project).live if category in (None, lesson.category)]

    def unread_lines(self, persona: Persona, project: str) -> list[UnreadLine]:
        """Lines of the file that are neither lessons nor structure (a hand edit gone wrong), kept as written."""
        return unread_lines(self._snapshot(persona, project).doc)

    def history(self, persona: Persona, project: str) -> list[Lesson]:
        """Superseded lessons, kept for people to see; never injected."""
        return self._snapshot(persona, project).doc.stale()

    def search(
        self, persona: Persona, project: str, query: str, limit: int = 10, *, category: Category | None = None
    ) -> list[Scored]:
        """Live lessons (of `category`, when given) ranked as a read ranks them, with their score parts; those the
        query is about. An empty query ranks every lesson by the memory's own signals (pins, use, recency)."""
        limit = validate_search_limit(limit)
        snap = self._reader.ranked(persona.slug, check_slug(project))
        vectors = self._vectors.for_read(persona.slug, check_slug(project), snap)
        ranked = self.recall.rank(snap.live, query, self.clock.now(), vectors, prepared=snap.prepared)
        ranked = [hit for hit in ranked if category in (None, hit.lesson.category)]
        if not query.strip():
            return ranked[:limit]
        wanted, floor = set(terms(query)), self.policy.search_similarity

        def about(hit: Scored) -> bool:  # its own words or its meaning; a neighbour's words do not make a hit
            return hit.parts.meaning >= floor or (
                hit.parts.keyword > 0 and not wanted.isdisjoint(terms(hit.lesson.text))
            )

        return [hit for hit in ranked if about(hit)][:limit]

    def projects(self, persona: Persona) -> list[str]:
        """Project slugs this persona has a memory file for."""
        return self.store.projects(persona.slug)

    def path_hint(self, persona: Persona, project: str) -> str:
        """Where the memory lives, as a person finds it: a path relative to NIGHTWATCH_HOME, or its database row."""
        return self.store.location(check_slug(persona.slug), check_slug(project))

    # --- writing ------------------------------------------------------------------------------------------------

    def reflect(self, persona: Persona, project: str, context: ReflectionContext) -> list[Remembered]:
        """Ask the persona, in its role's words, for 1-3 lessons and record them; returns what each recording did.

        Raises LessonsPendingError when storage failed: the lessons are kept and retried (see writing.py).
        """
        return self._learner.reflect(persona, check_slug(project), context)

    def extract(self, persona: Persona, project: str, discarded: Discarded) -> list[Remembered]:
        """Record the lessons the persona finds in a thread's messages as they are summarised away (see reflection.py).

        Raises LessonsPendingError when storage failed: the lessons are kept and retried (see writing.py).
        """
        return self._learner.extract(persona, check_slug(project), discarded)

    def remember(
        self,
        persona: Persona,
        project: str,
        text: str,
        *,
        kind: str = "manual",
        link: str | None = None,
        author: str | None = None,
        category: Category | None = None,
        overview: str | None = None,
    ) -> Lesson:
        """Record a lesson a person gave (see `record`); returns the lesson that holds it now."""
        found = self.record(
            persona, project, text, kind=kind, link=link, author=author, category=category, overview=overview
        )
        return found.lesson

    def record(
        self,
        persona: Persona,
        project: str,
        text: str,
        *,
        kind: str = "manual",
        link: str | None = None,
        author: str | None = None,
        category: Category | None = None,
        overview: str | None = None,
    ) -> Remembered:
        """Record a lesson a person gave, marked with its `author`, and say what happened: created, merged into the
        lesson it restates (counted as seen again), or superseding the one it updates.

        `category` decides how curation treats it (see models.py); `overview` is its longer form, shown where a
        person reads memory. The author of a restated lesson stays whoever wrote it first. Raises
        LessonsPendingError when storage failed: the lesson is kept and retried (see writing.py).
        """
        project = check_slug(project)
        candidate = given_lesson(text, category, overview, author, self.policy.max_lesson_chars)
        entry = Entry(self.clock.now().date(), header_part(kind) or "manual", section_link(link), author)
        outcome = self._record(persona, project, [candidate], entry, allow_skip=False)[0]
        if outcome.lesson is None:
            raise InvalidInputError(f"Not remembered: {outcome.reason}. Write it as one new lesson.")
        return remembered(outcome, outcome.lesson)

    def forget(self, persona: Persona, project: str, lesson_id: str) -> Lesson:
        """Remove the lesson with this id (8 hex characters; live or superseded); NotFoundError when there is none."""
        return forget(self.store, self._cache, persona, check_slug(project), validate_lesson_id(lesson_id))

    def note_injected(self, persona: Persona, project: str, lesson_ids: Sequence[str]) -> None:
        """Count one more injection for each of these lessons (a ranking signal)."""
        note_injected(self.store, self._cache, persona, check_slug(project), set(lesson_ids))

    def compact(self, persona: Persona, project: str) -> CompactionResult:
        """Ask the persona to condense its memory to the target; the file changes only if the result is valid.

        Lessons the model rewrote are embedded at once, and the vectors of lessons it dropped are let go.
        """
        return self._compact(persona, check_slug(project))

    def rollback(self, persona: Persona, project: str) -> bool:
        """Restore the version kept before the last compaction or clear; False when there is none."""
        return self.store.rollback(persona.slug, check_slug(project))

    def retry(self, persona: Persona, project: str | None = None) -> list[Retried]:
        """Write the lessons kept after storage faults (one project, or all), oldest first; report each project."""
        return self._writer.retry(persona, check_slug(project) if project else None)

    def waiting(self, persona_slug: str | None = None) -> list[PendingLesson]:
        """Lessons kept after storage faults and not written yet (one persona's, or all), oldest first."""
        return self._writer.waiting(check_slug(persona_slug) if persona_slug else None)

    # --- internals ----------------------------------------------------------------------------------------------

    def _record(
        self, persona: Persona, project: str, candidates: list[Candidate], entry: Entry, *, allow_skip: bool
    ) -> list[Recorded]:
        outcomes, text = self._writer.record(persona, project, candidates, entry, allow_skip=allow_skip)
        if live_line_count(text) > self.policy.max_lines:
            try:
                result = self._compact(
                    persona, project, protected(self._cache.document(persona.slug, project, text), entry, outcomes)
                )
            except NightWatchError as err:  # the lessons are safely written; compaction can wait for the next write
                log.warning("Could not compact %s's memory of %s: %s", persona.name, project, err)
            else:
                log.info("Compacting %s's memory of %s: %s", persona.name, project, result.message)
        return outcomes

    def _compact(self, persona: Persona, project: str, protect: frozenset[str] = frozenset()) -> CompactionResult:
        result = self._compactor.compact(persona, project, self.clock.now().date(), protect)
        if result.compacted:
            self._embed_missing(persona.slug, project, prune=True)
        return result

    def backfill(self, persona_slug: str, project: str) -> int:
        """Embed the live lessons that have no stored vector (hand edits) and store them; returns how many."""
        return self._embed_missing(persona_slug, check_slug(project))

    def _embed_missing(self, persona_slug: str, project: str, *, prune: bool = False) -> int:
        snap = self._cache.snapshot(persona_slug, project, self.store.read(persona_slug, project))
        known = snap.doc.all_lessons()  # retired ones too: curation follows an update through them
        table = self._vectors.completed(persona_slug, project, [lesson.text for lesson in known])
        return self._vectors.keep(persona_slug, project, table, known, prune=prune) if table is not None else 0

    def _snapshot(self, persona: Persona, project: str) -> Snapshot:
        project = check_slug(project)
        return self._cache.snapshot(persona.slug, project, self.store.read(persona.slug, project))
