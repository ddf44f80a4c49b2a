"""Shaping of a persona's reply before it is posted: SKIP detection, the length cap, and near-duplicate checks.

A model may label its text with a leading tag (the offline model writes "[offline] ..."); the tag stays in what is
posted, but is ignored when deciding whether a reply is SKIP, empty, or a repeat of an earlier message.
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
_SENTENCE_END = re.compile(r"[.!?…](?=[\s)\"'»]|$)|\n")
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


def shape_reply(raw: str, *, earlier: Iterable[str], limit: int) -> ShapedReply:
    """Decide whether a reply is posted, and cap its length; SKIP, empty and repeated replies are dropped."""
    text = raw.strip()
    if is_skip(text):
        return ShapedReply(SKIP, Dropped.SKIP)
    if not core_text(text):
        return ShapedReply("", Dropped.EMPTY)
    text = cap_length(text, limit)
    if any(near_duplicate(text, previous) for previous in earlier):
        return ShapedReply(text, Dropped.DUPLICATE)
    return ShapedReply(text)
