"""The lesson vectors of each memory, as the memory service uses them: read once, completed at write time.

A read gets the stored vectors of the live lessons and never embeds a lesson; lessons a read finds without one (typed
in by hand) are handed to the backfill. A write embeds its candidates and any lesson still missing, and stores the
vectors of the live lessons and of those in the history (curation follows an update through a retired lesson). If
the encoder fails (a damaged model file), memory goes on by keywords and says so once in the log.

At write time the encoder also reads each candidate beside each of its nearest lessons as one pair (a `PairReader`),
before the store's lock; curation's restatement test is then the learned judge's (`restates_by`: a logistic
regression over the rules' own signals and that reading, weights in restatement.json, fitted on tune data by
`python -m bench.judge --save`), and the rules' where a pair was not read (a lesson added meanwhile). A sentence with
words exchanged in place (up to three, in one place or several) and nothing else changed is never the judge's to
merge, nor is a lesson that states another amount of a kind the older states ("5 attempts" after "30 attempts") or
says in the plainest words that it is now otherwise (`framing.replaces`: "is now on by default", "upgraded"): that is
an update, and a merge would keep the older's words. Nor is an incident's cause beside its fix, when neither lesson
holds both (`framing.cause_beside_fix`): a merge would lose one of the two facts.

The backfill embeds, in the background, the lessons a read found without a stored vector: it runs on one daemon
thread, once per memory at a time. The next write to that memory embeds them too, so nothing depends on the
thread finishing (a short command may exit first).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Protocol

from nightwatch.domain.amounts import amounts
from nightwatch.domain.classifier import Logistic
from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.framing import (
    adds_to,
    cause_and_fix,
    cause_beside_fix,
    exception_beside,
    replaces,
    says_change,
)
from nightwatch.domain.memory.cache import Snapshot
from nightwatch.domain.memory.curation import (
    CLEARLY_PARALLEL,
    EXCHANGED_MAX,
    SYNONYM_MEANING,
    Restates,
    another_subject,
    is_duplicate,
)
from nightwatch.domain.memory.ports import MemoryStore, PairReader
from nightwatch.domain.memory.recording import near
from nightwatch.domain.memory.specifics import (
    agree,
    changed_amount,
    features,
    flips,
    in_place,
    only_exchanged,
    overlap,
)
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import Recall
from nightwatch.domain.sides import other_sides
from nightwatch.domain.vectors import LessonVectors, VectorTable, vector_key

log = logging.getLogger(__name__)

_PRUNE_AFTER = 64  # rows of gone lessons a vector file may carry before it is rewritten
NEGATED_ALIKE = 0.9  # share of subject words in place for a negated sentence to be the same one, negated
Readings = Mapping[tuple[str, str], Sequence[float]]  # (older, newer) texts: how their words align read as a pair
SIGNALS = (  # what the restatement judge weighs, in order (`signals`)
    *("cosine", "rules_restate", "agree", "another_subject", "says_change", "flips", "changed_amount", "cause_and_fix"),
    *("word_overlap", "aligned_mean", "aligned_mean_back", "aligned_least", "aligned_least_back"),
    *("unmatched", "unmatched_back", "apart_alike"),
    *("same_amount", "same_name", "same_value"),  # a specific both state: "ninety days" / "90 days", "TidyBoard"
)


class MemoryVectors:
    """Stored vector tables per (persona, project), as last read or written by this process."""

    def __init__(self, *, store: MemoryStore, recall: Recall, backfill: Backfill) -> None:
        self._store = store
        self._recall = recall
        self._backfill = backfill
        self._tables: dict[tuple[str, str], VectorTable] = {}
        self._failed = False

    @property
    def on(self) -> bool:
        return self._recall.encoder is not None and not self._failed

    def for_read(
        self, persona_slug: str, project: str, snap: Snapshot, *, backfill: bool = True
    ) -> LessonVectors | None:
        """The stored vectors of the snapshot's live lessons (None when meaning is off).

        Without `backfill` lessons lacking a vector are left as they are (a teammate's read of shared memory never
        causes a write to it); they are scored on their words until their owner's own read or write embeds them.
        """
        if not self.on or not snap.live:
            return None
        vectors = snap.vectors(self._stored(persona_slug, project))
        if not backfill:
            return vectors  # the snapshot is not marked as checked either: its owner's next read still checks
        if not vectors.complete and not snap.vectors_checked:
            snap.vectors_checked = True  # first seen without some vectors: another process may have stored them
            vectors = snap.vectors(self._stored(persona_slug, project, reload=True))
            if not vectors.complete:
                self._backfill.request(persona_slug, project)
        return vectors

    def completed(self, persona_slug: str, project: str, texts: Sequence[str]) -> VectorTable | None:
        """The stored table plus vectors for those of `texts` it lacks (None when meaning is off or fails)."""
        if not self.on:
            return None
        table = self._stored(persona_slug, project)
        missing = table.missing(texts)
        if missing:
            table = self._stored(persona_slug, project, reload=True)
            missing = table.missing(texts)
        if not missing:
            return table
        try:
            vectors = self._recall.embed(missing)
        except NightWatchError as err:
            self._failed = True
            log.warning("Memory goes on by keywords only: the sentence encoder failed (%s)", err)
            return None
        return table.with_texts(missing, vectors) if vectors is not None else table

    def keep(
        self, persona_slug: str, project: str, table: VectorTable, lessons: Sequence[Lesson], *, prune: bool = False
    ) -> int:
        """Store the vectors of these lessons (live and retired), and of no others; returns the rows added.

        Rows of lessons that are gone (forgotten, or trimmed from the history) are dropped when asked (after a
        compaction) or once they outnumber the kept ones: a rewrite can race another writer's append, which only costs
        that writer's lesson a backfill, so it is kept rare.
        """
        stored = self._stored(persona_slug, project)
        keys = frozenset(vector_key(lesson.text) for lesson in lessons)
        kept = table.only(keys)
        gone = sum(key not in keys for key in stored.keys)
        prune = gone > 0 and (prune or gone > max(_PRUNE_AFTER, len(keys)))
        self._store.save_vectors(persona_slug, project, kept, keep=keys if prune else None)
        self._tables[(persona_slug, project)] = kept
        return sum(key not in stored for key in kept.keys)

    def read_together(self, texts: Sequence[str], live: Sequence[Lesson], table: VectorTable | None) -> Readings:
        """Each candidate read beside each of its nearest lessons by meaning (none without a reader, or if it fails)."""
        reader = self._recall.encoder
        if not isinstance(reader, PairReader) or self._failed:
            return {}
        close = ((n.lesson.text, text) for text in texts for n in near(text, live, table) if n.similarity is not None)
        pairs = list(dict.fromkeys(close))
        if not pairs:
            return {}
        try:
            return dict(zip(pairs, reader.alignment(pairs).tolist(), strict=True))
        except NightWatchError as err:  # a damaged model file: the rules judge restatements alone
            log.warning("Restatements are judged by the rules alone: reading lessons as pairs failed (%s)", err)
            return {}

    def _stored(self, persona_slug: str, project: str, *, reload: bool = False) -> VectorTable:
        key = (persona_slug, project)
        table = self._tables.get(key)
        if table is None or reload:
            table = self._tables[key] = self._store.read_vectors(persona_slug, project)
        return table


def signals(older: str, similarity: float, newer: str, reading: Sequence[float]) -> list[float]:
    """What the restatement judge weighs: the cosine, the rules' verdict and checks, the pair's reading, and whether
    the two state an amount, a name or a value in common."""
    fo, fn = features(older), features(newer)
    checks = (
        is_duplicate(older, newer, similarity),
        agree(older, newer),
        another_subject(older, newer),
        says_change(newer),
    )
    more = (flips(fo, fn), changed_amount(older, newer), cause_and_fix(older, newer))
    shared = (bool(amounts(older) & amounts(newer)), bool(fo.names & fn.names), bool(fo.values & fn.values))
    return [similarity, *map(float, checks + more), overlap(fo.words, fn.words), *reading, *map(float, shared)]


@cache
def judge() -> Logistic:
    return Logistic.packaged(__package__, "restatement.json")


def restates_by(readings: Readings) -> Restates | None:
    """Curation's restatement test by the learned judge where the two were read together, else the rules'."""
    if not readings:
        return None

    def restates(older: str, similarity: float | None, newer: str) -> bool:
        reading = readings.get((older, newer))
        if similarity is None or reading is None:
            return is_duplicate(older, newer, similarity)
        if similarity < SYNONYM_MEANING and only_exchanged(older, newer, EXCHANGED_MAX):
            return False  # words exchanged in place and nothing else: another thing ("exports" / "imports")
        if exception_beside(older, newer) or reversed_decision(older, newer) or other_sides(older, newer):
            return False  # "Exception: ..." beside its rule; "Always pin ..." / "Never pin ..."; staging / production
        if cause_beside_fix(older, newer) or adds_to(older, newer):
            return False  # "INC-5893: jobs sat pending because ..." / "After INC-5893, ..."; "... as well": two facts
        if changed_amount(older, newer) or replaces(older, newer):
            return False  # "30 attempts" / "5 attempts", "is now on by default": an update; a merge keeps the old value
        return judge().says(signals(older, similarity, newer, reading))

    return restates


def reversed_decision(older: str, newer: str) -> bool:
    """The same sentence with its decision reversed ("Always pin ..." / "Never pin ..."), saying it changed ("Deploys
    freeze on Fridays" / "Deploys no longer freeze on Fridays"), or negated ("Login requires MFA" / "Login does not
    require MFA"): never a restatement, however close the two read. A paraphrase that words a decision the other way
    round ("never trusted" / "always recalculated", "not in Looker" / "only in dbt") rewords much more than that."""
    fo, fn = features(older), features(newer)
    if flips(fo, fn) or says_change(newer):
        share = CLEARLY_PARALLEL
    elif fo.negated != fn.negated:
        share = NEGATED_ALIKE
    else:
        return False
    return in_place(older, newer) >= share


class Backfill(Protocol):
    def request(self, persona_slug: str, project: str) -> None:
        """Embed this memory's lessons that lack vectors, soon; return at once."""
        ...


class BackgroundBackfill:
    """Runs `work(persona_slug, project)` on one daemon thread; a memory already waiting is not queued twice."""

    def __init__(self, work: Callable[[str, str], int]) -> None:
        self._work = work
        self._waiting: list[tuple[str, str]] = []
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False

    def request(self, persona_slug: str, project: str) -> None:
        with self._condition:
            if (persona_slug, project) not in self._waiting:
                self._waiting.append((persona_slug, project))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="nightwatch-backfill", daemon=True)
                self._thread.start()
            self._condition.notify()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is waiting or running; False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._waiting))
                memory = self._waiting.pop(0)
                self._busy = True
            try:
                added = self._work(*memory)
                if added:
                    log.info("Embedded %d hand-written lessons of %s/%s", added, *memory)
            except Exception:
                log.exception("Could not embed the new lessons of %s/%s; the next write will try again", *memory)
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()
