"""The settings of a running app, and which of them change without a restart.

`LiveSettings` holds the settings now: those of start-up, with the reloadable ones (`RELOADABLE`) replaced each time
`reload()` reads the environment and the settings file again (`nightwatch run` does on SIGHUP and when the file
changes). `current()` returns one immutable `Settings`: a deliberation takes its policy from it once, when it starts,
so it finishes with the settings it started with; the admins check takes it at each click.

A reload whose file is refused (a bad line, an unknown name, a bad value) changes nothing and says why in one log
line. A changed setting that only a restart applies (tokens, DATABASE_URL, the memory store, workers, ...) is logged
as such and left as it was.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nightwatch.config import Settings
from nightwatch.domain.errors import ConfigError

log = logging.getLogger(__name__)


def _shown(value: object) -> str:
    if value is None:
        return "(default)"
    if isinstance(value, frozenset):
        return ", ".join(sorted(value)) or "(none)"
    return str(value)


@dataclass(frozen=True)
class Reloadable:
    """A setting that a reload changes: its variable, a label for the log, and where it sits in Settings."""

    variable: str
    label: str
    section: str | None  # the Settings field holding it ("memory", "deliberation", "slack"), or None at the top
    field: str
    unset: Any = None  # what an unset value means in the running app

    def get(self, settings: Settings) -> Any:
        holder = getattr(settings, self.section) if self.section else settings
        value = getattr(holder, self.field)
        return self.unset if value is None else value

    def put(self, settings: Settings, value: Any) -> Settings:
        if self.section is None:
            return dataclasses.replace(settings, **{self.field: value})
        holder = dataclasses.replace(getattr(settings, self.section), **{self.field: value})
        return dataclasses.replace(settings, **{self.section: holder})


RELOADABLE = (
    Reloadable("NIGHTWATCH_MEMORY_TOKEN_BUDGET", "memory token budget", "memory", "token_budget"),
    Reloadable("NIGHTWATCH_SHARED_TOKEN_BUDGET", "shared token budget", "memory", "shared_token_budget"),
    Reloadable("NIGHTWATCH_PIN_TOKEN_BUDGET", "pin token budget", "pins", "token_budget"),
    Reloadable("NIGHTWATCH_MAX_ROUNDS", "max rounds", "deliberation", "max_rounds"),
    Reloadable("NIGHTWATCH_MAX_REPLIES", "max replies", "deliberation", "max_replies"),
    Reloadable("NIGHTWATCH_LEAD", "lead", "deliberation", "lead"),
    Reloadable("NIGHTWATCH_TURN_RETRIES", "turn retries", "deliberation", "turn_retries"),
    Reloadable("NIGHTWATCH_ADMINS", "admins", "slack", "admins"),
    Reloadable("NIGHTWATCH_TEACHERS", "teachers", "slack", "teachers"),
    Reloadable(
        "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES", "proactive interval (minutes)", "slack", "proactive_interval_minutes"
    ),
    Reloadable(
        "NIGHTWATCH_PROACTIVE_QUIET_MINUTES", "proactive quiet time (minutes)", "slack", "proactive_quiet_minutes"
    ),
    Reloadable("NIGHTWATCH_LESSON_NOTES", "lesson notes", "slack", "lesson_notes"),
    Reloadable("NIGHTWATCH_TURN_WORDS", "turn words", "deliberation", "turn_words"),
    Reloadable("NIGHTWATCH_LOG_LEVEL", "log level", None, "log_level", unset="INFO"),  # `run` logs at INFO
)
RELOADABLE_VARIABLES = frozenset(item.variable for item in RELOADABLE)


@dataclass(frozen=True)
class Reloaded:
    """What one reload did: the settings now, each change ("max rounds 2 → 3"), and what waits for a restart."""

    settings: Settings
    changes: tuple[str, ...] = ()
    restart_needed: tuple[str, ...] = ()  # variable names
    refused: str | None = None  # why the file was refused (nothing changed)


class LiveSettings:
    """The settings now; `reload` swaps in the reloadable ones from the environment and the settings file."""

    def __init__(self, settings: Settings, *, load: Callable[[], Settings] = Settings.from_env) -> None:
        self._settings = settings
        self._load = load
        self._lock = threading.Lock()

    def current(self) -> Settings:
        """The settings now (immutable: hold on to it for as long as one piece of work should see the same)."""
        return self._settings

    def reload(self) -> Reloaded:
        """Read the settings again; apply what may change now, log each change, and log what needs a restart."""
        with self._lock:
            old = self._settings
            try:
                new = self._load()
            except ConfigError as err:
                return _refused(old, str(err))
            applied, changes = old, []
            for item in RELOADABLE:
                before, after = item.get(old), item.get(new)
                if before != after:
                    applied = item.put(applied, after)
                    changes.append(f"{item.label} {_shown(before)} → {_shown(after)}")
            applied = dataclasses.replace(applied, file_values=new.file_values)
            restart = _restart_only_changes(old, new)
            self._settings = applied
        if applied.log_level != old.log_level:
            logging.getLogger().setLevel(applied.log_level or "INFO")
        if changes:
            log.info("Reloaded settings: %s", "; ".join(changes))
        for name in restart:
            log.warning(
                "%s changed; it takes effect only after a restart, so the running app keeps the old value", name
            )
        if not changes and not restart:
            log.info("Settings reloaded: nothing changed")
        return Reloaded(applied, tuple(changes), restart)


def _refused(settings: Settings, why: str) -> Reloaded:
    log.error("Settings not reloaded, the old ones stay: %s", why)  # one line: the message says what to fix
    return Reloaded(settings, refused=why)


def _restart_only_changes(old: Settings, new: Settings) -> tuple[str, ...]:
    """The names the settings file changed (set, changed or removed) that only a restart applies.

    Nothing when the settings a restart would apply come out the same (a line that sets what the environment had).
    """
    if _without_reloadable(old) == _without_reloadable(new):
        return ()
    names = set(old.file_values) | set(new.file_values)
    changed = {name for name in names if old.file_values.get(name) != new.file_values.get(name)}
    return tuple(sorted(changed - RELOADABLE_VARIABLES))


def _without_reloadable(settings: Settings) -> Settings:
    blank = Settings(home=settings.home, database_url=settings.database_url, llm=settings.llm)
    for item in RELOADABLE:
        settings = item.put(settings, item.get(blank))
    return settings
