"""Curation's rule as it was before the pair classifier (commit eca6a5d), kept to measure against.

    python -m bench.write_path --dataset FILE.jsonl --rules before

A faithful copy of that commit's `decide` (nightwatch/domain/memory/curation.py) with its thresholds and its words for a
change (`says_change`); the other helpers it used from specifics.py are unchanged since. `rules(before=True)` puts it in
place of today's `decide` for the duration of a bench run (reading then has no newer-lesson preference either, as
before).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from nightwatch.domain.memory import curation, recording, specifics
from nightwatch.domain.models import Lesson

Curation, Neighbour = curation.Curation, curation.Neighbour
Features, features, flips, overlap = specifics.Features, specifics.features, specifics.flips, specifics.overlap
conflict, same_specifics = specifics.conflict, specifics.same_specifics

CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|any more|from now on|going forward|as of|moved|moves|switched|replaced|"
    r"bumped|upgraded|downgraded|raised|lowered|retired|reverted|deprecated|migrated|dropped|"
    r"(?:is|are) (?:back|gone)|(?:was|were) never|leaving|shrank|relaxed|tightened|"
    r"(?:cut|changed|reduced|increased|extended|shortened) to)\b",
    re.IGNORECASE,
)


def says_change(text: str) -> bool:
    return CHANGE.search(text) is not None


DUPLICATE_MEANING = 0.65
UPDATE_MEANING = 0.45
SWAP_OVERLAP = 0.5
DUPLICATE_OVERLAP = 0.75
SAME_SUBJECT_OVERLAP = 0.6


def _one_word_swapped(a: specifics.Features, b: specifics.Features) -> bool:
    return len(a.words - b.words) == 1 == len(b.words - a.words) and overlap(a.words, b.words) >= SWAP_OVERLAP


def _same_names(a: specifics.Features, b: specifics.Features) -> bool:
    return a.names <= b.names or b.names <= a.names


def _restates(old: str, similarity: float | None, candidate: str) -> bool:
    theirs, mine = features(old), features(candidate)
    if similarity is not None:
        same = theirs.values == mine.values and _same_names(theirs, mine) and not flips(theirs, mine)
        close = similarity >= DUPLICATE_MEANING and not _one_word_swapped(theirs, mine)
        return same and close and not says_change(candidate)
    if not same_specifics(theirs, mine):
        return False
    if not theirs.words or not mine.words or (theirs.words - mine.words and mine.words - theirs.words):
        return False
    return overlap(theirs.words, mine.words) >= DUPLICATE_OVERLAP


def _updates(older: str, similarity: float | None, candidate: str) -> bool:
    if similarity is not None:
        return similarity >= UPDATE_MEANING and says_change(candidate)
    old, mine = features(older), features(candidate)
    if old.values == mine.values and not conflict(old, mine):
        return False
    if old.names != mine.names:
        return False
    both = old.words & mine.words
    return len(both) >= min(2, len(old.words | mine.words)) and overlap(old.words, mine.words) >= SAME_SUBJECT_OVERLAP


def decide(candidate: str, existing: Sequence[Lesson], near: Sequence[curation.Neighbour]) -> curation.Curation:
    """eca6a5d's deterministic choice: merge a restatement, supersede an update of the same subject, else create."""
    cid = curation.lesson_id(candidate)
    same = next((lesson for lesson in existing if lesson.id == cid), None)
    if same is not None:
        return Curation("merge", same.id)
    duplicate = next((n.lesson for n in near if _restates(n.lesson.text, n.similarity, candidate)), None)
    if duplicate is not None:
        return Curation("merge", duplicate.id)
    updated = next((n.lesson for n in near[:1] if _updates(n.lesson.text, n.similarity, candidate)), None)
    if updated is not None:
        return Curation("supersede", updated.id)
    return Curation("create")


@contextmanager
def rules(*, before: bool) -> Iterator[None]:
    """Curation by eca6a5d's rule while the block runs (when `before`), today's otherwise."""
    if not before:
        yield
        return
    saved = recording.decide, curation.decide
    recording.decide = curation.decide = decide  # type: ignore[assignment]
    try:
        yield
    finally:
        recording.decide, curation.decide = saved
