"""Reading prefers the newer of two lessons on the same point, with curation's rule for an update."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import numpy as np
import pytest

from nightwatch.domain.memory import LessonSuccession
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import Recall
from nightwatch.domain.recall.succession import asks_older, newer_first
from nightwatch.domain.vectors import LessonVectors

NOW = datetime(2026, 6, 1, tzinfo=UTC)
OLD = Lesson("old", "Rotate the API keys every 90 days.", datetime(2026, 1, 5, tzinfo=UTC), seen=4)
NEW = Lesson("new", "Rotate API keys every 30 days now, not 90.", datetime(2026, 5, 2, tzinfo=UTC))
OTHER = Lesson("other", "Deploys happen on Thursdays.", datetime(2026, 2, 1, tzinfo=UTC))


class QueryEncoder:
    """Embeds any query along the first axis, which the stale lesson matches best."""

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


def vectors(*rows: list[float]) -> LessonVectors:
    matrix = np.array(rows, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return LessonVectors(matrix, np.ones(len(rows), dtype=bool))


def recall(succession: LessonSuccession | None) -> Recall:
    return Recall(encoder=QueryEncoder(), succession=succession)


def test_the_newer_lesson_ranks_first_and_the_older_leaves_the_block() -> None:
    lessons = [OLD, NEW, OTHER]
    table = vectors([1.0, 0.1, 0.0], [0.8, 0.5, 0.0], [0.0, 0.0, 1.0])  # old and new about 0.89 apart
    without = [s.lesson.id for s in recall(None).rank(lessons, "how often do we rotate keys", NOW, table)]
    assert without.index("old") < without.index("new"), "the stale lesson matches the query better on its own"
    ranked = [s.lesson.id for s in recall(LessonSuccession()).rank(lessons, "how often do we rotate keys", NOW, table)]
    assert ranked.index("new") < ranked.index("old")
    chosen = recall(LessonSuccession()).select(lessons, "rotate keys", NOW, 1000, lambda _: 10, table)
    assert [lesson.id for lesson in chosen if lesson.id != "other"] == ["new"]


def test_two_lessons_about_other_things_keep_their_order_and_places() -> None:
    other = Lesson("ios", "The iOS build must stay under 150 MB.", datetime(2026, 1, 5, tzinfo=UTC), seen=4)
    lookalike = Lesson("android", "The Android build must stay under 200 MB.", datetime(2026, 5, 2, tzinfo=UTC))
    table = vectors([1.0, 0.1, 0.0], [0.8, 0.5, 0.0])
    chosen = recall(LessonSuccession()).select([other, lookalike], "build size", NOW, 1000, lambda _: 10, table)
    assert {lesson.id for lesson in chosen} == {"ios", "android"}


def test_a_pinned_lesson_is_never_left_out() -> None:
    pinned = Lesson("old", OLD.text, OLD.recorded_at, pinned=True)
    table = vectors([1.0, 0.1, 0.0], [0.8, 0.5, 0.0])
    chosen = recall(LessonSuccession()).select([pinned, NEW], "rotate keys", NOW, 1000, lambda _: 10, table)
    assert {lesson.id for lesson in chosen} == {"old", "new"}


def test_a_lesson_restated_after_the_newer_one_keeps_its_place() -> None:
    table = vectors([1.0, 0.1, 0.0], [0.8, 0.5, 0.0])
    for last_seen, kept in ((date(2026, 5, 20), {"old", "new"}), (date(2026, 4, 1), {"new"})):
        old = replace(OLD, seen=5, last_seen=last_seen)  # said again after the newer lesson, or before it
        chosen = recall(LessonSuccession()).select([old, NEW], "rotate keys", NOW, 1000, lambda _: 10, table)
        assert {lesson.id for lesson in chosen} == kept, last_seen


def test_a_newer_amount_ranks_first_and_the_older_goes_when_the_two_answer_the_question_best() -> None:
    kept = Lesson("kept", "Audit logs are retained for 7 years.", datetime(2026, 1, 5, tzinfo=UTC), seen=4)
    text = "Audit logs are kept 10 years after the regulator's inspection in May."
    longer = Lesson("longer", text, datetime(2026, 5, 2, tzinfo=UTC))
    table = vectors([1.0, 0.1, 0.0], [0.8, 0.5, 0.0])
    without = [s.lesson.id for s in recall(None).rank([kept, longer], "audit log retention", NOW, table)]
    assert without == ["kept", "longer"]
    ranked = [s.lesson.id for s in recall(LessonSuccession()).rank([kept, longer], "audit log retention", NOW, table)]
    assert ranked == ["longer", "kept"]
    chosen = recall(LessonSuccession()).select([kept, longer], "audit logs", NOW, 1000, lambda _: 10, table)
    assert {lesson.id for lesson in chosen} == {"longer"}  # both answer it best: the newer holds what is true now


def test_a_newer_amount_leaves_the_older_out_of_a_question_the_older_ranks_below_on() -> None:
    kept = Lesson("kept", "Audit logs are retained for 7 years.", datetime(2026, 1, 5, tzinfo=UTC))
    text = "Audit logs are kept 10 years after the regulator's inspection in May."
    longer = Lesson("longer", text, datetime(2026, 5, 2, tzinfo=UTC))
    table = vectors([0.8, 0.5, 0.0], [1.0, 0.1, 0.0])  # the query matches the newer better on its own
    without = [s.lesson.id for s in recall(None).rank([kept, longer], "audit log retention", NOW, table)]
    assert without == ["longer", "kept"]
    chosen = recall(LessonSuccession()).select([kept, longer], "audit logs", NOW, 1000, lambda _: 10, table)
    assert [lesson.id for lesson in chosen] == ["longer"]


Pairs = set[tuple[str, str]] | frozenset[tuple[str, str]]


class ByPairs:
    """A Succession that answers from a table: (older, newer) pairs that rank first, and those that retire."""

    def __init__(self, ranks: Pairs, retires: Pairs, below: Pairs = frozenset(), first: Pairs = frozenset()) -> None:
        self._ranks, self._retires, self._below = ranks, retires, below  # below: retires only when ranked below
        self._first = first  # ... only as the question's two best answers

    def replaces(self, older: str, newer: str, similarity: float) -> bool:
        return (older, newer) in self._ranks

    def retires(
        self, older: str, newer: str, similarity: float, *, ranked_below: bool = False, first_two: bool = False
    ) -> bool:
        pair = (older, newer)
        return pair in self._retires or (ranked_below and pair in self._below) or (first_two and pair in self._first)


def test_a_successor_that_retires_the_older_wins_over_one_that_only_ranks_first() -> None:
    days = [datetime(2026, month, 1, tzinfo=UTC) for month in (1, 2, 3)]
    lessons = [Lesson(text, text, day) for text, day in zip(("a", "b", "c"), days, strict=True)]
    same = vectors([1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    succession = ByPairs(ranks={("a", "b"), ("a", "c")}, retires={("a", "c")})
    order, left_out = newer_first(lessons, np.array([0, 1, 2]), same, succession)
    assert left_out == {0}  # "b" was met first and only ranks first; "c" retires "a"
    assert order.tolist().index(2) < order.tolist().index(0)


def test_the_older_is_asked_about_as_ranked_below_only_when_the_ranking_puts_it_below() -> None:
    days = [datetime(2026, month, 1, tzinfo=UTC) for month in (1, 2)]
    lessons = [Lesson(text, text, day) for text, day in zip(("a", "b"), days, strict=True)]
    same = vectors([1.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    succession = ByPairs(ranks={("a", "b")}, retires=set(), below=frozenset({("a", "b")}))
    order, left_out = newer_first(lessons, np.array([0, 1]), same, succession)
    assert left_out == set()  # the older ranked first: the newer only takes its place
    assert order.tolist() == [1, 0]
    order, left_out = newer_first(lessons, np.array([1, 0]), same, succession)
    assert left_out == {0}


def test_of_a_questions_two_best_answers_the_older_can_go_without_ranking_the_newer_first() -> None:
    days = [datetime(2026, month, 1, tzinfo=UTC) for month in (1, 2, 3)]
    lessons = [Lesson(text, text, day) for text, day in zip(("a", "other", "b"), days, strict=True)]
    same = vectors([1.0, 0.0, 0.0], [1.0, 0.1, 0.0], [1.0, 0.0, 0.0])
    succession = ByPairs(ranks=set(), retires=set(), first=frozenset({("a", "b")}))
    order, left_out = newer_first(lessons, np.array([0, 2, 1]), same, succession)
    assert left_out == {0}  # "a" and "b" answer the question best: the newer holds what is true now
    assert order.tolist().index(2) < order.tolist().index(0)
    order, left_out = newer_first(lessons, np.array([0, 1, 2]), same, succession)
    assert left_out == set()  # "b" is only the third answer: nothing is left out
    assert order.tolist() == [0, 1, 2]


ADMIN = Lesson("admin", "Audit logs for the admin console are kept for one year.", datetime(2026, 1, 5, tzinfo=UTC))
PAYMENTS = Lesson("payments", "Audit logs for the payment APIs are kept for 7 years.", datetime(2026, 5, 2, tzinfo=UTC))


def test_a_question_naming_what_only_the_older_look_alike_says_keeps_it_in_the_block() -> None:
    table = vectors([1.0, 0.1, 0.0], [0.9, 0.2, 0.0])  # the question's two best answers, another amount each

    def block(question: str) -> list[str]:
        chosen = recall(LessonSuccession()).select([ADMIN, PAYMENTS], question, NOW, 1000, lambda _: 10, table)
        return [lesson.id for lesson in chosen]

    assert set(block("How long are admin console audit logs kept?")) == {"admin", "payments"}
    assert block("How long are audit logs kept?") == ["payments"]  # without the older's words, the newer replaces it


@pytest.mark.parametrize(
    ("question", "older", "newer", "asked"),
    [
        ("admin console audit logs", ADMIN.text, PAYMENTS.text, True),
        ("How long are audit logs kept?", ADMIN.text, PAYMENTS.text, False),  # names nothing only the older says
        ("admin console and payment API audit logs", ADMIN.text, PAYMENTS.text, False),  # names both: no preference
        (
            "seat availability caching",
            "The seat map service caches seat availability for 60 seconds.",
            "The seat map service caches aircraft cabin layouts for 7 days.",
            True,
        ),
        (
            "What Postgres version is crew_prod on?",
            "Crew database crew_prod runs Postgres 13 on our own RDS instance.",
            "crew_prod is on Postgres 16 since the May maintenance window.",
            False,
        ),
        (
            "How long are driver location trails kept?",
            "Driver location trails are kept for 90 days in the warehouse.",
            "Location trails are deleted after 30 days following the data-protection review.",
            False,
        ),  # reworded
        (
            "What does an adult public skate ticket cost?",
            "An adult public skate ticket costs 7 EUR.",
            "Adult public skate went up to 8.50 EUR.",
            False,
        ),  # in the older's words' place, the newer only says what changed
        (
            "Until when can a standard ticket be refunded?",
            "Standard tickets in Seatmap are refundable until 2 hours before departure.",
            "The Seatmap booking window is back down to 120 days before departure.",
            True,
        ),  # the newer names nothing the question asks, the older does
    ],
)
def test_asks_older_needs_one_sentence_with_the_asked_word_exchanged(
    question: str, older: str, newer: str, asked: bool
) -> None:
    assert asks_older(question, older, newer) is asked


def test_a_lesson_that_says_it_stands_beside_another_never_leaves_it_out() -> None:
    kegs = "Low-stock banner threshold for kegs is 20 now."
    canned = "Canned SKUs have their own low-stock banner threshold in TapLine: under 50 cases."
    assert not LessonSuccession().retires(kegs, canned, 0.65, first_two=True)
    moved = "The keg low-stock banner threshold is 25 now, kept in a separate config file."
    assert LessonSuccession().retires(kegs, moved, 0.8, first_two=True)  # it says what changed
