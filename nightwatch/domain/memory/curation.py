"""How a new lesson relates to the ones already in memory: a restatement, an update, or something new.

Pure rules, no I/O: `is_duplicate` for restatements, `is_update` for a changed fact on the same subject, and `decide`,
the deterministic create / merge / supersede choice used when no model is asked or its answer is unusable. The
junk guard (what may not be written at all) lives in `junk.py`.

Two lessons are the same only when they agree on every specific: numbers, dates, versions, weekdays, file and
component names, and decisions (approve vs reject, enable vs disable, always vs never, do vs do not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal

from nightwatch.domain.memory.format import lesson_id
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import stem
from nightwatch.prompts import Prompt

Action = Literal["create", "merge", "skip", "supersede"]
ACTIONS: frozenset[str] = frozenset({"create", "merge", "skip", "supersede"})

DUPLICATE_OVERLAP = 0.75  # share of content words two restatements have in common
SAME_SUBJECT_OVERLAP = 0.6  # ... for an update of the same subject (its specifics differ)
RELATED_OVERLAP = 0.3  # ... for a lesson worth showing the model as related

_TOKEN = re.compile(r"`[^`]+`|v?\d+(?:[.\-/:]\d+)*[a-z%]*|[A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z0-9_]+)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
_NOT = re.compile(r"n['’]t\b", re.IGNORECASE)

# Narrower than recall's stop words (keywords.STOP_WORDS): "together", "last", "next" or "whole" can be what a
# lesson is about, and two lessons that differ in them are not restatements.
_FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below between
    both but by ca can could did do does doing down during each either else etc even ever every few for from further
    had has have having he her here hers him his how i if in into is it its itself just let lets may me might more
    most much must my myself nor now of off on once one only or other our ours out over own per same sha she should
    so some such than that the their them then there these they this those through thus to too under until up upon
    us very via was we were what when where which while who whom whose why will with wo would yet you your""".split()
)
_WEEKDAYS_MONTHS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december""".split()
)
_NEGATORS = frozenset({"not", "no", "never", "cannot", "avoid", "without", "stop"})
_AXES = {
    "approve": ("approve", "approved", "approves", "approving", "accept", "accepted", "accepts"),
    "-approve": ("reject", "rejected", "rejects", "rejecting", "decline", "declined", "declines"),
    "enable": ("enable", "enabled", "enables", "enabling"),
    "-enable": ("disable", "disabled", "disables", "disabling"),
    "always": ("always",),
    "-always": ("never",),
    "allow": ("allow", "allowed", "allows", "permit", "permitted", "permits"),
    "-allow": ("deny", "denied", "denies", "block", "blocked", "blocks", "forbid", "forbidden", "ban", "banned"),
    "include": ("include", "included", "includes", "add", "added", "adds"),
    "-include": ("exclude", "excluded", "excludes", "remove", "removed", "removes", "drop", "dropped"),
    "raise": ("increase", "increased", "increases", "raise", "raised", "raises"),
    "-raise": ("decrease", "decreased", "decreases", "reduce", "reduced", "reduces", "lower", "lowered", "lowers"),
    "pass": ("pass", "passed", "passes", "passing", "works", "fixed", "stable"),
    "-pass": ("fail", "failed", "fails", "failing", "broken", "breaks", "flaky"),
    "require": ("require", "required", "requires", "mandatory"),
    "-require": ("optional",),
    "before": ("before",),
    "-before": ("after",),
    "true": ("true", "yes"),
    "-true": ("false",),
}
_POLARITY = {word: axis for axis, words in _AXES.items() for word in words}


@dataclass(frozen=True)
class Features:
    """What a lesson says, split into its subject words and the specifics that must match for a restatement."""

    words: frozenset[str]
    values: frozenset[str]
    names: frozenset[str]
    decisions: frozenset[str]
    negated: bool


@dataclass(frozen=True)
class Curation:
    """What to do with a new lesson: create it, merge it into `target`, skip it, or supersede `target` with it."""

    action: Action
    target: str | None = None


@dataclass(frozen=True)
class RelatedLesson:
    id: str
    text: str


@dataclass(frozen=True)
class CurationPrompt(Prompt):
    """The prompt that asks a persona whether a new lesson is new, a restatement, an update, or not worth keeping."""

    template: ClassVar[str] = "curation.md.j2"

    persona_name: str
    role: str
    project: str
    candidate: str
    related: tuple[RelatedLesson, ...]

    @classmethod
    def example(cls) -> CurationPrompt:
        return cls(
            persona_name="Dev",
            role="Implementer",
            project="night-watch",
            candidate="The release train now runs on Thursdays.",
            related=(RelatedLesson("ab12cd34", "The release train runs on Tuesdays."),),
        )


@lru_cache(maxsize=65536)
def features(text: str) -> Features:
    """Split a lesson into content words (stemmed), values, names, decision words and negation."""
    words: set[str] = set()
    values: set[str] = set()
    names: set[str] = set()
    decisions: set[str] = set()
    negations = 0
    for token in _TOKEN.findall(_NOT.sub(" not", text.replace("’", "'"))):
        lower = token.lower().strip("`")
        numeric = lower[:1].isdigit() or (lower[:1] == "v" and lower[1:2].isdigit())
        if token.startswith("`") or _CAMEL.search(token) or any(mark in lower for mark in "./_"):
            (values if numeric else names).add(lower)
        elif any(char.isdigit() for char in lower):
            (values if numeric else names).add(lower)  # "42", "v2" are values; "service12", "ec2" are names
        elif lower.rstrip("s") in _WEEKDAYS_MONTHS:
            values.add(lower.rstrip("s"))
        else:
            negations += lower in _NEGATORS
            if lower in _POLARITY:
                decisions.add(_POLARITY[lower])
            elif lower not in _FUNCTION_WORDS and lower not in _NEGATORS:
                words.add(stem(lower))
    return Features(frozenset(words), frozenset(values), frozenset(names), frozenset(decisions), negations % 2 == 1)


def is_duplicate(a: str, b: str) -> bool:
    """True when `b` restates `a`: same words give or take a few, and every specific the same."""
    return lesson_id(a) == lesson_id(b) or _restatement(features(a), features(b))


def is_update(old: str, new: str) -> bool:
    """True when `new` is about the same subject as `old` but changes a number, date, version or decision."""
    return _update(features(old), features(new))


def decide(candidate: str, existing: Sequence[Lesson]) -> Curation:
    """The deterministic choice: merge a restatement, supersede an update of the same subject, else create."""
    cid = lesson_id(candidate)
    same = next((lesson for lesson in existing if lesson.id == cid), None)
    if same is not None:
        return Curation("merge", same.id)
    mine = features(candidate)
    # Only lessons sharing a content word can restate or update this one; skipping the rest keeps big files fast.
    near = [(lesson, theirs) for lesson in existing if (theirs := features(lesson.text)).words & mine.words]
    duplicate = next((lesson for lesson, theirs in near if _restatement(theirs, mine)), None)
    if duplicate is not None:
        return Curation("merge", duplicate.id)
    updated = [(lesson, theirs) for lesson, theirs in near if _update(theirs, mine)]
    if updated:
        best, _ = max(updated, key=lambda pair: (_overlap(pair[1].words, mine.words), pair[0].recorded_at))
        return Curation("supersede", best.id)
    return Curation("create")


def _restatement(fa: Features, fb: Features) -> bool:
    if fa.values != fb.values or fa.names != fb.names or _conflict(fa, fb):
        return False
    if not fa.words or not fb.words or (fa.words - fb.words and fb.words - fa.words):
        return False  # a word swapped for another may name another component: not a restatement
    return _overlap(fa.words, fb.words) >= DUPLICATE_OVERLAP


def _update(old: Features, new: Features) -> bool:
    if old.names != new.names or not _same_subject(old.words, new.words):
        return False
    return old.values != new.values or _conflict(old, new)


def related(candidate: str, existing: Iterable[Lesson], limit: int = 5) -> list[Lesson]:
    """Existing lessons close enough to `candidate` that a model should judge how they relate, closest first."""
    words = features(candidate).words
    scored = [(_overlap(words, features(lesson.text).words), lesson) for lesson in existing]
    close = [(score, lesson) for score, lesson in scored if score >= RELATED_OVERLAP]
    close.sort(key=lambda pair: pair[0], reverse=True)
    return [lesson for _, lesson in close[:limit]]


def parse_curation(answer: str, allowed: Iterable[str]) -> Curation | None:
    """Read the model's JSON decision; None when it is malformed or names a lesson it was not shown."""
    match = re.search(r"\{.*\}", answer, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("action") not in ACTIONS:
        return None
    action: Action = data["action"]
    target = data.get("target")
    if action in ("merge", "supersede"):
        if not isinstance(target, str) or target.strip().lower() not in set(allowed):
            return None
        return Curation(action, target.strip().lower())
    return Curation(action)


def _conflict(fa: Features, fb: Features) -> bool:
    if fa.negated != fb.negated:
        return True
    pairs = ((mine, theirs) for mine in fa.decisions for theirs in fb.decisions)
    return any(mine != theirs and mine.lstrip("-") == theirs.lstrip("-") for mine, theirs in pairs)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _same_subject(a: frozenset[str], b: frozenset[str]) -> bool:
    return len(a & b) >= min(2, len(a | b)) and _overlap(a, b) >= SAME_SUBJECT_OVERLAP
