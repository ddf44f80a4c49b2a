"""Reading's learned check: of two lessons on one point that a question reads, the older goes when it is out of date."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from bench.read_check import Read, fitted, report, simulated
from nightwatch.domain.classifier import Logistic
from nightwatch.domain.memory import LessonSuccession
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import succession
from nightwatch.domain.recall.succession import FIGURES, Pair, newer_first, pair_figures, pairs, read_check
from nightwatch.domain.vectors import LessonVectors

JANUARY, JULY = datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 7, 2, tzinfo=UTC)
# No word of change, no amount: the rules read nothing between these two, whatever their vectors say.
OLDER = Lesson("older", "Deploys go out after the change board signs off.", JANUARY)
NEWER = Lesson("newer", "Production releases need sign-off from two reviewers.", JULY)
ORDER = np.array([1, 0], dtype=np.int64)  # the newer ranks first


def vectors(*rows: list[float]) -> LessonVectors:
    matrix = np.array(rows, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return LessonVectors(matrix, np.ones(len(rows), dtype=bool))


# The question reads along the first axis: 0.85 to the older, 0.90 to the newer; the two are 0.55 apart.
BOTH_ANSWER = vectors([0.85, 0.527, 0.0], [0.9, -0.408, 0.153])
COSINES = BOTH_ANSWER.matrix[:, 0].copy()


def always(yes: bool) -> Logistic:
    size = len(FIGURES)
    bias = 10.0 if yes else -10.0
    return Logistic(FIGURES, np.zeros(size), np.ones(size), np.zeros(size), bias, 0.875)


def left_out(lessons: list[Lesson], table: LessonVectors, question: str, cosines: np.ndarray | None) -> frozenset[int]:
    return newer_first(lessons, ORDER, table, LessonSuccession(), frozenset(), question, cosines)[1]


def test_the_shipped_weights_read_the_figures_in_the_order_they_are_given() -> None:
    check = read_check()
    assert check.features == FIGURES
    assert 0.5 < check.threshold < 1.0
    pair = Pair(0, 1, 1, 0, 0.55)
    figures = pair_figures([OLDER, NEWER], pair, "How do releases get approved?", COSINES, LessonSuccession())
    assert len(figures) == len(FIGURES)
    named = dict(zip(FIGURES, figures, strict=True))
    assert named["question_newer"] == pytest.approx(0.9, abs=1e-3)
    assert named["question_gain"] == pytest.approx(0.05, abs=1e-3)
    assert named["newer_above"] == 1.0
    assert named["days_apart"] == pytest.approx(np.log1p(178), abs=1e-6)


def test_of_two_lessons_that_both_answer_a_question_the_older_goes() -> None:
    lessons = [OLDER, NEWER]
    assert left_out(lessons, BOTH_ANSWER, "How do releases get approved?", None) == frozenset()  # the rules keep both
    assert left_out(lessons, BOTH_ANSWER, "How do releases get approved?", COSINES) == {0}


def test_a_question_about_what_only_the_older_says_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The question reads near the older and far from the newer, and names words only the older has."""
    table = vectors([0.9, 0.436, 0.0], [0.5, 0.3, 0.812])  # still one point: 0.58 apart
    cosines = table.matrix[:, 0].copy()
    question = "When does the change board sign off deploys?"
    assert left_out([OLDER, NEWER], table, question, cosines) == frozenset()
    monkeypatch.setattr(succession, "read_check", lambda: always(True))
    assert left_out([OLDER, NEWER], table, question, cosines) == {0}  # the pair was read, and the check kept it


def test_the_check_never_reads_a_pinned_lesson_one_recorded_with_it_or_one_on_another_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(succession, "read_check", lambda: always(True))
    question = "How do releases get approved?"
    pinned = Lesson("older", OLDER.text, JANUARY, pinned=True)
    assert (
        newer_first([pinned, NEWER], ORDER, BOTH_ANSWER, LessonSuccession(), frozenset({0}), question, COSINES)[1]
        == frozenset()
    )
    same_day = Lesson("newer", NEWER.text, JANUARY)
    assert left_out([OLDER, same_day], BOTH_ANSWER, question, COSINES) == frozenset()
    apart = vectors([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])  # a cosine of 0: not one point
    assert left_out([OLDER, NEWER], apart, question, apart.matrix[:, 0].copy()) == frozenset()
    assert left_out([OLDER, NEWER], BOTH_ANSWER, question, COSINES) == {0}
    monkeypatch.setattr(succession, "read_check", lambda: always(False))
    assert left_out([OLDER, NEWER], BOTH_ANSWER, question, COSINES) == frozenset()


def test_pairs_come_older_first_with_their_places_and_skip_what_is_already_left_out() -> None:
    third = Lesson("third", "Hotfixes skip the change board.", datetime(2026, 3, 1, tzinfo=UTC))
    table = vectors([1.0, 0.1, 0.0], [0.9, 0.3, 0.0], [0.95, 0.0, 0.2])
    lessons = [OLDER, NEWER, third]
    found = list(pairs(lessons, [1, 0, 2], table.same_point([1, 0, 2]), frozenset(), set()))
    assert {(p.older, p.newer) for p in found} == {(0, 1), (0, 2), (2, 1)}
    first = next(p for p in found if (p.older, p.newer) == (0, 1))
    assert (first.place_older, first.place_newer) == (1, 0)
    assert first.closeness == pytest.approx(float(table.matrix[0] @ table.matrix[1]), abs=1e-5)
    assert {(p.older, p.newer) for p in pairs(lessons, [1, 0, 2], table.same_point([1, 0, 2]), frozenset(), {0})} == {
        (2, 1)
    }


def read(stale_in: bool, answer_in: bool, older: str, probability_figure: float) -> Read:
    return Read(
        block={"s", "a"} if stale_in and answer_in else {"s"} if stale_in else {"a"},
        relevant=["a"],
        stale=["s"],
        older=[older],
        rows=[[probability_figure] + [0.0] * (len(FIGURES) - 1)],
        labels=[1 if older == "s" else 0],
    )


def test_the_benchmark_learns_from_labelled_pairs_and_counts_what_leaving_out_costs() -> None:
    """The first figure alone tells a stale older lesson (high) from an answer (low); leaving out costs answers."""
    training = [read(True, True, "s", 1.0 + i / 10) for i in range(20)]
    training += [read(True, True, "a", -1.0 - i / 10) for i in range(20)]
    model = fitted(training, threshold=0.5)
    assert model.probability([2.0] + [0.0] * (len(FIGURES) - 1)) > 0.9
    held = [read(True, True, "s", 2.0), read(True, True, "a", -2.0), read(False, True, "s", 2.0)]
    stale, stale_in, out, questions, found, lost = simulated(held, model, 0.5)
    assert (stale, stale_in, out) == (3, 2, 1)  # the third's stale lesson was out of its block already
    assert (questions, found, lost) == (3, 3.0, 0.0)
    wrong = [read(True, True, "a", 2.0)]  # the model is sure, and wrong: an answer leaves the block
    assert simulated(wrong, model, 0.5)[5] == 1.0
    line = report({0.5: simulated(held, model, 0.5)})[1]
    assert "stale left out 0.333 -> 0.667 (+1 of 3)" in line
    assert "(-0.0 answers of 3 questions)" in line
