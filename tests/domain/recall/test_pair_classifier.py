"""bench.pair_classifier: neighbour pairs are labelled from the data set's own labels, the softmax learns, and the
figures count what they say."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bench import judge, pair_classifier
from bench.pair_classifier import NEITHER, RESTATES, UPDATES, Pair, Softmax, figures
from bench.retrieval_data import Case, Query
from bench.vectors import CachedEncoder
from nightwatch.adapters.encoder import embeddings
from nightwatch.domain.memory import vectors
from nightwatch.domain.models import Lesson


def lesson(id: str, text: str, day: int) -> Lesson:
    return Lesson(id=id, text=text, recorded_at=datetime(2026, 3, day, tzinfo=UTC))


CASE = Case(
    id="tiny",
    memories=(
        lesson("m1", "Audit logs are retained for 7 years in the ledger archive.", 1),
        lesson("m2", "Ledger audit logs are kept seven years in the archive.", 2),
        lesson("m3", "Ledger audit logs are kept 10 years since the inspection.", 3),
        lesson("m4", "Deploy logs are kept 10 days in the build bucket.", 4),
    ),
    queries=(Query("q1", "How long are audit logs kept?", ("m3",), "update", stale=("m1",)),),
    duplicates=(("m1", "m2"),),
    not_duplicates=(("m3", "m4"),),
)


@pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed")
def test_neighbour_pairs_carry_the_data_sets_labels(tmp_path: Path) -> None:
    id_of = {memory.text: memory.id for memory in CASE.memories}
    found = {(id_of[p.older], id_of[p.newer]): p for p in pair_classifier.pairs(CASE, CachedEncoder(tmp_path / "v"))}
    assert found[("m1", "m2")].label == RESTATES
    assert found[("m1", "m3")].label == UPDATES  # the stale lesson against its successor
    assert found[("m2", "m3")].label == NEITHER  # a restatement of the stale lesson is not labelled
    assert {key for key, pair in found.items() if pair.look_alike} == {("m3", "m4")}
    assert all(older < newer for older, newer in found)  # each lesson against the ones recorded before it


def test_the_softmax_learns_a_separable_problem() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 2))
    y = np.where(x[:, 0] > 1, RESTATES, np.where(x[:, 1] > 1, UPDATES, NEITHER))
    p = Softmax(x, y, penalty=0.1, steps=1500).probabilities(x)
    assert np.mean(p.argmax(1) == y) > 0.9
    assert np.allclose(p.sum(1), 1.0)


def test_figures_count_merges_look_alikes_kept_apart_and_updates_seen() -> None:
    def pair(label: int, look_alike: bool = False) -> Pair:
        return Pair("a", "b", 0.8, 0, label, look_alike, ("c", "b"), np.zeros(1))

    found = [pair(RESTATES), pair(RESTATES), pair(NEITHER, look_alike=True), pair(UPDATES)]
    counts = figures(found, np.array([RESTATES, NEITHER, RESTATES, UPDATES]))
    assert counts.tolist() == [1, 2, 0, 1, 1, 1]


def test_the_judges_figures_carry_the_encoders_reading_and_a_fold_judges_only_while_asked() -> None:
    older, newer = CASE.memories[0].text, CASE.memories[1].text
    pair = Pair(older, newer, 0.9, 0, RESTATES, False, ("tiny", "m2"), np.zeros(2))

    class Reader:
        def alignment(self, pairs: list[tuple[str, str]]) -> np.ndarray:
            assert pairs == [(older, newer)]
            return np.array([[0.9, 0.8, 0.3, 0.2, 0.1, 0.0, 0.7]], dtype=np.float32)

    rows = judge.rows_of([pair], Reader())  # type: ignore[arg-type]
    assert rows.shape == (1, len(vectors.SIGNALS))
    reading = vectors.SIGNALS.index("aligned_mean")
    assert rows[0, reading : reading + 7].tolist() == pytest.approx([0.9, 0.8, 0.3, 0.2, 0.1, 0.0, 0.7])
    fold = judge.fitted(["a"], {"a": np.vstack([rows, rows - 1.0])}, {"a": np.array([True, False])})
    first = judge.fitted(["a"], {"a": np.vstack([rows, rows - 1.0])}, {"a": np.array([True, False])}, signals=13)
    assert np.all(fold.weights[13:] != 0.0)
    assert first.weights[13:].tolist() == [0.0] * (len(vectors.SIGNALS) - 13)
    assert np.all(first.weights[:13] != 0.0)
    shipped = vectors.judge()
    with judge.judging_by(fold):
        assert vectors.judge() is fold
    assert vectors.judge() is shipped
