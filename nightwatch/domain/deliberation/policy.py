"""The bounds of a deliberation, and where the engine gets them: fixed, or the settings now (they can be reloaded).

The engine takes the policy once when a deliberation starts (or is taken over) and keeps it in the run's state, so a
deliberation finishes with the bounds it started with while the next one sees a reload. Only the bounds a run reads
from its state change between runs (rounds, replies, contributors, the lead, retries of the lead's decision and of a
turn, turn words, the memory and shared budgets); the engine and its turns read the rest (reply length, thread
window, model window, lease) once, when they are built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from nightwatch.domain.deliberation import takeover
from nightwatch.domain.memory import MEMORY
from nightwatch.domain.pins import PINS
from nightwatch.domain.sharing import SHARED


@dataclass(frozen=True)
class DeliberationPolicy:
    """The bounds of a deliberation (mapped from Settings by the composition root)."""

    max_rounds: int = 2
    max_contributors: int = 3
    max_replies: int = 12
    reply_chars: int = 1200
    turn_words: int = 120  # the most words a turn asks for; its max_tokens is sized to it (turns.py)
    lead: str | None = None
    context_tokens: int = 3000
    recent_messages: int = 12
    consensus_retries: int = 2
    turn_retries: int = 1  # how many times a failed turn is asked again with the problem fed back (0-3)
    model_window: int = 200_000
    lease_for: timedelta = takeover.LEASE_FOR
    memory_tokens: int | None = None  # most tokens of memory in a turn's prompt; None: the memory service's own
    shared_tokens: int | None = None  # most tokens of teammates' shared knowledge; None: the sharing service's own
    pins_tokens: int | None = None  # most tokens of pinned context; None: the pin service's own

    @property
    def rounds(self) -> int:
        return max(1, self.max_rounds)

    @property
    def budgets(self) -> Mapping[str, int | None]:
        """The token budgets of a turn's context, by source name (see domain/context.py)."""
        return {MEMORY: self.memory_tokens, PINS: self.pins_tokens, SHARED: self.shared_tokens}


PolicySource = DeliberationPolicy | Callable[[], DeliberationPolicy]


def policy_now(source: PolicySource) -> DeliberationPolicy:
    """The policy a deliberation starting now runs with."""
    return source if isinstance(source, DeliberationPolicy) else source()
