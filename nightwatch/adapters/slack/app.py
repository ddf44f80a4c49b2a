"""The Slack app: a Bolt app on our own WebClient with its listeners registered, and the work that runs beside it.

Bolt does not read SLACK_API_URL, so the app runs on our own `WebClient(base_url=settings.api_url)` (tests and local
runs point it at tests/fake_slack.py) with the SDK's rate-limit (429 + Retry-After) and connection-error retry
handlers installed. wiring/slack.py builds every piece; nightwatch/serve.py connects the app over Socket Mode and
stops it on a signal: `hand_over` stops taking work and hands running deliberations over to another replica (their
leases released at once, each stops at its next checkpoint); `shutdown` (tests draining the app) first lets them
finish within a grace period.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk import WebClient
from slack_sdk.http_retry import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler, RetryHandler

from nightwatch.adapters.pins import PinWatch
from nightwatch.adapters.runtime import ProactiveScheduler
from nightwatch.adapters.slack.inbound import redact_inbound
from nightwatch.adapters.slack.lease_keeper import LeaseKeeper
from nightwatch.adapters.slack.listeners import Listeners
from nightwatch.adapters.slack.pool import WorkerPool
from nightwatch.adapters.slack.threads import Deliberations
from nightwatch.config import SlackSettings
from nightwatch.domain.errors import ConfigError

log = logging.getLogger(__name__)

LISTENER_THREADS = 16
GRACE_SECONDS = 30.0
# How long a stopping replica waits for its deliberations to stop (at a checkpoint, or after their reflection); with
# the rest of the stopping (the lease keeper's last tick, the socket) it exits within the 30 s supervisors allow.
HAND_OVER_SECONDS = 15.0
SET_UP = 'See "Slack set-up" in the README: create the app from manifest.yml, then copy its tokens.'
MISSING_BOT_TOKEN = f"SLACK_BOT_TOKEN is not set; Night Watch needs the app's bot token (xoxb-...). {SET_UP}"


def retry_handlers() -> list[RetryHandler]:
    """Retry 429s after Slack's Retry-After, and dropped connections, a few times each."""
    return [ConnectionErrorRetryHandler(max_retry_count=2), RateLimitErrorRetryHandler(max_retry_count=3)]


def web_client(settings: SlackSettings) -> WebClient:
    """The Web API client for SLACK_API_URL with the bot token and the retry handlers."""
    if not settings.bot_token:
        raise ConfigError(MISSING_BOT_TOKEN)
    return WebClient(token=settings.bot_token, base_url=settings.api_url, retry_handlers=retry_handlers())


@dataclass(frozen=True)
class Authorization:
    """How Bolt learns who the bot is: by default it asks Slack (auth.test) when first needed; a test answers itself."""

    authorize: Callable[..., AuthorizeResult] | None = None


def listener_threads() -> ThreadPoolExecutor:
    """The threads Bolt runs listeners on (they only ack, check and hand over to the worker pool)."""
    return ThreadPoolExecutor(LISTENER_THREADS, thread_name_prefix="nightwatch-listener")


def bolt_app(client: WebClient, threads: ThreadPoolExecutor, authorization: Authorization) -> App:
    """A Bolt app on `client` (given the retry handlers if it lacks them) that redacts what people type first."""
    if not any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.extend(retry_handlers())
    # token_verification_enabled=False: no auth.test at construction (no I/O while wiring); Bolt calls it lazily.
    app = App(
        client=client,
        authorize=authorization.authorize,
        token_verification_enabled=False,
        listener_executor=threads,
        logger=_bolt_logger(),
    )
    app.use(redact_inbound)  # before any listener reads what a person typed
    return app


class SlackApp:
    """Night Watch's Bolt app with its listeners, its worker pool, and the background work beside it."""

    def __init__(
        self,
        *,
        app: App,
        listeners: Listeners,
        pool: WorkerPool,
        listener_threads: ThreadPoolExecutor,
        deliberations: Deliberations,
        leases: LeaseKeeper,
        scheduler: ProactiveScheduler | None = None,
        pin_watch: PinWatch | None = None,
    ) -> None:
        self.app = app
        self.client: WebClient = app.client
        self.pool = pool
        self.deliberations = deliberations
        self.leases = leases
        self.scheduler = scheduler
        self.pin_watch = pin_watch
        self._listener_threads = listener_threads
        listeners.register(app)

    def start_background(self) -> None:
        """Start the lease keeper (leases and takeovers), the proactive scheduler and the pin watch, if any."""
        self.leases.start()
        if self.scheduler is not None:
            self.scheduler.start()
        if self.pin_watch is not None:
            self.pin_watch.start()

    def shutdown(self, grace_seconds: float = GRACE_SECONDS) -> bool:
        """Stop taking work; let running deliberations finish within `grace_seconds`, else hand them over.

        Returns True when every deliberation ended in time.
        """
        self._stop_background()
        self._listener_threads.shutdown(wait=True)  # listeners only ack, check and hand over: they end quickly
        finished = self.pool.shutdown(grace_seconds)
        self.leases.stop()  # after the pool: leases are renewed while deliberations finish
        return finished

    def hand_over(self, timeout: float = HAND_OVER_SECONDS) -> bool:
        """Stop taking work and hand every running deliberation over to another replica (SIGTERM).

        Their leases are released at once, so another replica resumes them within seconds (lease_keeper.py); each
        stops at its next checkpoint, and one still waiting for the model stores and posts nothing of its answer
        (lease_guard.py). Deliberations already decided finish their reflection within `timeout`. Returns True when
        every deliberation ended within it.
        """
        self.pool.stop_accepting()
        self.pool.stopping.set()
        self._stop_background()
        self.leases.stop()  # no takeover while stopping, and no renewal of leases being given away
        released = self.deliberations.release()
        if released:
            log.info("handed over %d running deliberations to the other replicas", released)
        self._listener_threads.shutdown(wait=True)
        return self.pool.wait_idle(timeout)

    def _stop_background(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.pin_watch is not None:
            self.pin_watch.stop()


class _SameTokenNotice(logging.Filter):
    """Drops Bolt's "`token` will be unused" warning: Bolt reads SLACK_BOT_TOKEN by itself, and our client has it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def _bolt_logger() -> logging.Logger:
    logger = logging.getLogger("nightwatch.slack.bolt")
    if not any(isinstance(f, _SameTokenNotice) for f in logger.filters):
        logger.addFilter(_SameTokenNotice())
    return logger
