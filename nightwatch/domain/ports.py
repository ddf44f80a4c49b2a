"""The Protocols the domain needs from the outside world. Adapters implement them; tests/fakes.py fakes them."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays
from nightwatch.domain.inputs import whole_number
from nightwatch.domain.models import (
    Deliberation,
    DeliberationStatus,
    LLMRequest,
    LLMResponse,
    PendingLesson,
    Persona,
    Pin,
    PinKind,
    Share,
    ThreadMessage,
    Turn,
    Usage,
    Verdict,
)
from nightwatch.domain.vectors import VectorTable


class Clock(Protocol):
    def now(self) -> datetime:
        """Return the current time, timezone-aware UTC."""
        ...


class LLM(Protocol):
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer one request; raise LLMUnavailableError / LLMOutputError when it cannot."""
        ...


class Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return one unit vector per text, as the rows of a (len(texts), dimensions) float32 matrix, in order."""
        ...


class PersonaRepository(Protocol):
    def list(self, *, include_inactive: bool = True) -> list[Persona]: ...

    def get(self, persona_id: int) -> Persona | None: ...

    def find(self, name_or_slug: str) -> Persona | None:
        """Match a name ignoring case, or a slug."""
        ...

    def add(self, persona: Persona) -> Persona:
        """Insert; raise ConflictError when the name (ignoring case) or slug is taken. Returns it with its id."""
        ...

    def save(self, persona: Persona) -> Persona:
        """Update the persona with `persona.id`; raise ConflictError / NotFoundError."""
        ...

    def remove(self, persona_id: int) -> None:
        """Delete the persona and, in the same transaction, the shares it gives or receives and its own pins."""
        ...

    def file_marks(self) -> dict[str, str | None]:
        """Every persona ever added from a file, by slug, with the fingerprint of what a file last set (or None).

        A mark stays when its persona is deleted, so a deleted persona is not added from its file again.
        """
        ...

    def mark_file(self, slug: str, fingerprint: str | None) -> None:
        """Record (or update) the mark of `slug` with the fingerprint of what its file set."""
        ...


@dataclass(frozen=True)
class FolderMove:
    """What a migrate or archive did, as paths relative to the data root (the database store names rows alike)."""

    moved: bool
    source: PurePosixPath | None = None
    target: PurePosixPath | None = None
    set_aside: PurePosixPath | None = None  # a stray folder moved into agents/.archived/ to make room


class MemoryStore(Protocol):
    """Memory documents (files under the data root, or database rows), one per persona and project.

    Every slug is checked; no path leaves the root. Called "the file" below, whichever store keeps it.
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


class PersonaTransaction(Protocol):
    """A persona's row, its memory, its kept lessons, its shares and its pins, changed in one database transaction."""

    @property
    def personas(self) -> PersonaRepository: ...

    @property
    def memory(self) -> MemoryStore: ...

    @property
    def pending(self) -> PendingLessons: ...

    @property
    def pins(self) -> PinRepository: ...

    @property
    def shares(self) -> ShareRepository: ...


class PersonaTransactions(Protocol):
    """Where memory lives in the personas' own database: renames and deletes move it in the persona's transaction."""

    def begin(self) -> AbstractContextManager[PersonaTransaction]:
        """Open one transaction: it commits when the block ends, and when the block raises nothing has changed."""
        ...


RECENT_MAX = 200  # the most deliberations DeliberationLog.recent returns at once


def recent_limit(raw: object) -> int:
    """Return `raw` as a limit for DeliberationLog.recent, or raise InvalidInputError: a whole number from 1 to 200."""
    return whole_number(raw, what="The number of deliberations to list", low=1, high=RECENT_MAX)


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


class ShareRepository(Protocol):
    """Shares of persona knowledge (models.Share), keyed by persona ids; oldest first.

    A persona's shares, given and received, are deleted with it (PersonaRepository.remove).
    """

    def put(self, share: Share) -> Share | None:
        """Store the share, or set `what` on the one with the same sharer, receiver and project.

        Returns the share it replaced, or None when the share is new.
        """
        ...

    def remove(self, sharer_id: int, receiver_id: int | None, project: str) -> Share | None:
        """Delete that share; returns it, or None when there was none."""
        ...

    def list(self, *, project: str | None = None, persona_id: int | None = None) -> list[Share]:
        """Every share, or one project's, or those naming this persona as sharer or receiver (not those to all)."""
        ...

    def received(self, receiver_id: int, project: str) -> builtins.list[Share]:
        """The shares open to this persona on this project: those naming it and those to every persona."""
        ...


class PinRepository(Protocol):
    """Pinned context (models.Pin), oldest first. A persona's pins are deleted with it (PersonaRepository.remove).

    There is at most one pin per persona (or project-wide), project and `key` (see `pin_key`).
    """

    def add(self, pin: Pin, key: str) -> tuple[Pin, bool]:
        """Store the pin; when one with the same persona, project and key exists, replace its snapshot instead.

        Returns the stored pin (with its id) and whether it is new.
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


class DeliberationLog(Protocol):
    """Stored deliberations, turns, verdicts, thread summaries and token usage."""

    def start(self, deliberation: Deliberation) -> Deliberation: ...

    def add_turn(self, deliberation_id: int, turn: Turn) -> None: ...

    def add_usage(self, deliberation_id: int, usage: Usage) -> None: ...

    def finish(
        self, deliberation_id: int, status: DeliberationStatus, verdict: Verdict | None, now: datetime
    ) -> None: ...

    def get(self, deliberation_id: int) -> Deliberation | None: ...

    def turns(self, deliberation_id: int) -> list[Turn]: ...

    def recent(self, limit: int = 10, thread_prefix: str | None = None) -> list[Deliberation]:
        """The newest `limit` deliberations (1 to RECENT_MAX; anything else raises InvalidInputError), newest first."""
        ...

    def running(self, idle_since: datetime | None = None) -> list[Deliberation]:
        """RUNNING deliberations; with `idle_since`, only those with no start or turn since then."""
        ...

    def interrupt(self, deliberation_id: int, now: datetime) -> bool:
        """Mark the deliberation INTERRUPTED if it is still RUNNING; False when it had ended meanwhile."""
        ...

    def renew(self, owner: str, threads: Sequence[str], now: datetime) -> int:
        """Renew the lease of the RUNNING leased deliberations `owner` holds in `threads`; returns how many."""
        ...

    def claim(
        self, deliberation_id: int, *, holder: str | None, owner: str, now: datetime, stale_before: datetime | None
    ) -> Deliberation | None:
        """Take a RUNNING leased deliberation over in one atomic step, or return None when that is not possible.

        It succeeds only while `holder` still owns it and (unless `stale_before` is None, for a holder known to have
        exited) its lease is older than `stale_before`; it then belongs to `owner`, its lease renewed at `now` and
        its takeovers counted. Of several processes claiming at once, exactly one gets the deliberation back.
        """
        ...

    def save_summary(self, thread: str, covered: int, summary: str) -> None:
        """Store the summary of the first `covered` messages of a thread."""
        ...

    def summary(self, thread: str) -> tuple[int, str] | None: ...

    def extracted(self, thread: str) -> int:
        """How many of the thread's messages, from its first, lessons were taken from (0 when none)."""
        ...

    def save_extracted(self, thread: str, upto: int) -> None:
        """Record that lessons were taken from the thread's first `upto` messages (its summary is left as it is)."""
        ...


class Liveness(Protocol):
    """The processes that run deliberations: this one's name as an owner, and whether another owner has exited."""

    def owner(self) -> str:
        """This process, as stored with each deliberation it starts."""
        ...

    def gone(self, owner: str) -> bool:
        """True only when `owner` certainly ran on this machine and has exited; an owner elsewhere is never gone."""
        ...


class Poster(Protocol):
    """Where one deliberation's messages go (a Slack thread, the terminal). Bound to one thread."""

    def post_turn(self, persona: Persona, text: str) -> None: ...

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None: ...

    def post_lesson(self, persona: Persona, project: str, lesson_id: str, text: str) -> None: ...

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        """Show that `persona` searched its memory for `query` during its turn and found `found` lessons."""
        ...

    def post_notice(self, text: str) -> None: ...

    def messages(self) -> list[ThreadMessage]:
        """Everything in the thread so far, oldest first (human replies included)."""
        ...
