"""Shaping of a persona's reply before it is posted: SKIP detection, the length cap, and near-duplicate checks.

A model may label its text with a leading tag (the offline model writes "[offline] ..."); the tag stays in what is
posted, but is ignored when deciding whether a reply is SKIP, empty, or a repeat of an earlier message.

`reply_problem` says why an answer cannot be a persona's turn at all (turns retry such an answer once, with the
problem fed back; see answers.py): it is empty, or only a tag, or it is a script in which the persona labels its
own line and speaks for another persona too. A reply over the length is not a problem (it is cut at a sentence),
and neither is SKIP or a repeat of an earlier message (both mean the persona had nothing new, and are not posted).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

SKIP = "SKIP"
NEAR_DUPLICATE = 0.8  # word-set overlap (Jaccard) at or above which two replies say the same thing
_MIN_WORDS_FOR_OVERLAP = 4
_TAG = re.compile(r"^\s*\[[^\]\n]{1,24}\]\s*")
_WORD = re.compile(r"[a-z0-9]+")
_ANY_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?…](?=[\s)\"'»]|$)|\n")
# A line that opens with a speaker's label: "Carlos: ...", "- Carlos: ..." (the thread's own form), "**Carlos:**",
# "Carlos (Tech lead): ...".
_LABEL = re.compile(
    r"^[ \t>]*(?:[-*•][ \t]+)?[*_]{0,2}"  # indent, a quote or a bullet, bold or italics
    r"([^\W\d_][\w \-]{0,39}?)"  # the name
    r"[*_]{0,2}(?:[ \t]*\([^()\n]{1,60}\))?[*_]{0,2}[ \t]*:[*_]{0,2}(?=\s)",  # "(role)", then the colon
    re.M,
)
ELLIPSIS = "…"


class Dropped(StrEnum):
    """Why a reply was not posted."""

    SKIP = "skip"
    EMPTY = "empty"
    DUPLICATE = "duplicate"


@dataclass(frozen=True)
class ShapedReply:
    text: str
    dropped: Dropped | None = None
    full: str = ""  # the whole reply when `text` was cut short (kept in the deliberation log); else ""

    @property
    def posted(self) -> bool:
        return self.dropped is None


def core_text(text: str) -> str:
    """The reply without a leading label tag such as "[offline]"."""
    return _TAG.sub("", text, count=1).strip()


def is_skip(text: str) -> bool:
    """True when the reply is the SKIP answer (ignoring a label tag, case and trailing punctuation)."""
    return core_text(text).strip(" .!*_`\"'").upper() == SKIP


def cap_length(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters, at the last sentence end when one is not too early."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS)]
    ends = [match.end() for match in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit * 0.4:
        return head[: ends[-1]].rstrip()
    space = head.rfind(" ")
    if space >= limit * 0.4:
        head = head[:space]
    return head.rstrip(" ,;:-") + ELLIPSIS


def cut_words(text: str, words: int) -> str:
    """Cut `text` to about `words` words at the last sentence that ends within them, marked with a visible "…".

    A reply within the limit (or a tenth over it: cutting one sentence short of the end helps nobody) is returned
    as it is. With no sentence ending in the first 40% of the limit the cut falls between words.
    """
    spans = [match.span() for match in _ANY_WORD.finditer(text)]
    if len(spans) <= words * 1.1:
        return text
    head = text[: spans[words - 1][1]]
    ends = [match.end() for match in _SENTENCE_END.finditer(head)]
    floor = spans[int(words * 0.4)][0]
    cut = head[: ends[-1]] if ends and ends[-1] >= floor else head
    return cut.rstrip(" ,;:-\n") + " " + ELLIPSIS


def near_duplicate(text: str, other: str) -> bool:
    """True when two replies say nearly the same words (order ignored)."""
    words_a = _WORD.findall(core_text(text).lower())
    words_b = _WORD.findall(core_text(other).lower())
    if not words_a or not words_b:
        return False
    if words_a == words_b:
        return True
    if min(len(words_a), len(words_b)) < _MIN_WORDS_FOR_OVERLAP:
        return False
    set_a, set_b = set(words_a), set(words_b)
    return len(set_a & set_b) / len(set_a | set_b) >= NEAR_DUPLICATE


def labelled_speakers(text: str) -> list[str]:
    """The names that open a line as a speaker's label ("Carlos: ...", "- **Maya:** ..."), casefolded, in order."""
    return [match.group(1).strip().casefold() for match in _LABEL.finditer(core_text(text))]


def reply_problem(raw: str, *, speaker: str, others: Iterable[str]) -> str | None:
    """Why `raw` cannot be `speaker`'s turn, in plain words; None when it can (SKIP and repeats can: they are dropped).

    An answer is unusable when it holds nothing once a label tag is set aside, or when it is a script: a line
    labelled with the speaker's own name and one labelled with another persona's (`others`). A line that only
    addresses someone ("Dev: can you add the test?") is fine.
    """
    if is_skip(raw):
        return None
    if not core_text(raw.strip()):
        return "the answer was empty"
    labels = labelled_speakers(raw)
    if speaker.casefold() in labels:
        other = {name.casefold(): name for name in others if name.casefold() != speaker.casefold()}
        spoken = [other[label] for label in labels if label in other]
        if spoken:
            return f"the answer also spoke for {spoken[0]}, as a script of several voices"
    return None


def shape_reply(raw: str, *, earlier: Iterable[str], limit: int, words: int | None = None) -> ShapedReply:
    """Decide whether a reply is posted, and cap its length (`words`, then `limit` characters); SKIP, empty and
    repeated replies are dropped. A reply cut short keeps its whole text in `full`."""
    text = raw.strip()
    if is_skip(text):
        return ShapedReply(SKIP, Dropped.SKIP)
    if not core_text(text):
        return ShapedReply("", Dropped.EMPTY)
    whole = text
    text = cap_length(cut_words(text, words) if words else text, limit)
    full = whole if text != whole else ""
    if any(near_duplicate(text, previous) for previous in earlier):
        return ShapedReply(text, Dropped.DUPLICATE, full)
    return ShapedReply(text, full=full)
