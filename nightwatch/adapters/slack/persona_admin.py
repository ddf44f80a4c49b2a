"""Admin actions from buttons and modals: open the persona modal, save it, delete a persona, forget a lesson.

Every action checks that the clicking user is an admin itself, not only whether the button was shown: a payload can
be crafted, a button cannot be trusted. A non-admin may forget a lesson they taught or added, and clear the memory of
a persona they created here (the persona records who: `Persona.created_by`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slack_sdk import WebClient

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.memory_words import ClearTarget
from nightwatch.adapters.slack.persona_modal import Submission, field_errors, persona_modal, to_draft
from nightwatch.adapters.slack.views import ForgetTarget
from nightwatch.domain.errors import ConflictError, InvalidInputError, NightWatchError
from nightwatch.domain.memory import MemoryService, MemoryTransfer
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.personas import PersonaOutcome, PersonaService, persona_slug


class FormError(NightWatchError):
    """The persona modal has fields to fix; `errors` maps block ids to messages shown under them."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = dict(errors)


class PersonaAdmin:
    """The admin-only persona and memory actions behind the Slack buttons and modals."""

    def __init__(
        self,
        *,
        personas: PersonaService,
        memory: MemoryService,
        transfer: MemoryTransfer,
        admins: AdminCheck,
        client: WebClient,
    ) -> None:
        self._personas = personas
        self._memory = memory
        self._transfer = transfer
        self._admins = admins
        self._client = client

    def open_modal(self, user: str, trigger_id: str, persona_id: int | None = None) -> None:
        """Open the create modal (no id) or the edit modal for the persona with `persona_id`."""
        self._admins.require(user, "edit personas" if persona_id else "create personas")
        persona = self._personas.get_by_id(persona_id) if persona_id else None
        self._client.views_open(trigger_id=trigger_id, view=persona_modal(persona))

    def save(self, user: str, view: Mapping[str, Any]) -> PersonaOutcome:
        """Create or update the persona from a submitted modal; FormError when a field needs fixing."""
        submission = Submission.parse(view)
        self._admins.require(user, "edit personas" if submission.persona_id else "create personas")
        base = self._personas.get_by_id(submission.persona_id) if submission.persona_id else None
        errors = field_errors(submission)
        clash = self._clash(submission, base)
        if clash and "name" not in errors:
            errors["name"] = clash
        if errors:
            raise FormError(errors)
        draft = to_draft(submission, base)
        try:
            if base is None:
                return self._personas.create(draft, created_by=user)
            return self._personas.update(base.slug, draft)
        except (ConflictError, InvalidInputError) as err:
            raise FormError({"name": str(err)}) from err

    def _clash(self, submission: Submission, base: Persona | None) -> str:
        """The duplicate-name message for the name given, or '' (checked here to show it under the name)."""
        name = submission.values["name"]
        try:
            slug = persona_slug(name)
        except InvalidInputError:
            return ""  # field_errors reports the bad name itself
        for other in self._personas.list():
            if other.id != (base.id if base else None) and (other.name.lower() == name.lower() or other.slug == slug):
                return f"A persona named {other.name} already exists; choose another name."
        return ""

    def delete(self, user: str, persona_id: int) -> PersonaOutcome:
        """Delete the persona (its memory is archived)."""
        self._admins.require(user, "delete personas")
        persona = self._personas.get_by_id(persona_id)
        return self._personas.delete(persona.slug)

    def forget(self, user: str, target: ForgetTarget) -> tuple[Persona, Lesson]:
        """Forget one lesson (admins, and whoever taught or added it); returns the persona and the lesson removed."""
        persona = self._personas.get(target.persona)
        if not self._authored(user, persona, target):
            self._admins.require(user, "forget lessons")
        return persona, self._memory.forget(persona, target.project, target.lesson)

    def clear(self, user: str, target: ClearTarget) -> tuple[Persona, int]:
        """Clear a persona's memory of a project (admins and its creator); returns the persona and how many lessons it
        held."""
        persona = self._personas.get(target.persona)
        self._admins.require_admin_or_creator(user, persona, "clear its memory")
        return persona, self._transfer.clear(persona, target.project)

    def _authored(self, user: str, persona: Persona, target: ForgetTarget) -> bool:
        """Whether `user` wrote the lesson the button points at (its author is their Slack user id)."""
        lessons = self._memory.lessons(persona, target.project)
        return bool(user) and any(lesson.id == target.lesson and lesson.author == user for lesson in lessons)
