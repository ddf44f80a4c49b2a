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
for the payment APIs are retained for seven years"): that is a look-alike, and the older is the one asked about. So is
it where the newer names no word of the question at all ("Until when can a standard ticket be refunded?" beside
"Standard tickets ... are refundable until 2 hours before departure" and "The booking window is back down to 120
days").
Nor is a lesson someone said again (a restatement merged into it: `Lesson.last_said`) after the newer one was
recorded: it was affirmed since, so the newer one is no successor of it.
Only the head of the ranking is looked at: a read maps and compares a few dozen vectors, whatever the memory holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.framing import CHANGE
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall.keywords import terms
from nightwatch.domain.recall.ports import Succession
from nightwatch.domain.vectors import LessonVectors

SAME_POINT = 0.45  # closeness two lessons need before one can be read as the other's update (it then ranks below)
HEAD = 20  # how many of the best-ranked lessons are compared
BEST = 2  # a question's best answers: the older of two that change each other's specific is left out
NUMBER = "#"  # every number reads as one term: a number exchanged for another is a changed value, not another thing
PARALLEL = 0.5  # share of words in place for two lessons to be one sentence with words exchanged (`asks_older`)


def newer_first(
    lessons: Sequence[Lesson],
    order: NDArray[np.int64],
    vectors: LessonVectors | None,
    succession: Succession | None,
    pinned: frozenset[int] = frozenset(),
    question: str = "",
) -> tuple[NDArray[np.int64], frozenset[int]]:
    """`order` with each updated lesson placed right after its successor, and the positions it supersedes, for
    `question`."""
    if succession is None or vectors is None or len(order) < 2 or len(vectors.present) != len(lessons):
        return order, frozenset()
    head = [i for i in order[:HEAD].tolist() if vectors.present[i]]
    successor, left_out = _successors(lessons, head, vectors, succession, pinned, question)
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
    vectors: LessonVectors,
    succession: Succession,
    pinned: frozenset[int],
    question: str,
) -> tuple[dict[int, int], set[int]]:
    """Each updated lesson of `head` (positions in the question's order) with its successor, and those it retires."""
    successor: dict[int, int] = {}
    left_out: set[int] = set()
    close = vectors.same_point(head)
    for at, first in enumerate(head):
        for place, second in enumerate(head[at + 1 :], start=at + 1):
            similarity = float(close[at, place])
            if similarity < SAME_POINT:
                continue
            older, newer = sorted((first, second), key=lambda i: lessons[i].recorded_at)
            if older in left_out or older in pinned or lessons[newer].recorded_at <= lessons[older].last_said:
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


def asks_older(question: str, older_text: str, newer_text: str) -> bool:
    """Whether the question names a word the older lesson has and the newer lacks, where the newer, otherwise the same
    sentence (PARALLEL), has other words the question does not name (words that only say what changed are none), or
    names no word of the question at all."""
    words, older, newer = set(_terms(question)), _terms(older_text), _terms(newer_text)
    asked = words - set(newer) - {NUMBER}
    if not asked:
        return False
    if not words & set(newer) - {NUMBER} and asked & set(older):
        return True  # the newer names nothing the question asks, the older does: it is the one asked about
    ops = SequenceMatcher(None, older, newer, autojunk=False).get_opcodes()
    if sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal") < PARALLEL * max(len(older), len(newer)):
        return False
    changing = {term for match in CHANGE.finditer(newer_text) for term in _terms(match.group(0))}  # "went up to"
    for tag, i1, i2, j1, j2 in ops:
        mine, theirs = set(older[i1:i2]), set(newer[j1:j2]) - {NUMBER} - changing
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
