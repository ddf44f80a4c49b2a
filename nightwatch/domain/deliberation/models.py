"""Deliberation's values: a stored deliberation, its turns and verdict, and what the lead decides."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from nightwatch.domain.llm import Usage
from nightwatch.domain.models import Lesson
from nightwatch.domain.tool_use import ToolTrace


class Decision(StrEnum):
    APPROVE = "APPROVE"
    CHANGES = "CHANGES"
    HUMAN = "HUMAN"


class DeliberationStatus(StrEnum):
    RUNNING = "running"
    DONE = "done"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


FAILED_TURN_PREFIX = "(skipped: "  # the stored text of a turn the model gave no usable answer for


@dataclass(frozen=True)
class Turn:
    persona: str  # persona name
    role: str
    text: str
    round: int
    lessons_injected: int = 0
    skipped: bool = False
    usage: Usage = field(default_factory=Usage)
    created_at: datetime | None = None
    pins_injected: int = 0  # pinned documents in its prompt (not stored: 0 in turns read back from the log)
    tool_calls: tuple[ToolTrace, ...] = ()  # kept in memory for the caller; the deliberation log does not store them
    full_text: str = ""  # the whole answer when `text` (what was posted) was cut short; the log stores this one

    @property
    def failed(self) -> bool:
        """Whether the model gave no usable answer for this turn (not a persona choosing to SKIP)."""
        return self.skipped and self.text.startswith(FAILED_TURN_PREFIX)


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    summary: str
    reasons: tuple[str, ...] = ()
    action_items: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangesRequest:
    """The lead's CHANGES verdict that opened round `round`, stored with its deliberation: a resumed run honours it."""

    round: int
    verdict: Verdict


@dataclass(frozen=True)
class RememberedLesson:
    """A lesson a deliberation recorded: who, the lesson that holds it now, and what recording it did (`said`)."""

    persona: str
    lesson: Lesson
    said: str = "created"  # Remembered.said: "created", "merged into <id>" or "superseded <id>"


@dataclass(frozen=True)
class Deliberation:
    """A stored deliberation (header only; turns are stored beside it)."""

    topic: str
    project: str
    thread: str  # "channel:thread_ts" for Slack, "terminal:<id>" for the CLI
    status: DeliberationStatus = DeliberationStatus.RUNNING
    started_at: datetime | None = None
    finished_at: datetime | None = None
    verdict: Verdict | None = None
    usage: Usage = field(default_factory=Usage)
    id: int | None = None
    owner: str | None = None  # the process that runs it (see ports.Liveness); None in rows from before owners
    # The owner's lease, renewed while it runs; None for deliberations no other process can take over (the CLI's).
    heartbeat_at: datetime | None = None
    takeovers: int = 0  # how many times another process took it over (see deliberation/takeover.py)
    changes: ChangesRequest | None = None  # the lead's latest request for one more round, while it runs


DEFAULT_KIND = "deliberation"


@dataclass(frozen=True)
class DeliberationRequest:
    """What to deliberate on, where, and with whom (the engine picks the rest of the panel)."""

    topic: str
    project: str
    thread: str
    personas: tuple[str, ...] = ()
    kind: str = DEFAULT_KIND
    link: str | None = None
    leased: bool = False  # held under a lease, so another replica can take it over (Slack threads)


@dataclass(frozen=True)
class DeliberationResult:
    """How a deliberation ended: its record, its turns and verdict, what was learned and what it cost."""

    deliberation: Deliberation
    turns: tuple[Turn, ...]
    verdict: Verdict
    remembered: tuple[RememberedLesson, ...]
    usage: Usage
    unsaved: tuple[str, ...] = ()  # one message per persona whose lessons storage refused (kept for a retry)

    @property
    def model_never_answered(self) -> bool:
        """Whether every turn failed for want of a usable answer from the model (`nightwatch deliberate` exits 3)."""
        return bool(self.turns) and all(turn.failed for turn in self.turns)
