"""The Slack app: a Bolt app on our own WebClient, its listeners, a bounded worker pool, and Socket Mode.

Bolt does not read SLACK_API_URL, so the app builds its own `WebClient(base_url=settings.api_url)` (tests and local
runs point it at tests/fake_slack.py) with the SDK's rate-limit (429 + Retry-After) and connection-error retry
handlers installed. `run_socket_mode` connects, waits for SIGTERM/SIGINT, then stops taking work, lets running
deliberations finish within a grace period (or checkpoint), and exits cleanly. With a `HotReload` it also watches the
settings file and the persona files, and reloads them on SIGHUP (hot_reload.py).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk import WebClient
from slack_sdk.http_retry import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler, RetryHandler

from nightwatch.adapters.db import SlackState
from nightwatch.adapters.pins.watch import PinWatch
from nightwatch.adapters.runtime.hot_reload import HotReload
from nightwatch.adapters.runtime.scheduler import DEFAULT_TICK_SECONDS, ProactiveScheduler
from nightwatch.adapters.secrets.redaction import install_redaction
from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.commands import SlashCommands
from nightwatch.adapters.slack.home import HomeTab
from nightwatch.adapters.slack.inbound import redact_inbound
from nightwatch.adapters.slack.lease_keeper import LeaseKeeper
from nightwatch.adapters.slack.lesson_notes import LessonNotes
from nightwatch.adapters.slack.listeners import Listeners
from nightwatch.adapters.slack.persona_admin import PersonaAdmin
from nightwatch.adapters.slack.pin_commands import PinCommands
from nightwatch.adapters.slack.pool import WorkerPool
from nightwatch.adapters.slack.poster import SlackPoster
from nightwatch.adapters.slack.share_commands import ShareCommands
from nightwatch.adapters.slack.socket_mode import EagerAckSocketModeHandler
from nightwatch.adapters.slack.teaching import ThreadTeaching
from nightwatch.adapters.slack.threads import ChannelDirectory, Deliberations
from nightwatch.config import SlackSettings
from nightwatch.domain.deliberation import DeliberationEngine, renew_every
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.errors import ConfigError
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.ports import Clock
from nightwatch.domain.proactive import ProactiveService
from nightwatch.domain.sharing import SharingService
from nightwatch.domain.teaching import TeachingService

log = logging.getLogger(__name__)

LISTENER_THREADS = 16
SOCKET_THREADS = 16
GRACE_SECONDS = 30.0
SET_UP = 'See "Slack set-up" in the README: create the app from manifest.yml, then copy its tokens.'
MISSING_BOT_TOKEN = f"SLACK_BOT_TOKEN is not set; Night Watch needs the app's bot token (xoxb-...). {SET_UP}"
MISSING_APP_TOKEN = (
    "SLACK_APP_TOKEN is not set; Socket Mode needs an app-level token (xapp-...) with the connections:write "
    f"scope. {SET_UP}"
)


def retry_handlers() -> list[RetryHandler]:
    """Retry 429s after Slack's Retry-After, and dropped connections, a few times each."""
    return [ConnectionErrorRetryHandler(max_retry_count=2), RateLimitErrorRetryHandler(max_retry_count=3)]


def web_client(settings: SlackSettings) -> WebClient:
    """The Web API client for SLACK_API_URL with the bot token and the retry handlers."""
    if not settings.bot_token:
        raise ConfigError(MISSING_BOT_TOKEN)
    return WebClient(token=settings.bot_token, base_url=settings.api_url, retry_handlers=retry_handlers())


class SlackApp:
    """Night Watch's Bolt app, its listeners, worker pool and (optionally) the proactive scheduler."""

    def __init__(
        self,
        *,
        settings: SlackSettings,
        personas: PersonaService,
        memory: MemoryService,
        engine: DeliberationEngine,
        log: DeliberationLog,
        state: SlackState,
        clock: Clock,
        teaching: TeachingService,
        client: WebClient | None = None,
        proactive: ProactiveService | None = None,
        sharing: SharingService | None = None,
        pins: PinService | None = None,
        pin_watch: PinWatch | None = None,
        proactive_tick_seconds: float = DEFAULT_TICK_SECONDS,
        authorize: Callable[..., AuthorizeResult] | None = None,
        admin_ids: Callable[[], frozenset[str]] | None = None,
        lesson_notes: Callable[[], str] | None = None,
    ) -> None:
        """`lesson_notes` is NIGHTWATCH_LESSON_NOTES now (it reloads); else the setting of start-up."""
        self.client = client if client is not None else web_client(settings)
        if not any(isinstance(h, RateLimitErrorRetryHandler) for h in self.client.retry_handlers):
            self.client.retry_handlers.extend(retry_handlers())
        self.pool = WorkerPool(size=settings.workers)
        self._listener_threads = ThreadPoolExecutor(LISTENER_THREADS, thread_name_prefix="nightwatch-listener")
        # token_verification_enabled=False: no auth.test at construction (no I/O while wiring); Bolt calls it lazily.
        self.app = App(
            client=self.client,
            authorize=authorize,
            token_verification_enabled=False,
            listener_executor=self._listener_threads,
            logger=_bolt_logger(),
        )
        self.app.use(redact_inbound)  # before any listener reads what a person typed
        # admin_ids: the listed admins now (NIGHTWATCH_ADMINS reloads); else the ones of start-up
        admins = AdminCheck(admins=admin_ids or settings.admins, client=self.client, clock=clock)
        channels = ChannelDirectory(client=self.client, state=state, clock=clock)
        home = HomeTab(client=self.client, personas=personas, memory=memory, admins=admins)
        self.notes = notes = LessonNotes(client=self.client, mode=lesson_notes or (lambda: settings.lesson_notes))
        self.deliberations = deliberations = Deliberations(
            engine=engine, log=log, client=self.client, pool=self.pool, channels=channels, clock=clock, notes=notes
        )
        # Pinned files are watched while the app runs (pin_watch.py); a test may pass its own watch.
        self.pin_watch = pin_watch if pin_watch is not None else PinWatch(pins=pins) if pins is not None else None
        pinning = (
            PinCommands(pins=pins, personas=personas, admins=admins, channels=channels, changed=self._pins_changed)
            if pins is not None
            else None
        )
        shares = ShareCommands(sharing=sharing, admins=admins, channels=channels) if sharing is not None else None
        commands = SlashCommands(
            personas=personas,
            memory=memory,
            engine=engine,
            log=log,
            state=state,
            clock=clock,
            client=self.client,
            admins=admins,
            home=home,
            deliberations=deliberations,
            channels=channels,
            more={
                **(shares.handlers() if shares is not None else {}),
                **(pinning.handlers() if pinning is not None else {}),
            },
        )
        self.leases = LeaseKeeper(deliberations=deliberations, every_seconds=renew_every(engine.lease_for))
        admin = PersonaAdmin(personas=personas, memory=memory, admins=admins, client=self.client)
        taught = ThreadTeaching(
            teaching=teaching, personas=personas, channels=channels, client=self.client, admins=admins, notes=notes
        )
        Listeners(
            state=state,
            clock=clock,
            deliberations=deliberations,
            commands=commands,
            admin=admin,
            home=home,
            teaching=taught,
            notes=notes,
        ).register(self.app)
        self.scheduler = None
        if proactive is not None:
            self.scheduler = ProactiveScheduler(
                service=proactive,
                state=state,
                clock=clock,
                poster_for=lambda channel: SlackPoster(
                    client=self.client, channel=channel, thread_ts=None, notes=notes
                ),
                channel_name=channels.name_of,
                tick_seconds=proactive_tick_seconds,
                housekeeping=engine.close_abandoned,
            )

    def start_background(self) -> None:
        """Start the lease keeper (leases and takeovers), the proactive scheduler and the pin watch, if any."""
        self.leases.start()
        if self.scheduler is not None:
            self.scheduler.start()
        if self.pin_watch is not None:
            self.pin_watch.start()

    def _pins_changed(self) -> None:
        if self.pin_watch is not None:
            self.pin_watch.sync()

    def shutdown(self, grace_seconds: float = GRACE_SECONDS) -> bool:
        """Stop taking work; let running deliberations finish within `grace_seconds`, else checkpoint them.

        Returns True when every deliberation ended in time.
        """
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.pin_watch is not None:
            self.pin_watch.stop()
        self._listener_threads.shutdown(wait=True)  # listeners only ack, check and hand over: they end quickly
        finished = self.pool.shutdown(grace_seconds)
        self.leases.stop()  # after the pool: leases are renewed while deliberations finish
        return finished


class _SameTokenNotice(logging.Filter):
    """Drops Bolt's "`token` will be unused" warning: Bolt reads SLACK_BOT_TOKEN by itself, and our client has it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def _bolt_logger() -> logging.Logger:
    logger = logging.getLogger("nightwatch.slack.bolt")
    if not any(isinstance(f, _SameTokenNotice) for f in logger.filters):
        logger.addFilter(_SameTokenNotice())
    return logger


def run_socket_mode(
    slack_app: SlackApp,
    app_token: str | None,
    *,
    stop: threading.Event | None = None,
    grace_seconds: float = GRACE_SECONDS,
    reload: HotReload | None = None,
) -> bool:
    """Serve Slack over Socket Mode until SIGTERM/SIGINT (or `stop` is set), then shut down cleanly.

    With `reload`, settings and persona files are reloaded on SIGHUP and when they change on disk until shutdown.
    Returns True when every running deliberation ended within the grace period.
    """
    if not app_token:
        raise ConfigError(MISSING_APP_TOKEN)
    install_redaction()
    stop = stop if stop is not None else _stop_on_signals()
    if reload is not None:
        reload_on_hangup(reload)
    handler = EagerAckSocketModeHandler(slack_app.app, app_token, concurrency=SOCKET_THREADS)
    try:
        handler.connect()  # type: ignore[no-untyped-call]
        slack_app.start_background()
        if reload is not None:
            reload.start()
        log.info("Night Watch is connected to Slack (Socket Mode)")
        stop.wait()
    finally:
        log.info("Stopping: no new work; running deliberations get up to %.0f s to finish", grace_seconds)
        if reload is not None:
            reload.stop()
        handler.close()  # type: ignore[no-untyped-call]  # unacked envelopes go to another connection or replica
        finished = slack_app.shutdown(grace_seconds)
        log.info("Stopped%s", "" if finished else "; unfinished deliberations were checkpointed as interrupted")
    return finished


def _stop_on_signals() -> threading.Event:
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
