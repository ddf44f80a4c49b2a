"""How a new lesson relates to the ones already in memory: a restatement, an update, or something new.

Pure rules, no I/O. A candidate is compared with its nearest neighbours by meaning (cosine of the stored vectors; by
shared words for a lesson without one). `decide` is the choice when no model is asked or its answer is unusable:
- a **restatement** is close in meaning and contradicts none of the other's specifics: it may leave some out or spell
  them another way ("ninety days" is "90 days": `domain.amounts`), but no amount, name, decision or side (staging /
  production: `domain.sides`) may differ;
- **another subject** is one sentence with a word or two exchanged in place ("refunds" / "credits"), two that open on
  other subjects and go on alike ("Staging photos ..." / "Production photos ..."), a cause beside its fix, or an
  exception beside its rule: never merged (a fact would be lost) unless all but one in meaning ("arrives" / "comes");
- an **update** is close in meaning and says something changed ("now", "cut from", "reversed", "no longer", or in
  wider words "down to", "since the"), or, closer still, flips a decision in the same sentence or (about the same
  things, no word exchanged for another) states another amount of a kind the older one states; it supersedes the
  older one, unless it adds to it ("also", "on top of", "Exception: ..."), either reports an incident ("INC-3391:
  ...") or the two are things side by side (inbound / outbound: `domain.sides`); anything else is created.
A model's merge or supersession where the rules would create stands only when `advice_holds`. A candidate's category
can fix the outcome first (`by_category`): `events` and `cases` are always created (only the same words merge);
`profile` and `preferences` update their category's nearest entry when close enough. Thresholds were chosen on the
tune files only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import ClassVar, Literal

from nightwatch.domain.framing import UPDATE, adds_to, cause_and_fix, complements, exception_beside, says_change
from nightwatch.domain.memory.format import lesson_id
from nightwatch.domain.memory.specifics import (
    agree,
    changed_amount,
    conflict,
    covers,
    exchanged,
    features,
    flipped_in_place,
    flips,
    heads,
    names_old_value,
    overlap,
    same_specifics,
    same_things,
    subject_tokens,
    token_opcodes,
)
from nightwatch.domain.models import Category, Lesson
from nightwatch.domain.quoting import as_data
from nightwatch.domain.sides import other_things
from nightwatch.domain.vectors import LessonVectors, Matrix, nearest
from nightwatch.prompts import Prompt

Action = Literal["create", "merge", "skip", "supersede", "update"]
Restates = Callable[[str, float | None, str], bool]  # (older, cosine, newer): a test for a restatement

# By meaning (cosine of all-MiniLM-L6-v2 vectors; chosen on tune data only, see above):
DUPLICATE_MEANING = 0.7  # a paraphrase this close, with the same specifics, says the same thing
SYNONYM_MEANING = 0.92  # ... and this close, a word exchanged in place is another word for it ("arrives"/"comes")
UPDATE_MEANING = 0.45  # ... this close, saying it changes something, updates it
CHANGED_MEANING, CHANGED_SHARE = 0.75, 0.45  # ... this close, a flip or (this share alike) another amount updates
RETIRED_MEANING = 0.6  # reading leaves an older lesson out when a newer one this close changes its specific
RANKED_SHARE = 0.5  # ... and ranks the newer first when it changes an amount and shares this of the shorter's words
OUTRANKED_MEANING = 0.7  # ... and leaves the older out, for a question it ranks below the newer on, this close
PARALLEL_SHARE = 0.6  # share of subject words in place for two lessons to be one sentence with words exchanged
EXCHANGED_MAX = 3  # most subject words exchanged on each side of such a parallel sentence
CLEARLY_PARALLEL = 0.75  # ... above which a reworded phrase beside an exchanged word does not make it a paraphrase
HEAD_SHARE = 0.5  # share of the rest in place for two lessons that open on other subjects to be about other things
WIDER_MEANING, WIDER_SHARE = 0.5, 0.1  # ... this close, sharing this of its words, "down to", "since the" update it
RELATED_MEANING, NEIGHBOURS = 0.45, 5  # ... this close is worth showing the model (the 5 nearest)
ADVISED_MEANING = 0.6  # a model's merge or supersession of a lesson the rules keep apart stands only this close
ENTRY_MEANING = 0.5  # a profile or preference entry this close is the one a new lesson of its category updates
# By shared words, for lessons without a vector (share of content words in common):
DUPLICATE_OVERLAP, SAME_SUBJECT_OVERLAP, RELATED_OVERLAP = 0.75, 0.6, 0.3


@dataclass(frozen=True)
class Curation:
    """What to do with a new lesson: create it, merge it into `target`, skip it, or supersede `target` with it.
    "update" (never a model's answer) supersedes `target` keeping its pin and counts: one entry in newer words."""

    action: Action
    target: str | None = None


@dataclass(frozen=True)
class Neighbour:
    """An existing lesson close to a candidate; `similarity` is their cosine, None when compared by words."""

    lesson: Lesson
    similarity: float | None


@dataclass(frozen=True)
class RelatedLesson:
    """A kept lesson shown to the model beside a candidate; its text is data inside the prompt's <memory> block."""

    id: str
    text: str
    category: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", as_data(self.text))


@dataclass(frozen=True)
class CurationPrompt(Prompt):
    """The prompt that asks a persona whether a new lesson is new, a restatement, an update, or not worth keeping."""

    template: ClassVar[str] = "curation.md.j2"

    persona_name: str
    role: str
    project: str
    candidate: str
    related: tuple[RelatedLesson, ...]
    category: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidate", as_data(self.candidate))  # data inside its <memory> block

    @classmethod
    def example(cls) -> CurationPrompt:
        related = (RelatedLesson("ab12cd34", "The release train runs on Tuesdays.", "patterns"),)
        return cls("Dev", "Implementer", "night-watch", "The release train now runs on Thursdays.", related, "patterns")


def neighbours(
    candidate: str,
    probe: Matrix | None,
    existing: Sequence[Lesson],
    vectors: LessonVectors | None,
    limit: int = NEIGHBOURS,
) -> list[Neighbour]:
    """The lessons closest to `candidate`: by meaning where they have vectors (as one point, `LessonVectors.closeness`),
    then by shared words for the rest."""
    found: list[Neighbour] = []
    if probe is not None and vectors is not None and len(vectors.present) == len(existing):
        closest = nearest(probe, vectors, limit=limit, floor=RELATED_MEANING, as_point=True)
        found = [Neighbour(existing[i], closeness) for i, closeness in closest]
        without = [lesson for lesson, has in zip(existing, vectors.present.tolist(), strict=True) if not has]
    else:
        without = list(existing)
    words = features(candidate).words
    by_words = [(overlap(words, features(lesson.text).words), lesson) for lesson in without]
    close = sorted((pair for pair in by_words if pair[0] >= RELATED_OVERLAP), key=lambda pair: -pair[0])
    found += [Neighbour(lesson, None) for _, lesson in close]
    return found[:limit]


def decide(
    candidate: str, existing: Sequence[Lesson], near: Sequence[Neighbour], restates: Restates | None = None
) -> Curation:
    """Without a model: merge a restatement (by `restates`, else the rule), supersede an update, else create."""
    cid = lesson_id(candidate)
    same = next((lesson for lesson in existing if lesson.id == cid), None)
    if same is not None:
        return Curation("merge", same.id)
    duplicate = next((n.lesson for n in near if (restates or _restates)(n.lesson.text, n.similarity, candidate)), None)
    if duplicate is not None:
        return Curation("merge", duplicate.id)
    # An update replaces the lesson it is closest to; a farther one that merely mentions the subject stays.
    updated = next((n.lesson for n in near[:1] if updates(n.lesson.text, n.similarity, candidate)), None)
    if updated is not None:
        return Curation("supersede", updated.id)
    return Curation("create")


def by_category(
    candidate: str, category: Category | None, existing: Sequence[Lesson], same: Sequence[Neighbour]
) -> Curation | None:
    """The outcome a candidate's category fixes (see the module docstring); None where the rule above decides.
    `same` are the candidate's nearest lessons of its own category, closest first."""
    if category in ("events", "cases"):
        cid = lesson_id(candidate)
        return Curation("merge", cid) if any(lesson.id == cid for lesson in existing) else Curation("create")
    if category not in ("profile", "preferences"):
        return None
    entry = next((n for n in same if _same_entry(n, candidate)), None)
    if entry is None:
        return None
    if entry.lesson.id == lesson_id(candidate) or _restates(entry.lesson.text, entry.similarity, candidate):
        return Curation("merge", entry.lesson.id)
    return Curation("update", entry.lesson.id)


def _same_entry(neighbour: Neighbour, candidate: str) -> bool:
    if neighbour.similarity is not None:
        return neighbour.similarity >= ENTRY_MEANING
    return overlap(features(neighbour.lesson.text).words, features(candidate).words) >= SAME_SUBJECT_OVERLAP


def is_duplicate(a: str, b: str, similarity: float | None = None) -> bool:
    """True when `b` restates `a`: by meaning when their cosine is given, else by words; every specific the same."""
    return lesson_id(a) == lesson_id(b) or _restates(a, similarity, b)


def _restates(old: str, similarity: float | None, candidate: str) -> bool:
    theirs, mine = features(old), features(candidate)
    if similarity is not None:  # by meaning: one may leave out a specific, neither may contradict the other's
        parallel = similarity < SYNONYM_MEANING and another_subject(old, candidate)
        close = similarity >= DUPLICATE_MEANING and not parallel
        return agree(old, candidate) and close and not (says_change(candidate) or adds_to(old, candidate))
    if not same_specifics(theirs, mine) or adds_to(old, candidate):  # "... need two people as well": a second fact
        return False
    if not theirs.words or not mine.words or (theirs.words - mine.words and mine.words - theirs.words):
        return False  # a word swapped for another may name another component: not a restatement
    return overlap(theirs.words, mine.words) >= DUPLICATE_OVERLAP


def another_subject(a: str, b: str) -> bool:
    """One sentence with a few subject words exchanged in place ("refunds" / "credits", "iOS" / "Android", "bronze" /
    "silver"): about another thing, whatever the numbers say. A paraphrase reorders and rewords far more than that;
    a changed number alone is not another subject."""
    if cause_and_fix(a, b) or exception_beside(a, b) or _other_heads(a, b):
        return True  # why it broke vs. its fix; a rule vs. its exception; "Staging photos ..." vs. "Production ..."
    mine, theirs = subject_tokens(a), subject_tokens(b)
    if not mine or not theirs:
        return False
    opcodes = token_opcodes(a, b)
    in_place = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
    if in_place / max(len(mine), len(theirs)) < PARALLEL_SHARE:
        return False
    swaps = [
        (len(set(mine[i1:i2]) - {"#"}), len(set(theirs[j1:j2]) - {"#"}))
        for tag, i1, i2, j1, j2 in opcodes
        if tag == "replace"
    ]
    exchanged = any(0 < out == into <= EXCHANGED_MAX for out, into in swaps)  # a word (or two) for another, in place
    reworded = any(out != into for out, into in swaps)  # a phrase said another way: what paraphrases do
    return exchanged and (not reworded or in_place / max(len(mine), len(theirs)) >= CLEARLY_PARALLEL)


def _other_heads(a: str, b: str) -> bool:
    """They open on different subjects, neither naming the other's, and go on alike (HEAD_SHARE of the rest)."""
    mine, theirs = heads(a), heads(b)
    if len(mine) < 3 or len(theirs) < 3 or mine[0] == theirs[0] or mine[0] in theirs or theirs[0] in mine:
        return False
    rest = SequenceMatcher(None, mine[1:], theirs[1:], autojunk=False).get_matching_blocks()
    return sum(block.size for block in rest) / (max(len(mine), len(theirs)) - 1) >= HEAD_SHARE


def updates(older: str, similarity: float | None, candidate: str) -> bool:
    if similarity is not None:  # saying so is the surest sign ("now", "moved to", "no longer", "cut from")
        if (
            similarity < UPDATE_MEANING
            or complements(older, candidate)  # a fix does not retire its cause, nor an exception its rule
            or other_things(older, candidate)  # inbound / outbound, iOS / Android: two facts side by side
            or (another_subject(older, candidate) and not says_change(candidate))
        ):
            return False
        flipped = similarity >= CHANGED_MEANING and flipped_in_place(older, candidate, CLEARLY_PARALLEL)
        if says_change(candidate) or flipped or names_old_value(older, candidate):  # or "8 hours" named as the old
            return True
        shared = overlap(features(older).words, features(candidate).words) >= WIDER_SHARE
        widely = similarity >= WIDER_MEANING and shared and UPDATE.search(candidate) is not None
        same = same_things(older, candidate, CHANGED_SHARE) and not exchanged(older, candidate)  # not a look-alike
        return widely or (similarity >= CHANGED_MEANING and same and changed_amount(older, candidate))
    old, mine = features(older), features(candidate)
    if (old.values == mine.values and not conflict(old, mine)) or old.names != mine.names:
        return False
    both = old.words & mine.words
    return len(both) >= min(2, len(old.words | mine.words)) and overlap(old.words, mine.words) >= SAME_SUBJECT_OVERLAP


def advice_holds(action: Action, older: Neighbour, candidate: str) -> bool:
    """Whether a model's merge into, or supersession of, a lesson the rules keep apart stands (its checks: below)."""
    text, similarity = older.lesson.text, older.similarity
    if (similarity is not None and similarity < ADVISED_MEANING) or cause_and_fix(text, candidate):
        return False
    mine, theirs = features(candidate), features(text)
    if action == "supersede":  # it must say so, or flip a decision: another amount alone is the rules' to judge
        return says_change(candidate) or (flips(theirs, mine) and not another_subject(text, candidate))
    return agree(text, candidate) and not says_change(candidate) and not another_subject(text, candidate)


class LessonSuccession:
    """Curation's rule for an update, as reading asks it (recall's Succession port); see recall/succession.py."""

    def replaces(self, older: str, newer: str, similarity: float) -> bool:
        """The newer ranks first: curation's update, or another amount of what the older covers (RANKED_SHARE) that
        does not add to it ("also": `complements`)."""
        amount = similarity >= RETIRED_MEANING and changed_amount(older, newer) and not complements(older, newer)
        return updates(older, similarity, newer) or (amount and covers(older, newer, RANKED_SHARE))

    def retires(
        self, older: str, newer: str, similarity: float, *, ranked_below: bool = False, first_two: bool = False
    ) -> bool:
        """The older is left out: curation's update that changes an amount or a decision; where it ranks below, the
        newer's update; or, as one of a question's two best answers, when the newer changes a specific of the same
        things. Any of the three is enough."""
        if similarity < RETIRED_MEANING or another_subject(older, newer):
            return False
        below = ranked_below and similarity >= OUTRANKED_MEANING and not _restates(older, similarity, newer)
        if below and self.replaces(older, newer, similarity):
            return True
        specific = changed_amount(older, newer) or flips(features(older), features(newer))
        if first_two and specific and covers(older, newer, 0.0) and not complements(older, newer):
            return True  # the same things, in however few shared words; not an exception or a fix beside its rule
        return specific and covers(older, newer, SAME_SUBJECT_OVERLAP) and updates(older, similarity, newer)
