"""Where memory is kept: the memory documents, their vectors and read indexes, and lessons held back by a fault."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays
from nightwatch.domain.memory.models import (
    PendingLesson,
)
from nightwatch.domain.models import Persona
from nightwatch.domain.tool_use import ToolSpec
from nightwatch.domain.vectors import VectorTable


@dataclass(frozen=True)
class FolderMove:
    """What a migrate or archive did, as paths relative to the data root (the database store names rows alike)."""

    moved: bool
    source: PurePosixPath | None = None
    target: PurePosixPath | None = None
    set_aside: PurePosixPath | None = None  # a stray folder moved into agents/.archived/ to make room


READING = 7  # figures a PairReader gives each pair (the restatement judge's last seven signals)


@runtime_checkable
class PairReader(Protocol):
    """The encoder reading two texts as one pair (the restatement judge's figures of it)."""

    def alignment(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Seven figures a (older, newer) pair, one row each, in order: how well their words find each other."""
        ...


class MemoryStore(Protocol):
    """Memory documents (files under the data root, or database rows), one per persona and project.

    Every slug is checked; no path leaves the root. Called "the file" below, whichever store keeps it. A store built
    with the persona table at hand refuses a write to a slug no persona holds (MemoryMovedError), so a write that
    raced a rename or delete never lands under the old slug (see `moving`).
    """

    def read(self, persona_slug: str, project_slug: str) -> str:
        """The file's text, or '' when there is none."""
        ...

    def update(self, persona_slug: str, project_slug: str, change: Callable[[str], str]) -> str:
        """Under the file's lock, read the text, write `change(text)` atomically, return the new text.

        When `change` returns the text unchanged, nothing is written.
        """
        ...

    def replace_keeping_previous(self, persona_slug: str, project_slug: str, expected: str, text: str) -> bool:
        """Under the lock: if the file still holds `expected`, keep it as the previous version and write `text`.

        Returns False (and writes nothing) when the file changed meanwhile.
        """
        ...

    def rollback(self, persona_slug: str, project_slug: str) -> bool:
        """Restore the version kept by the last replace_keeping_previous; False when there is none."""
        ...

    def projects(self, persona_slug: str) -> list[str]:
        """Project slugs that have a memory file for this persona."""
        ...

    def location(self, persona_slug: str, project_slug: str) -> str:
        """Where a person finds this memory: a path relative to the data root, or its row in the database."""
        ...

    def read_vectors(self, persona_slug: str, project_slug: str) -> VectorTable:
        """The lesson vectors kept beside this memory (empty when there are none)."""
        ...

    def save_vectors(
        self, persona_slug: str, project_slug: str, table: VectorTable, *, keep: frozenset[str] | None = None
    ) -> None:
        """Under the memory's lock, store the rows of `table` not stored yet; with `keep`, drop every other key."""
        ...

    def read_index(self, persona_slug: str, project_slug: str) -> Arrays:
        """The arrays of the read index last kept beside this memory (empty when there are none or it is damaged).

        An array found damaged only when it is read raises ValueError: the caller takes that as no index.
        """
        ...

    def save_index(self, persona_slug: str, project_slug: str, arrays: Callable[[], Arrays]) -> None:
        """Keep `arrays()` beside this memory as its read index; a store that keeps none returns at once."""
        ...

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        """Move agents/<old>/ to agents/<new>/; a stray target is set aside into agents/.archived/ first.

        A missing source is a no-op (moved=False).
        """
        ...

    def archive(self, slug: str, now: datetime) -> FolderMove:
        """Move agents/<slug>/ to agents/.archived/<slug>-<UTC timestamp>/; missing source is a no-op."""
        ...

    def restore(self, move: FolderMove) -> None:
        """Undo a migrate or archive (used when the database step after it fails)."""
        ...

    def moving(self, *persona_slugs: str) -> AbstractContextManager[None]:
        """Hold off every write to these personas' memories for the block, waiting for those under way first.

        A rename or delete holds it from its memory move to its database change, so a write that waited finds the
        persona renamed or gone: a store built to refuse writes to a slug no persona holds raises MemoryMovedError
        then. A store whose moves and persona rows share one transaction (the database) has the row locks do this.
        """
        ...


@dataclass(frozen=True)
class Forgotten:
    """A lesson a persona forgot with its `memory_forget` tool, kept so that Undo can put it back.

    `kept` is a memory document holding just that lesson with every mark it had (its section, counts, author,
    category, overview), so restoring it is an import of that document (format.merge_imported)."""

    persona_id: int
    persona: str  # its name when it forgot, for showing
    project: str
    lesson_id: str
    text: str
    kept: str
    thread: str
    forgotten_at: datetime
    restored_at: datetime | None = None
    restored_by: str | None = None  # the Slack user id of whoever pressed Undo
    id: int | None = None


class ForgottenLessons(Protocol):
    """Lessons forgotten through the tool, kept (in the database) so they can be restored."""

    def keep(self, forgotten: Forgotten) -> Forgotten:
        """Store it; returns it with its id."""
        ...

    def get(self, forgotten_id: int) -> Forgotten | None: ...

    def mark_restored(self, forgotten_id: int, user: str, now: datetime) -> bool:
        """Record that `user` restored it; False when it was restored already (nothing changes then)."""
        ...


class ForgetTool(Protocol):
    """The `memory_forget` tool of one persona's turn (domain/teaching/forgetting.py makes it)."""

    def run(self, given: Mapping[str, object]) -> tuple[str, str, Forgotten | None]:
        """(text for the model, a short line for people, what was forgotten); InvalidInputError when it cannot."""
        ...


class TurnForgetting(Protocol):
    """Where a turn's `memory_forget` tool comes from: its definition, and the tool bound to one turn."""

    @property
    def spec(self) -> ToolSpec: ...

    def for_turn(self, persona: Persona, project: str, thread: str) -> ForgetTool: ...


class PendingLessons(Protocol):
    """Lessons a memory write could not store, kept (in the database) until a retry writes them. Oldest first."""

    def keep(self, lessons: Sequence[PendingLesson]) -> list[PendingLesson]:
        """Store these lessons together, in order; returns them with their ids."""
        ...

    def waiting(self, persona_slug: str | None = None, project: str | None = None) -> list[PendingLesson]:
        """Kept lessons, oldest first: all of them, or one persona's, or one persona's for one project."""
        ...

    def remove(self, ids: Sequence[int]) -> None:
        """Forget these lessons: a retry wrote them."""
        ...

    def failed(self, ids: Sequence[int], error: str) -> None:
        """Record why the latest retry of these lessons failed."""
        ...

    def move(self, old_slug: str, new_slug: str) -> int:
        """File a renamed persona's kept lessons under its new slug; returns how many moved."""
        ...

    def drop(self, persona_slug: str) -> int:
        """Forget a deleted persona's kept lessons; returns how many."""
        ...


LessonOutcome = Literal["created", "merged", "superseded", "refused"]


class LessonTally(Protocol):
    """Counts what became of each lesson offered to a memory, for an operator (the metrics)."""

    def lessons_counted(self, outcome: LessonOutcome, count: int) -> None:
        """`count` more lessons ended so: a lesson of its own, merged into one it restates, superseding an older
        one, or refused (junk, or a copy of what is remembered already)."""
        ...
