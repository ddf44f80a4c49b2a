"""The benchmark format (../shared/bench/README.md) and the figures computed over it."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from nightwatch.domain.models import Lesson


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    relevant: tuple[str, ...]
    kind: str
    stale: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    id: str
    memories: tuple[Lesson, ...]
    queries: tuple[Query, ...]
    duplicates: tuple[tuple[str, str], ...] = ()
    not_duplicates: tuple[tuple[str, str], ...] = ()
    split: str = "tune"  # settings are chosen on the "tune" half; the "report" half shows they carry over
    persona: str = "bench"
    project: str = "bench"

    @property
    def now(self) -> datetime:
        """The case's newest memory time: recency is measured from there."""
        return max(memory.recorded_at for memory in self.memories)


def load(path: str) -> list[Case]:
    """Cases from a JSON Lines file; unknown fields are ignored. Without a `split` field, cases alternate."""
    with open(path, encoding="utf-8") as handle:
        raw = [json.loads(line) for line in handle if line.strip()]
    return [_case(item, "tune" if number % 2 == 0 else "report") for number, item in enumerate(raw)]


def _time(raw: str) -> datetime:
    return datetime.fromisoformat(raw.replace("Z", "+00:00"))


def _ids(raw: Sequence[Any]) -> tuple[str, ...]:
    return tuple(str(item) for item in raw)


def _pairs(raw: Sequence[Sequence[Any]]) -> tuple[tuple[str, str], ...]:
    return tuple((str(a), str(b)) for a, b in raw)


def _case(raw: dict[str, Any], split: str) -> Case:
    memories = tuple(
        Lesson(id=str(m["id"]), text=m["text"], recorded_at=_time(m["created_at"])) for m in raw["memories"]
    )
    queries = tuple(
        Query(str(q["id"]), q["text"], _ids(q.get("relevant", [])), q.get("kind", "all"), _ids(q.get("stale", [])))
        for q in raw["queries"]
    )
    return Case(
        str(raw["id"]),
        memories,
        queries,
        _pairs(raw.get("duplicates", [])),
        _pairs(raw.get("not_duplicates", [])),
        str(raw.get("split", split)),
        str(raw.get("persona", "bench")),
        str(raw.get("project", raw["id"])),
    )


# --- figures ---------------------------------------------------------------------------------------------------


def found_share(found: Sequence[str], relevant: Sequence[str]) -> float:
    """The share of the relevant ids among `found`."""
    wanted = set(relevant)
    return len(wanted.intersection(found)) / len(wanted)


def stale_ok(order: Sequence[str], query: Query, k: int) -> bool:
    """Each stale memory is left out of the top k or ranks below the best-ranked relevant (newer) memory."""
    rank = {memory_id: i for i, memory_id in enumerate(order)}
    best = min((rank[r] for r in query.relevant if r in rank), default=len(order))
    return all(rank.get(s, len(order)) >= k or rank.get(s, len(order)) > best for s in query.stale)


@dataclass
class Tally:
    """Per-query figures summed overall and per kind, then averaged."""

    sums: dict[str, dict[str, float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, figures: dict[str, float]) -> None:
        for group in ("all", kind):
            self.counts[group] = self.counts.get(group, 0) + 1
            target = self.sums.setdefault(group, {})
            for name, value in figures.items():
                target[name] = target.get(name, 0.0) + value

    def mean(self, group: str) -> dict[str, float]:
        count = self.counts.get(group, 0)
        return {name: round(total / count, 4) for name, total in self.sums.get(group, {}).items()} if count else {}

    def report(self) -> dict[str, Any]:
        kinds = {kind: {**self.mean(kind), "queries": n} for kind, n in sorted(self.counts.items()) if kind != "all"}
        return {**self.mean("all"), "queries": self.counts.get("all", 0), "kinds": kinds}


def wilson(share: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a share of `n` pairs: how far the figure may move on another sample of that size."""
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - spread), min(1.0, centre + spread)


def percentiles(timings: Sequence[float]) -> dict[str, float | None]:
    """p50 and p95 in milliseconds."""
    if not timings:
        return {"p50_ms": None, "p95_ms": None}
    ordered = sorted(timings)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[round(0.95 * (len(ordered) - 1))], 3),
    }


def pairs_judged(cases: Sequence[Case], cosine: Callable[[str, str], float | None]) -> dict[str, float | None]:
    """Pairwise: the share of `duplicates` pairs is_duplicate merges, and of `not_duplicates` it keeps apart."""
    from nightwatch.domain.memory import is_duplicate

    merged = labelled = kept = apart = 0
    for case in cases:
        text = {memory.id: memory.text for memory in case.memories}
        for a, b in case.duplicates:
            labelled += 1
            merged += is_duplicate(text[a], text[b], cosine(text[a], text[b]))
        for a, b in case.not_duplicates:
            apart += 1
            kept += not is_duplicate(text[a], text[b], cosine(text[a], text[b]))
    return {
        "dedup_recall": round(merged / labelled, 4) if labelled else None,
        "not_duplicates_kept": round(kept / apart, 4) if apart else None,
    }
