"""A lesson set's prepared index: into arrays and back it ranks the same; arrays that make no index are refused."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, overload

import numpy as np
import pytest
from numpy.typing import NDArray

from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import LessonTerms, Recall, RecallIndex, RecallWeights
from nightwatch.domain.recall.index import KeywordWeights
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.domain.vectors import LessonVectors

NOW = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
WORDS = "auth token session cookie redis cache migration rollback schema index query latency retry flaky".split()


def lessons(count: int, seed: int = 3) -> tuple[Lesson, ...]:
    rng = random.Random(seed)
    return tuple(
        Lesson(
            id=f"{i:08x}",
            text=" ".join(rng.choices(WORDS, k=6)) + f" in svc_{i % 7}.py",
            recorded_at=NOW - timedelta(days=count - i // 3),
            link=f"t{i // 3}",
            pinned=i % 17 == 0,
            seen=1 + i % 4,
            injected=i % 5,
        )
        for i in range(count)
    )


def cost(lesson: Lesson) -> int:
    return estimate_tokens(f"- {lesson.text}\n")


def round_trip(prepared: RecallIndex, weights: KeywordWeights | None = None) -> RecallIndex:
    arrays = {name: np.array(array) for name, array in prepared.arrays().items()}  # copies, as a file would give
    return RecallIndex.from_arrays(arrays, weights or KeywordWeights())


class Counted(Sequence[Lesson]):
    """Lessons that count which positions were looked at."""

    def __init__(self, items: Sequence[Lesson]) -> None:
        self._items = items
        self.looked: set[int] = set()

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, at: int) -> Lesson: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[Lesson]: ...
    def __getitem__(self, at: int | slice) -> Lesson | Sequence[Lesson]:
        if isinstance(at, slice):
            raise AssertionError("the whole set was copied")
        self.looked.add(at)
        return self._items[at]

    def __iter__(self) -> Iterator[Lesson]:
        raise AssertionError("every lesson was looked at")


def test_an_index_made_into_arrays_and_back_ranks_and_selects_exactly_the_same() -> None:
    memory = lessons(300)
    recall = Recall()
    loaded = round_trip(recall.prepare(memory))
    rng = np.random.default_rng(1)
    vectors = LessonVectors(rng.normal(size=(300, 8)).astype(np.float32), rng.random(300) > 0.1)
    for query in ("auth token in svc_3.py", "flaky retry latency", "rollback", ""):
        fresh = Recall().rank(list(memory), query, NOW, vectors)
        again = Recall().rank(memory, query, NOW, vectors, prepared=loaded)
        assert [(hit.lesson, hit.score, hit.parts) for hit in again] == [
            (hit.lesson, hit.score, hit.parts) for hit in fresh
        ]
        assert Recall().select(memory, query, NOW, 300, cost, vectors, prepared=loaded) == Recall().select(
            list(memory), query, NOW, 300, cost, vectors
        )


def test_select_with_a_prepared_index_looks_only_at_the_lessons_it_packs() -> None:
    memory = lessons(2000)
    prepared = Recall().prepare(memory)
    counted = Counted(memory)
    chosen = Recall().select(counted, "session cookie", NOW, 200, cost, prepared=prepared)
    assert chosen
    assert len(counted.looked) < 100


def test_an_index_given_with_other_lessons_is_refused() -> None:
    memory = lessons(20)
    with pytest.raises(ValueError, match="20 lessons was given with 19"):
        Recall().select(memory[:19], "auth", NOW, 100, cost, prepared=Recall().prepare(memory))


def test_counts_changed_in_place_keep_the_index_and_weigh_the_new_counts() -> None:
    recall = Recall()
    memory = lessons(50)
    first = recall.prepare(memory)
    bumped = tuple(replace(lesson, seen=9) if i == 7 else lesson for i, lesson in enumerate(memory))
    second = recall.prepare(bumped)
    assert second.index is first.index
    assert second.signals.seen[7] == 9
    assert recall.prepare(bumped) is second  # the same tuple again is found as it is


def test_facts_are_worked_out_once_per_settings() -> None:
    prepared = Recall().prepare(lessons(30))
    weights = RecallWeights()
    assert prepared.facts(weights, 30.0) is prepared.facts(weights, 30.0)
    assert prepared.facts(weights, 7.0) is not prepared.facts(weights, 30.0)


def broken(arrays: dict[str, NDArray[Any]], name: str, value: NDArray[Any] | None) -> dict[str, NDArray[Any]]:
    changed = dict(arrays)
    if value is None:
        del changed[name]
    else:
        changed[name] = value
    return changed


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("docs", None, "no array 'docs'"),
        ("docs", "wrong type", "holds int64"),
        ("docs", "out of range", "out of range"),
        ("starts", "out of order", "out of order"),
        ("starts", "short", "shape"),
        ("impacts", "nan", "not a number"),
        ("terms", "twice", "listed twice"),
        ("terms", "not utf-8", "utf-8"),
        ("stamps", "short", "shape"),
        ("built_with", "other", "other keyword weights"),
    ],
)
def test_arrays_that_do_not_make_an_index_are_refused(name: str, value: str | None, why: str) -> None:
    arrays = {key: np.array(array) for key, array in Recall().prepare(lessons(40)).arrays().items()}
    original = arrays[name]
    changes: dict[str, Callable[[], NDArray[Any]]] = {
        "wrong type": lambda: original.astype(np.int64),
        "out of range": lambda: np.where(np.arange(len(original)) == 3, 40, original).astype(original.dtype),
        "out of order": lambda: original[::-1] + 0,
        "short": lambda: original[:-1],
        "nan": lambda: np.full_like(original, np.nan),
        "twice": lambda: np.frombuffer(b"auth\nauth", dtype=np.uint8),
        "not utf-8": lambda: np.frombuffer(b"\xff\xfe", dtype=np.uint8),
        "other": lambda: original + 1.0,
    }
    with pytest.raises(ValueError, match=why):
        RecallIndex.from_arrays(broken(arrays, name, None if value is None else changes[value]()), KeywordWeights())


def test_an_empty_lesson_set_round_trips() -> None:
    loaded = round_trip(Recall().prepare(()))
    assert loaded.size == 0
    assert Recall().select((), "auth", NOW, 100, cost, prepared=loaded) == []


def test_terms_gathered_from_another_set_are_those_made_from_nothing() -> None:
    rng = random.Random(8)
    before = [rng.choices(WORDS, k=rng.randint(0, 6)) for _ in range(40)]
    old = LessonTerms.of(before)
    for _ in range(20):
        rows = [rng.randrange(-1, len(before)) for _ in range(rng.randint(0, 50))]
        fresh = [rng.choices([*WORDS, "brand", "new", "words"], k=rng.randint(0, 5)) for row in rows if row < 0]
        texts = iter(fresh)
        wanted = [before[row] if row >= 0 else next(texts) for row in rows]
        gathered = old.gathered(np.array(rows, dtype=np.int64), fresh)
        made = LessonTerms.of(wanted)
        assert gathered.vocabulary == made.vocabulary
        assert gathered.numbers.tolist() == made.numbers.tolist()
        assert gathered.lengths.tolist() == made.lengths.tolist()
