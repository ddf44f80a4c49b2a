"""A local Slack for tests: the Web API over HTTP and Socket Mode over a websocket, both on 127.0.0.1.

Point the real clients at it: `WebClient(base_url=fake.api_url)` for the Web API; a Socket Mode client with an
`xapp-` token then gets its websocket URL from `apps.connections.open` as it would from Slack. The fake records
every call and every ack, and can be told to misbehave the ways Slack does (429s, disconnects, expired triggers).

    with FakeSlack() as fake:
        client = WebClient(token="xoxb-test", base_url=fake.api_url)
        ...
        envelope_id = fake.send_event({"type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT> hi"})
        fake.ack_for(envelope_id)

Parts: `fake_slack_workspace.py` (Web API state: users, channels, messages, views, trigger ids),
`fake_slack_rules.py` (token, Block Kit and paging checks), `fake_slack_http.py` (HTTP server, body parsing),
`fake_slack_socket.py` (Socket Mode: tickets, hello, envelopes, acks, disconnect).
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType

from tests.fake_slack_http import HttpServer
from tests.fake_slack_rules import Json
from tests.fake_slack_socket import SocketModeServer
from tests.fake_slack_workspace import APP_ID, BOT_ID, BOT_USER_ID, TEAM_ID, FakeClock, SlackWorkspace
from tests.waiting import wait_until

__all__ = ["APP_ID", "BOT_ID", "BOT_USER_ID", "TEAM_ID", "ApiCall", "FakeSlack"]


@dataclass(frozen=True)
class ApiCall:
    """One Web API request as the fake saw it. `at` is time.monotonic(); `status` is the HTTP status answered."""

    method: str
    args: Json
    token: str | None
    at: float
    status: int = 200


@dataclass
class _Plan:
    retry_after: int
    times: int


class FakeSlack:
    """A local Slack workspace with one app installed: Web API + Socket Mode, recording everything."""

    team_id = TEAM_ID
    app_id = APP_ID
    bot_id = BOT_ID
    bot_user_id = BOT_USER_ID

    def __init__(self, *, round_robin: bool = False, listen_backlog: int | None = None) -> None:
        """`round_robin`: envelopes go to each open Socket Mode connection in turn (default: the newest).

        `listen_backlog` raises the HTTP server's (5, from http.server) for bursts of connects from many processes.
        """
        self.listen_backlog = listen_backlog
        self.clock = FakeClock()
        self.workspace = SlackWorkspace(self.clock)
        self.calls: list[ApiCall] = []
        self._changed = threading.Condition()
        self._socket = SocketModeServer(self._changed, round_robin=round_robin)
        self._plans: dict[str, _Plan] = {}
        self._response_urls: dict[str, tuple[str, str]] = {}  # id -> (channel, user)
        self._http: HttpServer | None = None
        self.api_url = ""
        self.http_url = ""

    # ----- life cycle -------------------------------------------------------------------------------------------

    def start(self) -> FakeSlack:
        self._http = HttpServer(self.answer_http, listen_backlog=self.listen_backlog)
        self.http_url = self._http.url
        self.api_url = f"{self.http_url}/api/"
        self._socket.start()
        return self

    def stop(self) -> None:
        """Closes every socket and joins every thread (idempotent)."""
        self._socket.stop()
        if self._http is not None:
            self._http.stop()
            self._http = None

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # ----- inspection -------------------------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in list(self.calls) if call.method == method]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Waits until `predicate()` holds, woken by every call and ack; AssertionError after `timeout` seconds."""
        wait_until(predicate, "a condition on the fake Slack", timeout=timeout, wake=self._changed)

    def messages(self, channel: str, thread_ts: str | None = None) -> list[Json]:
        """Messages stored in a channel, oldest first; with `thread_ts`, that thread (parent first) only."""
        if thread_ts is None:
            return self.workspace.all_messages(channel)
        return self.workspace.thread(channel, thread_ts)

    def ephemerals(self, channel: str, user: str | None = None) -> list[Json]:
        """Ephemeral messages (chat.postEphemeral and ephemeral response_url posts) in a channel."""
        with self.workspace.lock:
            found = [m for m in self.workspace.ephemeral if m.get("channel") == channel]
        return copy.deepcopy([m for m in found if user is None or m.get("user") == user])

    def home_view(self, user_id: str) -> Json | None:
        """The App Home view last published for a user."""
        with self.workspace.lock:
            return copy.deepcopy(self.workspace.home_views.get(user_id))

    @property
    def connections(self) -> int:
        """How many Socket Mode connections were opened so far."""
        return self._socket.opened

    @property
    def open_connections(self) -> int:
        """How many Socket Mode connections are open now."""
        return len(self._socket.open)

    @property
    def ack_times(self) -> dict[str, float]:
        """envelope_id -> seconds from sending the envelope to receiving its ack."""
        return self._socket.ack_times

    @property
    def envelopes(self) -> dict[str, Json]:
        """envelope_id -> the envelope as sent (payload included: trigger_id, response_url, event...)."""
        return {eid: envelope.body for eid, envelope in list(self._socket.envelopes.items())}

    # ----- set-up and behaviours ----------------------------------------------------------------------------------

    def add_user(self, user_id: str, *, is_admin: bool = False, is_owner: bool = False, name: str = "") -> None:
        self.workspace.add_user(user_id, name=name, is_admin=is_admin, is_owner=is_owner)

    def add_channel(self, channel_id: str, name: str) -> None:
        self.workspace.add_channel(channel_id, name)

    def add_user_group(self, group_id: str, members: list[str]) -> None:
        """A user group (`usergroups.users.list` answers with `members`); again to change its members."""
        self.workspace.add_user_group(group_id, members)

    def new_trigger_id(self) -> str:
        """A trigger id like those in interaction payloads: single use, expires after 3 s of the fake's clock."""
        return self.workspace.new_trigger_id()

    def advance(self, seconds: float) -> None:
        """Moves the fake's clock forward (trigger expiry, message timestamps)."""
        self.clock.advance(seconds)

    def plan_429(self, method: str, retry_after: int = 1, times: int = 1) -> None:
        """The next `times` calls to `method` answer HTTP 429 with a Retry-After header, as Slack's rate limiter."""
        with self._changed:
            self._plans[method] = _Plan(retry_after=retry_after, times=times)

    def post_human_message(
        self, channel: str, text: str, *, user: str = "U1", thread_ts: str | None = None, deliver: bool = True
    ) -> Json:
        """Stores a person's message and delivers its `message` event (plus `app_mention` if it names the bot).

        Delivery needs a connected Socket Mode client; `deliver=False` only stores the message.
        """
        message: Json = {
            "type": "message",
            "user": user,
            "text": text,
            "team": TEAM_ID,
            "client_msg_id": str(uuid.uuid4()),
        }
        if thread_ts is not None:
            message["thread_ts"] = thread_ts
        stored = self.workspace.store_message(channel, message)
        if not deliver:
            return stored
        event = {**stored, "channel": channel, "event_ts": stored["ts"], "channel_type": "channel"}
        self.send_event(event)
        if f"<@{BOT_USER_ID}>" in text:  # Slack sends both when the app subscribes to both events
            self.send_event({**event, "type": "app_mention"})
        return stored

    # ----- Socket Mode: envelopes out, acks in ------------------------------------------------------------------

    def send_event(
        self, event: Json, *, event_id: str | None = None, team_id: str = TEAM_ID, retry_num: int = 0
    ) -> str:
        """Delivers an Events API envelope; a message-like event is also stored, as Slack has the message."""
        event = self._remember_message(dict(event))
        payload = {
            "token": "verification-token",
            "team_id": team_id,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(self.clock.now()),
            "is_ext_shared_channel": False,
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": team_id,
                    "user_id": BOT_USER_ID,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
        }
        return self._socket.deliver(
            "events_api",
            payload,
            accepts_response_payload=False,
            retry_attempt=retry_num,
            retry_reason="timeout" if retry_num else "",
        )

    def send_slash_command(
        self,
        text: str,
        *,
        user_id: str = "U1",
        channel_id: str = "C1",
        channel_name: str = "general",
        command: str = "/nightwatch",
    ) -> str:
        """Delivers a slash command envelope with a fresh trigger id and a response_url served by this fake."""
        response_id = uuid.uuid4().hex
        self._response_urls[response_id] = (channel_id, user_id)
        user = self.workspace.users.get(user_id, {})
        payload = {
            "token": "verification-token",
            "team_id": TEAM_ID,
            "team_domain": "nightwatch-test",
            "channel_id": channel_id,
            "channel_name": channel_name,
            "user_id": user_id,
            "user_name": user.get("name", user_id.lower()),
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "is_enterprise_install": "false",
            "response_url": f"{self.http_url}/response/{response_id}",
            "trigger_id": self.new_trigger_id(),
        }
        return self._socket.deliver("slash_commands", payload, accepts_response_payload=True)

    def send_interactive(self, payload: Json) -> str:
        """Delivers a block_actions / view_submission (...) envelope; fills the fields Slack always sends."""
        payload = copy.deepcopy(payload)
        payload.setdefault("api_app_id", APP_ID)
        payload.setdefault("token", "verification-token")
        payload.setdefault("team", {"id": TEAM_ID, "domain": "nightwatch-test"})
        payload.setdefault("user", {"id": "U1", "username": "alice", "team_id": TEAM_ID})
        payload.setdefault("is_enterprise_install", False)
        kind = payload.get("type")
        if kind in ("block_actions", "view_submission", "shortcut", "message_action"):
            payload.setdefault("trigger_id", self.new_trigger_id())
        if kind == "block_actions" and "channel" in payload and "response_url" not in payload:
            response_id = uuid.uuid4().hex
            self._response_urls[response_id] = (payload["channel"].get("id", ""), payload["user"]["id"])
            payload["response_url"] = f"{self.http_url}/response/{response_id}"
        answers = kind in ("view_submission", "view_closed", "block_suggestion")
        return self._socket.deliver("interactive", payload, accepts_response_payload=answers)

    def ack_for(self, envelope_id: str, timeout: float = 5.0) -> Json:
        """Waits for the app's ack of an envelope; returns the ack's payload ({} for a bare ack)."""
        return self._socket.ack_for(envelope_id, timeout)

    @contextmanager
    def routed_to(self, connection: int) -> Iterator[None]:
        """Envelopes sent inside go on one open Socket Mode connection: 0 the oldest still open, 1 the next..."""
        with self._changed:
            self._socket.pinned = connection
        try:
            yield
        finally:
            with self._changed:
                self._socket.pinned = None

    def disconnect(self, reason: str = "refresh_requested") -> None:
        """Sends Slack's disconnect notice on the newest connection, lets the client reconnect, then closes it."""
        self._socket.disconnect(reason)

    def issue_socket_url(self) -> str:
        """A websocket URL with a fresh one-time ticket (what apps.connections.open answers)."""
        return self._socket.issue_url()

    def _remember_message(self, event: Json) -> Json:
        """Gives a message-like event a ts and stores its message unless stored already (a mention is a message)."""
        if event.get("type") not in ("message", "app_mention") or event.get("subtype") or "channel" not in event:
            return event
        event.setdefault("ts", self.workspace.next_ts())
        event.setdefault("event_ts", event["ts"])
        if self.workspace.find_message(event["channel"], event["ts"]) is None:
            stored = {k: v for k, v in event.items() if k not in ("channel", "event_ts", "channel_type")}
            self.workspace.store_message(event["channel"], {**stored, "type": "message"})
        return event

    # ----- HTTP (Web API and response_url) ----------------------------------------------------------------------

    def answer_http(self, path: str, args: Json, token: str | None) -> tuple[int, dict[str, str], Json]:
        """Records the request and answers it: (status, extra headers, JSON body)."""
        if path.startswith("/response/"):
            self._record(ApiCall("response_url", args, None, time.monotonic()))
            self._respond_via_url(path.removeprefix("/response/"), args)
            return 200, {}, {"ok": True}
        method = path.removeprefix("/api/")
        retry_after = self._take_429(method)
        if retry_after is not None:
            self._record(ApiCall(method, args, token, time.monotonic(), status=429))
            return 429, {"Retry-After": str(retry_after)}, {"ok": False, "error": "ratelimited"}
        if method == "apps.connections.open" and token and token.startswith("xapp-"):
            body: Json = {"ok": True, "url": self._socket.issue_url()}
        else:
            body = self.workspace.handle(method, args, token)
        self._record(ApiCall(method, args, token, time.monotonic()))
        return 200, {}, body

    def _take_429(self, method: str) -> int | None:
        """The Retry-After of a planned 429 for this call, if one is left."""
        with self._changed:
            plan = self._plans.get(method)
            if plan is None or plan.times <= 0:
                return None
            plan.times -= 1
            return plan.retry_after

    def _respond_via_url(self, response_id: str, args: Json) -> None:
        channel, user = self._response_urls.get(response_id, ("", ""))
        if args.get("response_type") == "in_channel":
            message = {k: v for k, v in args.items() if k in ("text", "blocks", "thread_ts")}
            self.workspace.store_message(channel, {**message, "user": BOT_USER_ID, "bot_id": BOT_ID})
        else:
            with self.workspace.lock:
                self.workspace.ephemeral.append(
                    {**copy.deepcopy(args), "channel": channel, "user": user, "ts": self.workspace.next_ts()}
                )

    def _record(self, call: ApiCall) -> None:
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()
