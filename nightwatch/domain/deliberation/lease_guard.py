"""Posting only while holding the lease: a leased deliberation's poster asks the log before each post.

A replica can lose a deliberation without knowing it: a long pause (a stalled machine, a model call past the lease)
lets another replica claim it (takeover.py), or this replica handed it over on shutdown while a turn was still
waiting for the model. Before each post, and before a turn is stored (a turn stored is one a resumed run skips),
`LeaseGuard` checks that this process still owns the deliberation; when it does not, it raises `LeaseLostError`
instead, and the engine stops the run where it is, storing and posting nothing more: the replica that holds the
lease now carries on in the same thread.
"""

from __future__ import annotations

from nightwatch.domain.deliberation.models import Deliberation, Verdict
from nightwatch.domain.deliberation.ports import DeliberationLog, Poster
from nightwatch.domain.memory.ports import Forgotten
from nightwatch.domain.models import Persona, ThreadMessage


class LeaseEndedError(Exception):
    """This process no longer runs the deliberation: it stopped with no further post (not an error a person sees)."""


class LeaseLostError(LeaseEndedError):
    """Another process holds the deliberation now: its lease was claimed, or handed over while this run was busy."""


class HandedOverError(LeaseEndedError):
    """This process was stopping: the deliberation was left running, its lease released for another replica."""


class LeaseGuard:
    """Checks that this process still holds a leased deliberation's lease; for any other deliberation, nothing."""

    def __init__(self, log: DeliberationLog | None = None, deliberation: Deliberation | None = None) -> None:
        held = deliberation is not None and leased(deliberation)
        self._log = log if held else None
        self._id = deliberation.id if deliberation is not None else None
        self._owner = deliberation.owner if deliberation is not None else None

    def check(self) -> None:
        """Raise LeaseLostError when another process holds the deliberation now (or nobody: it was handed over)."""
        if self._log is None or self._id is None or self._owner is None:
            return
        if not self._log.holds(self._id, self._owner):
            raise LeaseLostError(f"deliberation #{self._id} is no longer held by {self._owner}")

    def poster(self, poster: Poster) -> Poster:
        """`poster`, checking the lease before each post when the deliberation is leased."""
        return LeasedPoster(poster=poster, guard=self) if self._log is not None else poster


class LeasedPoster:
    """A Poster that posts through `poster` only while `guard` finds the lease still held."""

    def __init__(self, *, poster: Poster, guard: LeaseGuard) -> None:
        self._poster = poster
        self._check = guard.check

    def post_turn(self, persona: Persona, text: str) -> None:
        self._check()
        self._poster.post_turn(persona, text)

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None:
        self._check()
        self._poster.post_verdict(lead, verdict, text)

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
        self._check()
        self._poster.post_lesson(persona, project, lesson_id, text, category=category, change=change)

    def post_round_request(self, lead: Persona, summary: str) -> None:
        self._check()
        self._poster.post_round_request(lead, summary)

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        self._poster.post_recall(persona, query, found)  # logged, not posted: nothing to guard

    def post_forgotten(self, persona: Persona, forgotten: Forgotten) -> None:
        self._check()
        self._poster.post_forgotten(persona, forgotten)

    def post_notice(self, text: str) -> None:
        self._check()
        self._poster.post_notice(text)

    def messages(self) -> list[ThreadMessage]:
        return self._poster.messages()


def leased(deliberation: Deliberation) -> bool:
    """Whether the deliberation runs under a lease another replica may claim (a Slack thread's, not the terminal's)."""
    return deliberation.heartbeat_at is not None and bool(deliberation.owner) and deliberation.id is not None


def hand_over(log: DeliberationLog, deliberation: Deliberation) -> HandedOverError:
    """Release the lease of `deliberation` (left running) for another replica; the error that ends this run."""
    if deliberation.owner:
        log.release(deliberation.owner, [deliberation.thread])
    return HandedOverError(f"deliberation #{deliberation.id} was handed over to another replica")
