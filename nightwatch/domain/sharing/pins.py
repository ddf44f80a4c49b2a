"""A teammate's pinned documents in the shared block: each quoted under its attribution line, cut to fit with a marker.

A pin shared by Maya reads, in Dev's shared block:

    - from Maya (Security Reviewer), pinned document: [pin 3 · file /srv/docs/threat-model.md]
      > The admin API is reachable only from the VPN.
      > …
      [… cut: 120 of 900 tokens shown; raise NIGHTWATCH_SHARED_TOKEN_BUDGET or pin a smaller file]

Every line of the document is quoted (`  > `), so none can pass for another teammate's line (`- from Carlos …`),
and its text is made data as the pinned block's is (pin_block.py), so none can close the block. The heading is the
pinned block's own (a file that is gone or unreadable says so, with its last content shown). A pin over the room the
packing gives it is cut by pin_block's cutting (whole lines, or words of the first) and ends with the same marker,
naming the shared budget; nothing is cut silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from nightwatch.domain.pins import cut_marker, cut_pin_text, pin_heading, pin_text
from nightwatch.domain.pins.models import Pin
from nightwatch.domain.sharing.block import SharedItem, line_tokens
from nightwatch.domain.tokens import estimate_tokens

SHARED_BUDGET_SETTING = "NIGHTWATCH_SHARED_TOKEN_BUDGET"
QUOTE = "  > "  # before each line of a shared document
_QUOTE_TOKENS = 2  # the most quoting adds to a line's tokens (one piece, four characters, the margin)
_TRIES = 8  # cuts tried, each shorter by what the last one was over, before showing only the heading


@dataclass(frozen=True)
class SharedPin:
    """One of a sharer's own pins, offered to a teammate's shared block (a shared_block.Document)."""

    source: str  # the sharing persona's name
    role: str
    pin: Pin

    @cached_property
    def wanted(self) -> int:
        """Tokens the pin costs whole, or a little more: its text's, its heading's, and the quoting's at most."""
        text, tokens = pin_text(self.pin.content)
        return line_tokens(self._item("", "")) + tokens + _QUOTE_TOKENS * (text.count("\n") + 1)

    def fit(self, room: int) -> SharedItem | None:
        """The pin whole when it fits `room` tokens, else the start of it that does and the marker; None when not
        even its heading and marker fit."""
        text, full = pin_text(self.pin.content)
        if full <= room:
            whole = self._item(text, "")
            if line_tokens(whole) <= room:
                return whole
        bare = self._item("", cut_marker(self.pin.kind, full, full, SHARED_BUDGET_SETTING))  # the widest marker
        left = room - line_tokens(bare)
        if left < 0:
            return None
        for _ in range(_TRIES):
            shown = cut_pin_text(self.pin.content, left)
            item = self._item(shown, self._marker(shown, full))
            over = line_tokens(item) - room
            if over <= 0:
                return item
            left = min(left, estimate_tokens(shown)) - over  # below what was shown: the next cut is shorter
        return self._item("", self._marker("", full))  # no longer than `bare`, which fits

    def _marker(self, shown: str, full: int) -> str:
        return cut_marker(self.pin.kind, estimate_tokens(shown), full, SHARED_BUDGET_SETTING)

    def _item(self, shown: str, marker: str) -> SharedItem:
        lines = [" ".join(pin_heading(self.pin).split("\n"))]  # a problem's message may hold a line break
        if shown:
            lines += [(QUOTE + line).rstrip() for line in shown.split("\n")]
        if marker:
            lines.append(f"  {marker}")
        return SharedItem(self.source, self.role, SharedItem.PIN, "\n".join(lines))
