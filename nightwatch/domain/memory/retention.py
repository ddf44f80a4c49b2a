"""Which lessons a compaction keeps: the rules' compaction, and the check a model's compaction must pass.

The rules (used without a model, and whenever a model's answer is refused) first merge restatements (curation's
`is_duplicate`, by meaning where both lessons have a vector): the newer wording stays, unless the older one must be
kept, and it takes the other's counts and pin. Then they keep every lesson that must stay (pinned, and those recorded
in the current deliberation, `protect`) and the newest lessons (a lesson seen again is as new as the day it was last
seen: a point the team keeps making is not old), up to the target; and beside them a few of the most used (seen
again or injected often), a tenth of the target more. The most used take no place of the newest: a compaction that
runs just before a run of new lessons still keeps the target's worth of the newest. Lessons kept stay where they
were in the file, word for word.

A model's compaction is accepted only when it keeps every lesson that must stay and the recent ones (the newest few
recorded the day it runs): otherwise it is refused and the rules compact instead.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta

import numpy as np

from nightwatch.domain.memory.curation import is_duplicate
from nightwatch.domain.memory.document import MemoryDocument
from nightwatch.domain.memory.format import Section
from nightwatch.domain.memory.recording import Entry, Recorded
from nightwatch.domain.models import Lesson
from nightwatch.domain.vectors import VectorTable, vector_key

USED_SHARE = 0.1  # beside the target's newest, this share of the target more is kept for the most used lessons
RECENT_DAYS = 0  # a lesson recorded this many days before the compaction, or fewer (0: that day), is recent ...
RECENT_SHARE = 0.2  # ... when it is among the newest this share of the target: a model must keep those
NEAR_FLOOR = 0.4  # pairs less close in meaning than this are not asked whether one restates the other
_BLOCK = 512  # rows of cosines computed at once
_WORDS_PAIRS_AT_MOST = 40_000  # without vectors every pair is compared by words; past this many, only neighbours


@dataclass(frozen=True)
class Retention:
    """The rules' choice: the lessons kept (by id), and restatements merged (dropped id -> the id it merged into)."""

    keep: frozenset[str]
    merged: dict[str, str]


def newest_first(live: Sequence[Lesson]) -> list[Lesson]:
    """Live lessons from the newest: by the day they were recorded or last seen again, then by place in the file
    (later is newer)."""
    order = sorted(range(len(live)), key=lambda i: (live[i].last_said, i), reverse=True)
    return [live[i] for i in order]


def recent(live: Sequence[Lesson], target: int, day: date) -> frozenset[str]:
    """The lessons a model's compaction must keep: the newest few (RECENT_SHARE of the target) of the last days."""
    since = day - timedelta(days=RECENT_DAYS)
    newest = [lesson for lesson in newest_first(live) if lesson.last_said.date() >= since]
    return frozenset(lesson.id for lesson in newest[: max(1, round(target * RECENT_SHARE))])


def refusal(before: Sequence[Lesson], after: Sequence[Lesson], must: Collection[str]) -> str | None:
    """Why a compaction's result cannot be accepted (it drops a lesson in `must`), or None when it can."""
    kept = {lesson.id for lesson in after}
    dropped = [lesson for lesson in before if lesson.id in must and lesson.id not in kept]
    if not dropped:
        return None
    named = ", ".join(lesson.id for lesson in dropped[:3]) + (" …" if len(dropped) > 3 else "")
    return f"the model's compaction dropped {len(dropped)} recent, pinned or just-recorded lesson(s) ({named})"


def retain(
    live: Sequence[Lesson], target: int, protect: Collection[str] = (), table: VectorTable | None = None
) -> Retention:
    """Choose what the rules keep of `live` (see the module docstring)."""
    must = {lesson.id for lesson in live if lesson.pinned} | (set(protect) & {lesson.id for lesson in live})
    merged = restatements(live, must, table)
    left = [lesson for lesson in live if lesson.id not in merged]
    must |= {_root(lid, merged) for lid in merged if lid in must}
    free = max(0, target - len(must))
    others = [lesson for lesson in newest_first(left) if lesson.id not in must]
    use = _uses(live, merged)
    rest = others[free:]
    used = sorted((lesson for lesson in rest if use[lesson.id] > 0), key=lambda lesson: -use[lesson.id])
    chosen = [*others[:free], *used[: max(1, int(target * USED_SHARE))]]
    return Retention(frozenset(must | {lesson.id for lesson in chosen}), merged)


def apply(doc: MemoryDocument, retention: Retention) -> MemoryDocument:
    """The document with only the kept live lessons (superseded ones stay), each merged restatement's counts added."""
    live = doc.live()
    absorbed: dict[str, list[Lesson]] = {}
    for lesson in live:
        if lesson.id in retention.merged:
            absorbed.setdefault(_root(lesson.id, retention.merged), []).append(lesson)

    def change(lesson: Lesson) -> Lesson | None:
        if lesson.stale:
            return lesson
        if lesson.id not in retention.keep:
            return None
        extra = absorbed.get(lesson.id)
        if not extra:
            return lesson
        return replace(
            lesson,
            seen=lesson.seen + sum(other.seen for other in extra),
            last_seen=max(
                (o.last_said.date() for o in (lesson, *extra) if o.last_said > lesson.recorded_at), default=None
            ),
            injected=lesson.injected + sum(other.injected for other in extra),
            pinned=lesson.pinned or any(other.pinned for other in extra),
            category=lesson.category or next((o.category for o in extra if o.category), None),
            overview=lesson.overview or next((o.overview for o in extra if o.overview), None),
        )

    return doc.map_lessons(change)


def restatements(live: Sequence[Lesson], must: Collection[str], table: VectorTable | None) -> dict[str, str]:
    """Lessons that restate another (id -> the id kept for both): the newer stays, unless only the older must."""
    merged: dict[str, str] = {}
    order = {lesson.id: rank for rank, lesson in enumerate(reversed(newest_first(live)))}  # higher: newer
    for i, j, similarity in _close_pairs(live, table):
        a, b = live[i], live[j]
        if a.id in merged or b.id in merged or a.id == b.id:
            continue
        older, newer = (a, b) if order[a.id] < order[b.id] else (b, a)
        if not is_duplicate(older.text, newer.text, similarity):
            continue
        if older.id in must and newer.id in must:
            continue  # both must stay as they are
        keep, drop = (older, newer) if older.id in must else (newer, older)
        merged[drop.id] = keep.id
    return merged


def _close_pairs(live: Sequence[Lesson], table: VectorTable | None) -> list[tuple[int, int, float | None]]:
    """Pairs of positions worth comparing, closest first: by meaning when every lesson has a vector, else all."""
    keys = [vector_key(lesson.text) for lesson in live]
    if table is not None and len(table) and all(key in table for key in keys):
        matrix = table.matrix[[table.rows[key] for key in keys]]
        pairs: list[tuple[int, int, float | None]] = []
        for start in range(0, len(keys), _BLOCK):  # by blocks of rows: a huge file never builds its whole n x n
            cosines = matrix[start : start + _BLOCK] @ matrix.T
            rows, cols = np.nonzero(cosines >= NEAR_FLOOR)
            pairs += [
                (start + int(i), int(j), float(cosines[i, j]))
                for i, j in zip(rows, cols, strict=True)
                if start + int(i) < int(j)
            ]
        return sorted(pairs, key=lambda pair: -(pair[2] or 0.0))
    n = len(live)
    if n * (n - 1) // 2 > _WORDS_PAIRS_AT_MOST:
        return [(i, i + 1, None) for i in range(n - 1)]  # a huge file without vectors: neighbours in the file only
    return [(i, j, None) for i in range(n) for j in range(i + 1, n)]


def _root(lid: str, merged: dict[str, str]) -> str:
    while lid in merged:
        lid = merged[lid]
    return lid


def _uses(live: Sequence[Lesson], merged: dict[str, str]) -> dict[str, int]:
    """How much each lesson was used beyond being recorded once: seen again (its restatements too), injected."""
    use = {lesson.id: lesson.seen - 1 + lesson.injected for lesson in live}
    for lesson in live:
        if lesson.id in merged:
            root = _root(lesson.id, merged)
            use[root] = use.get(root, 0) + lesson.seen + lesson.injected
    return use


def protected(doc: MemoryDocument, entry: Entry, outcomes: Sequence[Recorded]) -> frozenset[str]:
    """The lessons a compaction now must keep: these outcomes' and the others of this interaction: its section, and
    every section of its thread (a memory tool's lessons during the turns, the thread's extracted ones)."""
    here = (entry.day, entry.kind, entry.link)

    def same(section: Section) -> bool:
        if section.history:
            return False
        return (section.day, section.kind, section.link) == here or (
            entry.link is not None and section.link == entry.link
        )

    same_interaction = (lesson.id for section in doc.sections if same(section) for lesson in section.lessons())
    return frozenset(same_interaction) | {outcome.lesson.id for outcome in outcomes if outcome.lesson is not None}
