"""The working state of one deliberation: its scope, its panel, and what its turns have done so far."""

from __future__ import annotations

from dataclasses import dataclass, field

from nightwatch.domain.context import TurnContext
from nightwatch.domain.deliberation.lease_guard import LeaseGuard
from nightwatch.domain.deliberation.models import Deliberation, RememberedLesson, Turn, Verdict
from nightwatch.domain.deliberation.participants import Panel
from nightwatch.domain.deliberation.policy import DeliberationPolicy
from nightwatch.domain.deliberation.ports import Poster
from nightwatch.domain.llm import Usage
from nightwatch.domain.models import Persona


@dataclass(frozen=True)
class Scope:
    """What every turn of one deliberation shares."""

    topic: str
    project: str  # a slug
    thread: str
    kind: str
    link: str | None
    max_rounds: int


@dataclass
class RunState:
    """The working state of one deliberation; only the engine and its turns change it."""

    scope: Scope
    poster: Poster
    panel: Panel
    deliberation: Deliberation
    first_message: int  # index in the thread where this deliberation began
    human_seen: int  # human messages before this index have been scanned for names
    usage: Usage = field(default_factory=Usage)
    unsaved_usage: Usage = field(default_factory=Usage)  # added to the stored total at the end of each round
    turns: list[Turn] = field(default_factory=list)
    replies: int = 0
    speakers: dict[str, Persona] = field(default_factory=dict)  # by slug, in order of first turn
    known: dict[str, TurnContext] = field(default_factory=dict)  # the last context read (context.py), by slug
    injected: dict[str, set[str]] = field(default_factory=dict)  # lesson ids injected, by slug
    addressed: set[str] = field(default_factory=set)  # slugs a person addressed since the last round
    changes: Verdict | None = None  # the lead's CHANGES verdict that opened this round
    taken: set[tuple[str, int]] = field(default_factory=set)  # (name casefolded, round) stored before a takeover
    # Recorded during the run: with the memory tools in turns, or from summarised messages (extraction.py).
    remembered: list[RememberedLesson] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)  # one message per extraction whose lessons storage refused
    policy: DeliberationPolicy = field(default_factory=DeliberationPolicy)  # taken when it started (policy.py)
    lease: LeaseGuard = field(default_factory=LeaseGuard)  # checked before a turn is stored (lease_guard.py)

    @property
    def id(self) -> int:
        if self.deliberation.id is None:
            raise ValueError("the deliberation was not started in the log")
        return self.deliberation.id
