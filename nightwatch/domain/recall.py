"""Ranking and packing of lessons under a token budget.

Interface used by the memory service: `Recall.rank` orders lessons for a query, `Recall.select` packs the best of
them into a token budget (pinned lessons first), never over it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from nightwatch.domain.models import Lesson


@dataclass(frozen=True)
class Scored:
    lesson: Lesson
    score: float


class Recall:
    """Orders lessons by how much they matter for a query (first version: newest first)."""

    def __init__(self, *, half_life_days: float = 30.0) -> None:
        self.half_life_days = half_life_days

    def rank(self, lessons: Sequence[Lesson], query: str, now: datetime) -> list[Scored]:
        live = [lesson for lesson in lessons if not lesson.stale]
        ordered = sorted(live, key=lambda lesson: lesson.recorded_at, reverse=True)
        return [Scored(lesson, float(len(ordered) - i)) for i, lesson in enumerate(ordered)]

    def select(
        self,
        lessons: Sequence[Lesson],
        query: str,
        now: datetime,
        budget_tokens: int,
        cost: Callable[[Lesson], int],
    ) -> list[Lesson]:
        """The lessons to inject: pinned first, then by rank, while their summed `cost` fits `budget_tokens`."""
        ranked = [s.lesson for s in self.rank(lessons, query, now)]
        ordered = [lesson for lesson in ranked if lesson.pinned] + [lesson for lesson in ranked if not lesson.pinned]
        chosen: list[Lesson] = []
        spent = 0
        for lesson in ordered:
            price = cost(lesson)
            if spent + price <= budget_tokens:
                chosen.append(lesson)
                spent += price
        return chosen
