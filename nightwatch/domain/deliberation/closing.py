"""How a deliberation ends: with the lead's verdict posted and stored and everyone's reflection, or before a decision
(stopped, or given up on) with a notice; either way its injected lessons are counted and its result is returned."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from nightwatch.domain.deliberation.consensus import ClosingPrompt
from nightwatch.domain.deliberation.debrief import discussion, note_injected, participants, reflect_all
from nightwatch.domain.deliberation.models import (
    Decision,
    DeliberationResult,
    DeliberationStatus,
    RememberedLesson,
    Verdict,
)
from nightwatch.domain.deliberation.ports import DeliberationLog, PersonaMemory
from nightwatch.domain.deliberation.state import RunState
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.ports import Clock


class Closing:
    """Closes a deliberation's record, lets its participants reflect, and builds its result."""

    def __init__(self, *, memory: PersonaMemory, log: DeliberationLog, clock: Clock, reply_chars: int) -> None:
        self._memory = memory
        self._log = log
        self._clock = clock
        self._reply_chars = reply_chars

    def decided(self, state: RunState, verdict: Verdict) -> DeliberationResult:
        """Post the lead's closing summary, store the verdict, then let everyone reflect."""
        scope = state.scope
        story = discussion(
            state.poster.messages()[state.first_message :],
            verdict,
            max_messages=2 * state.policy.max_replies,
            chars=self._reply_chars,
        )
        state.poster.post_verdict(state.panel.lead, verdict, ClosingPrompt.of(verdict).render())
        finished = self._clock.now()
        self._log.finish(state.id, DeliberationStatus.DONE, verdict, finished)
        context = ReflectionContext(
            scope.kind, scope.topic, story, f"{verdict.decision.value}: {verdict.summary}", scope.link
        )
        reflections = reflect_all(self._memory, state.poster, participants(state), scope.project, context)
        note_injected(self._memory, state)
        result = self._result(state, DeliberationStatus.DONE, verdict, reflections.remembered, finished)
        return replace(result, unsaved=(*state.unsaved, *reflections.unsaved))

    def ended(self, state: RunState, status: DeliberationStatus, notice: str) -> DeliberationResult:
        """Close the deliberation before a decision (its usage already saved) and say so in the thread."""
        now = self._clock.now()
        self._log.finish(state.id, status, None, now)
        state.poster.post_notice(notice)
        note_injected(self._memory, state)
        verdict = Verdict(
            Decision.HUMAN,
            "Stopped before a decision; ask again, or decide in the thread.",
            (f"The deliberation ended {status.value}.",),
        )
        return replace(self._result(state, status, verdict, [], now), unsaved=tuple(state.unsaved))

    def _result(
        self,
        state: RunState,
        status: DeliberationStatus,
        verdict: Verdict,
        remembered: list[RememberedLesson],
        finished: datetime,
    ) -> DeliberationResult:
        stored = verdict if status is DeliberationStatus.DONE else None
        deliberation = replace(
            state.deliberation, status=status, verdict=stored, finished_at=finished, usage=state.usage
        )
        # With the memory tools during turns or from summarised messages (extraction.py), then in reflection.
        everything = (*state.remembered, *remembered)
        return DeliberationResult(deliberation, tuple(state.turns), verdict, everything, state.usage)
