"""Bolt listeners: ack, parse, one call, reply. The rules live in the domain and in the classes these call.

Events are acked by Bolt before the listener runs; commands, actions and modal submissions ack first thing (a modal
submission's ack carries its inline errors, so validation happens just before it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond
from slack_sdk import WebClient

from nightwatch.adapters.db import SlackState
from nightwatch.adapters.slack.blocks import escape, notice_modal
from nightwatch.adapters.slack.commands import COMMAND, UNEXPECTED, Invocation, SlashCommands
from nightwatch.adapters.slack.forget_undo import ForgetUndo
from nightwatch.adapters.slack.held import HELD_APPROVE, HELD_DROP, HeldReview
from nightwatch.adapters.slack.home import HomeTab
from nightwatch.adapters.slack.lesson_notes import LessonNotes, strike
from nightwatch.adapters.slack.memory_words import MEMORY_CLEAR, ClearTarget
from nightwatch.adapters.slack.persona_admin import FormError, PersonaAdmin
from nightwatch.adapters.slack.persona_modal import CALLBACK_ID
from nightwatch.adapters.slack.teaching import Mention, Posted, ThreadTeaching
from nightwatch.adapters.slack.teaching_views import TEACH_FORGET, TEACH_KEEP
from nightwatch.adapters.slack.threads import Deliberations
from nightwatch.adapters.slack.views import (
    LESSON_FORGET,
    PERSONA_DELETE,
    PERSONA_EDIT,
    PERSONA_NEW,
    ForgetTarget,
    forgotten_note_blocks,
)
from nightwatch.domain.errors import InvalidInputError, NightWatchError
from nightwatch.domain.ports import Clock

log = logging.getLogger(__name__)

Body = dict[str, Any]
TeachingButton = Callable[[str, str, Posted | None], str | None]  # (user, button value, its message) -> a reply
NO_TOPIC = "Mention me with a topic, for example: @Night Watch should we cache session lookups? (`/nightwatch help`)"


def mention_topic(text: str, bot_user_id: str) -> str:
    """The mention's text without the app's own mention."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return " ".join(text.split())


class Listeners:
    """Registers every listener Night Watch needs on a Bolt app."""

    def __init__(
        self,
        *,
        state: SlackState,
        clock: Clock,
        deliberations: Deliberations,
        commands: SlashCommands,
        admin: PersonaAdmin,
        home: HomeTab,
        teaching: ThreadTeaching,
        held: HeldReview,
        notes: LessonNotes | None = None,
        undo: ForgetUndo | None = None,
    ) -> None:
        self._held = held
        self._undo = undo
        self._notes = notes
        self._state = state
        self._clock = clock
        self._deliberations = deliberations
        self._commands = commands
        self._admin = admin
        self._home = home
        self._teaching = teaching

    def register(self, app: App) -> None:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)
        app.event("app_home_opened")(self.on_home_opened)
        app.command(COMMAND)(self.on_command)
        app.action(PERSONA_NEW)(self.on_persona_new)
        app.action(PERSONA_EDIT)(self.on_persona_edit)
        app.action(PERSONA_DELETE)(self.on_persona_delete)
        app.action(LESSON_FORGET)(self.on_forget)
        app.action(MEMORY_CLEAR)(self.on_clear)
        app.action(TEACH_FORGET)(self.on_teach_forget)
        app.action(TEACH_KEEP)(self.on_teach_keep)
        app.action(HELD_APPROVE)(self.on_held_approve)
        app.action(HELD_DROP)(self.on_held_drop)
        app.view(CALLBACK_ID)(self.on_persona_save)
        if self._undo is not None:
            self._undo.register(app)

    # --- events --------------------------------------------------------------------------------------------------

    def on_mention(self, body: Body, event: Body, context: BoltContext, client: WebClient) -> None:
        """Answer a teaching, else start a deliberation in the mention's thread, once per event id however often
        Slack delivers it."""
        now = self._clock.now()
        event_id = str(body.get("event_id") or "")
        if not event_id or not self._state.first_delivery(event_id, now):
            return
        channel = str(event["channel"])
        thread_ts = str(event.get("thread_ts") or event["ts"])
        self._state.touch(channel, now)
        topic = mention_topic(str(event.get("text") or ""), context.bot_user_id or "")
        try:
            if not topic:
                client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=NO_TOPIC)
                return
            if self._teaching.handle(Mention(channel, thread_ts, str(event.get("user") or ""), topic)):
                return
            self._deliberations.start(
                channel=channel,
                thread_ts=thread_ts,
                topic=topic,
                bot_user_id=context.bot_user_id or "",
                user=str(event.get("user") or ""),
            )
        except NightWatchError as err:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=escape(str(err)))

    def on_message(self, event: Body) -> None:
        """A person spoke: the channel is not quiet, and a deliberation running in that thread hears it."""
        if not event.get("subtype") and not event.get("bot_id") and event.get("channel"):
            self._state.touch(str(event["channel"]), self._clock.now())
            if event.get("thread_ts"):
                self._deliberations.observe(event)

    def on_home_opened(self, event: Body) -> None:
        if event.get("tab", "home") == "home":
            self._home.publish(str(event["user"]))

    # --- the slash command ---------------------------------------------------------------------------------------

    def on_command(self, ack: Ack, command: Body, respond: Respond, context: BoltContext) -> None:
        ack()
        self._commands.handle(Invocation.of(command, context.bot_user_id or ""), respond)

    # --- buttons ---------------------------------------------------------------------------------------------------

    def on_persona_new(self, ack: Ack, body: Body, respond: Respond, client: WebClient) -> None:
        ack()
        self._guard(body, respond, client, lambda: self._admin.open_modal(_user(body), body["trigger_id"]))

    def on_persona_edit(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()
        self._guard(
            body, respond, client, lambda: self._admin.open_modal(_user(body), body["trigger_id"], _persona_id(action))
        )

    def on_persona_delete(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()

        def delete() -> None:
            outcome = self._admin.delete(_user(body), _persona_id(action))
            self._home.publish(_user(body))
            _tell(body, respond, client, outcome.message)

        self._guard(body, respond, client, delete)

    def on_forget(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()

        def forget() -> None:
            target = ForgetTarget.decode(str(action.get("value") or ""))
            persona, lesson = self._admin.forget(_user(body), target)
            self._home.publish(_user(body))
            message, channel = body.get("message") or {}, body.get("channel") or {}
            struck = strike(message.get("blocks") or [], str(action.get("value") or ""), _user(body))
            if target.source == "note" and struck is not None and channel.get("id"):
                # a line of a lessons message: struck through in place, the other lines kept
                client.chat_update(
                    channel=channel["id"],
                    ts=message["ts"],
                    text=str(message.get("text") or f"{persona.name} forgot: {lesson.text}"),
                    blocks=struck,
                )
                if self._notes is not None:
                    self._notes.forgotten(channel["id"], str(message["ts"]), target, _user(body))
            elif target.source == "note" and body.get("message") and body.get("channel"):
                client.chat_update(
                    channel=body["channel"]["id"],
                    ts=body["message"]["ts"],
                    text=f"{persona.name} forgot: {lesson.text}",
                    blocks=forgotten_note_blocks(persona.name, lesson.text, _user(body)),
                )
            elif target.source != "home":
                _tell(body, respond, client, f"{persona.name} forgot `{lesson.id}`: {lesson.text}")

        self._guard(body, respond, client, forget)

    def on_clear(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()

        def clear() -> None:
            persona, held = self._admin.clear(_user(body), ClearTarget.decode(str(action.get("value") or "")))
            self._home.publish(_user(body))
            lessons = f"{held} lesson{'' if held == 1 else 's'}"
            _tell(body, respond, client, f"Cleared {persona.name}'s memory ({lessons}); rollback brings it back.")

        self._guard(body, respond, client, clear)

    def on_teach_forget(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()
        self._guard(body, respond, client, lambda: self._reply(body, action, respond, client, self._teaching.forget))

    def on_teach_keep(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()
        self._guard(body, respond, client, lambda: self._reply(body, action, respond, client, self._teaching.keep))

    def on_held_approve(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()
        self._guard(body, respond, client, lambda: self._settle(body, action, respond, client, self._held.approve))

    def on_held_drop(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()
        self._guard(body, respond, client, lambda: self._settle(body, action, respond, client, self._held.drop))

    def _settle(
        self, body: Body, action: Body, respond: Respond, client: WebClient, settle: Callable[[str, str], str]
    ) -> None:
        """Approve or drop a held lesson from the Home tab, then show the Home tab without it."""
        note = settle(_user(body), str(action.get("value") or ""))
        self._home.publish(_user(body))
        _tell(body, respond, client, note)

    def _reply(self, body: Body, action: Body, respond: Respond, client: WebClient, answer: TeachingButton) -> None:
        """Run a teaching button on the message it sits on; tell the user what it says, if anything."""
        message, channel = body.get("message") or {}, body.get("channel") or {}
        posted = Posted(str(channel["id"]), str(message["ts"])) if message.get("ts") and channel.get("id") else None
        note = answer(_user(body), str(action.get("value") or ""), posted)
        if note:
            _tell(body, respond, client, note)

    # --- the persona modal -------------------------------------------------------------------------------------------

    def on_persona_save(self, ack: Ack, body: Body, view: Body) -> None:
        """Save the modal: inline errors for fields to fix, otherwise a confirmation in place of the form."""
        user = _user(body)
        try:
            outcome = self._admin.save(user, view)
        except FormError as err:
            ack(response_action="errors", errors=err.errors)
            return
        except NightWatchError as err:
            ack(response_action="update", view=notice_modal("Not saved", str(err)))
            return
        except Exception:
            log.exception("saving a persona from Slack failed")
            ack(response_action="update", view=notice_modal("Not saved", UNEXPECTED))
            return
        ack(response_action="update", view=notice_modal("Saved", outcome.message))
        self._home.publish(user)

    # --- replies -----------------------------------------------------------------------------------------------------

    def _guard(self, body: Body, respond: Respond, client: WebClient, action: Callable[[], None]) -> None:
        """Run a button's action; tell the user its error (never a stack trace)."""
        try:
            action()
        except NightWatchError as err:
            _tell(body, respond, client, str(err))
        except Exception:
            log.exception("a Slack action failed")
            _tell(body, respond, client, UNEXPECTED)


def _persona_id(action: Body) -> int:
    """The persona id a button carries; InvalidInputError for a payload that carries none."""
    value = str(action.get("value") or "")
    if not value.isascii() or not value.isdigit() or len(value) > 18:
        raise InvalidInputError("This button no longer points at a persona: open the Home tab again and retry.")
    return int(value)


def _user(body: Body) -> str:
    return str((body.get("user") or {}).get("id") or "")


def _tell(body: Body, respond: Respond, client: WebClient, text: str) -> None:
    """Tell only the clicking user: through the message's response_url, else ephemerally, else in a small modal."""
    text = escape(text)  # messages may quote names or ids from the payload
    channel = (body.get("channel") or {}).get("id")
    if body.get("response_url"):
        respond(text=text, response_type="ephemeral", replace_original=False)
    elif channel:
        client.chat_postEphemeral(channel=channel, user=_user(body), text=text)
    elif body.get("trigger_id"):
        client.views_open(trigger_id=body["trigger_id"], view=notice_modal("Night Watch", text))
