"""Slack payload builders: the bodies Slack sends for events, slash commands, button clicks and modal submissions.

They follow the shapes in Slack's documentation (and tests/fake_slack.py sends the same), so listener tests can
dispatch them straight into a Bolt app and end-to-end tests can deliver them over Socket Mode.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

TEAM = "T1"
APP = "A1"
BOT_USER = "UBOT"
BOT_ID = "B1"

Json = dict[str, Any]


def event_callback(event: Json, *, event_id: str | None = None) -> Json:
    """An Events API body around `event`."""
    return {
        "token": "verification-token",
        "team_id": TEAM,
        "api_app_id": APP,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": 1_795_000_000,
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True, "enterprise_id": None}],
    }


def app_mention(
    text: str, *, channel: str = "C1", user: str = "U1", ts: str = "1795000000.000100", thread_ts: str | None = None
) -> Json:
    event: Json = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        "team": TEAM,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def message(
    text: str,
    *,
    channel: str = "C1",
    user: str = "U1",
    ts: str = "1795000000.000200",
    thread_ts: str | None = None,
    bot_id: str | None = None,
) -> Json:
    event: Json = {
        "type": "message",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        "channel_type": "channel",
        "team": TEAM,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    if bot_id:
        event["bot_id"] = bot_id
    return event


def app_home_opened(user: str = "U1") -> Json:
    return {"type": "app_home_opened", "user": user, "channel": "D1", "tab": "home", "event_ts": "1795000000.000300"}


def slash_command(
    text: str,
    *,
    user: str = "U1",
    channel: str = "C1",
    trigger_id: str = "1.2.trigger",
    response_url: str = "http://127.0.0.1:9/response/x",
) -> Json:
    return {
        "token": "verification-token",
        "team_id": TEAM,
        "team_domain": "nightwatch-test",
        "channel_id": channel,
        "channel_name": "general",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/nightwatch",
        "text": text,
        "api_app_id": APP,
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


def block_action(
    action_id: str,
    value: str,
    *,
    user: str = "U1",
    channel: str | None = "C1",
    message_ts: str | None = None,
    container: str = "message",
    trigger_id: str = "1.2.trigger",
    response_url: str | None = None,
    message_blocks: list[Json] | None = None,
) -> Json:
    """A button click; `container="view"` is a click in the Home tab (no channel, no response_url).

    `message_blocks` are the blocks of the message clicked on, as Slack sends them."""
    payload: Json = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": APP,
        "token": "verification-token",
        "team": {"id": TEAM, "domain": "nightwatch-test"},
        "trigger_id": trigger_id,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "b1",
                "value": value,
                "action_ts": "1795000000.000400",
            }
        ],
    }
    if container == "view":
        payload["container"] = {"type": "view", "view_id": "VHOME"}
        payload["view"] = {"id": "VHOME", "type": "home"}
        return payload
    payload["container"] = {
        "type": "message",
        "message_ts": message_ts or "1795000000.000500",
        "channel_id": channel,
        "is_ephemeral": response_url is not None,
    }
    if channel:
        payload["channel"] = {"id": channel, "name": "general"}
    if message_ts:
        payload["message"] = {"type": "message", "ts": message_ts, "text": "", "bot_id": BOT_ID}
        if message_blocks is not None:
            payload["message"]["blocks"] = message_blocks
    if response_url:
        payload["response_url"] = response_url
    return payload


def persona_form(**fields: str | bool) -> Json:
    """The `state.values` of a submitted persona modal; `active=False` leaves the box unticked."""
    values: Json = {}
    active = fields.pop("active", True)
    for key, value in fields.items():
        values[key] = {key: {"type": "plain_text_input", "value": value}}
    option = {"text": {"type": "plain_text", "text": "Active"}, "value": "active"}
    values["active"] = {"active": {"type": "checkboxes", "selected_options": [option] if active else []}}
    return values


def view_submission(
    values: Json, *, user: str = "U1", persona_id: int | None = None, callback_id: str = "persona_save"
) -> Json:
    return {
        "type": "view_submission",
        "team": {"id": TEAM, "domain": "nightwatch-test"},
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": APP,
        "token": "verification-token",
        "trigger_id": "1.2.submit",
        "view": {
            "id": "VMODAL",
            "type": "modal",
            "callback_id": callback_id,
            "team_id": TEAM,
            "private_metadata": json.dumps({"id": persona_id}),
            "state": {"values": values},
            "hash": "1.abc",
            "title": {"type": "plain_text", "text": "New persona"},
        },
    }
