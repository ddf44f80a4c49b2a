"""Serving Slack: connect over Socket Mode, run until SIGTERM/SIGINT, then stop cleanly; SIGHUP reloads.

`run_socket_mode` connects, starts the app's background work, waits for a stop signal, then stops taking work, hands
each running deliberation over to another replica (it stops at its next checkpoint and its lease is released, so
another replica resumes it at once instead of waiting for the lease to expire), and returns, within 30 s of SIGTERM.
With a `HotReload` it also watches the settings file and the persona files, and reloads them on SIGHUP
(adapters/runtime/hot_reload.py).
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

from nightwatch.adapters.runtime import HealthOptions, HealthServer, HotReload
from nightwatch.adapters.secrets import install_redaction
from nightwatch.adapters.slack import HAND_OVER_SECONDS, SET_UP, EagerAckSocketModeHandler, SlackApp
from nightwatch.domain.errors import ConfigError

log = logging.getLogger(__name__)

SOCKET_THREADS = 16
MISSING_APP_TOKEN = (
    "SLACK_APP_TOKEN is not set; Socket Mode needs an app-level token (xapp-...) with the connections:write "
    f"scope. {SET_UP}"
)


def run_socket_mode(
    slack_app: SlackApp,
    app_token: str | None,
    *,
    stop: threading.Event | None = None,
    hand_over_seconds: float = HAND_OVER_SECONDS,
    reload: HotReload | None = None,
    health: HealthOptions | None = None,
) -> bool:
    """Serve Slack over Socket Mode until SIGTERM/SIGINT (or `stop` is set), then shut down cleanly.

    With `reload`, settings and persona files are reloaded on SIGHUP and when they change on disk until shutdown;
    with `health`, /healthz, /readyz and /metrics are served from before connecting until the process stops.
    Returns True when every running deliberation stopped (handed over, or finished) within `hand_over_seconds`.
    """
    if not app_token:
        raise ConfigError(MISSING_APP_TOKEN)
    install_redaction()
    stop = stop if stop is not None else stop_on_signals()
    if reload is not None:
        reload_on_hangup(reload)
    metrics = health.metrics if health is not None else None
    handler = EagerAckSocketModeHandler(slack_app.app, app_token, concurrency=SOCKET_THREADS, metrics=metrics)
    stopping = threading.Event()
    server = _health_server(health, handler, stopping)
    try:
        handler.connect()  # type: ignore[no-untyped-call]
        slack_app.start_background()
        if reload is not None:
            reload.start()
        log.info("Night Watch is connected to Slack (Socket Mode)")
        stop.wait()
    finally:
        stopping.set()
        log.info("Stopping: no new work; running deliberations are handed over within %.0f s", hand_over_seconds)
        if reload is not None:
            reload.stop()
        handler.close()  # type: ignore[no-untyped-call]  # unacked envelopes go to another connection or replica
        finished = slack_app.hand_over(hand_over_seconds)
        log.info("Stopped%s", "" if finished else "; deliberations still waiting for the model were handed over")
        if server is not None:
            server.stop()
    return finished


def _health_server(
    health: HealthOptions | None, handler: EagerAckSocketModeHandler, stopping: threading.Event
) -> HealthServer | None:
    """Start the health server when asked for; ready while Socket Mode is connected and the database answers."""
    if health is None:
        return None

    def not_ready() -> str | None:
        if stopping.is_set():
            return "shutting down"
        if not handler.client.is_connected():
            return "Socket Mode is not connected"
        return health.database_problem()

    try:
        server = HealthServer(host=health.host, port=health.port, metrics=health.metrics, not_ready=not_ready)
    except OSError as err:
        raise ConfigError(
            f"NIGHTWATCH_HEALTH_PORT={health.port} cannot be served on {health.host} ({err.strerror}); "
            "choose a free port."
        ) from None
    server.start()
    return server


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT (signal handlers can only be installed from the main thread)."""
    stop = threading.Event()

    def on_signal(number: int, _frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(number).name)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, on_signal)
    return stop


def reload_on_hangup(reload: HotReload) -> None:
    """SIGHUP reloads settings and persona files (from the main thread only, where handlers can be installed)."""

    def on_hangup(_number: int, _frame: FrameType | None) -> None:
        log.info("received SIGHUP")
        reload.request()  # on a thread of its own: a signal handler must return at once

    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, on_hangup)
