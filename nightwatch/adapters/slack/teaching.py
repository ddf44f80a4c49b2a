"""Teaching personas in plain words in a thread: "@Night Watch remember that …", "… forget that …".

A mention whose text is a teaching starts no deliberation. Remember: the lesson is recorded for the audience (the
personas named, else the thread's participants) and each gets the usual "★ Carlos remembered: …" note with its
Forget button, saying who taught it. Forget: the closest lesson is shown with Forget it / Keep it buttons; only its
author or an admin may confirm (anyone else is told privately who may, and nothing changes). Problems with what
was typed are answered privately; the thread only hears the teaching itself. A lesson from someone who may not
teach, or one that reads as an instruction to the model, is held for an admin instead (held.py), and the thread is
told so.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace

from slack_sdk import WebClient

from nightwatch.adapters.secrets import redact_backstop
from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.blocks import Block, escape
from nightwatch.adapters.slack.held import HeldReview
from nightwatch.adapters.slack.lesson_notes import LessonLine, LessonNotes
from nightwatch.adapters.slack.sanitize import sanitize
from nightwatch.adapters.slack.teaching_views import (
    TeachTarget,
    forget_offer_blocks,
    forgotten_blocks,
    kept_blocks,
    names_text,
    nothing_close_blocks,
    slack_author,
)
from nightwatch.adapters.slack.threads import ChannelDirectory, thread_link
from nightwatch.adapters.slack.views import lesson_note_blocks
from nightwatch.domain.errors import InvalidInputError, NightWatchError, NotFoundError, PermissionDeniedError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.teaching import TAUGHT, Intent, Teaching, TeachingService, may_forget

log = logging.getLogger(__name__)

FALLBACK_TEXT = 3000
_PERSON_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^<>]*)?>")
NOTHING_TO = {
    Intent.REMEMBER: "Tell me what to remember, for example: @Night Watch remember that we deploy on Thursdays.",
    Intent.FORGET: "Tell me what to forget, for example: @Night Watch forget that we deploy on Fridays.",
}
ONLY_AUTHOR = "Only the person who taught this lesson or a Night Watch admin can forget it; nothing changed."
ONLY_ADMIN = "Only a Night Watch admin can forget this lesson (nobody taught it in Slack); nothing changed."
ONLY_ASKER = "Only the person who asked, whoever taught the lesson, or a Night Watch admin can answer this."
WHICH = (
    "Which persona should {verb} this? Nobody has deliberated in this thread yet, so say it again with a name, "
    "for example “@Night Watch {example}, {verb} that …”. The personas: {names}."
)


@dataclass(frozen=True)
class Mention:
    """A mention of the app: where (the thread's root `thread_ts`), who, and its words without the app's mention."""

    channel: str
    thread_ts: str
    user: str
    text: str


@dataclass(frozen=True)
class Posted:
    """A message the app posted (the one whose button was clicked)."""

    channel: str
    ts: str


class ThreadTeaching:
    """Understands teaching mentions and answers them in their thread; runs the Forget it / Keep it buttons."""

    def __init__(
        self,
        *,
        teaching: TeachingService,
        personas: PersonaService,
        channels: ChannelDirectory,
        client: WebClient,
        admins: AdminCheck,
        held: HeldReview,
        notes: LessonNotes | None = None,
    ) -> None:
        """`notes`: what is taught goes into the thread's lessons message (without it, a note per lesson)."""
        self._notes = notes
        self._teaching = teaching
        self._held = held
        self._personas = personas
        self._channels = channels
        self._client = client
        self._admins = admins

    def handle(self, mention: Mention) -> bool:
        """Answer the mention if it is a teaching and return True; False for a topic (deliberate on it)."""
        personas = self._personas.list()
        understood = self._teaching.understand(mention.text, personas)
        if not understood.is_teaching:
            return False
        try:
            self._act(mention, understood, personas)
        except NightWatchError as err:
            self._tell(mention, str(err))
        return True

    # --- remember and forget ---------------------------------------------------------------------------------

    def _act(self, mention: Mention, understood: Teaching, personas: list[Persona]) -> None:
        if not understood.text:
            raise InvalidInputError(NOTHING_TO[understood.intent])
        audience = self._teaching.audience(understood, personas, f"{mention.channel}:{mention.thread_ts}")
        if not audience:
            self._ask_which(mention, understood, personas)
            return
        project = self._channels.project_for(mention.channel)
        if understood.intent is Intent.REMEMBER:
            self._remember(mention, audience, project, understood.text)
        else:
            self._offer_forget(mention, audience, project, understood.text)

    def _remember(self, mention: Mention, audience: tuple[Persona, ...], project: str, text: str) -> None:
        link = thread_link(mention.channel, mention.thread_ts)
        reason = self._held.screen(mention.user, text)
        if reason is not None:
            note = self._held.hold(audience, project, text, reason, author=mention.user, link=link, kind=TAUGHT)
            self._post(mention, note)
            return
        allowed = {mention.user, *_PERSON_MENTION.findall(mention.text)}
        learned: list[LessonLine] = []
        for taught in self._teaching.remember(audience, project, text, author=mention.user, link=link):
            persona, lesson = taught.persona, taught.lesson
            if lesson is None:
                self._post(mention, escape(taught.problem))
                continue
            clean = _clean(lesson.text, allowed)
            if taught.restated:
                self._post(mention, f"{escape(persona.name)} already knew that ({clean}); seen {lesson.seen} times.")
                continue
            if self._notes is not None:  # a line of the thread's lessons message; `said`: created, merged, superseded
                line = LessonLine(persona.name, persona.slug, project, lesson.id, clean, lesson.category, taught.said)
                learned.append(replace(line, taught_by=mention.user))
                continue
            blocks = lesson_note_blocks(persona, project, lesson.id, clean, taught_by=mention.user, said=taught.said)
            self._post(mention, f"★ {escape(persona.name)} remembered: {clean}", blocks)  # blocks say what happened
        if self._notes is not None:
            self._notes.tell(mention.channel, mention.thread_ts, learned, user=mention.user)

    def _offer_forget(self, mention: Mention, audience: tuple[Persona, ...], project: str, wanted: str) -> None:
        nearest = self._teaching.closest(audience, project, wanted)
        match = nearest.best
        if match is None:
            shown = [(candidate, _clean(candidate.lesson.text)) for candidate in nearest.candidates]
            blocks = nothing_close_blocks(audience, project, _clean(wanted), shown)
            self._post(mention, f"Nothing {names_text(audience)} remember is close to that.", blocks)
            return
        target = TeachTarget(tuple(p.slug for p in match.personas), project, match.lesson.id, mention.user)
        clean = _clean(match.lesson.text)
        self._post(mention, f"Forget this lesson? {clean}", forget_offer_blocks(match, target, clean))

    def _ask_which(self, mention: Mention, understood: Teaching, personas: list[Persona]) -> None:
        if not personas:
            raise InvalidInputError("There are no personas yet to teach; an admin can create one first.")
        names = names_text(personas)
        verb = understood.intent.value
        self._post(mention, WHICH.format(verb=verb, example=escape(personas[0].name), names=names))

    # --- the buttons -------------------------------------------------------------------------------------------

    def forget(self, user: str, value: str, posted: Posted | None) -> str | None:
        """Forget the lesson a Forget it button points at, if `user` may; returns what to tell them privately."""
        target = TeachTarget.decode(value)
        personas = [self._personas.get(slug) for slug in target.personas]
        held = self._teaching.held(personas, target.project, target.lesson)
        lessons = [lesson for _, lesson in held]
        mine = all(may_forget(lesson, user, admin=False) for lesson in lessons)
        if not mine and not self._admins.is_admin(user):
            raise PermissionDeniedError(ONLY_AUTHOR if any(map(slack_author, lessons)) else ONLY_ADMIN)
        removed = self._teaching.forget(held, target.project)
        if not removed:
            raise NotFoundError("That lesson has been forgotten already; nothing changed.")
        clean = _clean(lessons[0].text)
        if posted is None:
            return f"Forgotten: {lessons[0].text}"
        blocks = forgotten_blocks([persona for persona, _ in removed], clean, user)
        self._update(posted, f"Forgotten by <@{user}>: {clean}", blocks)
        return None

    def keep(self, user: str, value: str, posted: Posted | None) -> str | None:
        """Keep the lesson (close the offer); for who asked, the lesson's author, or an admin."""
        target = TeachTarget.decode(value)
        personas = [self._personas.get(slug) for slug in target.personas]
        lessons = [lesson for _, lesson in self._teaching.held(personas, target.project, target.lesson)]
        allowed = user == target.asker or all(may_forget(lesson, user, admin=False) for lesson in lessons)
        if not allowed and not self._admins.is_admin(user):
            raise PermissionDeniedError(ONLY_ASKER)
        clean = _clean(lessons[0].text)
        if posted is None:
            return f"Kept: {lessons[0].text}"
        self._update(posted, f"Kept: {clean}", kept_blocks(clean, user))
        return None

    # --- Slack ---------------------------------------------------------------------------------------------------

    def _post(self, mention: Mention, text: str, blocks: list[Block] | None = None) -> None:
        self._client.chat_postMessage(
            channel=mention.channel, thread_ts=mention.thread_ts, text=text[:FALLBACK_TEXT], blocks=blocks
        )

    def _update(self, posted: Posted, text: str, blocks: list[Block]) -> None:
        self._client.chat_update(channel=posted.channel, ts=posted.ts, text=text[:FALLBACK_TEXT], blocks=blocks)

    def _tell(self, mention: Mention, text: str) -> None:
        """Answer only the person who mentioned the app, in the thread."""
        self._client.chat_postEphemeral(
            channel=mention.channel, user=mention.user, thread_ts=mention.thread_ts, text=escape(text)
        )


def _clean(text: str, allowed_users: set[str] | None = None) -> str:
    """Text as safe mrkdwn: secrets redacted (a backstop), no broadcasts, mentions only of `allowed_users`."""
    return sanitize(redact_backstop(text, "a Slack post"), allowed_users=allowed_users or set())
