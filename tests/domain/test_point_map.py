"""Two lessons compared as one point: the larger of their cosine and their cosine under the shipped point map."""

from __future__ import annotations

import numpy as np

from bench.point_map import OTHER, RESTATEMENT, STALE, Pairs, fit, mapped
from nightwatch.domain.vectors import LessonVectors, point_map, point_map_as, unit_rows


def lessons(matrix: np.ndarray) -> LessonVectors:
    return LessonVectors(unit_rows(matrix.astype(np.float32)), np.ones(len(matrix), dtype=bool))


def test_the_shipped_map_is_for_the_encoders_vectors() -> None:
    space = point_map()
    assert space.shape == (384, 384)
    assert space.dtype == np.float32
    assert np.isfinite(space).all()
    assert not np.allclose(space, np.eye(384))  # fitted, not the identity


def test_closeness_is_never_below_the_cosine_and_is_symmetric() -> None:
    vectors = lessons(np.random.default_rng(3).normal(size=(30, 384)))
    probe = vectors.matrix[0]
    assert (vectors.closeness(probe) >= vectors.cosines(probe) - 1e-6).all()
    square = vectors.same_point(range(30))
    assert np.allclose(square, square.T, atol=1e-6)
    assert np.allclose(np.diag(square), 1.0, atol=1e-5)
    assert (square >= vectors.matrix @ vectors.matrix.T - 1e-6).all()
    assert np.allclose(square[3], vectors.closeness(vectors.matrix[3]), atol=1e-5)


def test_vectors_of_another_size_are_compared_by_their_cosine() -> None:
    vectors = lessons(np.random.default_rng(4).normal(size=(5, 8)))
    assert vectors.on_points is None
    assert np.array_equal(vectors.closeness(vectors.matrix[1]), vectors.cosines(vectors.matrix[1]))
    assert np.allclose(vectors.same_point([0, 2, 4]), vectors.matrix[[0, 2, 4]] @ vectors.matrix[[0, 2, 4]].T)


def test_a_lesson_without_a_vector_is_close_to_nothing() -> None:
    matrix = unit_rows(np.random.default_rng(5).normal(size=(3, 384)).astype(np.float32))
    matrix[1] = 0.0
    vectors = LessonVectors(matrix, np.array([True, False, True]))
    assert vectors.closeness(matrix[0])[1] == 0.0
    assert vectors.same_point([0, 1])[0, 1] == 0.0


def test_fitting_brings_the_labelled_pairs_closer_than_the_others() -> None:
    """Pairs that share a hidden direction are labelled close; fitting lifts them above the other pairs."""
    rng = np.random.default_rng(7)
    dims, size = 16, 6
    vectors = np.zeros((4, size, dims))
    kinds = np.zeros((4, size, size), dtype=np.int8)
    for case in range(4):
        shared = rng.normal(size=dims)
        for i in range(size):
            vectors[case, i] = rng.normal(size=dims) + (0.8 * shared if i < 2 else 0.0)
        vectors[case] /= np.linalg.norm(vectors[case], axis=1, keepdims=True)
        kinds[case][np.triu_indices(size, 1)] = OTHER
        kinds[case, 0, 1] = STALE if case % 2 else RESTATEMENT
    data = Pairs(vectors, kinds)

    def gap(cosines: np.ndarray) -> float:
        return float(cosines[kinds >= STALE].mean() - cosines[kinds == OTHER].mean())

    before = gap(mapped(vectors, np.eye(dims))[0])
    after = gap(mapped(vectors, fit(data, steps=60, rate=3e-2))[0])
    assert after > before + 0.1


def test_a_map_put_in_place_is_used_inside_its_block_only() -> None:
    """A benchmark reads held-out files under a map fitted without them; the identity makes closeness the cosine."""
    vectors = lessons(np.random.default_rng(6).normal(size=(12, 384)))
    probe = vectors.matrix[0]
    shipped = vectors.same_point(range(12))
    with point_map_as(np.eye(384, dtype=np.float32)):
        inside = lessons(vectors.matrix)  # its mapped rows are computed under the map in place
        assert np.allclose(inside.closeness(probe), inside.cosines(probe), atol=1e-6)
        assert np.allclose(inside.same_point(range(12)), vectors.matrix @ vectors.matrix.T, atol=1e-6)
    assert np.allclose(lessons(vectors.matrix).same_point(range(12)), shipped, atol=1e-6)
    assert not np.allclose(shipped, vectors.matrix @ vectors.matrix.T, atol=1e-3)
