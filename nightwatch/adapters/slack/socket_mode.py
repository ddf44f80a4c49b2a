"""Bolt's Socket Mode handler, with Events API envelopes acked the moment they arrive.

Bolt acks an event once the envelope has waited its turn in the client's queue and passed the middleware, which
under a burst of mentions (each starting a deliberation) takes hundreds of milliseconds. Events need no answer but
the ack itself, so this handler sends it from the socket's reading thread as soon as the envelope is read, and
Bolt's dispatch then runs as usual. That is the same promise Bolt makes (an event is acked before its listener
runs), kept sooner. Slash commands and interactions still wait for Bolt: their ack can carry a payload (modal
errors, for one).
"""

from __future__ import annotations

import json
import logging
import time

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.socket_mode.internals import run_bolt_app
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from nightwatch.adapters.runtime import Metrics

log = logging.getLogger(__name__)

EVENTS = "events_api"


class EagerAckSocketModeHandler(SocketModeHandler):
    """A SocketModeHandler that acks Events API envelopes on arrival and leaves the rest to Bolt."""

    def __init__(self, app: App, app_token: str, *, concurrency: int = 10, metrics: Metrics | None = None) -> None:
        super().__init__(app, app_token, concurrency=concurrency)
        self._metrics = metrics or Metrics()
        self.client.on_message_listeners.append(self._ack_event)

    def _ack_event(self, raw: str) -> None:
        started = time.perf_counter()
        if EVENTS not in raw:  # cheap: most frames are not events
            return
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if message.get("type") == EVENTS and message.get("envelope_id"):
            self.client.send_socket_mode_response(SocketModeResponse(envelope_id=message["envelope_id"]))
            self._metrics.slack_ack_seconds.observe(time.perf_counter() - started)

    def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        if req.type == EVENTS:
            response = run_bolt_app(self.app, req)  # acked already; only Bolt's verdict is left to log
            if response.status != 200:
                log.info("an event was not handled (status %s): %s", response.status, response.body)
            return
        with self._metrics.slack_ack_seconds.time():  # a command's or an interaction's ack waits for Bolt
            super().handle(client, req)
