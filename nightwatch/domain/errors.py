"""Night Watch's one exception tree; every message says what went wrong and what to do next.

NightWatchError
├── ConfigError                 a setting is missing or malformed (names the variable)
├── InvalidInputError           a name, slug, lesson or payload a user gave is unusable
│   └── InvalidNameError        a persona or project name breaks the naming rules
├── NotFoundError               a persona, lesson or deliberation does not exist
├── ConflictError               the change would clash with what exists (duplicate name)
├── PermissionDeniedError       the caller may not do this (admin-only actions)
├── BusyError                   no capacity right now (worker pool full); try again later
├── StorageError                the memory folder or database could not be changed
│   ├── LessonsPendingError     lessons could not be written to memory; they are kept and will be retried
│   └── MemoryMovedError        a write reached a persona's memory after a rename or delete; nothing was written
├── FetchError                  a page to pin could not be fetched (timeout, refused connection, an error status)
└── LLMError                    the model could not give a usable answer
    ├── LLMUnavailableError     timeouts, rate limits, overload, 5xx after retries
    └── LLMOutputError          the answer did not have the shape that was asked for
"""

from __future__ import annotations


class NightWatchError(Exception):
    """Base of every error Night Watch raises on purpose."""


class ConfigError(NightWatchError):
    """A setting is missing or malformed."""


class InvalidInputError(NightWatchError):
    """Input from a user cannot be used as given."""


class InvalidNameError(InvalidInputError):
    """A persona or project name breaks the naming rules."""


class NotFoundError(NightWatchError):
    """The thing asked for does not exist."""


class ConflictError(NightWatchError):
    """The change would clash with something that already exists."""


class PermissionDeniedError(NightWatchError):
    """The caller is not allowed to do this."""


class BusyError(NightWatchError):
    """There is no capacity to take the work right now."""


class StorageError(NightWatchError):
    """The memory folder or the database could not be changed."""


class LessonsPendingError(StorageError):
    """Lessons could not be written to memory; they are kept in the database and retried later."""

    def __init__(self, message: str, *, persona: str, project: str, count: int) -> None:
        super().__init__(message)
        self.persona = persona
        self.project = project
        self.count = count


class MemoryMovedError(StorageError):
    """A write reached a persona's memory by a name no persona holds any more (renamed or deleted meanwhile).

    Nothing was written, and nothing is kept for a retry: under the old name the lessons would be lost again, or go
    to a persona created later with that name.
    """


class FetchError(NightWatchError):
    """A page to pin could not be fetched; nothing was stored."""


class LLMError(NightWatchError):
    """The model could not give a usable answer."""


class LLMUnavailableError(LLMError):
    """The model did not answer in time or refused service after retries."""


class LLMOutputError(LLMError):
    """The model answered, but not in the shape that was asked for."""
