"""Hot reload for `nightwatch run`: settings and persona files are read again on SIGHUP and when they change on disk.

The file watch (watch.py) watches the settings file (NIGHTWATCH_SETTINGS_FILE) and the persona folders; a change to
the settings file reloads the settings (live_settings.py), a change in a persona folder applies the persona files
(domain/personas/files.py), and SIGHUP does both. Reloads run one at a time, off the signal handler, and each says
what it did in the log: "Reloaded settings: max rounds 2 → 3", "Reloaded persona Maya from personas/maya.yml". A
file that cannot be used is refused with one log line, and what it held before stays.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from nightwatch.adapters.persona_files import FolderScan, PersonaFolders
from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.personas import FileApplied, FileOutcome, PersonaService
from nightwatch.live_settings import LiveSettings

log = logging.getLogger(__name__)

PERSONA_SUFFIX = ".yml"


class HotReload:
    """Reloads settings and persona files: `request()` (from SIGHUP), or by itself on a file change once started."""

    def __init__(
        self,
        *,
        live: LiveSettings,
        personas: PersonaService,
        folders: PersonaFolders,
        debounce_ms: int = 100,
        recheck_seconds: float = 1.0,
    ) -> None:
        from nightwatch.adapters.runtime.watch import (
            FileWatch,  # watchfiles loads in ~75 ms: only `nightwatch run` needs it
        )

        self._live = live
        self._personas = personas
        self._folders = folders
        self._watch = FileWatch(
            "nightwatch-reload", self.changed, debounce_ms=debounce_ms, recheck_seconds=recheck_seconds
        )
        self._lock = threading.Lock()  # one reload at a time

    def start(self) -> None:
        """Watch the settings file and the persona folders."""
        settings_file = self._live.current().settings_file
        self._watch.watch(files=[settings_file] if settings_file else [], folders=self._folders.folders)
        self._watch.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching, and wait up to `timeout` for a reload under way (before the database goes away)."""
        self._watch.stop()
        if self._lock.acquire(timeout=timeout):
            self._lock.release()

    def request(self) -> threading.Thread:
        """Reload everything on a thread of its own (a signal handler must return at once); returns the thread."""
        thread = threading.Thread(target=self.reload, name="nightwatch-reload-request", daemon=True)
        thread.start()
        return thread

    def reload(self) -> None:
        """Reload the settings and the persona files now."""
        with self._lock:
            log.info("Reloading settings and persona files")
            self._live.reload()
            self._apply_personas()

    def changed(self, paths: frozenset[Path]) -> None:
        """The watch's callback: reload what the changed paths hold."""
        settings_file = self._live.current().settings_file
        folders = {folder.absolute() for folder in self._folders.folders}
        with self._lock:
            if settings_file is not None and settings_file.absolute() in paths:
                self._live.reload()
            if any(path.parent in folders and path.suffix == PERSONA_SUFFIX for path in paths):
                self._apply_personas()

    def _apply_personas(self) -> None:
        try:
            scan = self._folders.scan()
            applied = self._personas.apply_files(scan.files)
        except (NightWatchError, OSError) as err:  # the database or a folder is unreachable: try at the next change
            _not_applied(err)
            return
        report_persona_files(scan, applied)


def _not_applied(error: Exception) -> None:
    log.error("Persona files not applied, the personas stay as they were: %s", error)  # the message says what to do


def report_persona_files(scan: FolderScan, applied: Sequence[FileApplied], *, starting: bool = False) -> None:
    """Log what a scan of the persona files and applying them did, one line for each thing worth saying."""
    for refused in scan.refused:
        kept = f"; {refused.kept.name} stays as it was" if refused.kept is not None else ""
        log.error("Persona file refused%s: %s", kept, refused.why)
    if not starting:
        for file in scan.overridden:
            log.info("%s is replaced by a file in NIGHTWATCH_PERSONAS_DIR", file.source)
    elif scan.overridden:
        log.info(
            "Default persona files replaced by NIGHTWATCH_PERSONAS_DIR: %s",
            ", ".join(f.source for f in scan.overridden),
        )
    for file in scan.removed:
        log.info(
            "%s was removed; %s stays (personas live in the database once added: delete it in Slack or with "
            "`nightwatch personas delete`)",
            file.source,
            file.persona.name,
        )
    added = [item for item in applied if item.outcome is FileOutcome.ADDED]
    if starting and added:  # a new data folder adds every default: one line
        log.info("Added personas from their files: %s", ", ".join(item.file.persona.name for item in added))
    for item in applied:
        if not (starting and item.outcome is FileOutcome.ADDED):
            _report(item)


def _report(item: FileApplied) -> None:
    name, source = item.file.persona.name, item.file.source
    if item.outcome is FileOutcome.ADDED:
        log.info("Added persona %s from %s", name, source)
    elif item.outcome is FileOutcome.UPDATED:
        log.info("Reloaded persona %s from %s", name, source)
    elif item.outcome is FileOutcome.EDITED and item.pending:
        log.warning(
            "Persona %s is not what a file last set (it was changed in Slack or the CLI, or made there), so %s is "
            "not applied to it; change the persona in Slack or the CLI instead",
            name,
            source,
        )
    elif item.outcome is FileOutcome.DELETED and item.pending:
        log.info("Persona %s was deleted in the workspace and stays deleted; %s is not applied", name, source)
    elif item.outcome is FileOutcome.TAKEN:
        log.info("Persona %s from %s not added: a persona with that name exists", name, source)
