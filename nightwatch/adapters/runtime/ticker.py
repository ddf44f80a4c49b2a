"""A daemon thread that runs one function every few seconds until stopped: the Slack app's background work.

The proactive scheduler and the lease keeper each own one. A failing run is logged and the next one tries again, so
one bad tick never stops the thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Ticker:
    """Calls `run` every `every_seconds` (first at once when `at_start`) in a daemon thread, until `stop`."""

    def __init__(self, name: str, run: Callable[[], object], every_seconds: float, *, at_start: bool = False) -> None:
        self.name = name
        self.every_seconds = every_seconds
        self._run = run
        self._at_start = at_start
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def stopping(self) -> bool:
        """Whether `stop` was called: a long run can end early."""
        return self._stop.is_set()

    def start(self) -> None:
        """Start the thread (a second start while it runs does nothing)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop ticking and wait for a running tick up to `timeout`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        if self._at_start:
            self._tick()
        while not self._stop.wait(self.every_seconds):
            self._tick()

    def _tick(self) -> None:
        try:
            self._run()
        except Exception:
            log.exception("%s: a tick failed; the next one tries again", self.name)
