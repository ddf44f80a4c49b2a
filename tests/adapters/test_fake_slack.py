"""The fake Slack answers the real slack_sdk / slack_bolt clients the way Slack does."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from slack_bolt import Ack, App, Respond
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.fake_slack import BOT_USER_ID, FakeSlack

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as slack:
        yield slack


@pytest.fixture
def client(fake: FakeSlack) -> WebClient:
    return WebClient(token=BOT_TOKEN, base_url=fake.api_url)


class Recorder:
    """A Socket Mode listener that keeps every request and raw message, and acks requests (optionally)."""

    def __init__(self) -> None:
        self.raw: list[dict[str, Any]] = []
        self.requests: list[SocketModeRequest] = []
        self.ack = True
        self.answer: dict[str, Any] | None = None

    def on_raw(self, message: str) -> None:
        self.raw.append(json.loads(message))

    def on_request(self, socket: BaseSocketModeClient, request: SocketModeRequest) -> None:
        self.requests.append(request)
        if self.ack:
            socket.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id, payload=self.answer))


@pytest.fixture
def recorder(fake: FakeSlack) -> Iterator[Recorder]:
    """A real builtin SocketModeClient connected to the fake, closed before the fake stops."""
    recording = Recorder()
    socket = SocketModeClient(
        app_token=APP_TOKEN, web_client=WebClient(base_url=fake.api_url), on_message_listeners=[recording.on_raw]
    )
    socket.socket_mode_request_listeners.append(recording.on_request)
    socket.connect()
    try:
        yield recording
    finally:
        socket.close()


# ----- Web API ------------------------------------------------------------------------------------------------------


def test_post_message_is_stored_with_persona_fields_and_recorded(fake: FakeSlack, client: WebClient) -> None:
    parent = fake.post_human_message("C1", "<@UBOT> review this", deliver=False)
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "Looks risky."}}]

    reply = client.chat_postMessage(
        channel="C1", thread_ts=parent["ts"], text="Looks risky.", blocks=blocks, username="Maya", icon_emoji=":shield:"
    )

    stored = fake.messages("C1", thread_ts=parent["ts"])
    assert [m["ts"] for m in stored] == [parent["ts"], reply["ts"]]
    assert stored[1]["username"] == "Maya"
    assert stored[1]["icon_emoji"] == ":shield:"
    assert stored[1]["blocks"] == blocks
    assert stored[1]["thread_ts"] == parent["ts"]
    (call,) = fake.calls_to("chat.postMessage")
    assert call.token == BOT_TOKEN
    assert call.args["username"] == "Maya"


def test_conversations_replies_lists_the_thread_oldest_first_including_people(
    fake: FakeSlack, client: WebClient
) -> None:
    parent = fake.post_human_message("C1", "topic", deliver=False)
    client.chat_postMessage(channel="C1", thread_ts=parent["ts"], text="persona turn", username="Carlos")
    fake.post_human_message("C1", "a human reply", thread_ts=parent["ts"], deliver=False)
    client.chat_postMessage(channel="C1", text="elsewhere")

    replies = client.conversations_replies(channel="C1", ts=parent["ts"])

    assert [m["text"] for m in replies["messages"]] == ["topic", "persona turn", "a human reply"]
    assert replies["messages"][0]["reply_count"] == 2
    history = client.conversations_history(channel="C1")
    assert [m["text"] for m in history["messages"]] == ["elsewhere", "topic"]


def test_form_encoded_calls_are_read_like_json_ones(fake: FakeSlack, client: WebClient) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
    client.api_call("chat.postMessage", data={"channel": "C1", "text": "hi", "blocks": json.dumps(blocks)})
    client.api_call("chat.postMessage", params={"channel": "C1", "text": "again"})

    assert [m["text"] for m in fake.messages("C1")] == ["hi", "again"]
    assert fake.messages("C1")[0]["blocks"] == blocks


def test_update_and_delete_change_the_stored_message(fake: FakeSlack, client: WebClient) -> None:
    posted = client.chat_postMessage(channel="C1", text="draft")
    client.chat_update(channel="C1", ts=posted["ts"], text="final")
    assert [m["text"] for m in fake.messages("C1")] == ["final"]

    client.chat_delete(channel="C1", ts=posted["ts"])
    assert fake.messages("C1") == []
    with pytest.raises(SlackApiError) as missing:
        client.chat_delete(channel="C1", ts=posted["ts"])
    assert missing.value.response["error"] == "message_not_found"


def test_block_kit_and_length_limits_are_enforced_like_slack(client: WebClient) -> None:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    too_long = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}
    attempts: list[tuple[dict[str, Any], str]] = [
        ({"blocks": [section] * 51, "text": "t"}, "invalid_blocks"),
        ({"blocks": [too_long], "text": "t"}, "invalid_blocks"),
        ({"text": "x" * 40001}, "msg_too_long"),
    ]
    for kwargs, expected in attempts:
        with pytest.raises(SlackApiError) as refused:
            client.chat_postMessage(channel="C1", **kwargs)
        assert refused.value.response["error"] == expected
    with pytest.raises(SlackApiError) as empty:
        client.api_call("chat.postMessage", json={"channel": "C1"})  # the SDK itself warns before sending this
    assert empty.value.response["error"] == "no_text"
    assert client.chat_postMessage(channel="C1", blocks=[section] * 50, text="x" * 40000)["ok"]


@pytest.mark.slow
def test_planned_429_is_retried_by_the_rate_limit_handler(fake: FakeSlack, client: WebClient) -> None:
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=1))
    fake.plan_429("chat.postMessage", retry_after=1)

    started = time.monotonic()
    client.chat_postMessage(channel="C1", text="after the wait")

    assert time.monotonic() - started >= 1.0
    assert [c.status for c in fake.calls_to("chat.postMessage")] == [429, 200]
    assert [m["text"] for m in fake.messages("C1")] == ["after the wait"]


def test_planned_429_fails_without_a_retry_handler(fake: FakeSlack) -> None:
    bare = WebClient(token=BOT_TOKEN, base_url=fake.api_url, retry_handlers=[])
    fake.plan_429("chat.postMessage", retry_after=7)

    with pytest.raises(SlackApiError) as limited:
        bare.chat_postMessage(channel="C1", text="hi")

    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["Retry-After"] == "7"
    assert limited.value.response["error"] == "ratelimited"
    assert fake.messages("C1") == []


def test_trigger_ids_are_single_use(fake: FakeSlack, client: WebClient) -> None:
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Persona"}, "blocks": []}
    trigger = fake.new_trigger_id()

    opened = client.views_open(trigger_id=trigger, view=modal)

    assert opened["view"]["id"].startswith("V")
    with pytest.raises(SlackApiError) as reused:
        client.views_open(trigger_id=trigger, view=modal)
    assert reused.value.response["error"] == "exchanged_trigger_id"
    with pytest.raises(SlackApiError) as unknown:
        client.views_open(trigger_id="1.2.unknown", view=modal)
    assert unknown.value.response["error"] == "invalid_trigger_id"


def test_trigger_ids_expire_after_three_seconds(fake: FakeSlack, client: WebClient) -> None:
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Persona"}, "blocks": []}
    fresh, stale = fake.new_trigger_id(), fake.new_trigger_id()
    fake.advance(2.5)
    assert client.views_open(trigger_id=fresh, view=modal)["ok"]

    fake.advance(0.6)
    with pytest.raises(SlackApiError) as expired:
        client.views_open(trigger_id=stale, view=modal)
    assert expired.value.response["error"] == "expired_trigger_id"


def test_views_update_push_and_publish(fake: FakeSlack, client: WebClient) -> None:
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "One"}, "blocks": []}
    opened = client.views_open(trigger_id=fake.new_trigger_id(), view=modal)
    updated = client.views_update(
        view_id=opened["view"]["id"], view={**modal, "title": {"type": "plain_text", "text": "Two"}}
    )
    assert updated["view"]["title"]["text"] == "Two"
    assert client.views_push(trigger_id=fake.new_trigger_id(), view=modal)["ok"]

    home = {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Personas"}}]}
    client.views_publish(user_id="U1", view=home)
    published = fake.home_view("U1")
    assert published is not None
    assert published["blocks"] == home["blocks"]


def test_users_info_reports_admin_and_owner_flags(fake: FakeSlack, client: WebClient) -> None:
    fake.add_user("UADMIN", is_admin=True, name="ada")
    fake.add_user("UOWNER", is_owner=True)
    fake.add_user("UPLAIN")

    flags = {
        uid: (client.users_info(user=uid)["user"]["is_admin"], client.users_info(user=uid)["user"]["is_owner"])
        for uid in ("UADMIN", "UOWNER", "UPLAIN")
    }

    assert flags == {"UADMIN": (True, False), "UOWNER": (False, True), "UPLAIN": (False, False)}
    assert client.users_info(user="UADMIN")["user"]["name"] == "ada"
    with pytest.raises(SlackApiError) as missing:
        client.users_info(user="UNOBODY")
    assert missing.value.response["error"] == "user_not_found"


def test_conversations_info_gives_the_channel_name(fake: FakeSlack, client: WebClient) -> None:
    fake.add_channel("C9", "payments-api")
    assert client.conversations_info(channel="C9")["channel"]["name"] == "payments-api"
    with pytest.raises(SlackApiError) as missing:
        client.conversations_info(channel="CNOPE")
    assert missing.value.response["error"] == "channel_not_found"


def test_tokens_are_checked_by_kind(fake: FakeSlack, client: WebClient) -> None:
    app_level = WebClient(token=APP_TOKEN, base_url=fake.api_url)
    url = app_level.apps_connections_open(app_token=APP_TOKEN)["url"]
    assert url.startswith("ws://127.0.0.1:")
    with pytest.raises(SlackApiError) as bot_token:
        client.apps_connections_open(app_token=BOT_TOKEN)
    assert bot_token.value.response["error"] == "not_allowed_token_type"
    with pytest.raises(SlackApiError) as anonymous:
        WebClient(base_url=fake.api_url).auth_test()
    assert anonymous.value.response["error"] == "not_authed"
    assert client.auth_test()["user_id"] == BOT_USER_ID


def test_unknown_methods_answer_ok_and_are_recorded(fake: FakeSlack, client: WebClient) -> None:
    assert client.api_call("reactions.add", json={"channel": "C1", "name": "eyes"})["ok"]
    assert fake.calls_to("reactions.add")[0].args == {"channel": "C1", "name": "eyes"}


# ----- Socket Mode with the builtin SocketModeClient ----------------------------------------------------------------


@pytest.mark.slow
def test_a_new_connection_gets_hello(fake: FakeSlack, recorder: Recorder) -> None:
    fake.wait_for(lambda: bool(recorder.raw))
    assert recorder.raw[0]["type"] == "hello"
    assert fake.connections == 1
    assert len(fake.calls_to("apps.connections.open")) == 1


@pytest.mark.slow
def test_an_event_envelope_is_delivered_and_acked(fake: FakeSlack, recorder: Recorder) -> None:
    event = {"type": "app_mention", "channel": "C1", "user": "U1", "text": f"<@{BOT_USER_ID}> hello"}

    envelope_id = fake.send_event(event, event_id="Ev123", retry_num=1)

    assert fake.ack_for(envelope_id) == {}
    (request,) = recorder.requests
    assert request.type == "events_api"
    assert request.retry_attempt == 1
    assert request.payload["event_id"] == "Ev123"
    assert request.payload["event"]["text"] == event["text"]
    assert 0 <= fake.ack_times[envelope_id] < 5
    stored = fake.messages("C1")
    assert [m["ts"] for m in stored] == [request.payload["event"]["ts"]]


@pytest.mark.slow
def test_an_unacked_envelope_times_out_in_ack_for(fake: FakeSlack, recorder: Recorder) -> None:
    recorder.ack = False
    envelope_id = fake.send_event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    fake.wait_for(lambda: bool(recorder.requests))
    with pytest.raises(AssertionError):
        fake.ack_for(envelope_id, timeout=0.2)
    assert envelope_id not in fake.ack_times


@pytest.mark.slow
def test_a_human_message_is_stored_and_delivered_with_its_mention(fake: FakeSlack, recorder: Recorder) -> None:
    parent = fake.post_human_message("C1", "first", deliver=False)

    reply = fake.post_human_message("C1", f"<@{BOT_USER_ID}> what about tests?", thread_ts=parent["ts"])

    fake.wait_for(lambda: len(recorder.requests) == 2)
    events = [r.payload["event"] for r in recorder.requests]
    assert [e["type"] for e in events] == ["message", "app_mention"]
    assert all(e["ts"] == reply["ts"] and e["thread_ts"] == parent["ts"] for e in events)
    assert [m["ts"] for m in fake.messages("C1", thread_ts=parent["ts"])] == [parent["ts"], reply["ts"]]


@pytest.mark.slow
def test_an_interactive_envelope_carries_slacks_fields_and_the_ack_payload(fake: FakeSlack, recorder: Recorder) -> None:
    recorder.answer = {"response_action": "errors", "errors": {"name": "That name is taken."}}
    submission = {"type": "view_submission", "user": {"id": "UADMIN"}, "view": {"callback_id": "persona"}}

    envelope_id = fake.send_interactive(submission)

    assert fake.ack_for(envelope_id) == recorder.answer
    sent = fake.envelopes[envelope_id]
    assert sent["type"] == "interactive"
    assert sent["accepts_response_payload"] is True
    assert sent["payload"]["user"] == {"id": "UADMIN"}
    assert sent["payload"]["trigger_id"]
    assert sent["payload"]["api_app_id"] == fake.app_id


@pytest.mark.slow
def test_disconnect_leads_to_a_reconnect(fake: FakeSlack, recorder: Recorder) -> None:
    fake.wait_for(lambda: fake.open_connections == 1)

    fake.disconnect()

    fake.wait_for(lambda: fake.open_connections == 1)
    assert fake.connections == 2
    assert len(fake.calls_to("apps.connections.open")) == 2
    envelope_id = fake.send_event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    assert fake.ack_for(envelope_id) == {}


def test_a_websocket_ticket_is_single_use(fake: FakeSlack) -> None:
    url = fake.issue_socket_url()
    with connect(url) as first:
        assert json.loads(first.recv(timeout=2))["type"] == "hello"
    with pytest.raises(InvalidStatus) as refused:
        connect(url)
    assert refused.value.response.status_code == 401


def _event_types(sockets: list[Any], expected: int) -> list[list[str]]:
    """The event types each raw websocket received until `expected` envelopes arrived in all."""
    got: list[list[str]] = [[] for _ in sockets]
    while sum(map(len, got)) < expected:
        for i, socket in enumerate(sockets):
            with contextlib.suppress(TimeoutError):
                got[i].append(json.loads(socket.recv(timeout=0.05))["payload"]["event"]["type"])
    return got


@pytest.mark.parametrize("round_robin", [False, True])
def test_envelopes_go_to_the_pinned_connection_else_the_newest_or_each_in_turn(round_robin: bool) -> None:
    with FakeSlack(round_robin=round_robin) as fake, contextlib.ExitStack() as stack:
        sockets = []
        for _ in range(3):  # one after another: the n-th connection opened is number n
            sockets.append(stack.enter_context(connect(fake.issue_socket_url())))
            assert json.loads(sockets[-1].recv(timeout=2))["type"] == "hello"
            fake.wait_for(lambda: fake.open_connections == len(sockets))
        with fake.routed_to(1):
            fake.send_event({"type": "pinned", "user": "U1"})
        for _ in range(3):
            fake.send_event({"type": "free", "user": "U1"})
        got = _event_types(sockets, 4)
    assert got[1].count("pinned") == 1
    if round_robin:
        assert [types.count("free") for types in got] == [1, 1, 1]
    else:
        assert [types.count("free") for types in got] == [0, 0, 3]


# ----- Socket Mode with Bolt's SocketModeHandler --------------------------------------------------------------------


@pytest.mark.slow
def test_a_slash_command_is_acked_with_a_payload_through_bolt(fake: FakeSlack) -> None:
    app = App(token=BOT_TOKEN, client=WebClient(token=BOT_TOKEN, base_url=fake.api_url))

    @app.command("/nightwatch")
    def nightwatch(ack: Ack, command: dict[str, Any], client: WebClient, respond: Respond) -> None:
        ack(text=f"working on {command['text']}")
        client.views_open(
            trigger_id=command["trigger_id"],
            view={"type": "modal", "title": {"type": "plain_text", "text": "New persona"}, "blocks": []},
        )
        respond("done")

    handler = SocketModeHandler(app, APP_TOKEN)
    handler.connect()
    try:
        envelope_id = fake.send_slash_command("persona new", user_id="U1", channel_id="C1")
        assert fake.ack_for(envelope_id)["text"] == "working on persona new"
        fake.wait_for(lambda: bool(fake.calls_to("response_url")))
    finally:
        handler.close()

    assert [c.status for c in fake.calls_to("views.open")] == [200]
    assert fake.calls_to("views.open")[0].args["view"]["title"]["text"] == "New persona"
    assert [m["text"] for m in fake.ephemerals("C1", user="U1")] == ["done"]
