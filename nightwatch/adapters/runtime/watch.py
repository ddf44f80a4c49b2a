"""A daemon thread that tells a callback which watched files changed on disk: pinned files, persona files.

Built on `watchfiles` (the operating system's notifications: inotify, FSEvents, ReadDirectoryChangesW). It watches
the folder each watched file sits in, not the file itself, so an editor that saves by writing a new file and renaming
it over the old one is still seen, and so is a file that is deleted or created later. Polling is the fallback: when
the notifications fail (no inotify watches left, a network file system), the watch logs it once and polls.

The set of watched paths can change while it runs (`watch`); a folder that does not exist yet is looked for again
every `recheck_seconds`, and watched from when it appears.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import watchfiles

log = logging.getLogger(__name__)

Changed = Callable[[frozenset[Path]], None]


class FileWatch:
    """Calls `on_change(paths)` from a daemon thread with the watched paths that changed (files, or files directly
    inside a watched folder), until `stop`.

    A failing callback is logged and the watch goes on. `force_polling` forces the fallback (tests use it to cover
    it); `None` lets watchfiles choose, which honours `WATCHFILES_FORCE_POLLING`.
    """

    def __init__(
        self,
        name: str,
        on_change: Changed,
        *,
        debounce_ms: int = 100,
        recheck_seconds: float = 1.0,
        force_polling: bool | None = None,
    ) -> None:
        self.name = name
        self._on_change = on_change
        self._debounce_ms = debounce_ms
        self._recheck_ms = max(1, int(recheck_seconds * 1000))
        self._force_polling = force_polling
        self._files: frozenset[Path] = frozenset()
        self._folders: frozenset[Path] = frozenset()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def polling(self) -> bool:
        """Whether the watch polls (forced, or fallen back to after the notifications failed)."""
        return bool(self._force_polling)

    def watch(self, files: Iterable[Path] = (), folders: Iterable[Path] = ()) -> None:
        """Watch exactly these files and folders from now on (paths are made absolute; links are not followed)."""
        new_files = frozenset(_absolute(path) for path in files)
        new_folders = frozenset(_absolute(path) for path in folders)
        with self._lock:
            if (new_files, new_folders) == (self._files, self._folders):
                return
            self._files, self._folders = new_files, new_folders
        self._restart.set()

    def start(self) -> None:
        """Start the thread (a second start while it runs does nothing)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and wait for the thread up to `timeout`."""
        self._stop.set()
        self._restart.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._restart.clear()
            with self._lock:
                files, folders = self._files, self._folders
            roots = sorted({path.parent for path in files} | set(folders))
            present = [root for root in roots if root.is_dir()]
            if not present:
                self._restart.wait(self._recheck_ms / 1000)
                continue
            try:
                self._watch(present, missing=len(present) < len(roots), files=files, folders=folders)
            except Exception as err:  # the notify backend raises untyped errors
                if self._force_polling:
                    log.exception("%s: watching failed; trying again in %.0f s", self.name, self._recheck_ms / 1000)
                    self._stop.wait(self._recheck_ms / 1000)
                else:
                    log.warning("%s: file notifications failed (%s); polling instead", self.name, err)
                    self._force_polling = True

    def _watch(self, roots: list[Path], *, missing: bool, files: frozenset[Path], folders: frozenset[Path]) -> None:
        """Watch `roots` until a restart is asked for, or every recheck when a root is missing (it may appear)."""
        for batch in watchfiles.watch(
            *roots,
            debounce=self._debounce_ms,
            step=50,
            stop_event=self._restart,
            rust_timeout=self._recheck_ms if missing else 0,
            yield_on_timeout=missing,
            recursive=False,
            force_polling=self._force_polling,
            poll_delay_ms=min(300, self._recheck_ms),
            ignore_permission_denied=True,
            raise_interrupt=False,
        ):
            if not batch:  # a timeout: look for the missing folders again
                return
            changed = frozenset(
                path for path in (_absolute(Path(raw)) for _, raw in batch) if path in files or path.parent in folders
            )
            if changed:
                self._notify(changed)

    def _notify(self, changed: frozenset[Path]) -> None:
        try:
            self._on_change(changed)
        except Exception:
            log.exception("%s: handling a change to %s failed", self.name, ", ".join(sorted(map(str, changed))))


def _absolute(path: Path) -> Path:
    return Path(path).absolute()
