"""Keeps the snapshots of pinned files in step with the disk while the Slack app runs.

A FileWatch (adapters/runtime/watch.py: the operating system's notifications, polling as the fallback) watches every
pinned file; when one changes, is replaced or is deleted, PinService re-reads it or flags it missing, so the next turn
(on any replica: the snapshot is in the database) sees it, and `pin list` shows a deleted file at once. The set of
watched files follows the pins: at once when this process pins or unpins (`sync`), and every `sync_seconds` for pins the
CLI or another replica added; a file seen for the first time (every file, at start-up) is checked right away, so an edit
made while the app was down is not missed. Turns check each file's stamp anyway, so a change a watch misses is still
seen by the next turn.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from nightwatch.adapters.runtime import FileWatch, Ticker
from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.pins import PinService

log = logging.getLogger(__name__)

SYNC_SECONDS = 30.0


class PinWatch:
    """Watches the pinned files and tells PinService which changed, from two daemon threads, until `stop`."""

    def __init__(
        self,
        *,
        pins: PinService,
        sync_seconds: float = SYNC_SECONDS,
        debounce_ms: int = 100,
        force_polling: bool | None = None,
    ) -> None:
        self._pins = pins
        self._watch = FileWatch(
            "nightwatch-pin-watch", self._changed, debounce_ms=debounce_ms, force_polling=force_polling
        )
        self._ticker = Ticker("nightwatch-pin-sync", self.sync, sync_seconds, at_start=True)
        self._known: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def watched(self) -> frozenset[str]:
        """The files watched now."""
        return self._known

    def start(self) -> None:
        """Start watching; the first sync (every pinned file, checked once) runs on the sync thread."""
        self._watch.start()
        self._ticker.start()

    def stop(self) -> None:
        self._ticker.stop()
        self._watch.stop()

    def sync(self) -> None:
        """Watch exactly the files pinned now; check the ones not watched before. A failure is logged, not raised."""
        try:
            with self._lock:
                files = frozenset(self._pins.watched_files())
                new = files - self._known
                self._known = files
            self._watch.watch(files=[Path(path) for path in files])
            # A file gone since the last sync is checked too: a notification can be missed (a busy machine, a
            # watch restarted), and a stat per pinned file every sync_seconds is cheap.
            gone = {path for path in files - new if not os.path.lexists(path)}
            if new or gone:
                changed = self._pins.changed(new | gone)
                if new or changed:
                    log.info("watching %d pinned files (%d new, %d changed since read)", len(files), len(new), changed)
        except (NightWatchError, OSError) as err:
            log.warning("could not update the watch of pinned files (%s); the next sync tries again", err)

    def _changed(self, paths: frozenset[Path]) -> None:
        changed = self._pins.changed({str(path) for path in paths})
        if changed:
            log.info("%d pinned files changed on disk; their snapshots were updated", changed)
