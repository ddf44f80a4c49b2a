"""The fake Slack's Socket Mode side: one-time tickets, websocket connections with `hello`, envelopes out, acks in.

Built on websockets' threaded server. It speaks what slack_sdk's builtin SocketModeClient expects: unmasked text
frames, no compression, pongs to its pings, and Slack's `hello` / `disconnect` messages.

Which open connection gets an envelope: the newest (one app, reconnecting), the next in turn (`round_robin`, as Slack
spreads envelopes over an app's several connections), or the one `pinned` (several replicas, a test choosing which
one handles each envelope; connections are counted in the order they opened, 0 the oldest still open).
"""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve

from tests.fake_slack_rules import Json
from tests.fake_slack_workspace import APP_ID
from tests.waiting import WaitTimeoutError, wait_until

PING_INTERVAL = 0.1  # seconds between the server's pings: they keep the builtin client's blocking recv() short,
# so closing a client takes about 1 s instead of its 3 s receive timeout
DISCONNECT_GRACE = 2.0  # seconds the old socket stays open after a disconnect notice, for the client to move


@dataclass
class Envelope:
    body: Json
    sent_at: float
    ack: Json | None = None
    acked_at: float | None = None


class SocketModeServer:
    """Serves Socket Mode on 127.0.0.1; `changed` is notified on every connection change and ack."""

    def __init__(self, changed: threading.Condition, *, round_robin: bool = False) -> None:
        self.changed = changed
        self.round_robin = round_robin
        self.pinned: int | None = None  # the open connection every envelope goes to; None: newest or round robin
        self._turn = 0
        self.envelopes: dict[str, Envelope] = {}
        self.ack_times: dict[str, float] = {}
        self.opened = 0
        self.open: list[ServerConnection] = []
        self._tickets: dict[str, bool] = {}  # ticket -> used
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._url = ""

    def start(self) -> None:
        self._server = serve(
            self._serve,
            "127.0.0.1",
            0,
            compression=None,
            ping_interval=PING_INTERVAL,
            ping_timeout=5,
            close_timeout=1,
            process_request=self._check_ticket,
        )
        self._url = f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link/"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-slack-ws", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def issue_url(self) -> str:
        """A websocket URL with a fresh one-time ticket, as apps.connections.open returns."""
        ticket = uuid.uuid4().hex
        with self.changed:
            self._tickets[ticket] = False
        return f"{self._url}?ticket={ticket}"

    def deliver(self, kind: str, payload: Json, *, accepts_response_payload: bool, **extra: Any) -> str:
        """Sends an envelope on the connection chosen (waiting for one if need be); returns its envelope_id."""
        envelope_id = str(uuid.uuid4())
        body = {
            "envelope_id": envelope_id,
            "payload": payload,
            "type": kind,
            "accepts_response_payload": accepts_response_payload,
            **extra,
        }
        wait_until(lambda: bool(self.open), "a Socket Mode client to connect", timeout=5.0, wake=self.changed)
        with self.changed:
            connection = self._choose()
            self.envelopes[envelope_id] = Envelope(body=body, sent_at=time.monotonic())
        connection.send(json.dumps(body))
        return envelope_id

    def _choose(self) -> ServerConnection:
        """The open connection the next envelope goes on (called holding `changed`)."""
        if self.pinned is not None:
            if self.pinned >= len(self.open):
                raise AssertionError(f"connection {self.pinned} is pinned but only {len(self.open)} are open")
            return self.open[self.pinned]
        if self.round_robin:
            self._turn += 1
            return self.open[(self._turn - 1) % len(self.open)]
        return self.open[-1]

    def ack_for(self, envelope_id: str, timeout: float) -> Json:
        envelope = self.envelopes.get(envelope_id)
        if envelope is None:
            raise AssertionError(f"no envelope {envelope_id} was sent by this fake")
        what = f"envelope {envelope_id} ({envelope.body['type']}) to be acked"
        wait_until(lambda: envelope.ack is not None, what, timeout=timeout, wake=self.changed)
        return copy.deepcopy(envelope.ack or {})

    def disconnect(self, reason: str) -> None:
        """Slack's refresh: a `disconnect` notice, time for the client to open a new connection, then close."""
        connection = self.newest_connection()
        before = self.opened
        with contextlib.suppress(ConnectionClosed):
            connection.send(
                json.dumps({"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}})
            )
        with contextlib.suppress(
            WaitTimeoutError
        ):  # a client that has not moved by then loses the old connection anyway
            wait_until(
                lambda: self.opened > before, "the client to reconnect", timeout=DISCONNECT_GRACE, wake=self.changed
            )
        connection.close()

    def newest_connection(self, timeout: float = 5.0) -> ServerConnection:
        """The connection Slack would use; waits for the client to connect first if need be."""
        wait_until(lambda: bool(self.open), "a Socket Mode client to connect", timeout=timeout, wake=self.changed)
        with self.changed:
            return self.open[-1]

    def _check_ticket(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuses a websocket whose ticket was not issued by apps.connections.open, or was used already."""
        ticket = parse_qs(urlsplit(request.path).query).get("ticket", [""])[0]
        with self.changed:
            if self._tickets.get(ticket, True):
                return connection.respond(401, "invalid or used ticket\n")
            self._tickets[ticket] = True
        return None

    def _serve(self, connection: ServerConnection) -> None:
        with self.changed:
            self.opened += 1
            connection.send(
                json.dumps(
                    {
                        "type": "hello",
                        "num_connections": len(self.open) + 1,
                        "connection_info": {"app_id": APP_ID},
                        "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
                    }
                )
            )
            self.open.append(connection)
            self.changed.notify_all()
        try:
            for raw in connection:
                self._record_ack(json.loads(raw))
        except ConnectionClosed:
            pass  # the client went away without a closing handshake (the builtin client does that)
        finally:
            with self.changed:
                self.open.remove(connection)
                self.changed.notify_all()

    def _record_ack(self, message: Json) -> None:
        with self.changed:
            envelope = self.envelopes.get(str(message.get("envelope_id")))
            if envelope is not None and envelope.ack is None:
                envelope.ack = message.get("payload") or {}
                envelope.acked_at = time.monotonic()
                self.ack_times[envelope.body["envelope_id"]] = envelope.acked_at - envelope.sent_at
            self.changed.notify_all()
