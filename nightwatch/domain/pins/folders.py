"""Pinning a folder or a glob: every file it names becomes a pin of its own, read under the same rules as one file.

A folder pins its own files (`recursive`: those below it too); a glob (`docs/*.md`, `docs/**/*.md`) pins the files
it matches. At most PIN_FILES_MAX files per call, so a mistyped `/` cannot pin a disk; more is refused whole with a
message that says how to narrow it. A file that cannot be pinned (not UTF-8 text, too large) is skipped with its
reason; the others are pinned.
"""

from __future__ import annotations

from dataclasses import dataclass

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.pins.models import PinKind
from nightwatch.domain.pins.ports import PinFiles
from nightwatch.domain.pins.service import PinOutcome, PinService

PIN_FILES_MAX = 50  # files one `pin add DIR|GLOB` may pin
_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class PinnedFiles:
    """What pinning a folder or glob did: a pin for each file read, and each file skipped with why."""

    outcomes: tuple[PinOutcome, ...]
    skipped: tuple[str, ...] = ()

    @property
    def messages(self) -> tuple[str, ...]:
        return (*(outcome.message for outcome in self.outcomes), *self.skipped)


def is_glob(path: str) -> bool:
    """Whether `path` is a pattern (`*`, `?` or `[`) rather than one file's or folder's path."""
    return not _GLOB.isdisjoint(path)


def pin_files(
    pins: PinService,
    files: PinFiles,
    persona: str | None,
    project: str,
    path: str,
    *,
    added_by: str,
    anywhere: bool = False,
    recursive: bool = False,
) -> PinnedFiles:
    """Pin every file the folder or glob `path` names for `persona` (None or "all": every persona) on `project`."""
    found = files.expand(path, anywhere=anywhere, recursive=recursive, limit=PIN_FILES_MAX)
    if len(found) == 1 and found[0] == path and not is_glob(path):  # one file: pinned, or refused, as always
        return PinnedFiles((pins.add(persona, project, PinKind.FILE, path, added_by=added_by, anywhere=anywhere),))
    outcomes: list[PinOutcome] = []
    skipped: list[str] = []
    for file in found:
        try:
            outcomes.append(pins.add(persona, project, PinKind.FILE, file, added_by=added_by, anywhere=anywhere))
        except InvalidInputError as error:
            skipped.append(f"Skipped {file}: {error}")
    return PinnedFiles(tuple(outcomes), tuple(skipped))
