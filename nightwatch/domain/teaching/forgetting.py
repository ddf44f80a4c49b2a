"""Forgetting by the model: the `memory_forget` tool of a turn, and putting a forgotten lesson back (Undo).

A persona forgets only its own live lessons of the project of its turn, at most `FORGET_PER_TURN` in a turn (a later
call is refused with a tool error). Given an id, that lesson; given words, a lesson only when exactly one of the
persona's lessons matches them clearly (its text, or a cosine or a share of the words of at least `CLOSE`), else
nothing is forgotten and the model is shown the nearest few with their ids (the nearness is teaching's, as for
"forget that …" said in a thread).

`Forgetting.forget` first keeps the lesson, with every mark it has, as a one-lesson memory document
(`ForgottenLessons`), then removes it the way `nightwatch memory forget` and the Forget button do
(`MemoryService.forget`), so a failure between the two loses nothing. `restore` imports that document back
(`MemoryTransfer.merge_in`: the lesson returns to its dated section, with its vector) and records who restored it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, Protocol

from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.memory import (
    FORGET_TOOL,
    MemoryService,
    MemoryTransfer,
    is_lesson_id,
    new_document,
    validate_query,
)
from nightwatch.domain.memory.ports import Forgotten, ForgottenLessons
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.quoting import as_data
from nightwatch.domain.teaching.service import CANDIDATES, CLOSE, word_share
from nightwatch.domain.tool_use import ToolSpec
from nightwatch.prompts import Prompt

FORGET_PER_TURN = 1
ONE_PER_TURN = (
    "Not forgotten: you may forget at most one lesson in a turn, and you already did. Answer now; you can forget "
    "another in a later turn."
)


@dataclass(frozen=True)
class ForgetToolPrompt(Prompt):
    """What `memory_forget` is for, as the model reads it."""

    template: ClassVar[str] = "tool_forget.md.j2"
    per_turn: int

    @classmethod
    def example(cls) -> ForgetToolPrompt:
        return cls(per_turn=FORGET_PER_TURN)


@dataclass(frozen=True)
class ForgetCandidatesPrompt(Prompt):
    """A forget that matched no single lesson clearly: nothing forgotten, and the nearest lessons (id, text as data)."""

    template: ClassVar[str] = "tool_forget_candidates.md.j2"
    project: str
    wanted: str
    lessons: tuple[tuple[str, str], ...]

    @classmethod
    def example(cls) -> ForgetCandidatesPrompt:
        return cls(project="night-watch", wanted="rate limit", lessons=(("3f9a2c1d", "Login allows 10 a minute."),))


def forget_tool_spec() -> ToolSpec:
    """The tool's definition (the same every call: it is part of each request's cacheable prefix)."""
    return ToolSpec(
        name=FORGET_TOOL,
        description=ForgetToolPrompt(per_turn=FORGET_PER_TURN).render(),
        input_schema={
            "type": "object",
            "properties": {
                "lesson": {
                    "type": "string",
                    "description": "the lesson's id (8 hex characters) or its words",
                    "maxLength": 500,
                }
            },
            "required": ["lesson"],
        },
    )


class PersonasById(Protocol):
    """Finding the persona a kept lesson belongs to (by id, so a rename meanwhile still finds it)."""

    def get_by_id(self, persona_id: int) -> Persona: ...


class Forgetting:
    """Forgets a persona's lesson so that it can be restored, and restores it; makes each turn's tool."""

    def __init__(
        self, *, memory: MemoryService, transfer: MemoryTransfer, kept: ForgottenLessons, personas: PersonasById
    ) -> None:
        self._memory = memory
        self._transfer = transfer
        self._kept = kept
        self._personas = personas
        self.spec = forget_tool_spec()

    def for_turn(self, persona: Persona, project: str, thread: str) -> ForgetTool:
        """The tool of one persona's turn in one project's thread (it counts what that turn forgot)."""
        return ForgetTool(forgetting=self, persona=persona, project=project, thread=thread)

    def lessons(self, persona: Persona, project: str) -> list[Lesson]:
        """The persona's live lessons of `project` (what its tool may forget)."""
        return self._memory.lessons(persona, project)

    def nearest(self, persona: Persona, project: str, wanted: str) -> list[tuple[Lesson, float]]:
        """The persona's lessons nearest to `wanted`, with how close each is (cosine or share of words), best first."""
        hits = self._memory.search(persona, project, wanted, limit=CANDIDATES * 2)
        scored = [(hit.lesson, max(hit.similarity, word_share(wanted, hit.lesson.text))) for hit in hits]
        return sorted(scored, key=lambda pair: -pair[1])

    def forget(self, persona: Persona, project: str, lesson: Lesson, *, thread: str) -> Forgotten:
        """Keep `lesson` for a restore, then remove it from the persona's memory; NotFoundError when it is gone."""
        if persona.id is None:
            raise NotFoundError(f"{persona.name} is not stored yet; nothing was forgotten.")
        doc = new_document(f"{persona.name} · memory for {project}")
        day = lesson.recorded_at.date()
        doc = doc.add_history([lesson]) if lesson.stale else doc.append([lesson], day, lesson.kind, lesson.link)
        now = self._memory.clock.now()
        kept = self._kept.keep(
            Forgotten(persona.id, persona.name, project, lesson.id, lesson.text, doc.render(), thread, now)
        )
        self._memory.forget(persona, project, lesson.id)
        return kept

    def restore(self, forgotten_id: int, user: str) -> Forgotten:
        """Put the kept lesson back into its persona's memory and record who did; NotFoundError when it is unknown,
        InvalidInputError when it was restored already."""
        found = self._kept.get(forgotten_id)
        if found is None or found.id is None:
            raise NotFoundError("This Undo button no longer points at a forgotten lesson; nothing changed.")
        if found.restored_by is not None:
            raise InvalidInputError(f"{found.persona}'s lesson was restored already (by <@{found.restored_by}>).")
        persona = self._personas.get_by_id(found.persona_id)
        self._transfer.merge_in(persona, found.project, found.kept)
        now = self._memory.clock.now()
        if not self._kept.mark_restored(found.id, user, now):
            raise InvalidInputError(f"{found.persona}'s lesson was restored already by someone else.")
        return replace(found, restored_at=now, restored_by=user)


class ForgetTool:
    """The `memory_forget` tool of one persona's turn in one project's thread (see the module docstring)."""

    def __init__(self, *, forgetting: Forgetting, persona: Persona, project: str, thread: str) -> None:
        self._forgetting = forgetting
        self._persona = persona
        self._project = project
        self._thread = thread
        self.forgotten = 0

    def run(self, given: Mapping[str, object]) -> tuple[str, str, Forgotten | None]:
        """(text for the model, a short line for people, what was forgotten or None); InvalidInputError when the
        call cannot be done."""
        if self.forgotten >= FORGET_PER_TURN:
            raise InvalidInputError(ONE_PER_TURN)
        raw = given.get("lesson")
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidInputError("Give the lesson to forget: its id (8 hex characters) or its words.")
        wanted = raw.strip().strip("[]")
        lesson, near = self._match(wanted)
        if lesson is None:
            content = ForgetCandidatesPrompt(
                project=self._project,
                wanted=as_data(" ".join(wanted.split())[:200]),
                lessons=tuple((found.id, as_data(found.text)) for found in near),
            ).render()
            return content, f"no single lesson matched ({len(near)} near)", None
        kept = self._forgetting.forget(self._persona, self._project, lesson, thread=self._thread)
        self.forgotten += 1
        return f"Forgot [{lesson.id}]: {as_data(lesson.text)}", f"forgot {lesson.id}", kept

    def _match(self, wanted: str) -> tuple[Lesson | None, list[Lesson]]:
        """The one lesson `wanted` names clearly, else None and the nearest few."""
        lessons = self._forgetting.lessons(self._persona, self._project)
        if is_lesson_id(wanted):
            by_id = [lesson for lesson in lessons if lesson.id == wanted.lower()]
            if by_id:
                return by_id[0], []
        same = [lesson for lesson in lessons if _plain(lesson.text) == _plain(wanted)]
        if len(same) == 1:
            return same[0], []
        near = self._forgetting.nearest(self._persona, self._project, validate_query(wanted))
        clear = [lesson for lesson, score in near if score >= CLOSE]
        if len(clear) == 1:
            return clear[0], []
        return None, [lesson for lesson, _ in near[:CANDIDATES]]


def _plain(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")
