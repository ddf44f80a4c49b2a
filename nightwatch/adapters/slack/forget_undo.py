"""The Undo button of a lesson a persona forgot with its `memory_forget` tool: it puts the lesson back.

Allowed to Night Watch admins and to the person who started the deliberation (`LessonNotes.starter`, known in the
process that told the thread; after a restart only admins). The button is checked on every click, as every button
is: a payload can be crafted. Once undone, the line of the lessons message says who restored it.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.blocks import escape
from nightwatch.adapters.slack.lesson_notes import LESSON_UNDO, LessonNotes, restored
from nightwatch.domain.errors import InvalidInputError, NightWatchError, PermissionDeniedError
from nightwatch.domain.memory.ports import Forgotten
from nightwatch.domain.teaching import Forgetting

log = logging.getLogger(__name__)

Body = dict[str, Any]
ONLY_STARTER = (
    "Only the person who started this deliberation or a Night Watch admin can undo what a persona forgot; "
    "nothing changed."
)
STALE = "This Undo button no longer points at a forgotten lesson; nothing changed."
UNEXPECTED = "Something went wrong on our side; nothing changed. Try again, or ask an admin to look at the logs."


class ForgetUndo:
    """Runs the Undo buttons of the lessons messages."""

    def __init__(self, *, forgetting: Forgetting, admins: AdminCheck, notes: LessonNotes) -> None:
        self._forgetting = forgetting
        self._admins = admins
        self._notes = notes

    def register(self, app: App) -> None:
        app.action(LESSON_UNDO)(self.on_undo)

    def undo(self, user: str, value: str) -> Forgotten:
        """Restore the lesson the button points at, if `user` may; returns it as restored."""
        if not value.isascii() or not value.isdigit() or len(value) > 18:
            raise InvalidInputError(STALE)
        forgotten_id = int(value)
        if not user or (user != self._notes.starter(forgotten_id) and not self._admins.is_admin(user)):
            raise PermissionDeniedError(ONLY_STARTER)
        return self._forgetting.restore(forgotten_id, user)

    def on_undo(self, ack: Ack, body: Body, action: Body, respond: Respond, client: WebClient) -> None:
        ack()
        user = str((body.get("user") or {}).get("id") or "")
        value = str(action.get("value") or "")
        try:
            forgotten = self.undo(user, value)
        except NightWatchError as err:
            _tell(body, respond, client, str(err))
            return
        except Exception:
            log.exception("undoing a forgotten lesson failed")
            _tell(body, respond, client, UNEXPECTED)
            return
        message, channel = body.get("message") or {}, body.get("channel") or {}
        blocks = restored(message.get("blocks") or [], value, user)
        if blocks is not None and channel.get("id") and message.get("ts"):
            text = str(message.get("text") or f"{forgotten.persona} forgot: {forgotten.text}")
            client.chat_update(channel=channel["id"], ts=message["ts"], text=text, blocks=blocks)
            self._notes.restored(channel["id"], str(message["ts"]), int(value), user)
        else:  # an ephemeral lessons message, which cannot be updated
            _tell(body, respond, client, f"Restored {forgotten.persona}'s lesson: {forgotten.text}")


def _tell(body: Body, respond: Respond, client: WebClient, text: str) -> None:
    """Tell only the clicking user."""
    text = escape(text)
    channel = (body.get("channel") or {}).get("id")
    if body.get("response_url"):
        respond(text=text, response_type="ephemeral", replace_original=False)
    elif channel:
        client.chat_postEphemeral(channel=channel, user=str((body.get("user") or {}).get("id") or ""), text=text)
