"""Where pins are kept, and the files and pages they are read from."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Protocol

from nightwatch.domain.pins.models import Pin, PinKind


class PinRepository(Protocol):
    """Pinned context (models.Pin), oldest first. A persona's pins are deleted with it (PersonaRepository.remove).

    There is at most one pin per persona (or project-wide), project and `key` (see `pin_key`).
    """

    def add(self, pin: Pin, key: str) -> tuple[Pin, bool]:
        """Store the pin; when one with the same persona, project and key exists, replace its snapshot instead.

        Returns the stored pin (with its id) and whether it is new. A new pin's id is higher than any id given
        before, removed pins' included: `pin remove N` names a pin by it, so a number is never given twice.
        """
        ...

    def get(self, pin_id: int) -> Pin | None: ...

    def list(self, *, project: str | None = None, kind: PinKind | None = None) -> builtins.list[Pin]:
        """Every pin, or one project's, or one kind's."""
        ...

    def for_persona(self, persona_id: int, project: str) -> builtins.list[Pin]:
        """The pins a persona gets on a project: its own and the project-wide ones."""
        ...

    def update(self, pin: Pin) -> Pin | None:
        """Store a new snapshot or status of the pin with `pin.id` (content, hash, stamp, read_at, status, problem).

        Returns it, or None when the pin was removed meanwhile.
        """
        ...

    def remove(self, pin_id: int) -> Pin | None:
        """Delete the pin; returns it, or None when there was none."""
        ...


@dataclass(frozen=True)
class PinSnapshot:
    """What reading a pinned file or fetching a pinned page gave: where it was found, its text (redacted), its stamp.

    `source` is the file's absolute path (a path relative to a root is resolved) or the URL the page came from.
    `stamp` identifies the version of a file that was read; pages have none.
    """

    source: str
    text: str
    stamp: str | None = None


class PinFiles(Protocol):
    """Files to pin, read safely: a regular file of text, under NIGHTWATCH_PIN_ROOTS, reached without a link.

    Every refusal raises InvalidInputError (NotFoundError for a missing file) with a message saying what to do.
    """

    def read(self, path: str, *, anywhere: bool) -> PinSnapshot:
        """Read the file at `path`: absolute, or relative to a root (the roots are tried in order).

        With no roots configured, only `anywhere` (the person at the machine: the CLI, or re-reading a file pinned
        from it) may read a file, and then any file they can read; with roots, every read is held to them.
        """
        ...

    def expand(self, path: str, *, anywhere: bool, recursive: bool, limit: int) -> list[str]:
        """The files a folder (its own, or every one below it with `recursive`) or a glob (`docs/*.md`, `**` for any
        depth) names, sorted, as absolute paths; `[path]` for one file. Held to the roots as `read` is; links are
        not followed. InvalidInputError when more than `limit` files match, NotFoundError when none does.
        """
        ...

    def stamp(self, path: str) -> str | None:
        """The stamp of the file at `path` now (compare with PinSnapshot.stamp), or None when it is missing.

        Raises InvalidInputError when it is there but could not be pinned now (a link, a folder, too large).
        """
        ...


class PinPages(Protocol):
    """Web pages to pin: fetched once, over http(s), as plain text."""

    def fetch(self, url: str) -> PinSnapshot:
        """Fetch the page; raise InvalidInputError (a refused address, not text, too large) or NotFoundError."""
        ...
