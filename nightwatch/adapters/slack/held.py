"""Lessons held for an admin in Slack: screening what a person teaches, and the Home tab's Approve / Drop buttons.

A lesson taught in a thread or with `/nightwatch remember` is held instead of recorded when its teacher may not
teach (NIGHTWATCH_TEACHERS) or it reads as an instruction to the model; admins see held lessons at the top of their
Home tab and approve (the lesson is recorded, taught by its teacher) or drop each.
"""

from __future__ import annotations

from collections.abc import Sequence

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.blocks import Block, button, context, escape, mrkdwn
from nightwatch.adapters.slack.sanitize import sanitize
from nightwatch.adapters.slack.teachers import TeacherCheck
from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.models import Category, Persona
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.teaching import HeldLesson, LessonReview, Reason

HELD_APPROVE = "held_approve"
HELD_DROP = "held_drop"
SHOWN = 10  # held lessons shown on the Home tab, oldest first
HELD_NOTE = (
    "Held for review ({reason}): {names} will learn this once a Night Watch admin approves it in the App Home: {text}"
)


class HeldReview:
    """Screens what a person teaches and settles held lessons for admins."""

    def __init__(
        self, *, review: LessonReview, personas: PersonaService, admins: AdminCheck, teachers: TeacherCheck
    ) -> None:
        self._review = review
        self._personas = personas
        self._admins = admins
        self._teachers = teachers

    def screen(self, user: str, text: str) -> Reason | None:
        """Why a lesson `user` teaches must wait for an admin, or None to record it now."""
        return self._review.screen(text, may_teach=self._teachers.may_teach(user))

    def hold(
        self,
        audience: Sequence[Persona],
        project: str,
        text: str,
        reason: Reason,
        *,
        author: str,
        link: str | None = None,
        kind: str = "manual",
        category: Category | None = None,
    ) -> str:
        """Hold the lesson for each persona of the audience; returns what to say about it (mrkdwn)."""
        for persona in audience:
            self._review.hold(persona, project, text, reason, author=author, link=link, kind=kind, category=category)
        names = " and ".join(escape(persona.name) for persona in audience)
        return HELD_NOTE.format(reason=reason.value, names=names, text=sanitize(text, allowed_users=set()))

    def approve(self, user: str, value: str) -> str:
        """Record the held lesson (admins only); returns what to tell the admin."""
        self._admins.require(user, "approve held lessons")
        held_id = _held_id(value)
        held = self._review.get(held_id)
        try:
            persona = self._personas.get_by_id(held.persona_id)
        except NotFoundError:
            self._review.drop(held_id)
            raise NotFoundError("The persona this lesson was held for is gone; the lesson was dropped.") from None
        lesson = self._review.approve(held_id, persona)
        return f"Approved: {persona.name} now remembers `{lesson.id}` ({held.project}): {lesson.text}"

    def drop(self, user: str, value: str) -> str:
        """Let the held lesson go (admins only); returns what to tell the admin."""
        self._admins.require(user, "drop held lessons")
        held = self._review.drop(_held_id(value))
        return f"Dropped the lesson held for {held.persona}: {held.text}"

    def home_blocks(self, user: str) -> list[Block]:
        """The held lessons with their buttons, for an admin's Home tab; nothing for anyone else."""
        pending = self._review.pending()
        if not pending or not self._admins.is_admin(user):
            return []
        blocks: list[Block] = [
            {"type": "divider"},
            mrkdwn(f"*Lessons waiting for approval* ({len(pending)})"),
        ]
        for held in pending[:SHOWN]:
            blocks += held_lesson_blocks(held)
        if len(pending) > SHOWN:
            blocks.append(context(f"{len(pending) - SHOWN} more wait; settle these first."))
        return blocks


def held_lesson_blocks(held: HeldLesson) -> list[Block]:
    """One held lesson: for whom, what, who taught it and why it waits, then Approve and Drop."""
    by = f"<@{held.author}>" if held.author and held.author.isalnum() else "someone"
    text = sanitize(held.text, allowed_users=set())
    return [
        mrkdwn(f"*{escape(held.persona)}* · {escape(held.project)}: {text}"),
        context(f"Taught by {by} · held because {held.reason.value}"),
        {
            "type": "actions",
            "elements": [
                button("Approve", HELD_APPROVE, str(held.id), style="primary"),
                button("Drop", HELD_DROP, str(held.id), style="danger"),
            ],
        },
    ]


def _held_id(value: str) -> int:
    if not value.isascii() or not value.isdigit() or len(value) > 18:
        raise InvalidInputError("This button no longer points at a held lesson: open the Home tab again.")
    return int(value)
