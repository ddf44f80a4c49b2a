"""What recall works out once per set of lessons, whatever the query: the keyword index and each lesson's signals.

Signals are the query-free parts of a score (when a lesson was recorded, how often it was seen and injected, its pin,
whether it is live); facts are those signals weighed by one Recall's settings. A `RecallIndex` holds both and can
be turned into named arrays and back, so a memory's read index (memory/read_index.py) can keep it beside the file
and a new process need not analyse and index 10,000 lessons again.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays, take
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall.fusion import RecallWeights
from nightwatch.domain.recall.index import KeywordWeights, LessonIndex

_DAY_SECONDS = 86400.0


@dataclass(frozen=True, eq=False)
class Signals:
    """Each lesson's query-free signals, by position."""

    stamps: NDArray[np.float64]  # when it was recorded (POSIX seconds)
    seen: NDArray[np.int64]
    injected: NDArray[np.int64]
    pinned: NDArray[np.bool_]
    live: NDArray[np.bool_]  # not superseded

    @classmethod
    def of(cls, lessons: Sequence[Lesson]) -> Signals:
        return cls(
            np.array([lesson.recorded_at.timestamp() for lesson in lessons], dtype=np.float64),
            np.array([lesson.seen for lesson in lessons], dtype=np.int64),
            np.array([lesson.injected for lesson in lessons], dtype=np.int64),
            np.array([lesson.pinned for lesson in lessons], dtype=np.bool_),
            np.array([lesson.superseded_by is None for lesson in lessons], dtype=np.bool_),
        )

    def __len__(self) -> int:
        return len(self.stamps)


class Facts:
    """The signals weighed by one Recall's settings: live positions later first, pins, recency base and use."""

    def __init__(self, signals: Signals, weights: RecallWeights, half_life_days: float) -> None:
        self.live = np.ascontiguousarray(np.flatnonzero(signals.live)[::-1], dtype=np.int64)  # later first
        self.pinned = frozenset(int(i) for i in np.flatnonzero(signals.live & signals.pinned))
        stamps = signals.stamps
        self.newest = float(stamps.max(initial=0.0))
        self.rate = math.log(2.0) / (half_life_days * _DAY_SECONDS) if half_life_days > 0 else 0.0
        recency = weights.recency if half_life_days > 0 else 0.0
        # Recency relative to the newest lesson; one factor per query brings it to `now`.
        self.recency = (recency * np.exp(-self.rate * (self.newest - stamps))).astype(np.float32)
        uses = (np.maximum(signals.seen - 1, 0) + weights.injected_share * np.maximum(signals.injected, 0)).astype(
            np.float32
        )
        # Saturating: the third repeat matters less than the first.
        self.usage = (weights.usage * uses / (uses + 3.0)).astype(np.float32)

    def recency_at(self, now: datetime) -> NDArray[np.float32]:
        """What recency adds to each lesson's score at `now`."""
        factor = math.exp(-self.rate * (now.timestamp() - self.newest))
        if factor <= 1.0:
            return self.recency * np.float32(factor)
        # A lesson dated after `now` (clock skew): count it as fresh rather than fresher than fresh.
        capped: NDArray[np.float32] = np.minimum(self.recency * np.float32(factor), self.recency.max(initial=0.0))
        return capped


class RecallIndex:
    """One lesson set's keyword index and signals, by position; `source` is the sequence it was made from, if any."""

    def __init__(self, index: LessonIndex, signals: Signals, source: Sequence[Lesson] | None = None) -> None:
        if index.size != len(signals):
            raise ValueError(f"an index of {index.size} lessons cannot go with the signals of {len(signals)}")
        self.index = index
        self.signals = signals
        self.source = source
        self._facts: dict[tuple[RecallWeights, float], Facts] = {}
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return self.index.size

    def facts(self, weights: RecallWeights, half_life_days: float) -> Facts:
        """The signals weighed by these settings (worked out once per settings)."""
        key = (weights, half_life_days)
        with self._lock:
            known = self._facts.get(key)
        if known is None:
            known = Facts(self.signals, weights, half_life_days)
            with self._lock:
                self._facts[key] = known
        return known

    def arrays(self) -> dict[str, NDArray[Any]]:
        """Everything as named arrays (see `from_arrays`)."""
        signals = self.signals
        return {
            **self.index.arrays(),
            "stamps": signals.stamps,
            "seen": signals.seen,
            "injected": signals.injected,
            "pinned": signals.pinned,
            "live": signals.live,
        }

    @classmethod
    def from_arrays(cls, arrays: Arrays, weights: KeywordWeights) -> RecallIndex:
        """The index `arrays()` gave; ValueError when they do not make one, or one built with other weights."""
        index = LessonIndex.from_arrays(arrays, weights)
        size = (index.size,)
        signals = Signals(
            take(arrays, "stamps", np.float64, size),
            take(arrays, "seen", np.int64, size),
            take(arrays, "injected", np.int64, size),
            take(arrays, "pinned", np.bool_, size),
            take(arrays, "live", np.bool_, size),
        )
        if not np.isfinite(signals.stamps).all():
            raise ValueError("a lesson's date is not a number")
        return cls(index, signals)
