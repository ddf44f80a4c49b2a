"""From a text to its read index and back: deriving the index (reusing what a previous index knew of the lines both
texts share), and the live lessons of an indexed text, each built the first time it is asked for.

A scan of the lines finds the live lessons as `parse` would: a line the previous index holds under the same header
(both lines' keys, see read_index.line_key) is the same lesson, so its row is taken as it is; any other line is
parsed. A parsed lesson whose exact text the previous index knew takes its terms from there; only new texts are
analysed. When the lessons, their dates and links are all as before (a count changed), the keyword index itself is
reused; otherwise it is built from the gathered terms. The result is the index `derive(text, None)` would give.

A read of a 10,000-lesson memory packs a few dozen lessons; building only those (from what the read index holds,
no parsing) is what makes a first read cheap. Each one built is checked against the index: its text must hash to
the vector key the index gives; one that does not means the index does not fit its text after all (only a
hand-made one can), and the read stops with a message while the reader drops the index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.format import Section, header_section, is_header, lesson_in, overview_at
from nightwatch.domain.memory.read_index import ABOVE_SECTIONS, ID, KEY, Labels, ReadIndex, line_key
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import KeywordWeights, LessonIndex, LessonTerms, RecallIndex, Signals, terms_of
from nightwatch.domain.vectors import vector_key

_BULLET_STARTS = frozenset("-*+•0123456789 \t")  # as format.parse: only a line starting so can be a lesson


@dataclass(frozen=True)
class Derived:
    """A text's read index, and the lessons parsed on the way (by position), which a read need not parse again."""

    index: ReadIndex
    lessons: dict[int, Lesson]


@dataclass
class _Scan:
    """The live lessons found in a text: each one's line and header line (numbers), their keys, and its previous row
    (-1: parsed here)."""

    lines: list[int]
    headers: list[int]
    line_keys: list[int]
    header_keys: list[int]
    rows: list[int]
    parsed: dict[int, Lesson]


def derive(text: str, digest: str, previous: ReadIndex | None, weights: KeywordWeights) -> Derived:
    """The read index of `text` (whose digest is `digest`), reusing `previous`'s rows where it can."""
    raw_lines = text.split("\n")
    if raw_lines[-1] == "":
        raw_lines.pop()
    scan = _scan(text, raw_lines, previous.rows if previous is not None else {})
    rows = np.array(scan.rows, dtype=np.int64)
    fresh = np.flatnonzero(rows < 0)
    parsed = [scan.parsed[int(at)] for at in fresh]
    ids = _gather(previous.ids if previous else None, rows, fresh, [lesson.id for lesson in parsed], ID)
    keys = _gather(
        previous.keys if previous else None, rows, fresh, [vector_key(lesson.text) for lesson in parsed], KEY
    )
    signals = _signals(previous, rows, fresh, parsed)
    links = Labels.gathered(previous.links if previous else None, rows, fresh, [lesson.link for lesson in parsed])
    recall = RecallIndex(_keyword_index(previous, rows, keys, signals, links, parsed, weights), signals)
    starts = np.zeros(len(raw_lines) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, raw_lines), dtype=np.int64, count=len(raw_lines)) + 1, out=starts[1:])
    index = ReadIndex(
        digest=digest,
        lines=_spans(starts, np.array(scan.lines, dtype=np.int64)),
        headers=_spans(starts, np.array(scan.headers, dtype=np.int64)),
        line_keys=np.array(scan.line_keys, dtype=np.uint64),
        header_keys=np.array(scan.header_keys, dtype=np.uint64),
        texts=_texts(previous, rows, fresh, parsed, [raw_lines[scan.lines[at]] for at in fresh.tolist()]),
        ids=ids,
        keys=keys,
        kinds=Labels.gathered(previous.kinds if previous else None, rows, fresh, [lesson.kind for lesson in parsed]),
        links=links,
        authors=Labels.gathered(
            previous.authors if previous else None, rows, fresh, [lesson.author for lesson in parsed]
        ),
        recall=recall,
    )
    return Derived(index, scan.parsed)


def _spans(starts: NDArray[np.int64], numbers: NDArray[np.int64]) -> NDArray[np.int64]:
    """(start, end) in the text of each line by number; (-1, -1) for number -1."""
    spans = np.stack([starts[numbers], starts[numbers + 1] - 1], axis=1).reshape(-1, 2)
    spans[numbers < 0] = -1
    return spans


def _scan(text: str, raw_lines: list[str], known: dict[tuple[int, int], int]) -> _Scan:
    """Walk the lines as `parse` does; parse only those `known` does not hold (and a header only when one needs it).

    A lesson's overview lines under its bullet are read with it (they are no lesson of their own); the index keeps
    only the bullet's line, and a lesson built from the index reads its overview from the text again.
    """
    scan = _Scan([], [], [], [], [], {})
    header, header_at, header_key = None, -1, ABOVE_SECTIONS
    section: Section | None = Section(header=None)
    offset = 0
    for number, raw in enumerate(raw_lines):
        offset += len(raw) + 1  # where the next line starts: a lesson's overview, if it has one
        first = raw[:1]
        if first == "#":
            if is_header(raw):
                header, header_at, header_key, section = raw, number, line_key(raw), None
            continue
        if first not in _BULLET_STARTS:
            continue
        key = line_key(raw)
        row = known.get((header_key, key), -1)
        if row < 0:
            if section is None:
                section = header_section(header)
            lesson = lesson_in(raw, section, overview_at(text, offset)) if section is not None else None
            if lesson is None or lesson.stale:
                continue
            scan.parsed[len(scan.rows)] = lesson
        scan.lines.append(number)
        scan.headers.append(header_at)
        scan.line_keys.append(key)
        scan.header_keys.append(header_key)
        scan.rows.append(row)
    return scan


def _gather(
    before: NDArray[np.bytes_] | None, rows: NDArray[np.int64], fresh: NDArray[np.intp], values: list[str], dtype: str
) -> NDArray[np.bytes_]:
    """One column: the previous index's value for reused rows, `values` (in order) for the parsed ones."""
    column = np.empty(len(rows), dtype=dtype)
    if before is not None:
        reused = rows >= 0
        column[reused] = before[rows[reused]]
    column[fresh] = np.array(values, dtype=dtype)
    return column


def _signals(
    previous: ReadIndex | None, rows: NDArray[np.int64], fresh: NDArray[np.intp], parsed: list[Lesson]
) -> Signals:
    """Each lesson's signals: the previous index's for reused rows, the parsed lessons' for the others."""
    made = Signals.of(parsed)
    before = previous.recall.signals if previous is not None else None
    reused = rows >= 0

    def column(name: str) -> NDArray[Any]:
        mine = getattr(made, name)
        values = np.empty(len(rows), dtype=mine.dtype)
        if before is not None:
            values[reused] = getattr(before, name)[rows[reused]]
        values[fresh] = mine
        return values

    live = np.ones(len(rows), dtype=np.bool_)
    return Signals(column("stamps"), column("seen"), column("injected"), column("pinned"), live)


def _texts(
    previous: ReadIndex | None,
    rows: NDArray[np.int64],
    fresh: NDArray[np.intp],
    parsed: list[Lesson],
    lines: list[str],
) -> NDArray[np.int32]:
    """Where each lesson's text is in its line (a lesson's text is always a piece of its line)."""
    spans = np.zeros((len(rows), 2), dtype=np.int32)
    if previous is not None:
        reused = rows >= 0
        spans[reused] = previous.texts[rows[reused]]
    starts = [line.find(lesson.text) for lesson, line in zip(parsed, lines, strict=True)]
    spans[fresh, 0] = starts
    spans[fresh, 1] = [start + len(lesson.text) for start, lesson in zip(starts, parsed, strict=True)]
    return spans


def _keyword_index(
    previous: ReadIndex | None,
    rows: NDArray[np.int64],
    keys: NDArray[np.bytes_],
    signals: Signals,
    links: Labels,
    parsed: list[Lesson],
    weights: KeywordWeights,
) -> LessonIndex:
    """The previous keyword index when nothing it depends on changed, else one built from the gathered terms."""
    if previous is not None:
        before = previous.recall
        same = (
            np.array_equal(keys, previous.keys)
            and np.array_equal(signals.stamps, before.signals.stamps)
            and np.array_equal(links.numbers, previous.links.numbers)
        )
        if same:
            return before.index
        by_text = previous.rows_by_key
        sources = rows.copy()
        fresh_at = np.flatnonzero(rows < 0)
        for at, lesson_key in zip(fresh_at.tolist(), keys[fresh_at].tolist(), strict=True):
            sources[at] = by_text.get(lesson_key, -1)
        texts = [lesson.text for lesson, source in zip(parsed, sources[fresh_at].tolist(), strict=True) if source < 0]
        terms = before.index.terms.gathered(sources, terms_of(texts))
    else:
        terms = LessonTerms.of(terms_of([lesson.text for lesson in parsed]))
    return LessonIndex.of_terms(terms, signals.stamps, links.numbers.astype(np.int64), weights)


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
