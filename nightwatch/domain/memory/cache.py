"""Memory texts as snapshots, cached per persona and project until the file's text changes.

A 10,000-lesson file is parsed once; later reads of the same text reuse the parse and the token cost of each lesson.
A snapshot made from a read index (reading.py) builds only the lessons asked for (indexed.py), and parses the whole
text only when something needs the document (a write, the history, the lines not understood).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from nightwatch.domain.memory.format import MemoryDocument, parse
from nightwatch.domain.memory.derive import IndexedLessons
from nightwatch.domain.memory.read_index import ReadIndex
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import RecallIndex
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.domain.vectors import LessonVectors, VectorTable, vector_key

_CACHE_SIZE = 256


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
