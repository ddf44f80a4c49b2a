"""A memory's read index: what a read derives from one text, kept beside it so a new process need not derive it again.

Parsing, analysing and indexing a memory of 10,000 lessons takes most of a second in Python; loading these arrays
takes a few milliseconds. For each live lesson (file order) the index holds where its line, its section's header
line and its text are in the text, a key (hash) of each of those two lines, its id, vector key, kind, link and
author, and the set's recall index (keyword index, each lesson's own terms and signals: date, counts, pin). A read
builds only the lessons it packs, from these (derive.IndexedLessons).

It is made for one exact text (a hash of it, and the version of what it holds). Made for another text, it still
knows every line it had: deriving the index of a changed text (derive.py) reuses the rows of the lines both share,
so one appended lesson or a bumped count costs a scan of the lines, not a parse and analysis of 10,000. Arrays that
do not make an index (damaged, another version or keyword weights) are no index at all. Deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays, take
from nightwatch.domain.memory.format import marks_in, overview_at
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import KeywordWeights, RecallIndex

# What the arrays mean. Bump it whenever a change to parsing, text analysis or the keyword index changes what they
# hold for a text (tests/domain/memory/test_read_index.py fails until it is bumped), so an older index is ignored.
VERSION = 1
ID = "S8"
KEY = "S16"
_DIGEST = "S64"
ABOVE_SECTIONS = 0  # the header key of lines above every section header
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def text_digest(text: str) -> str:
    """The hash a read index is kept under: sha256 of the text's UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def line_key(line: str) -> int:
    """What a line is across texts: 64 bits of a hash of it (a lesson's line, or its section's header line)."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _strings(arrays: Arrays, name: str) -> list[str]:
    encoded = take(arrays, name, np.uint8, (None,))
    return encoded.tobytes().decode("utf-8").split("\n") if len(encoded) else []


@dataclass(frozen=True, eq=False)
class Labels:
    """A label of each lesson (its link, kind or author) as a number into `names`, by first occurrence; -1: none."""

    numbers: NDArray[np.int32]
    names: tuple[str, ...]

    @classmethod
    def gathered(
        cls, previous: Labels | None, rows: NDArray[np.int64], fresh: NDArray[np.intp], values: Sequence[str | None]
    ) -> Labels:
        """Labels of lessons that are `previous`'s rows where rows[i] >= 0, else the next of `values` (at `fresh`)."""
        before = previous.names if previous is not None else ()
        numbers_of = {name: number for number, name in enumerate(before)}  # then the new names, after them
        wide = np.full(len(rows), -1, dtype=np.int64)
        if previous is not None:
            reused = rows >= 0
            wide[reused] = previous.numbers[rows[reused]]
        wide[fresh] = [-1 if value is None else numbers_of.setdefault(value, len(numbers_of)) for value in values]
        present = wide >= 0
        unique, first, inverse = np.unique(wide[present], return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        renumbered = np.empty(len(order), dtype=np.int32)
        renumbered[order] = np.arange(len(order), dtype=np.int32)
        numbers = np.full(len(rows), -1, dtype=np.int32)
        numbers[present] = renumbered[inverse.reshape(-1)]
        names = list(numbers_of)
        return cls(numbers, tuple(names[number] for number in unique[order].tolist()))

    def value(self, row: int) -> str | None:
        number = int(self.numbers[row])
        return self.names[number] if number >= 0 else None

    def arrays(self, name: str) -> dict[str, NDArray[Any]]:
        joined = "\n".join(self.names).encode("utf-8")
        return {f"{name}s": self.numbers, f"{name}_names": np.frombuffer(joined, dtype=np.uint8)}

    @classmethod
    def from_arrays(cls, arrays: Arrays, name: str, count: int) -> Labels:
        numbers = take(arrays, f"{name}s", np.int32, (count,))
        names = _strings(arrays, f"{name}_names")
        if count and (int(numbers.min()) < -1 or int(numbers.max()) >= len(names)):
            raise ValueError(f"a lesson's {name} is out of range")
        return cls(numbers, tuple(names))


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
        texts: NDArray[np.int32],
        ids: NDArray[np.bytes_],
        keys: NDArray[np.bytes_],
        kinds: Labels,
        links: Labels,
        authors: Labels,
        recall: RecallIndex,
    ) -> None:
        self.digest = digest
        self.lines = lines  # (n, 2): start and end of each live lesson's line in the text
        self.headers = headers  # (n, 2): its section's header line; (-1, -1) above any section
        self.line_keys = line_keys  # line_key of each lesson's line, and of its section's header line
        self.header_keys = header_keys
        self.texts = texts  # (n, 2): where the lesson's text is in its line
        self.ids = ids
        self.keys = keys
        self.kinds = kinds
        self.links = links
        self.authors = authors
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
            "texts": self.texts,
            "ids": self.ids,
            "keys": self.keys,
            **self.kinds.arrays("kind"),
            **self.links.arrays("link"),
            **self.authors.arrays("author"),
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
        texts = take(arrays, "texts", np.int32, (count, 2))
        if count and not _spans_ordered(lines, headers):
            raise ValueError("the lessons' lines are out of order")
        if count and not bool(
            ((texts[:, 0] >= 0) & (texts[:, 0] <= texts[:, 1]) & (texts[:, 1] <= lines[:, 1] - lines[:, 0])).all()
        ):
            raise ValueError("a lesson's text lies outside its line")
        if not np.isfinite(recall.signals.stamps).all() or not bool(recall.signals.live.all()):
            raise ValueError("a superseded lesson is listed as live")
        return cls(
            digest=digest,
            lines=lines,
            headers=headers,
            line_keys=take(arrays, "line_keys", np.uint64, (count,)),
            header_keys=take(arrays, "header_keys", np.uint64, (count,)),
            texts=texts,
            ids=take(arrays, "ids", ID, (count,)),
            keys=take(arrays, "keys", KEY, (count,)),
            kinds=Labels.from_arrays(arrays, "kind", count),
            links=Labels.from_arrays(arrays, "link", count),
            authors=Labels.from_arrays(arrays, "author", count),
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

    def lesson(self, row: int, text: str) -> Lesson:
        """The lesson of this row, from what the index holds and its text's place in `text` (no parsing but of its
        category in the comment and the overview lines under it, which the index does not hold)."""
        start, line_end = self.lines[row].tolist()
        begin, end = self.texts[row].tolist()
        signals = self.recall.signals
        category, last_seen = marks_in(text[start:line_end])
        return Lesson(
            id=self.ids[row].decode("ascii", "replace"),
            text=text[start + begin : start + end],
            recorded_at=_EPOCH + timedelta(seconds=float(signals.stamps[row])),
            kind=self.kinds.value(row) or "note",
            link=self.links.value(row),
            pinned=bool(signals.pinned[row]),
            seen=int(signals.seen[row]),
            injected=int(signals.injected[row]),
            author=self.authors.value(row),
            category=category,
            overview=overview_at(text, line_end + 1),
            last_seen=last_seen,
        )


def _spans_ordered(lines: NDArray[np.int64], headers: NDArray[np.int64]) -> bool:
    """Every line after the one before, each below its own header (or above every section)."""
    starts, ends = lines[:, 0], lines[:, 1]
    above = headers[:, 0] < 0
    ordered = bool((starts >= 0).all() and (starts <= ends).all() and (np.diff(starts) > 0).all())
    headed = bool(
        ((above & (headers[:, 1] < 0)) | (~above & (headers[:, 1] < starts) & (headers[:, 0] <= headers[:, 1]))).all()
    )
    return ordered and headed
