"""The shared block of a turn: what teammates share with a persona, as attributed items under their own budget.

Items are (source persona, kind, text): lessons now, and pinned documents (kind "pin") when they are shared too, so
both go through the same packing and rendering. Each line reads `- from Maya (Security Reviewer): <lesson>`; every
part of it is made data with `as_data`, so no shared text can close the block the soul compiler puts it in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from nightwatch.domain.quoting import as_data
from nightwatch.domain.recall import pack
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.prompts import Prompt


@dataclass(frozen=True)
class SharedItem:
    """One piece of shared knowledge and whose it is."""

    LESSON: ClassVar[str] = "lesson"
    PIN: ClassVar[str] = "pin"

    source: str  # the sharing persona's name
    role: str  # its role, shown beside the name
    kind: str  # LESSON or PIN
    text: str


@dataclass(frozen=True)
class SharedBlock:
    """The shared items chosen for one prompt, already rendered; `text` is empty when there is nothing to inject."""

    items: tuple[SharedItem, ...] = ()
    text: str = ""
    tokens: int = 0
    total_items: int = 0  # items the shares offered before the budget chose among them

    @property
    def empty(self) -> bool:
        return not self.items

    @property
    def sources(self) -> tuple[str, ...]:
        """The personas whose items went in, in order of their first item."""
        return tuple(dict.fromkeys(item.source for item in self.items))


@dataclass(frozen=True)
class Candidate:
    """An item a share offers: its place in its sharer's own ranking; `first` items (pinned lessons) lead."""

    item: SharedItem
    rank: int  # 0 for the sharer's best (among its `first` items, or among the others)
    first: bool = False


@dataclass(frozen=True)
class SharedBlockPrompt(Prompt):
    """The shared items as lines (the soul compiler puts its heading and delimiters around them)."""

    template: ClassVar[str] = "shared_block.md.j2"

    items: tuple[SharedItem, ...]

    @classmethod
    def example(cls) -> SharedBlockPrompt:
        return cls(
            items=(
                SharedItem("Maya", "Security Reviewer", SharedItem.LESSON, "The session cookie lacks SameSite."),
                SharedItem("Priya", "QA Engineer", SharedItem.PIN, "Release checklist: run the load suite first."),
            )
        )


def pack_shared(candidates: Sequence[Candidate], budget: int) -> SharedBlock:
    """The best candidates that fit `budget` tokens, rendered, never over.

    `first` ones lead; then each sharer's best in turn, then each one's second best, and so on (candidates come
    grouped by sharer, in order). Scores of different memories are not comparable (a memory of one lesson scores
    its words low), so taking turns by rank keeps one long memory from crowding out a short one.
    """
    ordered = sorted(candidates, key=lambda c: (not c.first, c.rank))
    chosen = pack((c.item for c in ordered), budget, _cost)
    text = render_items(chosen)
    while chosen and estimate_tokens(text) > budget:  # the estimate is checked on the whole rendered block
        chosen = chosen[:-1]
        text = render_items(chosen)
    if not chosen:
        return SharedBlock(total_items=len(candidates))
    return SharedBlock(tuple(chosen), text, estimate_tokens(text), len(candidates))


def render_items(items: Sequence[SharedItem]) -> str:
    """The lines of the block, every part made data, so their tokens are counted as the prompt will carry them."""
    return SharedBlockPrompt(items=tuple(_as_data(item) for item in items)).render() if items else ""


def _as_data(item: SharedItem) -> SharedItem:
    return SharedItem(as_data(item.source), as_data(" ".join(item.role.split())), item.kind, as_data(item.text))


def _cost(item: SharedItem) -> int:
    return estimate_tokens(render_items((item,)) + "\n")
