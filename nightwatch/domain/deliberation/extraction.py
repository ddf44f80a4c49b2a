"""Lessons from a long thread's older messages, taken once, as the thread window summarises them away.

Once a turn's window no longer shows a thread's first messages (thread_context.py folds them into a summary), the
personas who wrote some of them each take their own lessons from them, in their own role's words
(`PersonaMemory.extract`): they were part of that stretch of the thread, and each keeps its own memory. When only
people wrote them, the lead does, since it decides for the thread. Lessons go through the same junk guard, curation
and storage as a reflection's, and each is announced as reflection's are ("★ Carlos remembered: …").

This is a step of the engine's loop, run after it reads the window for a turn or the lead's decision and before the
call: reading the thread window never writes lessons.

The deliberation log keeps how far extraction got in each thread, so nothing is taken twice: not by the next turn,
not by a replica that takes the deliberation over, not by a later deliberation in the same thread. The mark moves
once the lessons are recorded; a process killed in between takes them again at the next turn, and curation counts
the restated lessons as seen again instead of adding them twice. A failure here never fails the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from nightwatch.domain.deliberation.models import RememberedLesson
from nightwatch.domain.deliberation.ports import DeliberationLog, PersonaMemory, announce
from nightwatch.domain.deliberation.state import RunState
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.models import Discarded
from nightwatch.domain.models import Persona, ThreadMessage

log = logging.getLogger(__name__)


def learn_discarded(
    memory: PersonaMemory,
    deliberations: DeliberationLog,
    state: RunState,
    messages: Sequence[ThreadMessage],
    covered: int,
) -> None:
    """Let the right personas learn from the thread's messages up to `covered` that no extraction has read yet."""
    thread = state.scope.thread
    try:
        done = deliberations.extracted(thread)
        if covered <= done:
            return
        discarded = tuple(messages[done:covered])
        for persona in learners(state, discarded):
            _learn(memory, state, persona, discarded)
        deliberations.save_extracted(thread, covered)
    except Exception:  # the log failed: the lessons wait for the next turn, and the turn goes on
        log.exception("could not take lessons from the summarised messages of %s", thread)


def learners(state: RunState, discarded: Sequence[ThreadMessage]) -> list[Persona]:
    """The personas who wrote some of `discarded`, in the order they first did; the lead when none did."""
    known = {p.name.casefold(): p for p in (*state.panel.everyone, *state.speakers.values())}
    wrote = (known.get(m.persona.casefold()) for m in discarded if m.persona is not None)
    found = list({p.slug: p for p in wrote if p is not None}.values())
    return found or [state.panel.lead]


def _learn(memory: PersonaMemory, state: RunState, persona: Persona, discarded: tuple[ThreadMessage, ...]) -> None:
    """One persona's extraction; its failure is logged (like a failed reflection, it is not tried again)."""
    scope = state.scope
    try:
        recorded = memory.extract(persona, scope.project, Discarded(scope.kind, scope.topic, discarded, scope.link))
        for found in recorded:
            state.remembered.append(RememberedLesson(persona.name, found.lesson, found.said))
            announce(state.poster, persona, scope.project, found)
    except StorageError as err:  # kept for a retry; the message says so
        log.warning("%s's lessons from the summarised messages were not written: %s", persona.name, err)
        state.unsaved.append(str(err))
        state.poster.post_notice(str(err))
    except Exception:
        log.exception("%s could not take lessons from the summarised messages", persona.name)
