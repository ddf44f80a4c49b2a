"""What became of the lessons offered to memory, counted for an operator: created, merged, superseded or refused.

Counting follows what a write reports (the recorded outcomes, the candidates the junk guard dropped); it never fails
the write: a tally that raises is logged and the lessons stay written.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from nightwatch.domain.memory.ports import LessonOutcome, LessonTally
from nightwatch.domain.memory.recording import Recorded

log = logging.getLogger(__name__)

# Recorded.action -> the outcome counted ("update" is the same entry in newer words: it supersedes its old wording).
OUTCOMES: dict[str, LessonOutcome] = {
    "create": "created",
    "merge": "merged",
    "supersede": "superseded",
    "update": "superseded",
    "skip": "refused",
}


class Tally:
    """Feeds a LessonTally (or nothing, without one) from what recording reported."""

    def __init__(self, counter: LessonTally | None) -> None:
        self._counter = counter

    def recorded(self, outcomes: Sequence[Recorded]) -> None:
        """Count each recorded candidate by what became of it."""
        for outcome, count in Counter(OUTCOMES[done.action] for done in outcomes if done.action in OUTCOMES).items():
            self._count(outcome, count)

    def refused(self, count: int) -> None:
        """Count candidates refused before recording (the junk guard)."""
        if count > 0:
            self._count("refused", count)

    def _count(self, outcome: LessonOutcome, count: int) -> None:
        if self._counter is None:
            return
        try:
            self._counter.lessons_counted(outcome, count)
        except Exception:  # a metric is never worth a lesson
            log.exception("could not count %d %s lesson(s)", count, outcome)
