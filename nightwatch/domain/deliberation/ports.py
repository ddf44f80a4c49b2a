"""What a deliberation needs from outside: its log, the replicas' liveness, where its messages go, and memory."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from nightwatch.domain.deliberation.models import ChangesRequest, Deliberation, DeliberationStatus, Turn, Verdict
from nightwatch.domain.inputs import whole_number
from nightwatch.domain.llm import Usage
from nightwatch.domain.memory import ToolMemory
from nightwatch.domain.memory.models import Discarded, ReflectionContext, Remembered
from nightwatch.domain.memory.ports import Forgotten
from nightwatch.domain.models import Persona, ThreadMessage

RECENT_MAX = 200  # the most deliberations DeliberationLog.recent returns at once


def recent_limit(raw: object) -> int:
    """Return `raw` as a limit for DeliberationLog.recent, or raise InvalidInputError: a whole number from 1 to 200."""
    return whole_number(raw, what="The number of deliberations to list", low=1, high=RECENT_MAX)


class DeliberationLog(Protocol):
    """Stored deliberations, turns, verdicts, thread summaries and token usage."""

    def start(self, deliberation: Deliberation) -> Deliberation: ...

    def add_turn(self, deliberation_id: int, turn: Turn) -> None: ...

    def add_usage(self, deliberation_id: int, usage: Usage) -> None: ...

    def finish(
        self, deliberation_id: int, status: DeliberationStatus, verdict: Verdict | None, now: datetime
    ) -> None: ...

    def get(self, deliberation_id: int) -> Deliberation | None: ...

    def turns(self, deliberation_id: int) -> list[Turn]: ...

    def recent(self, limit: int = 10, thread_prefix: str | None = None) -> list[Deliberation]:
        """The newest `limit` deliberations (1 to RECENT_MAX; anything else raises InvalidInputError), newest first."""
        ...

    def running(self, idle_since: datetime | None = None) -> list[Deliberation]:
        """RUNNING deliberations; with `idle_since`, only those with no start or turn since then."""
        ...

    def interrupt(self, deliberation_id: int, now: datetime) -> bool:
        """Mark the deliberation INTERRUPTED if it is still RUNNING; False when it had ended meanwhile."""
        ...

    def renew(self, owner: str, threads: Sequence[str], now: datetime) -> int:
        """Renew the lease of the RUNNING leased deliberations `owner` holds in `threads`; returns how many."""
        ...

    def claim(
        self, deliberation_id: int, *, holder: str | None, owner: str, now: datetime, stale_before: datetime | None
    ) -> Deliberation | None:
        """Take a RUNNING leased deliberation over in one atomic step, or return None when that is not possible.

        It succeeds only while `holder` still owns it and (unless `stale_before` is None, for a holder known to have
        exited) its lease is older than `stale_before`; it then belongs to `owner`, its lease renewed at `now` and
        its takeovers counted (unless it was handed over: `holder` None). Of several processes claiming at once,
        exactly one gets the deliberation back.
        """
        ...

    def release(self, owner: str, threads: Sequence[str]) -> int:
        """Hand over the RUNNING leased deliberations `owner` holds in `threads` (no owner: another replica claims
        them at once, see takeover.py); returns how many."""
        ...

    def holds(self, deliberation_id: int, owner: str) -> bool:
        """Whether `owner` still runs the deliberation (nobody took it over and it was not handed over)."""
        ...

    def save_changes(self, deliberation_id: int, changes: ChangesRequest) -> None:
        """Store the lead's request for one more round, so a replica resuming the run still honours it."""
        ...

    def save_summary(self, thread: str, covered: int, summary: str) -> None:
        """Store the summary of the first `covered` messages of a thread."""
        ...

    def summary(self, thread: str) -> tuple[int, str] | None: ...

    def extracted(self, thread: str) -> int:
        """How many of the thread's messages, from its first, lessons were taken from (0 when none)."""
        ...

    def save_extracted(self, thread: str, upto: int) -> None:
        """Record that lessons were taken from the thread's first `upto` messages (its summary is left as it is)."""
        ...


class Liveness(Protocol):
    """The processes that run deliberations: this one's name as an owner, and whether another owner has exited."""

    def owner(self) -> str:
        """This process, as stored with each deliberation it starts."""
        ...

    def gone(self, owner: str) -> bool:
        """True only when `owner` certainly ran on this machine and has exited; an owner elsewhere is never gone."""
        ...


class Poster(Protocol):
    """Where one deliberation's messages go (a Slack thread, the terminal). Bound to one thread."""

    def post_turn(self, persona: Persona, text: str) -> None: ...

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None: ...

    def post_lesson(
        self,
        persona: Persona,
        project: str,
        lesson_id: str,
        text: str,
        *,
        category: str | None = None,
        change: str = "created",
    ) -> None:
        """Tell the thread `persona` learned a lesson; `change` is what recording it did, in `Remembered.said`'s
        words: "created", "merged into <id>" (`lesson_id` is then the lesson it merged into) or "superseded <id>"."""
        ...

    def post_round_request(self, lead: Persona, summary: str) -> None:
        """The lead asks for one more round, for `summary`'s changes: part of the lead's own post, not a notice."""
        ...

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        """Show that `persona` searched its memory for `query` during its turn and found `found` lessons."""
        ...

    def post_forgotten(self, persona: Persona, forgotten: Forgotten) -> None:
        """Tell the thread `persona` forgot a lesson with its tool (kept as `forgotten`, so people can undo it)."""
        ...

    def post_notice(self, text: str) -> None: ...

    def messages(self) -> list[ThreadMessage]:
        """Everything in the thread so far, oldest first (human replies included)."""
        ...


def announce(poster: Poster, persona: Persona, project: str, found: Remembered) -> None:
    """Tell `poster`'s thread about a recorded lesson, with its category and exactly how it changed memory."""
    lesson = found.lesson
    poster.post_lesson(persona, project, lesson.id, lesson.text, category=lesson.category, change=found.said)


class PersonaMemory(ToolMemory, Protocol):
    """What a deliberation writes to the memory service: its turns' tools (`search`, `remember`), the lessons taken
    from summarised messages, each participant's reflection, and which lessons went into prompts.

    What a turn reads (memory among the other sources) comes through domain/context.py instead.
    """

    def reflect(self, persona: Persona, project: str, context: ReflectionContext) -> builtins.list[Remembered]:
        """What recording each lesson of the persona's reflection did (skipped ones left out)."""
        ...

    def extract(self, persona: Persona, project: str, discarded: Discarded) -> builtins.list[Remembered]:
        """What recording each lesson taken from the summarised messages did (skipped ones left out)."""
        ...

    def note_injected(self, persona: Persona, project: str, lesson_ids: builtins.list[str]) -> None: ...
