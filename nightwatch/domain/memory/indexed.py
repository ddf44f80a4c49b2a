"""The live lessons of a text that has a read index, each built the first time it is asked for.

A read of a 10,000-lesson memory packs a few dozen lessons; building only those (from what the read index holds,
no parsing) is what makes a first read cheap. Each one built is checked against the index: its text must hash to
the vector key the index gives; one that does not means the index does not fit its text after all (only a
hand-made one can), and the read stops with a message while the reader drops the index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.read_index import ReadIndex
from nightwatch.domain.models import Lesson
from nightwatch.domain.vectors import vector_key


class IndexedLessons(Sequence[Lesson]):
    """The live lessons of a text, each read from its own line the first time it is asked for."""

    def __init__(
        self,
        text: str,
        index: ReadIndex,
        where: str,
        on_mismatch: Callable[[], None],
        known: dict[int, Lesson] | None = None,
    ) -> None:
        self._text = text
        self._index = index
        self._where = where
        self._on_mismatch = on_mismatch
        self._items: list[Lesson | None] = [None] * len(index)
        self._positions: dict[int, int] = {}
        self._lock = threading.Lock()
        for at, lesson in (known or {}).items():
            self._items[at] = lesson
            self._positions[id(lesson)] = at

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, at: int) -> Lesson: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[Lesson]: ...
    def __getitem__(self, at: int | slice) -> Lesson | Sequence[Lesson]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        if at < 0:
            at += len(self)
        known = self._items[at]
        return known if known is not None else self._read(at)

    def __iter__(self) -> Iterator[Lesson]:
        return (self[i] for i in range(len(self)))

    def position(self, lesson: Lesson) -> int | None:
        """Where this very lesson object sits, if it came from here."""
        return self._positions.get(id(lesson))

    def _read(self, at: int) -> Lesson:
        try:
            lesson = self._index.lesson(at, self._text)
        except OverflowError:  # a date out of range: only a hand-made index holds one
            lesson = None
        if lesson is None or vector_key(lesson.text).encode("ascii") != self._index.keys[at]:
            self._on_mismatch()
            raise StorageError(
                f"The read index kept beside {self._where} does not match the memory's text, so this read stopped; "
                "the next read parses the text and replaces the index. Nothing in the memory itself was changed."
            )
        with self._lock:
            known = self._items[at]
            if known is not None:
                return known
            self._items[at] = lesson
            self._positions[id(lesson)] = at
        return lesson
