"""After a deliberation: each participant reflects, each lesson recorded is reported, injected lessons are noted.

Reflection is best effort: a persona whose reflection fails is logged and skipped; the deliberation stands. Lessons
that storage refused are kept by the memory service for a retry; the thread is told so, and so is the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from nightwatch.domain.deliberation.models import RememberedLesson, Verdict
from nightwatch.domain.deliberation.ports import PersonaMemory, Poster, announce
from nightwatch.domain.deliberation.state import RunState
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.models import Persona, ThreadMessage
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DiscussionPrompt(Prompt):
    """What happened in the deliberation, handed to each participant's reflection."""

    template: ClassVar[str] = "discussion.md.j2"
    messages: tuple[ThreadMessage, ...]
    decision: str
    summary: str

    @classmethod
    def example(cls) -> DiscussionPrompt:
        return cls(
            messages=(
                ThreadMessage(author="Maya", text="Tokens never expire.", persona="Maya"),
                ThreadMessage(author="alice", text="Is that a blocker?"),
            ),
            decision="CHANGES",
            summary="Add a TTL first.",
        )


def discussion(messages: Sequence[ThreadMessage], verdict: Verdict, *, max_messages: int, chars: int) -> str:
    """The deliberation's messages (the last `max_messages`, each clipped to `chars`) and its outcome."""
    clipped = tuple(replace(m, text=m.text[:chars]) for m in list(messages)[-max_messages:])
    return DiscussionPrompt(clipped, verdict.decision.value, verdict.summary).render()


def participants(state: RunState) -> list[Persona]:
    """Everyone who took a turn, in order, and the lead."""
    lead = state.panel.lead
    return [*state.speakers.values()] + ([] if lead.slug in state.speakers else [lead])


@dataclass(frozen=True)
class Reflections:
    """What the participants' reflections left: the lessons recorded, and a message per persona whose were not."""

    remembered: list[RememberedLesson]
    unsaved: list[str]


def reflect_all(
    memory: PersonaMemory, poster: Poster, personas: Sequence[Persona], project: str, context: ReflectionContext
) -> Reflections:
    """Let each persona reflect; report every lesson recorded, and every storage fault, through the poster."""
    remembered: list[RememberedLesson] = []
    unsaved: list[str] = []
    for persona in personas:
        try:
            for found in memory.reflect(persona, project, context):
                remembered.append(RememberedLesson(persona.name, found.lesson, found.said))
                announce(poster, persona, project, found)
        except StorageError as err:  # the message says whether the lessons are kept and how to retry them
            log.warning("%s's lessons were not written: %s", persona.name, err)
            unsaved.append(str(err))
            _notice(poster, str(err))
        except Exception:
            # Any other failure (model, parsing, posting) must never break the finished deliberation.
            log.exception("%s's reflection failed; the deliberation stands", persona.name)
    return Reflections(remembered, unsaved)


def _notice(poster: Poster, text: str) -> None:
    try:
        poster.post_notice(text)
    except Exception:  # the caller still hears of it through the result
        log.exception("could not tell the thread: %s", text)


def note_injected(memory: PersonaMemory, state: RunState) -> None:
    """Tell the memory service which lessons went into each persona's prompts."""
    for slug, ids in state.injected.items():
        if not ids:
            continue
        try:
            memory.note_injected(state.speakers[slug], state.scope.project, sorted(ids))
        except Exception:
            # Injection counts are a ranking hint; losing one is not worth failing over.
            log.exception("could not note the lessons injected for %s", slug)
