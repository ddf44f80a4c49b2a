"""How a rename or delete takes a persona's memory along: folder then row, or both in one database transaction.

Memory in files and the persona in the database cannot share a transaction, so `FolderFirst` moves the folder first
and changes the database second: if the folder step fails the database was never touched, and if the database step
fails the folder is moved back. Memory in the database (`OneTransaction`) moves in the persona's own transaction,
with its kept lessons: a failure at any step, the memory move included, leaves all of them as they were. Either way
no persona points at memory it does not have and no memory is left without its persona. A rename files the lessons
kept after a storage fault under the new slug; a delete drops them, and logs them so they can still be found.
Shares name personas by id, so a rename leaves them be; a delete removes those the persona gives and receives in the
same transaction as its row (PersonaRepository.remove), and reports them. So it does with the persona's own pinned
context (its pins; the project-wide ones stay).

Writes racing a rename or delete: `FolderFirst` holds off every write to the persona's memory (`MemoryStore.moving`)
from the folder step to the database step, so a write either lands before the move (and moves with it) or waits,
finds the slug no persona holds, and is refused loudly (MemoryMovedError); in `OneTransaction` the persona row the
transaction changes is what fenced writes lock. Either way no lesson lands under the old slug.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol

from nightwatch.domain.errors import ConflictError, NightWatchError, NotFoundError, StorageError
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.ports import FolderMove, MemoryStore, PendingLessons
from nightwatch.domain.models import Persona
from nightwatch.domain.personas.ports import PersonaRepository, PersonaTransactions
from nightwatch.domain.pins.models import Pin
from nightwatch.domain.pins.ports import PinRepository
from nightwatch.domain.ports import Clock
from nightwatch.domain.sharing.models import Share
from nightwatch.domain.sharing.ports import ShareRepository

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deleted:
    """What a delete did: where the memory went, and the kept lessons, shares and pins that went with the persona."""

    move: FolderMove
    dropped: tuple[PendingLesson, ...] = ()
    shares: tuple[Share, ...] = ()
    pins: tuple[Pin, ...] = ()


class MemoryMoves(Protocol):
    """Renames and deletes a persona in the database, taking its memory along."""

    def rename(self, current: Persona, changed: Persona) -> tuple[Persona, FolderMove]:
        """Store `changed` (a new slug) and move the memory; returns the stored persona and the move."""
        ...

    def delete(self, persona: Persona) -> Deleted:
        """Remove the persona and archive its memory."""
        ...


def folder(path: PurePosixPath | None) -> str:
    """A FolderMove path as a person reads it: `agents/maya/`."""
    return f"{path}/" if path is not None else "(none)"


class FolderFirst:
    """Memory in files: the folder step first, then the database; the folder moves back if the database fails."""

    def __init__(
        self,
        *,
        repo: PersonaRepository,
        store: MemoryStore,
        clock: Clock,
        pending: PendingLessons | None,
        pins: PinRepository | None = None,
        shares: ShareRepository | None = None,
    ) -> None:
        self._repo = repo
        self._store = store
        self._clock = clock
        self._pending = pending
        self._pins = pins
        self._shares = shares

    def rename(self, current: Persona, changed: Persona) -> tuple[Persona, FolderMove]:
        with self._store.moving(current.slug, changed.slug):  # no write lands in between (see the module doc)
            move = self._folder_step(
                current, lambda: self._store.migrate(current.slug, changed.slug, self._clock.now()), "rename"
            )
            try:
                if self._pending is not None:
                    self._pending.move(current.slug, changed.slug)
                saved = self._repo.save(changed)
            except Exception as err:
                if self._pending is not None:
                    with contextlib.suppress(NightWatchError):
                        self._pending.move(changed.slug, current.slug)
                raise self._undo(move, current, "rename", err) from err
        return saved, move

    def delete(self, persona: Persona) -> Deleted:
        with self._store.moving(persona.slug):
            move = self._folder_step(persona, lambda: self._store.archive(persona.slug, self._clock.now()), "delete")
            try:
                # Listed first: removing the row removes them with it, in its transaction.
                shares = self._shares.list(persona_id=persona.id) if self._shares is not None else []
                pins = own_pins(self._pins, persona)
                self._repo.remove(persona.id or 0)
            except Exception as err:
                raise self._undo(move, persona, "delete", err) from err
        return Deleted(move, self._drop_pending(persona), tuple(shares), pins)

    def _folder_step(self, persona: Persona, step: Callable[[], FolderMove], action: str) -> FolderMove:
        try:
            return step()
        except NightWatchError as err:
            raise StorageError(
                f"Could not {action} {persona.name}: its memory folder agents/{persona.slug}/ could not be moved "
                f"({err}). Nothing was changed; check the folder's permissions and try again."
            ) from err
        except OSError as err:
            raise StorageError(
                f"Could not {action} {persona.name}: its memory folder agents/{persona.slug}/ could not be moved "
                f"({err.strerror or err}). Nothing was changed; check the folder's permissions and try again."
            ) from err

    def _drop_pending(self, persona: Persona) -> tuple[PendingLesson, ...]:
        """Drop the deleted persona's kept lessons (logged); a failure to is logged and leaves them."""
        if self._pending is None:
            return ()
        try:
            kept = self._pending.waiting(persona.slug)
            self._pending.drop(persona.slug)
        except NightWatchError as err:
            log.warning("could not drop the lessons kept for %s: %s", persona.name, err)
            return ()
        log_dropped(persona, kept)
        return tuple(kept)

    def _undo(self, move: FolderMove, persona: Persona, action: str, err: Exception) -> NightWatchError:
        """Move the folder back after a failed database step; return the error to raise."""
        try:
            self._store.restore(move)
        except (NightWatchError, OSError) as restore_err:
            log.exception("could not move %s back to %s", folder(move.target), folder(move.source))
            return StorageError(
                f"Could not {action} {persona.name}: the database refused the change ({err}), and moving its memory "
                f"back failed too ({restore_err}). The persona is unchanged in the database; move "
                f"{folder(move.target)} back to {folder(move.source)} by hand."
            )
        log.warning("%s of %s failed in the database; memory folder moved back: %s", action, persona.name, err)
        return unchanged(persona, action, err)


class OneTransaction:
    """Memory in the database: the persona row, its memory and its kept lessons change in one transaction."""

    def __init__(self, *, transactions: PersonaTransactions, clock: Clock) -> None:
        self._transactions = transactions
        self._clock = clock

    def rename(self, current: Persona, changed: Persona) -> tuple[Persona, FolderMove]:
        try:
            with self._transactions.begin() as change:
                saved = change.personas.save(changed)
                move = change.memory.migrate(current.slug, changed.slug, self._clock.now())
                change.pending.move(current.slug, changed.slug)
        except Exception as err:
            log.warning("rename of %s failed; nothing was changed: %s", current.name, err)
            raise unchanged(current, "rename", err) from err
        return saved, move

    def delete(self, persona: Persona) -> Deleted:
        try:
            with self._transactions.begin() as change:
                shares = change.shares.list(persona_id=persona.id)  # removed with the row, in this transaction
                pins = own_pins(change.pins, persona)  # so are these
                change.personas.remove(persona.id or 0)
                move = change.memory.archive(persona.slug, self._clock.now())
                kept = change.pending.waiting(persona.slug)
                change.pending.drop(persona.slug)
        except Exception as err:
            log.warning("delete of %s failed; nothing was changed: %s", persona.name, err)
            raise unchanged(persona, "delete", err) from err
        log_dropped(persona, kept)
        return Deleted(move, tuple(kept), tuple(shares), pins)


def unchanged(persona: Persona, action: str, err: Exception) -> NightWatchError:
    """The error for a rename or delete that changed nothing: a conflict or a missing persona keeps its type."""
    text = f"Could not {action} {persona.name}: {err} Nothing was changed; its memory stays in agents/{persona.slug}/."
    if isinstance(err, ConflictError | NotFoundError):
        return type(err)(text)
    return StorageError(text + " Check the database connection and try again.")


def own_pins(pins: PinRepository | None, persona: Persona) -> tuple[Pin, ...]:
    """The pins of `persona` alone (not the project-wide ones), which go with it when it is deleted."""
    if pins is None or persona.id is None:
        return ()
    return tuple(pin for pin in pins.list() if pin.persona_id == persona.id)


def log_dropped(persona: Persona, kept: list[PendingLesson]) -> None:
    if kept:
        log.warning("dropped the lessons kept for deleted %s: %s", persona.name, [lesson.text for lesson in kept])
