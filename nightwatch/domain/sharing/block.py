"""The shared block of a turn: what teammates share with a persona, as attributed items under their own budget.

Items are (source persona, kind, text): lessons, and pinned documents (kind "pin", built by shared_pins.py), so both
go through the same packing and rendering. Each line reads `- from Maya (Security Reviewer): <lesson>` (a document's
lines are quoted under its own); every part of it is made data with `as_data`, so no shared text can close the block
its source (source.py) puts it in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from nightwatch.domain.pins import fair_shares
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


class Document(Protocol):
    """A whole document a share offers (a pinned one, shared_pins.py): shown whole when it fits, else cut to fit."""

    @property
    def wanted(self) -> int:
        """Tokens it costs whole, or more (never less): what it asks of the documents' share of the budget."""
        ...

    def fit(self, room: int) -> SharedItem | None:
        """Its item within `room` tokens: whole, or cut with a marker saying so; None when not even that fits."""
        ...


@dataclass(frozen=True)
class SharedBlockPrompt(Prompt):
    """The shared items as lines (source.py puts its heading and delimiters around them)."""

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


DOCUMENTS_SHARE = 0.5  # the most of the budget documents may take, so ranked lessons keep room
_COSTS_KEPT = 20_000  # line costs remembered: a teammate's lessons are offered again at every turn


class LineCosts:
    """What each item's line costs in tokens, remembered by its text (counting tokens is the slow part of packing)."""

    def __init__(self) -> None:
        self._known: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, item: SharedItem) -> int:
        line = attributed(_as_data(item))
        with self._lock:
            known = self._known.get(line)
        if known is None:
            known = _line_tokens(line)
            with self._lock:
                if len(self._known) >= _COSTS_KEPT:
                    self._known.clear()
                self._known[line] = known
        return known


def attributed(item: SharedItem) -> str:
    """One item's line as shared_block.md.j2 renders it (tests keep the two alike); costs are counted on it."""
    role = f" ({item.role})" if item.role else ""
    pinned = ", pinned document" if item.kind == SharedItem.PIN else ""
    return f"- from {item.source}{role}{pinned}: {item.text}"


def line_tokens(item: SharedItem) -> int:
    """What one item's line (a document's lines) costs in the block, counted afresh."""
    return _line_tokens(attributed(_as_data(item)))


def _line_tokens(line: str) -> int:
    return estimate_tokens(line + "\n")


def pack_shared(
    candidates: Sequence[Candidate],
    budget: int,
    cost: Callable[[SharedItem], int] | None = None,
    documents: Sequence[Document] = (),
) -> SharedBlock:
    """The best candidates and documents that fit `budget` tokens, rendered, never over.

    `first` candidates (pinned lessons) lead. The documents come next: together they take at most DOCUMENTS_SHARE
    of the budget (of what the first left), split fairly among them (pin_block.fair_shares), each over its share cut
    to it with a marker. Then each sharer's best lesson in turn, then each one's second best, and so on (candidates
    come grouped by sharer, in order), in what is left. Scores of different memories are not comparable (a memory of
    one lesson scores its words low), so taking turns by rank keeps one long memory from crowding out a short one.
    """
    cost = cost or LineCosts()
    first = [c.item for c in sorted((c for c in candidates if c.first), key=lambda c: c.rank)]
    ranked = [c.item for c in sorted((c for c in candidates if not c.first), key=lambda c: c.rank)]
    chosen = pack(first, budget, cost)
    spent = sum(cost(item) for item in chosen)
    fitted = _fit_documents(documents, min(budget - spent, int(budget * DOCUMENTS_SHARE)))
    chosen += fitted
    spent += sum(line_tokens(item) for item in fitted)
    chosen += pack(ranked, budget - spent, cost)
    text = render_items(chosen)
    while chosen and estimate_tokens(text) > budget:  # the estimate is checked on the whole rendered block
        chosen = chosen[:-1]
        text = render_items(chosen)
    offered = len(candidates) + len(documents)
    if not chosen:
        return SharedBlock(total_items=offered)
    return SharedBlock(tuple(chosen), text, estimate_tokens(text), offered)


def _fit_documents(documents: Sequence[Document], room: int) -> list[SharedItem]:
    """The documents within `room` tokens, each in its fair share of it: whole, cut, or left out."""
    if not documents or room <= 0:
        return []
    shares = fair_shares([document.wanted for document in documents], room)
    fitted = (document.fit(share) for document, share in zip(documents, shares, strict=True))
    return [item for item in fitted if item is not None]


def render_items(items: Sequence[SharedItem]) -> str:
    """The lines of the block, every part made data, so their tokens are counted as the prompt will carry them."""
    return SharedBlockPrompt(items=tuple(_as_data(item) for item in items)).render() if items else ""


def _as_data(item: SharedItem) -> SharedItem:
    # A document's text was made data part by part where it was built (pins.py); again, its own source line would be
    # escaped as one posed by data.
    text = item.text if item.kind == SharedItem.PIN else as_data(item.text)
    return SharedItem(as_data(item.source), as_data(" ".join(item.role.split())), item.kind, text)
