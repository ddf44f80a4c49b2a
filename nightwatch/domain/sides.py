"""Things that stand side by side: staging and production, iOS and Android, reads and writes, free and paid.

A lesson about one side says nothing about the other, so two lessons on two sides of one axis are two facts ("calls
the Surescripts staging endpoint" / "calls the Surescripts production endpoint"), however alike they read: curation
never merges them. A lesson naming both sides ("moved from the shared to a dedicated IP pool") is on neither alone.

Not bounds ("under" / "over") nor times of day: a restatement says "below 8 GiB" for "at least 8 GiB". Not "batch"
/ "streaming": "not from the batch warehouse" restates "from streaming events". Each axis lists its sides, each side
the words that name it (a word counts wherever it stands, hyphenated words whole: "pre-match", "client-side").
"""

from __future__ import annotations

import re
from functools import lru_cache

AXES = (
    "staging stage | production prod | dev development | sandbox",
    "inbound incoming | outbound outgoing",
    "upload uploads uploaded | download downloads downloaded",
    "import imports imported | export exports exported",
    "read reads reading | write writes writing",
    "ingress | egress",
    "live in-play | pre-match prematch",
    "online | offline",
    "sync synchronous synchronously | async asynchronous asynchronously",
    "sequential sequentially serial | parallel",
    "free | paid pro premium enterprise",
    "shared | dedicated",
    "public | private",
    "internal | external",
    "primary | secondary replica replicas",
    "min minimum | max maximum",
    "ios iphone ipad | android",
    "web browser | mobile | desktop",
    "show shows shown | hide hides hidden",
    "commercial | residential",
    "domestic | international",
    "debit | credit",
    "weekday weekdays | weekend weekends",
    "client clients client-side | server servers server-side",
    "frontend front-end | backend back-end",
    "cpu cpus | gpu gpus",
    "hot | cold",
    "student students | staff faculty employee employees",
    "buyer buyers | seller sellers",
    "unit | integration | e2e end-to-end",
    "x86 amd64 | arm arm64 aarch64",
    "windows | macos | linux",
    "sender senders | recipient recipients receiver receivers",
    "first-party | third-party",
    "upstream | downstream",
    "email emails | sms",
    "inference serving | training",
)
_SIDES = tuple(tuple(frozenset(side.split()) for side in axis.split(" | ")) for axis in AXES)
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@lru_cache(maxsize=65536)
def sides(text: str) -> tuple[frozenset[int], ...]:
    """For each axis, the sides this text names (none, one, or several)."""
    words = frozenset(_WORD.findall(text.lower()))
    return tuple(frozenset(i for i, side in enumerate(axis) if side & words) for axis in _SIDES)


def other_sides(a: str, b: str) -> bool:
    """Whether the two are about different sides of one axis, neither naming a side the other names."""
    return any(mine and theirs and not mine & theirs for mine, theirs in zip(sides(a), sides(b), strict=True))
