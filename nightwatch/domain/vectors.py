"""Vectors: the meaning of each lesson as one unit vector, computed once when the lesson is written and kept beside it.

Vectors come from the Embedder port (all-MiniLM-L6-v2 in production) and are keyed by a hash of the lesson's exact
text, so a vector stays valid while its text does, whatever else changes in the file (hand edits of other lines,
compaction, a rename of the persona). A read embeds only the query; a lesson without a stored vector (typed in by
hand since the last write) scores on keywords alone until a write or a backfill embeds it.

Two lessons are compared as one point (curation's neighbours at write, reading's successions) by the larger of their
cosine and their cosine under the point map: a linear map of the encoder's space (`point_map.npy`, fitted on tune data
only by `python -m bench.point_map --save`) under which a lesson and its update or restatement read close and other
lessons of the same memory do not: "We ship to prod on Thursdays from now on" reads 0.55 close to "Deploys to production
happen on Tuesdays after the change board", at a cosine of 0.49. It only brings such a pair to the rules and the judge,
which still say whether it is an update or a restatement. A question is compared with lessons by the cosine alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.float32]

POINT_MAP = "point_map.npy"
_IN_PLACE: list[Matrix] = []  # maps put in place of the shipped one (`point_map_as`), innermost last


def vector_key(text: str) -> str:
    """The key of a text's vector: 16 hex characters of a hash of the exact text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def unit_rows(matrix: Matrix) -> Matrix:
    """The rows scaled to length 1 (zero rows stay zero), as contiguous float32."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    scaled: Matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return scaled


@dataclass(frozen=True, eq=False)
class VectorTable:
    """The vectors a memory keeps: one row of `matrix` per key (see vector_key)."""

    keys: tuple[str, ...]
    matrix: Matrix

    @classmethod
    def empty(cls, dimensions: int = 0) -> VectorTable:
        return cls((), np.zeros((0, dimensions), dtype=np.float32))

    @cached_property
    def rows(self) -> dict[str, int]:
        return {key: row for row, key in enumerate(self.keys)}

    @property
    def dimensions(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def missing(self, texts: Iterable[str]) -> list[str]:
        """The texts (each once, in order) that have no vector here."""
        return [text for text in dict.fromkeys(texts) if vector_key(text) not in self.rows]

    def with_texts(self, texts: Sequence[str], matrix: Matrix) -> VectorTable:
        """This table plus the vectors of `texts` (a text already here keeps its vector)."""
        fresh = {vector_key(text): row for row, text in enumerate(texts)}
        return self.with_rows(VectorTable(tuple(fresh), unit_rows(matrix[list(fresh.values())])))

    def with_rows(self, other: VectorTable) -> VectorTable:
        """This table plus the rows of `other` whose keys it lacks."""
        new = [key for key in other.keys if key not in self.rows]
        if not new:
            return self
        added = other.matrix[[other.rows[key] for key in new]]
        base = self.matrix if len(self.keys) else np.zeros((0, added.shape[1]), dtype=np.float32)
        return VectorTable((*self.keys, *new), np.concatenate([base, added]))

    def only(self, keys: Iterable[str]) -> VectorTable:
        """The rows of these keys only (what a rewrite keeps once lessons have gone)."""
        rows = sorted({self.rows[key] for key in keys if key in self.rows})
        if len(rows) == len(self.keys):
            return self
        return VectorTable(tuple(self.keys[row] for row in rows), self.matrix[rows])

    def aligned(self, keys: Sequence[str]) -> LessonVectors:
        """A matrix with one row per key, in order: its vector, or zeros where there is none."""
        rows = np.array([self.rows.get(key, -1) for key in keys], dtype=np.int64)
        present = rows >= 0
        if not present.any():
            return LessonVectors(np.zeros((len(keys), max(self.dimensions, 1)), dtype=np.float32), present)
        # One gather (a copy), then the missing rows zeroed: a masked assignment into zeros took 18 ms at 10,000 rows.
        matrix = np.ascontiguousarray(self.matrix[np.maximum(rows, 0)], dtype=np.float32)
        matrix[~present] = 0.0
        return LessonVectors(matrix, present)


@dataclass(frozen=True, eq=False)
class LessonVectors:
    """Unit vectors aligned with a sequence of lessons; `present` is False where a lesson has none yet."""

    matrix: Matrix
    present: NDArray[np.bool_]

    @property
    def complete(self) -> bool:
        return bool(self.present.all())

    def cosines(self, probe: Matrix) -> Matrix:
        """Each lesson's cosine similarity to the unit vector `probe` (0 where it has no vector)."""
        if probe.shape[0] != self.matrix.shape[1]:
            return np.zeros(len(self.present), dtype=np.float32)
        return self.matrix @ probe

    @cached_property
    def on_points(self) -> Matrix | None:
        """The vectors under the point map, unit length (None when the map is for another encoder's dimensions)."""
        return mapped(self.matrix)

    def closeness(self, probe: Matrix) -> Matrix:
        """Each lesson's closeness to the lesson vector `probe` as one point: the larger of their cosine and their
        cosine under the point map."""
        cosines = self.cosines(probe)
        lessons, probed = self.on_points, mapped(probe[None, :])
        if lessons is None or probed is None:
            return cosines
        closer: Matrix = np.maximum(cosines, lessons @ probed[0])
        return closer

    def same_point(self, positions: Sequence[int]) -> Matrix:
        """The closeness as one point of every two lessons at `positions`, as a square matrix in that order."""
        rows = self.matrix[list(positions)]
        cosines: Matrix = rows @ rows.T
        on_points = mapped(rows)  # only these rows: a read compares a few dozen lessons, not the memory
        if on_points is None:
            return cosines
        closer: Matrix = np.maximum(cosines, on_points @ on_points.T)
        return closer


def mapped(rows: Matrix) -> Matrix | None:
    """The rows under the point map, unit length; None when the map is for another encoder's dimensions."""
    space = _IN_PLACE[-1] if _IN_PLACE else point_map()
    return unit_rows(rows @ space) if rows.shape[1] == space.shape[0] else None


@cache
def point_map() -> Matrix:
    """The learned map of the encoder's space under which lessons on one point read close (see the module's doc)."""
    with resources.files(__package__).joinpath(POINT_MAP).open("rb") as stream:
        space: Matrix = np.load(stream).astype(np.float32)
    return space


@contextmanager
def point_map_as(space: Matrix) -> Iterator[None]:
    """Compare lessons as one point under `space` instead of the shipped map inside the block: a benchmark reads files
    held out of a map's fit under that map (`python -m bench.point_map --write-path`). Not for concurrent use."""
    _IN_PLACE.append(np.asarray(space, dtype=np.float32))
    try:
        yield
    finally:
        _IN_PLACE.pop()


def nearest(
    probe: Matrix, vectors: LessonVectors, *, limit: int, floor: float, as_point: bool = False
) -> list[tuple[int, float]]:
    """Positions of the `limit` lessons closest to `probe` with cosine >= floor, closest first, with the cosine; with
    `as_point`, closest as one point (`LessonVectors.closeness`)."""
    if not len(vectors.present):
        return []
    cosines = vectors.closeness(probe) if as_point else vectors.cosines(probe)
    candidates = np.flatnonzero((cosines >= floor) & vectors.present)
    best = candidates[np.argsort(-cosines[candidates], kind="stable")][:limit]
    return [(int(i), float(cosines[i])) for i in best]
