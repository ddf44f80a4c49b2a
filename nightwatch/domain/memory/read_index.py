"""A memory's read index: what a read derives from one text, kept beside it so a new process need not derive it again.

Parsing, analysing and indexing a memory of 10,000 lessons takes most of a second in Python; loading these arrays
takes a few milliseconds. The index holds, for each live lesson, where its line and its section's header are in the
text, its id and vector key, and the lesson set's keyword index and signals (recall's `RecallIndex`). A read then
parses only the lines of the lessons it packs (`IndexedLessons`).

It is made for one exact text: it carries a hash of that text, and the version of what it holds. Anything that
does not fit (another text, another version or keyword weights, arrays of the wrong shape) is no index at all: the
read parses the text as it would without one, and a new index is kept. Deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays, take
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.format import MemoryDocument, lesson_at
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import KeywordWeights, RecallIndex

# What the arrays mean. Bump it whenever a change to parsing, text analysis or the keyword index changes what they
# hold for a text (tests/domain/memory/test_read_index.py fails until it is bumped), so an older index is ignored.
VERSION = 1
_ID = "S8"
_KEY = "S16"
_DIGEST = "S64"


def text_digest(text: str) -> str:
    """The hash a read index is kept under: sha256 of the text's UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ReadIndex:
    """What a read derives from one text, by live lesson (file order); see the module docstring."""

    def __init__(
        self,
        *,
        digest: str,
        lines: NDArray[np.int64],
        headers: NDArray[np.int64],
        ids: NDArray[np.bytes_],
        keys: NDArray[np.bytes_],
        recall: RecallIndex,
    ) -> None:
        self.digest = digest
        self.lines = lines  # (n, 2): start and end of each live lesson's line in the text
        self.headers = headers  # (n, 2): its section's header line; (-1, -1) above any section
        self.ids = ids
        self.keys = keys
        self.recall = recall

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, text: str, doc: MemoryDocument, keys: Sequence[str], recall: RecallIndex) -> ReadIndex:
        """The index of `text`, parsed as `doc`, given its live lessons' vector keys and recall index."""
        lengths = np.array([len(line) + 1 for line in text.split("\n")], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        lines: list[int] = []
        headers: list[int] = []
        ids: list[str] = []
        number = 0
        for section in doc.sections:
            header = -1
            if section.header is not None:
                header, number = number, number + 1
            for line in section.lines:
                if line.lesson is not None and not line.lesson.stale:
                    lines.append(number)
                    headers.append(header)
                    ids.append(line.lesson.id)
                number += 1
        at, above = np.array(lines, dtype=np.int64), np.array(headers, dtype=np.int64)
        return cls(
            digest=text_digest(text),
            lines=np.stack([starts[at], starts[at + 1] - 1], axis=1),
            headers=np.where(above[:, None] >= 0, np.stack([starts[above], starts[above + 1] - 1], axis=1), -1),
            ids=np.array(ids, dtype=_ID),
            keys=np.array(keys, dtype=_KEY),
            recall=recall,
        )

    def arrays(self) -> dict[str, NDArray[Any]]:
        """Everything as named arrays (see `from_arrays`)."""
        return {
            **self.recall.arrays(),
            "version": np.array(VERSION, dtype=np.int64),
            "digest": np.array(self.digest, dtype=_DIGEST),
            "lines": self.lines,
            "headers": self.headers,
            "ids": self.ids,
            "keys": self.keys,
        }

    @classmethod
    def from_arrays(cls, arrays: Arrays, text: str, weights: KeywordWeights) -> ReadIndex:
        """The index `arrays()` gave, when it was made for this text; ValueError when it was not, or cannot be used."""
        if int(take(arrays, "version", np.int64, ())) != VERSION:
            raise ValueError("the index is of another version")
        digest = take(arrays, "digest", _DIGEST, ()).item().decode("ascii")
        if digest != text_digest(text):
            raise ValueError("the index was made for another text")
        recall = RecallIndex.from_arrays(arrays, weights)
        count = recall.size
        lines = take(arrays, "lines", np.int64, (count, 2))
        headers = take(arrays, "headers", np.int64, (count, 2))
        ids = take(arrays, "ids", _ID, (count,))
        keys = take(arrays, "keys", _KEY, (count,))
        if count and not _spans_fit(lines, headers, len(text)):
            raise ValueError("a line lies outside the text")
        if not bool(recall.signals.live.all()):
            raise ValueError("a superseded lesson is listed as live")
        return cls(digest=digest, lines=lines, headers=headers, ids=ids, keys=keys, recall=recall)

    def vector_keys(self) -> tuple[str, ...]:
        return tuple(self.keys.astype("U16").tolist())

    def lesson_ids(self) -> tuple[str, ...]:
        return tuple(self.ids.astype("U8").tolist())


def _spans_fit(lines: NDArray[np.int64], headers: NDArray[np.int64], length: int) -> bool:
    """Every line within the text, in order, each below its own header (or above every section)."""
    starts, ends = lines[:, 0], lines[:, 1]
    above = headers[:, 0] < 0
    in_text = bool((starts >= 0).all() and (starts <= ends).all() and (ends <= length).all())
    ordered = bool((np.diff(starts) > 0).all())
    headed = bool(
        ((above & (headers[:, 1] < 0)) | (~above & (headers[:, 1] < starts) & (headers[:, 0] <= headers[:, 1]))).all()
    )
    return in_text and ordered and headed


class IndexedLessons(Sequence[Lesson]):
    """The live lessons of a text, each read from its own line the first time it is asked for."""

    def __init__(self, text: str, index: ReadIndex, where: str, on_mismatch: Callable[[], None]) -> None:
        self._text = text
        self._index = index
        self._where = where
        self._on_mismatch = on_mismatch
        self._items: list[Lesson | None] = [None] * len(index)
        self._positions: dict[int, int] = {}
        self._lock = threading.Lock()

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
        (start, end), (top, bottom) = self._index.lines[at].tolist(), self._index.headers[at].tolist()
        header = self._text[top:bottom] if top >= 0 else None
        lesson = lesson_at(self._text[start:end], header)
        if lesson is None or lesson.stale or lesson.id != self._index.ids[at].decode("ascii", "replace"):
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
