"""A memory's read index: what a read derives from one text, kept beside it so a new process need not derive it again.

Parsing, analysing and indexing a memory of 10,000 lessons takes most of a second in Python; loading these arrays
takes a few milliseconds. For each live lesson (file order) the index holds where its line and its section's header
line are in the text, a key (hash) of each of those two lines, its id, vector key and link, and the set's recall
index (keyword index, each lesson's own terms and signals). A read then parses only the lines of the lessons it
packs (`IndexedLessons`).

It is made for one exact text (a hash of it, and the version of what it holds). Made for another text, it still
knows every line it had: deriving the index of a changed text (derive.py) reuses the rows of the lines both share,
so one appended lesson or a bumped count costs a scan of the lines, not a parse and analysis of 10,000. Arrays that
do not make an index (damaged, another version or keyword weights) are no index at all. Deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays, take
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.format import Section, header_section, lesson_in
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import KeywordWeights, RecallIndex

# What the arrays mean. Bump it whenever a change to parsing, text analysis or the keyword index changes what they
# hold for a text (tests/domain/memory/test_read_index.py fails until it is bumped), so an older index is ignored.
VERSION = 1
ID = "S8"
KEY = "S16"
_DIGEST = "S64"
ABOVE_SECTIONS = 0  # the header key of lines above every section header


def text_digest(text: str) -> str:
    """The hash a read index is kept under: sha256 of the text's UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def line_key(line: str) -> int:
    """What a line is across texts: 64 bits of a hash of it (a lesson's line, or its section's header line)."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _strings(arrays: Arrays, name: str) -> list[str]:
    encoded = take(arrays, name, np.uint8, (None,))
    return encoded.tobytes().decode("utf-8").split("\n") if len(encoded) else []


class ReadIndex:
    """What a read derives from one text, by live lesson in file order; see the module docstring."""

    def __init__(
        self,
        *,
        digest: str,
        lines: NDArray[np.int64],
        headers: NDArray[np.int64],
        line_keys: NDArray[np.uint64],
        header_keys: NDArray[np.uint64],
        ids: NDArray[np.bytes_],
        keys: NDArray[np.bytes_],
        links: NDArray[np.int32],
        link_names: Sequence[str],
        recall: RecallIndex,
    ) -> None:
        self.digest = digest
        self.lines = lines  # (n, 2): start and end of each live lesson's line in the text
        self.headers = headers  # (n, 2): its section's header line; (-1, -1) above any section
        self.line_keys = line_keys  # line_key of each lesson's line, and of its section's header line
        self.header_keys = header_keys
        self.ids = ids
        self.keys = keys
        self.links = links  # each lesson's link: a position in link_names, -1 for none
        self.link_names = tuple(link_names)
        self.recall = recall

    def __len__(self) -> int:
        return len(self.ids)

    def arrays(self) -> dict[str, NDArray[Any]]:
        """Everything as named arrays (see `from_arrays`)."""
        return {
            **self.recall.arrays(),
            "version": np.array(VERSION, dtype=np.int64),
            "digest": np.array(self.digest, dtype=_DIGEST),
            "lines": self.lines,
            "headers": self.headers,
            "line_keys": self.line_keys,
            "header_keys": self.header_keys,
            "ids": self.ids,
            "keys": self.keys,
            "links": self.links,
            "link_names": np.frombuffer("\n".join(self.link_names).encode("utf-8"), dtype=np.uint8),
        }

    @classmethod
    def from_arrays(cls, arrays: Arrays, weights: KeywordWeights) -> ReadIndex:
        """The index `arrays()` gave, for whichever text it was made for; ValueError when they do not make one.

        Checked so that nothing a read does with it can index outside it (see `fits` for the text's side).
        """
        if int(take(arrays, "version", np.int64, ())) != VERSION:
            raise ValueError("the index is of another version")
        digest = take(arrays, "digest", _DIGEST, ()).item().decode("ascii")
        recall = RecallIndex.from_arrays(arrays, weights)
        count = recall.size
        lines = take(arrays, "lines", np.int64, (count, 2))
        headers = take(arrays, "headers", np.int64, (count, 2))
        links = take(arrays, "links", np.int32, (count,))
        link_names = _strings(arrays, "link_names")
        if count and not _spans_ordered(lines, headers):
            raise ValueError("the lessons' lines are out of order")
        if count and (int(links.min()) < -1 or int(links.max()) >= len(link_names)):
            raise ValueError("a lesson's link is out of range")
        if not bool(recall.signals.live.all()):
            raise ValueError("a superseded lesson is listed as live")
        return cls(
            digest=digest,
            lines=lines,
            headers=headers,
            line_keys=take(arrays, "line_keys", np.uint64, (count,)),
            header_keys=take(arrays, "header_keys", np.uint64, (count,)),
            ids=take(arrays, "ids", ID, (count,)),
            keys=take(arrays, "keys", KEY, (count,)),
            links=links,
            link_names=link_names,
            recall=recall,
        )

    def fits(self, text: str, digest: str) -> bool:
        """Whether this index was made for `text` (whose digest is `digest`)."""
        return self.digest == digest and (not len(self) or int(self.lines[:, 1].max()) <= len(text))

    @cached_property
    def rows(self) -> dict[tuple[int, int], int]:
        """The row of each lesson by (its header's key, its line's key): the same line under the same header."""
        pairs = zip(self.header_keys.tolist(), self.line_keys.tolist(), strict=True)
        return dict(zip(pairs, range(len(self)), strict=True))

    @cached_property
    def rows_by_key(self) -> dict[bytes, int]:
        """A row of each vector key (the lesson's exact text): its terms serve every line with that text."""
        return dict(zip(self.keys.tolist(), range(len(self)), strict=True))

    def vector_keys(self) -> tuple[str, ...]:
        return tuple(self.keys.astype("U16").tolist())

    def link_of(self, row: int) -> str | None:
        number = int(self.links[row])
        return self.link_names[number] if number >= 0 else None


def _spans_ordered(lines: NDArray[np.int64], headers: NDArray[np.int64]) -> bool:
    """Every line after the one before, each below its own header (or above every section)."""
    starts, ends = lines[:, 0], lines[:, 1]
    above = headers[:, 0] < 0
    ordered = bool((starts >= 0).all() and (starts <= ends).all() and (np.diff(starts) > 0).all())
    headed = bool(
        ((above & (headers[:, 1] < 0)) | (~above & (headers[:, 1] < starts) & (headers[:, 0] <= headers[:, 1]))).all()
    )
    return ordered and headed


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
        self._sections: dict[int, Section | None] = {}
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
        (start, end), top = self._index.lines[at].tolist(), int(self._index.headers[at, 0])
        section = self._section(top, int(self._index.headers[at, 1]))
        lesson = lesson_in(self._text[start:end], section) if section is not None else None
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

    def _section(self, top: int, bottom: int) -> Section | None:
        if top not in self._sections:
            self._sections[top] = header_section(self._text[top:bottom] if top >= 0 else None)
        return self._sections[top]
