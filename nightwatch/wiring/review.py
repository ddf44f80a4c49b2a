"""Who may change what a persona knows, in Slack: the teachers check and the review of held lessons."""

from __future__ import annotations

from injector import Module, provider, singleton
from slack_sdk import WebClient

from nightwatch.adapters.slack import AdminCheck, HeldReview, TeacherCheck
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.ports import Clock
from nightwatch.domain.teaching import LessonReview
from nightwatch.live_settings import LiveSettings


class ReviewModule(Module):
    """HeldReview, with a TeacherCheck that reads NIGHTWATCH_TEACHERS at each lesson (so a reload reaches the next)."""

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
