"""Who may change what a persona knows, in Slack: the admins check, the teachers check, the review of held lessons,
and the Undo of what a persona forgot with its tool."""

from __future__ import annotations

from injector import Module, provider, singleton
from slack_sdk import WebClient

from nightwatch.adapters.slack import AdminCheck, ForgetUndo, HeldReview, LessonNotes, TeacherCheck
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.ports import Clock
from nightwatch.domain.teaching import Forgetting, LessonReview
from nightwatch.live_settings import LiveSettings


class ReviewModule(Module):
    """AdminCheck and TeacherCheck read NIGHTWATCH_ADMINS and NIGHTWATCH_TEACHERS at each check (so a reload reaches
    the next); HeldReview and ForgetUndo use them."""

    @singleton
    @provider
    def provide_admins(self, live: LiveSettings, client: WebClient, clock: Clock) -> AdminCheck:
        return AdminCheck(admins=lambda: live.current().slack.admins, client=client, clock=clock)

    @singleton
    @provider
    def provide_held_review(
        self,
        live: LiveSettings,
        review: LessonReview,
        personas: PersonaService,
        admins: AdminCheck,
        client: WebClient,
        clock: Clock,
    ) -> HeldReview:
        teachers = TeacherCheck(
            teachers=lambda: live.current().slack.teachers, admins=admins, client=client, clock=clock
        )
        return HeldReview(review=review, personas=personas, admins=admins, teachers=teachers)

    @singleton
    @provider
    def provide_forget_undo(self, forgetting: Forgetting, admins: AdminCheck, notes: LessonNotes) -> ForgetUndo:
        return ForgetUndo(forgetting=forgetting, admins=admins, notes=notes)
