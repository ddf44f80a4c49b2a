"""A bounded worker pool for deliberations: it refuses work when full instead of queueing it unseen.

Each job runs on a daemon thread of its own, so a job stuck in a model call never keeps a stopping process alive:
by then its deliberation has been handed over (see threads.py), and whatever it would still post is refused.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class WorkerPool:
    """Runs jobs on at most `size` threads; `try_submit` says False when every thread is busy or the pool stops."""

    def __init__(self, *, size: int, name: str = "nightwatch-worker") -> None:
        self.size = size
        self._name = name
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running = 0
        self._accepting = True
        self.stopping = threading.Event()  # set when the grace period is over: running jobs checkpoint and end

    @property
    def running(self) -> int:
        """How many jobs are running now."""
        with self._lock:
            return self._running

    def try_submit(self, job: Callable[[], None]) -> bool:
        """Start `job` on a free thread; False (and nothing started) when the pool is full or stopping."""
        with self._lock:
            if not self._accepting or self._running >= self.size:
                return False
            self._running += 1
        name = f"{self._name}_{next(self._numbers)}"
        try:
            threading.Thread(target=self._run, args=(job,), name=name, daemon=True).start()
        except RuntimeError:  # no thread could be started (the interpreter is exiting, or out of threads)
            self._finished()
            return False
        return True

    def _run(self, job: Callable[[], None]) -> None:
        try:
            job()
        except Exception:  # a job's failure is its own; the pool keeps serving
            log.exception("a background job failed")
        finally:
            self._finished()

    def _finished(self) -> None:
        with self._lock:
            self._running -= 1
            self._idle.notify_all()

    def stop_accepting(self) -> None:
        """Refuse new jobs from now on; running ones carry on."""
        with self._lock:
            self._accepting = False

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for running jobs to end; True when none is left."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def shutdown(self, grace_seconds: float, checkpoint_seconds: float = 15.0) -> bool:
        """Stop accepting; give running jobs `grace_seconds` to finish, then ask them to checkpoint and wait
        `checkpoint_seconds` more. Returns True when every job ended; stragglers are left to end on their own (their
        threads are daemons: they do not keep the process alive).
        """
        self.stop_accepting()
        finished = self.wait_idle(grace_seconds)
        if not finished:
            self.stopping.set()
            finished = self.wait_idle(checkpoint_seconds)
        return finished
