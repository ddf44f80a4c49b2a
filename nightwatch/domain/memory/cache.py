"""Memory texts as snapshots: cached per persona and project until the file's text changes, for ranking each with
its read index (kept in this process, kept beside the memory, or derived from the text reusing the last index), and
the edits made through them to lessons already there (forgetting one, counting injections).

A 10,000-lesson file is parsed once; later reads of the same text reuse the parse and the token cost of each lesson.
A snapshot made from a read index builds only the lessons asked for (derive.IndexedLessons), and parses the whole
text only when something needs the document (a write, the history, the lines not understood).

The first read of a memory in a process is the costly one: a file of 10,000 lessons takes most of a second to parse,
analyse and index. So the read index of each text a read ranks is kept beside the memory (read_index.py), and a new
process loads it in milliseconds. When the text changed since (a write, a hand edit), the index is derived again
from the lines (derive.py), taking every line the last index knew as it was: one new lesson costs a scan of the
lines and a rebuild of the keyword index, not a parse of the file. A store that keeps no read index (the database)
is never asked to build one; an index that turns out not to fit its text is not used again.

Each edit runs inside the store's update, on the text it finds there, so a concurrent writer loses nothing; a lesson
nobody changed keeps its lines (overview and all), and one that changed is written back with its category and
overview.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from nightwatch.domain.errors import NightWatchError, NotFoundError
from nightwatch.domain.memory.derive import IndexedLessons, derive
from nightwatch.domain.memory.format import MemoryDocument, parse
from nightwatch.domain.memory.models import OFFLINE_MARK, recorded_offline
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.read_index import ReadIndex, text_digest
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.recall import Recall, RecallIndex
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.domain.vectors import LessonVectors, VectorTable, vector_key

log = logging.getLogger(__name__)

_CACHE_SIZE = 256
_KNOWN = 256  # memories whose last read index this process keeps to derive the next one from

Memory = tuple[str, str]  # (persona slug, project slug)


def line_cost(text: str) -> int:
    """Tokens one lesson's line costs in the injected block."""
    return estimate_tokens(f"- {text}\n")


class Snapshot:
    """One text of a memory: its live lessons, with each one's token cost and vector row worked out once.

    A snapshot for ranking also has the text's read index (its live lessons' keys and recall index).
    """

    def __init__(
        self,
        text: str,
        live: Sequence[Lesson],
        *,
        doc: MemoryDocument | None = None,
        index: ReadIndex | None = None,
    ) -> None:
        if index is not None and len(index) != len(live):
            raise ValueError(f"a read index of {len(index)} lessons cannot go with {len(live)} lessons")
        self.text = text
        self.live = live
        self.index = index
        self._doc = doc
        self._position = {id(lesson): i for i, lesson in enumerate(live)} if isinstance(live, tuple) else None
        self._costs: list[int | None] = [None] * len(live)
        self._keys = index.vector_keys() if index is not None else None
        self._aligned: tuple[VectorTable, LessonVectors] | None = None
        self.vectors_checked = False  # whether the store was asked again for vectors this text lacked

    @classmethod
    def parsed(cls, text: str) -> Snapshot:
        doc = parse(text)
        return cls(text, tuple(doc.live()), doc=doc)

    @property
    def prepared(self) -> RecallIndex | None:
        """The live lessons' recall index, when this snapshot has a read index."""
        return self.index.recall if self.index is not None else None

    @property
    def doc(self) -> MemoryDocument:
        """The parsed text (parsed now if this snapshot came from a read index)."""
        if self._doc is None:
            self._doc = parse(self.text)
        return self._doc

    def with_index(self, index: ReadIndex) -> Snapshot:
        """This snapshot's text and lessons (and parse, if made) with the text's read index."""
        return Snapshot(self.text, self.live, doc=self._doc, index=index)

    @property
    def keys(self) -> tuple[str, ...]:
        """The vector key of each live lesson."""
        if self._keys is None:
            self._keys = tuple(vector_key(lesson.text) for lesson in self.live)
        return self._keys

    def vectors(self, table: VectorTable) -> LessonVectors:
        """The live lessons' rows of `table` (aligned once per table)."""
        known = self._aligned
        if known is not None and known[0] is table:
            return known[1]
        aligned = table.aligned(self.keys)
        self._aligned = (table, aligned)
        return aligned

    def cost(self, lesson: Lesson) -> int:
        """Tokens the lesson's line costs (cached for this snapshot's own lesson objects)."""
        at = self._where(lesson)
        if at is None:
            return line_cost(lesson.text)
        known = self._costs[at]
        if known is None:
            known = self._costs[at] = line_cost(lesson.text)
        return known

    def _where(self, lesson: Lesson) -> int | None:
        live = self.live
        if isinstance(live, IndexedLessons):
            return live.position(lesson)
        at = self._position.get(id(lesson)) if self._position is not None else None
        return at if at is not None and live[at] is lesson else None


class DocumentCache:
    """Snapshots keyed by (persona slug, project slug); a changed text is parsed again."""

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._size = size
        self._snapshots: dict[tuple[str, str], Snapshot] = {}
        self._lock = threading.Lock()

    def snapshot(self, persona_slug: str, project: str, text: str) -> Snapshot:
        return self.cached(persona_slug, project, text) or self.put(persona_slug, project, Snapshot.parsed(text))

    def cached(self, persona_slug: str, project: str, text: str) -> Snapshot | None:
        """The snapshot of this very text, if it is cached."""
        with self._lock:
            known = self._snapshots.get((persona_slug, project))
        return known if known is not None and known.text == text else None

    def put(self, persona_slug: str, project: str, snap: Snapshot) -> Snapshot:
        """Cache `snap` as the memory's latest text (dropping the oldest memory when full); returns it."""
        key = (persona_slug, project)
        with self._lock:
            self._snapshots.pop(key, None)
            if len(self._snapshots) >= self._size:
                self._snapshots.pop(next(iter(self._snapshots)))
            self._snapshots[key] = snap
        return snap

    def drop(self, persona_slug: str, project: str, snap: Snapshot) -> None:
        """Forget `snap` if it is still the cached one."""
        with self._lock:
            if self._snapshots.get((persona_slug, project)) is snap:
                del self._snapshots[(persona_slug, project)]

    def document(self, persona_slug: str, project: str, text: str) -> MemoryDocument:
        return self.snapshot(persona_slug, project, text).doc


class MemoryReader:
    """Snapshots of memories for ranking, each with its read index (see the module docstring)."""

    def __init__(self, *, cache: DocumentCache, store: MemoryStore, recall: Recall) -> None:
        self._cache = cache
        self._store = store
        self._weights = recall.weights.keyword
        self._last: OrderedDict[Memory, ReadIndex] = OrderedDict()
        self._distrusted: set[Memory] = set()  # memories whose index did not fit: the next one starts from nothing
        self._lock = threading.Lock()

    def ranked(self, persona_slug: str, project: str) -> Snapshot:
        """The memory as it is now, with its read index: cached, else kept beside it, else derived (and kept)."""
        text = self._store.read(persona_slug, project)
        known = self._cache.cached(persona_slug, project, text)
        if known is not None and known.index is not None:
            return known
        memory = (persona_slug, project)
        index, parsed = self._index(memory, text)
        if known is not None:
            snap = known.with_index(index)
        else:
            where = f"{persona_slug}'s memory of {project}"
            lessons = IndexedLessons(text, index, where, lambda: self._distrust(memory, snap), parsed)
            snap = Snapshot(text, lessons, index=index)
        with self._lock:
            self._last[memory] = index
            self._last.move_to_end(memory)
            while len(self._last) > _KNOWN:
                self._last.popitem(last=False)
        return self._cache.put(persona_slug, project, snap)

    def _index(self, memory: Memory, text: str) -> tuple[ReadIndex, dict[int, Lesson]]:
        """The text's read index: the last one known or the one kept beside it when made for it, else derived."""
        digest = text_digest(text)
        with self._lock:
            start_over = memory in self._distrusted
            last = None if start_over else self._last.get(memory)
        if last is not None and last.fits(text, digest):
            return last, {}
        kept = None if start_over or not text else self._kept(memory, digest, need_any=last is None)
        if kept is not None and kept.fits(text, digest):
            return kept, {}
        derived = derive(text, digest, last or kept, self._weights)
        if text:
            self._keep(memory, derived.index)
        with self._lock:
            self._distrusted.discard(memory)
        return derived.index, derived.lessons

    def _kept(self, memory: Memory, digest: str, *, need_any: bool) -> ReadIndex | None:
        """The index kept beside the memory: any usable one when `need_any`, else only one made for this digest."""
        try:
            arrays = self._store.read_index(*memory)
            if not arrays:
                return None
            if not need_any and arrays["digest"].item() != digest.encode("ascii"):
                return None  # another text's, and the last index known here serves as well to derive from
            return ReadIndex.from_arrays(arrays, self._weights)
        except (ValueError, KeyError) as err:
            log.debug("The read index of %s/%s is not used (%s)", *memory, err)
            return None

    def _keep(self, memory: Memory, index: ReadIndex) -> None:
        """Keep the index beside the memory; a failure only costs the next process a derivation."""
        try:
            self._store.save_index(*memory, index.arrays)
        except NightWatchError as err:
            log.warning("Could not keep the read index of %s/%s (%s); reads derive it instead", *memory, err)

    def _distrust(self, memory: Memory, snap: Snapshot) -> None:
        """An index whose lines do not hold its lessons: dropped, and the next one is derived from nothing."""
        with self._lock:
            self._distrusted.add(memory)
            self._last.pop(memory, None)
        self._cache.drop(*memory, snap)


def forget(store: MemoryStore, cache: DocumentCache, persona: Persona, project: str, wanted: str) -> Lesson:
    """Remove the lesson with the id `wanted` (live or superseded); NotFoundError when there is none."""
    removed: list[Lesson] = []

    def drop(lesson: Lesson) -> Lesson | None:
        if lesson.id != wanted:
            return lesson
        removed.append(lesson)
        return None

    def change(text: str) -> str:
        removed.clear()
        kept = cache.document(persona.slug, project, text).map_lessons(drop)
        return kept.render() if removed else text

    store.update(persona.slug, project, change)
    if not removed:
        raise NotFoundError(
            f"{persona.name} has no lesson with id {wanted!r} in its memory of {project}; "
            "list its lessons to see their ids."
        )
    return removed[0]


def note_injected(store: MemoryStore, cache: DocumentCache, persona: Persona, project: str, wanted: set[str]) -> None:
    """Count one more injection for each live lesson whose id is in `wanted` (a ranking signal)."""

    def bump(lesson: Lesson) -> Lesson:
        return replace(lesson, injected=lesson.injected + 1) if lesson.id in wanted and not lesson.stale else lesson

    def change(text: str) -> str:
        return cache.document(persona.slug, project, text).map_lessons(bump).render() if text else text

    if wanted:
        store.update(persona.slug, project, change)


def injectable(
    snap: Snapshot, vectors: LessonVectors | None, *, keep_offline: bool
) -> tuple[Sequence[Lesson], LessonVectors | None, RecallIndex | None]:
    """The live lessons a prompt may carry, their vectors and recall index: without the offline model's lessons
    unless `keep_offline` (the text is searched for the mark first: most memories have none)."""
    if keep_offline or OFFLINE_MARK not in snap.text:
        return snap.live, vectors, snap.prepared
    keep = [not recorded_offline(lesson) for lesson in snap.live]
    live = [lesson for lesson, kept in zip(snap.live, keep, strict=True) if kept]
    if vectors is not None:
        vectors = LessonVectors(vectors.matrix[keep], vectors.present[keep])
    return live, vectors, None
