"""Waiting in tests: the one helper that polls until a condition holds.

Tests that start threads, processes, watches or servers wait for what those do, and they all wait through
`wait_until`, so a wait reads the same everywhere and a timeout fails the same way: `WaitTimeoutError` (an
AssertionError) naming what never happened.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

WAIT = 10.0  # seconds: generous, since a loaded machine delays threads, processes and file notifications


class WaitTimeoutError(AssertionError):
    """A condition a test waited for did not hold in time."""


def wait_until(
    condition: Callable[[], T | None],
    what: str | Callable[[], str],
    *,
    timeout: float = WAIT,
    interval: float = 0.05,
    nudge: Callable[[int], object] | None = None,
    nudge_every: float = 1.0,
    wake: threading.Condition | None = None,
) -> T:
    """Polls `condition` until it returns a true value, and returns that value; fails after `timeout` seconds.

    `what` names the awaited event in the failure ("the watch to apply maya.yml"); a callable is asked only then, so
    the message can show the state at that moment (a log's tail). `condition` may itself fail the test early (a
    process that exited while awaited). `nudge`, when given, is called with 1, 2, ... first and then every
    `nudge_every` seconds: it repeats a change until it is seen (a watch may start after the first write, and a file
    system may keep modification times to the second). `wake` is a condition variable that others notify when
    something changed: waiting on it instead of sleeping ends the pause early. `condition` is always called without
    holding it, so it may itself take the lock or call a server.
    """
    start = time.monotonic()
    deadline = start + timeout
    nudges, next_nudge = 0, start
    while True:
        if nudge is not None and time.monotonic() >= next_nudge:
            nudges += 1
            nudge(nudges)
            next_nudge = time.monotonic() + nudge_every
        value = condition()
        if value:
            return value
        now = time.monotonic()
        if now >= deadline:
            described = what() if callable(what) else what
            raise WaitTimeoutError(f"timed out after {timeout:g} s waiting for {described}")
        pause = min(interval, deadline - now, next_nudge - now if nudge is not None else interval)
        _pause(max(pause, 0.0), wake)


def _pause(seconds: float, wake: threading.Condition | None) -> None:
    if wake is None:
        time.sleep(seconds)
        return
    with wake:
        wake.wait(seconds)
