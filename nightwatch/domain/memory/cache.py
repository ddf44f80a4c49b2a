"""Parsed memory files, cached per persona and project until the file's text changes.

A 10,000-lesson file is parsed once; later reads of the same text reuse the parse and the token cost of each lesson.
"""

from __future__ import annotations

import threading

from nightwatch.domain.memory.format import MemoryDocument, parse
from nightwatch.domain.models import Lesson
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.domain.vectors import LessonVectors, VectorTable, vector_key

_CACHE_SIZE = 256


def line_cost(text: str) -> int:
    """Tokens one lesson's line costs in the injected block."""
    return estimate_tokens(f"- {text}\n")


class Snapshot:
    """One parse of a file's text, with each live lesson's token cost and vector row worked out once."""

    def __init__(self, text: str, doc: MemoryDocument) -> None:
        self.text = text
        self.doc = doc
        self.live = tuple(doc.live())
        self._position = {id(lesson): i for i, lesson in enumerate(self.live)}
        self._costs: list[int | None] = [None] * len(self.live)
        self._keys: tuple[str, ...] | None = None
        self._aligned: tuple[VectorTable, LessonVectors] | None = None
        self.vectors_checked = False  # whether the store was asked again for vectors this parse lacked

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
        at = self._position.get(id(lesson))
        if at is None or self.live[at] is not lesson:
            return line_cost(lesson.text)
        known = self._costs[at]
        if known is None:
            known = self._costs[at] = line_cost(lesson.text)
        return known


class DocumentCache:
    """Snapshots keyed by (persona slug, project slug); a changed text is parsed again."""

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._size = size
        self._snapshots: dict[tuple[str, str], Snapshot] = {}
        self._lock = threading.Lock()

    def snapshot(self, persona_slug: str, project: str, text: str) -> Snapshot:
        key = (persona_slug, project)
        with self._lock:
            cached = self._snapshots.get(key)
        if cached is not None and cached.text == text:
            return cached
        snap = Snapshot(text, parse(text))
        with self._lock:
            self._snapshots.pop(key, None)
            if len(self._snapshots) >= self._size:
                self._snapshots.pop(next(iter(self._snapshots)))
            self._snapshots[key] = snap
        return snap

    def document(self, persona_slug: str, project: str, text: str) -> MemoryDocument:
        return self.snapshot(persona_slug, project, text).doc
