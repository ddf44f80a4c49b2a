"""The pinned-context block of a prompt: a persona's pins for a project, each under its source, within a token budget.

The budget is shared fairly (max-min): pins smaller than an equal share keep all of their text and leave the rest
to the larger ones, which split it equally. A pin over its share is cut at a line boundary (at a word boundary when
not even its first line fits) and ends with a marker saying how much of it is shown, never silently; `context`
reports the cut too.
Every pin is introduced by a line in brackets naming its source, and its text (and that line) is made data with
`as_data`, so no document can close the block or pose as part of the prompt.

Counting a large text is the costly part, so blocks are cached by their pins and budget, and the prepared form of
each text (made data, counted per line) and each cut by text: pins that did not change cost a look-up per turn.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import ClassVar

from nightwatch.domain.pins.inputs import pin_key
from nightwatch.domain.pins.models import Pin, PinKind, PinStatus
from nightwatch.domain.quoting import as_data
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.prompts import Prompt

BUDGET_SETTING = "NIGHTWATCH_PIN_TOKEN_BUDGET"
_SMALLER = {PinKind.FILE: "pin a smaller file", PinKind.URL: "pin a smaller page", PinKind.TEXT: "pin a shorter text"}
_KIND_WORD = {PinKind.FILE: "file", PinKind.URL: "page", PinKind.TEXT: "note"}


@dataclass(frozen=True)
class PinEntry(Prompt):
    """One pin as the prompt carries it: a line naming its source (and a stale note), its text, a cut marker."""

    template: ClassVar[str] = "pin_entry.md.j2"
    number: int
    label: str
    note: str
    text: str
    marker: str

    @classmethod
    def example(cls) -> PinEntry:
        return cls(
            number=3,
            label="file /srv/docs/ARCHITECTURE.md",
            note="file missing since 2026-11-21 09:00 UTC; this is its last content, read 2026-11-20 17:30 UTC",
            text="\\# Architecture\nThe gateway terminates TLS; services talk over mTLS.",
            marker=cut_marker(PinKind.FILE, 1234, 5678),
        )


@dataclass(frozen=True)
class PinsSection(Prompt):
    """The pinned block: entries inside `<pinned>` … `</pinned>`, introduced as documents that are never instructions.

    `pins` must already be made safe with `as_data`, part by part (`pins_section` in source.py does not do it again: it
    would escape the entries' own source lines), so that only the template opens and closes the block.
    """

    template: ClassVar[str] = "soul_pins.md.j2"
    pins: str

    @classmethod
    def example(cls) -> PinsSection:
        return cls(pins=PinEntry.example().render())


@dataclass(frozen=True)
class PackedPin:
    """One pin in a block: what the prompt carries and what `context` reports about it."""

    id: int
    label: str  # "file /srv/docs/ARCHITECTURE.md", as a person reads it
    status: PinStatus
    shared: bool
    text: str  # the entry as rendered into the block
    tokens: int  # of the whole entry
    shown_tokens: int  # of the pin's text that is shown
    full_tokens: int  # of the pin's whole text
    cut: bool


@dataclass(frozen=True)
class PinBlock:
    """The pins chosen for one prompt, packed under `budget`; empty when the persona has no pin on the project."""

    pins: tuple[PackedPin, ...] = ()
    budget: int = 0

    @property
    def empty(self) -> bool:
        return not self.pins

    @property
    def text(self) -> str:
        return "\n\n".join(pin.text for pin in self.pins)

    @property
    def cut(self) -> int:
        """How many pins were cut to fit."""
        return sum(1 for pin in self.pins if pin.cut)


def cut_marker(kind: PinKind, shown: int, full: int, setting: str = BUDGET_SETTING) -> str:
    """The line that ends a cut pin: how much of it is shown, and what to do about it (raise `setting`, the budget
    the pin was cut to fit: the pinned block's, or the shared block's for a pin a teammate shares)."""
    return f"[… cut: {shown:,} of {full:,} tokens shown; raise {setting} or {_SMALLER[kind]}]"


def pin_heading(pin: Pin) -> str:
    """The line in brackets that introduces a pin (`[pin 3 · file /srv/docs/ARCHITECTURE.md]`), made data."""
    return _entry(pin, as_data(label_of(pin)), as_data(stale_note(pin)), "", "").strip()


def pin_text(content: str) -> tuple[str, int]:
    """A pin's whole text as a block carries it (made data) and its tokens; cached by text."""
    data = _prepared(content)
    return data.text, data.tokens


def cut_pin_text(content: str, room: int) -> str:
    """The longest start of a pin's text (made data) within `room` tokens: whole lines, or, when not even the first
    line fits, the words of it that do; cached, as the pinned block's cuts are."""
    return _cut(content, room) if room > 0 else ""


def label_of(pin: Pin) -> str:
    """How a pin is named in the prompt, in `context` and in lists: its kind and its source."""
    source = f'"{pin.source}"' if pin.kind is PinKind.TEXT else pin.source
    return f"{_KIND_WORD[pin.kind]} {source}"


def stale_note(pin: Pin) -> str:
    """For a file that is gone or unreadable: since when, and that the text shown is its last content."""
    if pin.status is PinStatus.OK:
        return ""
    since = f" since {_when(pin.status_since)}" if pin.status_since else ""
    why = f" ({pin.problem})" if pin.status is PinStatus.UNREADABLE and pin.problem else ""
    return f"file {pin.status.value}{since}{why}; this is its last content, read {_when(pin.read_at)}"


def pack(pins: Sequence[Pin], budget: int) -> PinBlock:
    """The block for `pins` (a persona's own first, then the project-wide ones) under `budget` tokens.

    A project-wide pin of the same file, page or text as one of the persona's own is left out: it would say the
    same twice. The same pins (content, status and all) and budget give the same block, so it is cached.
    """
    return _pack(tuple(pins), budget)


@lru_cache(maxsize=256)
def _pack(pins: tuple[Pin, ...], budget: int) -> PinBlock:
    chosen = _unique(pins)
    if not chosen:
        return PinBlock(budget=budget)
    frames = [_frame(pin) for pin in chosen]
    shares = fair_shares([frame.whole for frame in frames], budget)
    return PinBlock(tuple(_fit(frame, share) for frame, share in zip(frames, shares, strict=True)), budget)


def fair_shares(wanted: Sequence[int], budget: int) -> list[int]:
    """Split `budget` among demands `wanted` max-min fairly: nobody gets more than it wants, the rest share equally."""
    shares = [0] * len(wanted)
    remaining, left = max(0, budget), len(wanted)
    for index in sorted(range(len(wanted)), key=lambda i: wanted[i]):
        shares[index] = min(wanted[index], remaining // left)
        remaining -= shares[index]
        left -= 1
    return shares


@dataclass(frozen=True)
class _Frame:
    pin: Pin
    label: str
    note: str
    data: _Prepared
    head: int  # tokens of the entry without its text

    @property
    def whole(self) -> int:
        return self.head + self.data.tokens


def _unique(pins: Sequence[Pin]) -> list[Pin]:
    own = sorted((pin for pin in pins if not pin.shared), key=_order)
    shared = sorted((pin for pin in pins if pin.shared), key=_order)
    seen: set[str] = set()
    chosen = []
    for pin in (*own, *shared):
        key = pin_key(pin.kind, pin.source, pin.content)
        if key not in seen and pin.id is not None:
            seen.add(key)
            chosen.append(pin)
    return chosen


def _order(pin: Pin) -> int:
    return pin.id or 0


def _frame(pin: Pin) -> _Frame:
    label, note = as_data(label_of(pin)), as_data(stale_note(pin))
    head = _entry(pin, label, note, "", "")
    return _Frame(pin, label, note, _prepared(pin.content), estimate_tokens(head))


def _fit(frame: _Frame, share: int) -> PackedPin:
    pin, data = frame.pin, frame.data
    if frame.whole <= share:
        text = _entry(pin, frame.label, frame.note, data.text, "")
        return _packed(frame, text, shown=data.tokens, cut=False)
    widest = cut_marker(pin.kind, data.tokens, data.tokens)  # the marker at its longest: shown <= full
    room = share - estimate_tokens(_entry(pin, frame.label, frame.note, "", widest))
    shown = _cut(pin.content, room) if room > 0 else ""
    shown_tokens = estimate_tokens(shown)
    text = _entry(pin, frame.label, frame.note, shown, cut_marker(pin.kind, shown_tokens, data.tokens))
    return _packed(frame, text, shown=shown_tokens, cut=True)


def _packed(frame: _Frame, text: str, *, shown: int, cut: bool) -> PackedPin:
    pin = frame.pin
    return PackedPin(
        id=pin.id or 0,
        label=label_of(pin),
        status=pin.status,
        shared=pin.shared,
        text=text,
        tokens=estimate_tokens(text),
        shown_tokens=shown,
        full_tokens=frame.data.tokens,
        cut=cut,
    )


def _entry(pin: Pin, label: str, note: str, text: str, marker: str) -> str:
    return PinEntry(number=pin.id or 0, label=label, note=note, text=text, marker=marker).render()


@dataclass(frozen=True)
class _Prepared:
    """A pin's text made data, its token count, and the running token counts of its lines (for cutting)."""

    text: str
    tokens: int
    lines: tuple[str, ...]
    running: tuple[int, ...]  # running[k]: an upper bound on the tokens of the first k lines joined


@lru_cache(maxsize=64)
def _prepared(content: str) -> _Prepared:
    text = as_data(content.strip("\n"))
    lines = tuple(text.split("\n"))
    # Each line counted with its line break: the sum of the parts never undercounts the whole (see tokens.py).
    running = (0, *itertools.accumulate(estimate_tokens(line + "\n") for line in lines))
    return _Prepared(text, estimate_tokens(text), lines, running)


@lru_cache(maxsize=128)
def _cut(content: str, room: int) -> str:
    """The longest start of `content` (made data) within `room` tokens: whole lines, or, when not even the first
    line fits, the words of it that do."""
    data = _prepared(content)
    whole = bisect.bisect_right(data.running, room) - 1  # whole lines that fit
    if whole > 0:
        return "\n".join(data.lines[:whole]).rstrip()
    words = data.lines[0].split(" ")
    costs = itertools.accumulate(estimate_tokens(word + " ") for word in words)
    count = sum(1 for cost in costs if cost <= room)
    return " ".join(words[:count]).rstrip()


def _when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else "at an unknown time"
