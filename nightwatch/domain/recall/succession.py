"""Reading prefers the newer of two lessons on the same point, whether or not curation saw the update.

Among the best-ranked lessons, two close in meaning (as one point: `LessonVectors.same_point`) are shown to the
Succession the memory room provides (its curation rule for an update). When the newer one updates the older, the
newer takes the better of their two places and the older follows it; when the newer surely replaces it (the same
things with a specific changed, not only a word like "now", which conversation is full of), the older is also left
out of the block a turn is given (a pinned lesson never is), and that successor wins over one met earlier that only
ranked first. For a question the older already ranks below the newer on, a newer that ranks first is enough to leave
it out when the two are closer still and do not restate each other: a question whose answer the older holds ranks it
first. When the two are the question's two best answers, another amount or a flipped decision of the same things is
enough, whichever ranks first: both answer it, and the newer holds what is true now. But an older lesson is never
left out for a question that names a word only it has where the newer, otherwise the same sentence, has another
("How long are admin console audit logs kept?" beside "... for the admin console are retained for one year" and "...
for the payment APIs are retained for seven years"): that is a look-alike, and the older is the one asked about.
Only the head of the ranking is looked at: a read maps and compares a few dozen vectors, whatever the memory holds.

Where the rules keep both, a learned check reads the pair with the question (`read_check`, since round 29): how near
each of the two is to the question, where each ranks, how far apart in time they were recorded, and the rules' own
readings of the pair. Of two lessons on one point that both answer a question, the newer holds what is true now; of a
lesson and a look-alike, the question usually reads nearer its own answer. The check is a logistic regression
(`domain.classifier`) fitted by `python -m bench.read_check --save` on tune files only, from the pairs where, for a
question, the older lesson is either its stale lesson (yes) or its answer (no); it leaves the older out only from a
probability of 0.875, chosen on tune files held out of the fit so that about ten stale lessons go for each answer lost.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.classifier import Logistic
from nightwatch.domain.framing import complements, says_change
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall.keywords import terms
from nightwatch.domain.recall.ports import Succession
from nightwatch.domain.sides import other_things
from nightwatch.domain.vectors import LessonVectors, Matrix

SAME_POINT = 0.45  # closeness two lessons need before one can be read as the other's update (it then ranks below)
HEAD = 20  # how many of the best-ranked lessons are compared
BEST = 2  # a question's best answers: the older of two that change each other's specific is left out
NUMBER = "#"  # every number reads as one term: a number exchanged for another is a changed value, not another thing
PARALLEL = 0.5  # share of words in place for two lessons to be one sentence with words exchanged (`asks_older`)
FIGURES = (  # what the learned check reads of a pair, for one question (`pair_figures`)
    "closeness", "question_older", "question_newer", "question_gain", "place_older", "place_newer", "newer_above",
    "one_first", "days_apart", "newer_says_change", "older_says_change", "complements", "other_things", "replaces",
    "asks_older", "question_only_older", "question_only_newer", "words_alike",
)  # fmt: skip


@dataclass(frozen=True)
class Pair:
    """Two lessons of a question's head that read as one point: positions in `lessons`, places in the head."""

    older: int
    newer: int
    place_older: int
    place_newer: int
    closeness: float


@cache
def read_check() -> Logistic:
    """The learned check of an older lesson beside a newer one, for a question (module docstring)."""
    return Logistic.packaged(__package__, "read_check.json")


def newer_first(
    lessons: Sequence[Lesson],
    order: NDArray[np.int64],
    vectors: LessonVectors | None,
    succession: Succession | None,
    pinned: frozenset[int] = frozenset(),
    question: str = "",
    cosines: Matrix | None = None,
) -> tuple[NDArray[np.int64], frozenset[int]]:
    """`order` with each updated lesson placed right after its successor, and the positions it supersedes, for
    `question` (each lesson's cosine to it in `cosines`, when the question was embedded)."""
    if succession is None or vectors is None or len(order) < 2 or len(vectors.present) != len(lessons):
        return order, frozenset()
    head = [i for i in order[:HEAD].tolist() if vectors.present[i]]
    close = vectors.same_point(head)
    successor, left_out = _successors(lessons, head, close, succession, pinned, question)
    if cosines is not None and len(cosines) == len(lessons):
        check = read_check()
        for pair in pairs(lessons, head, close, pinned, left_out):
            if check.says(pair_figures(lessons, pair, question, cosines, succession)):
                successor.setdefault(pair.older, pair.newer)
                left_out.add(pair.older)
    if not successor:
        return order, frozenset()
    placed: list[int] = []
    for i in order[:HEAD].tolist():
        newest = _latest(i, successor)
        for j in (newest, *_replaced_by(newest, successor)):
            if j not in placed:
                placed.append(j)
        if i not in placed:
            placed.append(i)
    rest = [i for i in order[HEAD:].tolist() if i not in placed]
    return np.asarray(placed + rest, dtype=np.int64), frozenset(left_out)


def _successors(
    lessons: Sequence[Lesson],
    head: list[int],
    close: Matrix,
    succession: Succession,
    pinned: frozenset[int],
    question: str,
) -> tuple[dict[int, int], set[int]]:
    """Each updated lesson of `head` (positions in the question's order) with its successor, and those it retires."""
    successor: dict[int, int] = {}
    left_out: set[int] = set()
    for at, first in enumerate(head):
        for place, second in enumerate(head[at + 1 :], start=at + 1):
            similarity = float(close[at, place])
            if similarity < SAME_POINT:
                continue
            older, newer = sorted((first, second), key=lambda i: lessons[i].recorded_at)
            if older in left_out or older in pinned or lessons[older].recorded_at == lessons[newer].recorded_at:
                continue
            replaces = succession.replaces(lessons[older].text, lessons[newer].text, similarity)
            first_two = place < BEST  # the question's two best answers, one perhaps changing the other's specific
            if not replaces and not first_two:
                continue
            below = older == second  # for this question, the older already ranks below the newer
            if succession.retires(
                lessons[older].text, lessons[newer].text, similarity, ranked_below=below, first_two=first_two
            ) and not asks_older(question, lessons[older].text, lessons[newer].text):
                successor[older] = newer  # the one that retires it wins over one that only ranks first
                left_out.add(older)
            elif replaces:
                successor.setdefault(older, newer)
    return successor, left_out


def pairs(
    lessons: Sequence[Lesson], head: list[int], close: Matrix, pinned: frozenset[int], left_out: set[int]
) -> Iterator[Pair]:
    """The pairs of `head` the learned check reads (`close`: their closeness as one point, `same_point(head)`):
    as one point (SAME_POINT), recorded apart, the older neither pinned nor left out already (`left_out` is read as
    the pairs are taken, so a check's own choice counts)."""
    for at, first in enumerate(head):
        for place, second in enumerate(head[at + 1 :], start=at + 1):
            closeness = float(close[at, place])
            if closeness < SAME_POINT or lessons[first].recorded_at == lessons[second].recorded_at:
                continue
            older_first = lessons[first].recorded_at < lessons[second].recorded_at
            older, newer = (first, second) if older_first else (second, first)
            if older not in pinned and older not in left_out:
                yield Pair(older, newer, *((at, place) if older_first else (place, at)), closeness)


def pair_figures(
    lessons: Sequence[Lesson], pair: Pair, question: str, cosines: Matrix, succession: Succession
) -> list[float]:
    """What the learned check reads of `pair` for `question`, in the order of FIGURES."""
    older, newer = lessons[pair.older], lessons[pair.newer]
    near_older, near_newer = float(cosines[pair.older]), float(cosines[pair.newer])
    days = abs((newer.recorded_at - older.recorded_at).total_seconds()) / 86_400
    asked, mine, theirs = set(terms(question)), terms(older.text), terms(newer.text)
    only_older, only_newer = set(mine) - set(theirs), set(theirs) - set(mine)
    alike = SequenceMatcher(None, mine, theirs, autojunk=False).ratio()
    return [
        pair.closeness,
        near_older,
        near_newer,
        near_newer - near_older,
        pair.place_older,
        pair.place_newer,
        float(pair.place_newer < pair.place_older),
        float(min(pair.place_older, pair.place_newer) == 0),
        math.log1p(days),
        float(says_change(newer.text)),
        float(says_change(older.text)),
        float(complements(older.text, newer.text)),
        float(other_things(older.text, newer.text)),
        float(succession.replaces(older.text, newer.text, pair.closeness)),
        float(asks_older(question, older.text, newer.text)),
        len(asked & only_older) / max(len(asked), 1),
        len(asked & only_newer) / max(len(asked), 1),
        alike,
    ]


def asks_older(question: str, older_text: str, newer_text: str) -> bool:
    """Whether the question names a word the older lesson has and the newer lacks, where the newer, otherwise the same
    sentence (PARALLEL), has other words the question does not name."""
    words, older, newer = set(_terms(question)), _terms(older_text), _terms(newer_text)
    asked = words - set(newer) - {NUMBER}
    if not asked:
        return False
    ops = SequenceMatcher(None, older, newer, autojunk=False).get_opcodes()
    if sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal") < PARALLEL * max(len(older), len(newer)):
        return False
    for tag, i1, i2, j1, j2 in ops:
        mine, theirs = set(older[i1:i2]), set(newer[j1:j2]) - {NUMBER}
        if tag == "replace" and theirs and asked & mine and not theirs & words:
            return True
    return False


def _terms(text: str) -> list[str]:
    """A text's keyword terms in order, each number as NUMBER."""
    return [NUMBER if term[:1].isdigit() else term for term in terms(text)]


def _latest(i: int, successor: dict[int, int]) -> int:
    seen = {i}
    while i in successor and successor[i] not in seen:
        i = successor[i]
        seen.add(i)
    return i


def _replaced_by(newest: int, successor: dict[int, int]) -> list[int]:
    """The lessons `newest` replaces, directly or through a chain, newest first."""
    chain: list[int] = []
    current = newest
    while True:
        older = next((o for o, n in successor.items() if n == current and o not in chain), None)
        if older is None:
            return chain
        chain.append(older)
        current = older
