"""Deliberations in Slack threads: the channel's project, the bounded pool, a note when it is full, and takeovers.

Every deliberation started here holds a lease this replica renews (`renew`); `take_over` claims those whose replica
is gone and finishes them in their own thread (see domain/deliberation/takeover.py). A deliberation that stops
because its lease ended (handed over on shutdown, or claimed by another replica) posts nothing more, not even what
its poster still holds: the replica that runs it now speaks in the thread. `release` hands over, on shutdown, the
deliberations still running here (a model call that has not returned), so another replica resumes them at once.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from nightwatch.adapters.db import SlackState
from nightwatch.adapters.runtime import Metrics, log_context
from nightwatch.adapters.slack.lesson_notes import LessonNotes
from nightwatch.adapters.slack.pool import WorkerPool
from nightwatch.adapters.slack.poster import SlackPoster
from nightwatch.domain.deliberation import DeliberationEngine, DeliberationRequest, LeaseEndedError
from nightwatch.domain.deliberation.models import Deliberation
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.errors import InvalidNameError, NightWatchError
from nightwatch.domain.personas import project_slug
from nightwatch.domain.ports import Clock

log = logging.getLogger(__name__)

NAME_CACHE_FOR = timedelta(minutes=10)
RUNNING_FOR_AT_MOST = timedelta(minutes=30)  # older "running" rows belong to a replica that died
BUSY = "I'm busy: {running} deliberations are running. Try again in a minute."


class ChannelDirectory:
    """A channel's project (its mapping, else its name as a slug) and its name, with names cached briefly."""

    def __init__(self, *, client: WebClient, state: SlackState, clock: Clock) -> None:
        self._client = client
        self._state = state
        self._clock = clock
        self._names: dict[str, tuple[datetime, str]] = {}
        self._lock = threading.Lock()

    def project_for(self, channel: str) -> str:
        """The mapped project, else the channel's name as a project slug (else its id)."""
        mapped = self._state.project_for(channel)
        if mapped:
            return mapped
        try:
            return project_slug(self.name_of(channel))
        except InvalidNameError:
            return project_slug(channel)

    def name_of(self, channel: str) -> str:
        """The channel's name from conversations.info (cached); its id when Slack will not say."""
        now = self._clock.now()
        with self._lock:
            cached = self._names.get(channel)
        if cached is not None and now - cached[0] < NAME_CACHE_FOR:
            return cached[1]
        try:
            info = self._client.conversations_info(channel=channel).get("channel") or {}
            name = str(info.get("name") or channel)
        except SlackApiError as err:
            log.warning("conversations.info for %s failed (%s); using the id", channel, err.response["error"])
            return channel
        with self._lock:
            self._names[channel] = (now, name)
        return name


@dataclass(frozen=True)
class Started:
    """What `Deliberations.start` did: `started` False when the pool was full or the thread already busy."""

    started: bool
    reason: str = ""


class Deliberations:
    """Starts one deliberation per request on the bounded pool, in the request's thread."""

    def __init__(
        self,
        *,
        engine: DeliberationEngine,
        log: DeliberationLog,
        client: WebClient,
        pool: WorkerPool,
        channels: ChannelDirectory,
        clock: Clock,
        metrics: Metrics | None = None,
        notes: LessonNotes | None = None,
    ) -> None:
        """`notes`: each thread's one lessons message (without it, a note per lesson, as proactive posts had)."""
        self._metrics = metrics or Metrics()
        self._notes = notes
        self._engine = engine
        self._log = log
        self._client = client
        self._pool = pool
        self._channels = channels
        self._clock = clock
        self._active: set[str] = set()  # threads with a deliberation on this replica (the log covers the others)
        self._posters: dict[str, SlackPoster] = {}  # their posters, to hand people's replies to
        self._bot_user_id = ""  # the app's user id, learnt from mentions (or auth.test) to read threads with
        self._lock = threading.Lock()

    def start(self, *, channel: str, thread_ts: str, topic: str, bot_user_id: str = "", user: str = "") -> Started:
        """Run a deliberation on `topic` in the thread, unless one already runs there or the pool is full."""
        thread = f"{channel}:{thread_ts}"
        request = _request(channel, thread_ts, topic, self._channels.project_for(channel))
        self._bot_user_id = bot_user_id or self._bot_user_id
        poster = self._poster(channel, thread_ts, bot_user_id, user)
        if not self._claim(thread):
            return Started(False, "a deliberation is already running in this thread; it will see your message")
        with self._lock:
            self._posters[thread] = poster
        if self._pool.try_submit(lambda: self._run(request, poster)):
            return Started(True)
        self._release(thread)
        self._metrics.busy.inc()
        busy = BUSY.format(running=self._pool.running)
        self._client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=busy)
        return Started(False, busy)

    def renew(self) -> int:
        """Renew this replica's leases on the deliberations it runs; returns how many rows it renewed."""
        with self._lock:
            threads = sorted(self._active)
        return self._engine.renew_leases(threads)

    def release(self) -> int:
        """Hand over the deliberations still running on this replica (it is stopping); returns how many rows."""
        with self._lock:
            threads = sorted(self._active)
        return self._engine.release_leases(threads)

    def take_over(self) -> list[int]:
        """Claim the deliberations whose replica is gone and finish each in its thread; returns the ids taken.

        With no free worker it claims nothing (another replica may have room); one it claimed but could not start
        (the pool filled up, or this replica is stopping) is handed back at once, its lease released.
        """
        taken: list[int] = []
        for orphan in self._engine.orphans():
            channel, _, thread_ts = orphan.thread.partition(":")
            if not thread_ts or self._pool.running >= self._pool.size or not self._reserve(orphan.thread):
                continue
            claimed = self._engine.claim(orphan)
            if claimed is None or claimed.id is None:
                self._release(orphan.thread)
                continue
            log.info("taking over deliberation #%s in %s from %s", claimed.id, orphan.thread, orphan.owner)
            request = _request(channel, thread_ts, claimed.topic, claimed.project)
            poster = self._poster(channel, thread_ts, self._bot_user(), "")
            with self._lock:
                self._posters[orphan.thread] = poster
            if not self._pool.try_submit(partial(self._run, request, poster, claimed)):
                self._engine.release_leases([orphan.thread])
                self._release(orphan.thread)
                continue
            taken.append(claimed.id)
        return taken

    def _poster(self, channel: str, thread_ts: str, bot_user_id: str, user: str) -> SlackPoster:
        """A deliberation's poster: turns, the verdict, and at most one lessons message (see poster.py)."""
        return SlackPoster(
            client=self._client,
            channel=channel,
            thread_ts=thread_ts,
            bot_user_id=bot_user_id,
            notes=self._notes,
            requester=user,
            deliberating=self._notes is not None,
        )

    def poster_for(self, thread: str) -> SlackPoster | None:
        """The poster of the deliberation running in `thread` ("channel:thread_ts") on this replica, if any."""
        with self._lock:
            return self._posters.get(thread)

    def observe(self, event: dict[str, object]) -> None:
        """Hand a person's thread reply to the deliberation running in that thread on this replica, if any."""
        poster = self.poster_for(f"{event.get('channel')}:{event.get('thread_ts')}")
        if poster is not None:
            poster.observe(dict(event))

    def _run(self, request: DeliberationRequest, poster: SlackPoster, claimed: Deliberation | None = None) -> None:
        channel, _, thread_ts = request.thread.partition(":")
        with log_context(channel=channel, thread=thread_ts):
            self._run_logged(request, poster, claimed)

    def _run_logged(self, request: DeliberationRequest, poster: SlackPoster, claimed: Deliberation | None) -> None:
        ended = False
        try:
            if claimed is None:
                result = self._engine.run(request, poster, should_stop=self._pool.stopping.is_set)
            else:
                self._metrics.takeovers.inc()
                result = self._engine.resume(claimed, request, poster, should_stop=self._pool.stopping.is_set)
            self._metrics.deliberation_ended(result)
        except LeaseEndedError as err:
            ended = True
            log.info("stopped the deliberation in %s: %s", request.thread, err)
        except NightWatchError as err:
            poster.post_notice(str(err))
        except Exception:
            log.exception("the deliberation in %s failed", request.thread)
            poster.post_notice("The deliberation failed unexpectedly; the error was logged. Try again later.")
        finally:
            if not ended:
                _finish(poster)
            self._release(request.thread)

    def _claim(self, thread: str) -> bool:
        """Reserve the thread for a new deliberation; False when one already runs there (here or elsewhere)."""
        if not self._reserve(thread):
            return False
        since = self._clock.now() - RUNNING_FOR_AT_MOST
        try:
            elsewhere = any(d.thread == thread and (d.started_at or since) > since for d in self._log.running())
        except BaseException:
            self._release(thread)
            raise
        if elsewhere:
            self._release(thread)
        return not elsewhere

    def _reserve(self, thread: str) -> bool:
        """Mark the thread as running a deliberation on this replica; False when one already runs here."""
        with self._lock:
            if thread in self._active:
                return False
            self._active.add(thread)
            return True

    def _bot_user(self) -> str:
        """The app's user id: from a mention seen, else from auth.test; '' when Slack will not say."""
        if not self._bot_user_id:
            try:
                self._bot_user_id = str(self._client.auth_test().get("user_id") or "")
            except SlackApiError as err:
                log.warning("auth.test failed (%s); the app's mention stays in the thread text", err.response["error"])
        return self._bot_user_id

    def _release(self, thread: str) -> None:
        with self._lock:
            self._active.discard(thread)
            self._posters.pop(thread, None)


def thread_link(channel: str, thread_ts: str) -> str:
    """The link to the thread `thread_ts` of `channel`, as lessons recorded there keep it."""
    return f"https://slack.com/archives/{channel}/p{thread_ts.replace('.', '')}"


def _request(channel: str, thread_ts: str, topic: str, project: str) -> DeliberationRequest:
    """A deliberation in the thread `thread_ts` of `channel`, under a lease so another replica can take it over."""
    return DeliberationRequest(
        topic=topic,
        project=project,
        thread=f"{channel}:{thread_ts}",
        link=thread_link(channel, thread_ts),
        leased=True,
    )


def _finish(poster: SlackPoster) -> None:
    """Post what the deliberation's poster still holds; a failure here is logged, never raised from a worker."""
    try:
        poster.finish()
    except Exception:
        log.exception("could not post the end of the deliberation in %s:%s", poster.channel, poster.thread_ts)
