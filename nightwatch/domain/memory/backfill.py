"""Embedding, in the background, the lessons a read found without a stored vector (typed into the file by hand).

A read never embeds lessons: it scores such a lesson on keywords alone and asks for a backfill, which runs on one
daemon thread, once per memory at a time. The next write to that memory embeds them too, so nothing depends on the
thread finishing (a short command may exit first).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)


class Backfill(Protocol):
    def request(self, persona_slug: str, project: str) -> None:
        """Embed this memory's lessons that lack vectors, soon; return at once."""
        ...


class BackgroundBackfill:
    """Runs `work(persona_slug, project)` on one daemon thread; a memory already waiting is not queued twice."""

    def __init__(self, work: Callable[[str, str], int]) -> None:
        self._work = work
        self._waiting: list[tuple[str, str]] = []
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False

    def request(self, persona_slug: str, project: str) -> None:
        with self._condition:
            if (persona_slug, project) not in self._waiting:
                self._waiting.append((persona_slug, project))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="nightwatch-backfill", daemon=True)
                self._thread.start()
            self._condition.notify()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is waiting or running; False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._waiting))
                memory = self._waiting.pop(0)
                self._busy = True
            try:
                added = self._work(*memory)
                if added:
                    log.info("Embedded %d hand-written lessons of %s/%s", added, *memory)
            except Exception:
                log.exception("Could not embed the new lessons of %s/%s; the next write will try again", *memory)
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()
