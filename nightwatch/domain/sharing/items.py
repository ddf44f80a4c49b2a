"""Sharing one item: one lesson or one pin of a persona opened to a teammate, instead of all its lessons or pins.

`nightwatch share Maya --lesson 3f9a2c1d --with Dev --project P` opens that lesson alone; `--pin 12` that pinned
document alone (a pin belongs to one project, so its share is on that project). The share names the item and never
copies it: every read looks the item up where it lives, so the teammate's shared block shows it as its owner has it
now, attributed as any shared knowledge is, and stops showing it once the lesson is forgotten or superseded (its id is
no longer among the live lessons) or the pin is removed. The share itself stays, and listing it says the item is gone,
until it is unshared.

A pin's number names a row and is never given to another pin (migration 0012); a pin made after the share is still
never taken for the one shared, should a database restored or edited by hand number rows again.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from nightwatch.domain.errors import InvalidInputError, NightWatchError, NotFoundError, StorageError
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.names import project_slug
from nightwatch.domain.pins import PinView, label_of
from nightwatch.domain.pins.models import Pin
from nightwatch.domain.sharing.models import Item, ItemKind, ItemShare
from nightwatch.domain.sharing.ports import ItemShareRepository

log = logging.getLogger(__name__)

SHOWN_CHARS = 80  # of a lesson's text in a list of shares


class SharerPins(Protocol):
    """The pins shares open (PinService): a sharer's own, as its own turn reads them, and every pin by number."""

    def opened(self, sharer: Persona, receiver: Persona, project: str) -> builtins.list[Pin]: ...

    def list(self, persona: str | None = None, project: str | None = None) -> builtins.list[PinView]: ...


@dataclass(frozen=True)
class ItemState:
    """What a shared item is now, for a person: its text or label, or why it is gone (None: it is there)."""

    text: str
    gone: str | None = None


class ItemShares:
    """Share and unshare one item, say what each shared item is now, and find the items a persona's turn reads."""

    def __init__(self, *, shares: ItemShareRepository | None, memory: MemoryService, pins: SharerPins | None) -> None:
        """`shares` None: no item share is kept (sharing one is refused); `pins` None: no pin can be shared."""
        self._shares = shares
        self._memory = memory
        self._pins = pins

    # --- changing -------------------------------------------------------------------------------------------------

    def project_of(self, giver: Persona, item: Item, project: str | None) -> str:
        """The project the share is on: a lesson's is named; a pin's is its own (another one named is refused)."""
        if item.kind is ItemKind.LESSON:
            if project is None:
                raise InvalidInputError(f"Name the project of {item}: --project P.")
            return project_slug(project)
        pin = self._own_pin(giver, item)
        if project is not None and project_slug(project) != pin.project:
            raise InvalidInputError(
                f"Pin #{pin.id} is on project {pin.project}, not {project}; "
                f"name {pin.project} or leave the project out."
            )
        return pin.project

    def check(self, giver: Persona, item: Item, project: str) -> str:
        """What the item is (a lesson's text, a pin's label), or a NotFoundError/InvalidInputError saying why not."""
        if item.kind is ItemKind.PIN:
            return label_of(self._own_pin(giver, item))
        for lesson in self._memory.lessons(giver, project):
            if lesson.id == item.id:
                return lesson.text
        stale = next((lesson for lesson in self._memory.history(giver, project) if lesson.id == item.id), None)
        if stale is not None:
            raise InvalidInputError(
                f"{giver.name}'s lesson {item.id} on project {project} was superseded by lesson {stale.superseded_by}; "
                "share that one instead."
            )
        raise NotFoundError(
            f"{giver.name} has no lesson {item.id} on project {project}; "
            f"`nightwatch memory show {giver.slug} --project {project}` lists the lesson ids."
        )

    def put(self, share: ItemShare) -> ItemShare | None:
        return self._repository().put(share)

    def remove(self, sharer_id: int, receiver_id: int | None, project: str, item: Item) -> ItemShare | None:
        return self._repository().remove(sharer_id, receiver_id, project, item)

    # --- reading --------------------------------------------------------------------------------------------------

    def listed(self, project: str | None) -> builtins.list[ItemShare]:
        return self._shares.list(project=project) if self._shares is not None else []

    def states(self, shares: Iterable[tuple[ItemShare, Persona]]) -> builtins.list[ItemState]:
        """What each (share, its sharer) item is now; the pins are listed once for all of them."""
        pins: dict[int, Pin] | None = None
        states = []
        for share, sharer in shares:
            if share.item.kind is ItemKind.LESSON:
                states.append(self._lesson_state(share, sharer))
                continue
            if pins is None:
                pins = {view.pin.id or 0: view.pin for view in self._pins.list()} if self._pins is not None else {}
            pin = pins.get(int(share.item.id))
            if pin is None or not _same_pin(pin, share, sharer):
                states.append(ItemState("", "unpinned"))
            else:
                states.append(ItemState(label_of(pin)))
        return states

    def received(self, persona: Persona, project: str) -> builtins.list[ItemShare]:
        """The item shares open to `persona` on `project`, but its own."""
        if self._shares is None or persona.id is None:
            return []
        try:
            received = self._shares.received(persona.id, project)
        except NightWatchError as error:  # the item shares cost only their own lines, never the turn
            log.warning(
                "could not read the items shared with %s on %s (%s); the turn goes on", persona.name, project, error
            )
            return []
        return [share for share in received if share.sharer_id != persona.id]

    def lessons(self, sharer: Persona, project: str, shares: Iterable[ItemShare]) -> builtins.list[Lesson]:
        """The shared lessons `sharer` still has live, in the order they were shared."""
        wanted = [share.item.id for share in shares if share.item.kind is ItemKind.LESSON]
        if not wanted:
            return []
        live = {lesson.id: lesson for lesson in self._memory.lessons(sharer, project)}
        return [live[lesson_id] for lesson_id in dict.fromkeys(wanted) if lesson_id in live]

    def pins(self, sharer: Persona, receiver: Persona, project: str, shares: Iterable[ItemShare]) -> builtins.list[Pin]:
        """The shared pins `sharer` still has on `project`, each as its own turn reads it, less those `receiver` gets
        itself (PinService.opened)."""
        wanted = {int(share.item.id): share for share in shares if share.item.kind is ItemKind.PIN}
        if not wanted or self._pins is None:
            return []
        return [
            pin
            for pin in self._pins.opened(sharer, receiver, project)
            if pin.id in wanted and _same_pin(pin, wanted[pin.id], sharer)
        ]

    def projects(self, giver: Persona, taker: Persona | None, item: Item) -> builtins.list[str]:
        """The projects `giver` shares `item` on with `taker` (None: every persona); a lesson's id may be on several."""
        receiver = taker.id if taker is not None else None
        found = [
            share.project
            for share in self.listed(None)
            if (share.sharer_id, share.receiver_id, share.item) == (giver.id, receiver, item)
        ]
        return builtins.list(dict.fromkeys(found))

    # --- steps ----------------------------------------------------------------------------------------------------

    def _repository(self) -> ItemShareRepository:
        if self._shares is None:
            raise StorageError("Sharing one lesson or pin needs the database's item shares, which are not set up here.")
        return self._shares

    def _own_pin(self, giver: Persona, item: Item) -> Pin:
        found = [view for view in self._pins.list() if view.pin.id == int(item.id)] if self._pins is not None else []
        if not found:
            raise NotFoundError(f"There is no pin #{item.id}; `nightwatch pin list` shows the pins and their numbers.")
        pin, owner = found[0].pin, found[0].persona
        if pin.persona_id is None:
            raise InvalidInputError(
                f"Pin #{item.id} is pinned for every persona of {pin.project} already, so there is nothing to share."
            )
        if pin.persona_id != giver.id:
            raise InvalidInputError(
                f"Pin #{item.id} is {owner or 'another persona'}'s, not {giver.name}'s: a persona shares only its own "
                "pins."
            )
        return pin

    def _lesson_state(self, share: ItemShare, sharer: Persona) -> ItemState:
        try:
            for lesson in self._memory.lessons(sharer, share.project):
                if lesson.id == share.item.id:
                    return ItemState(_shortened(lesson.text))
            superseded = any(lesson.id == share.item.id for lesson in self._memory.history(sharer, share.project))
        except (NightWatchError, OSError) as error:
            return ItemState("", f"unreadable now: {error}")
        return ItemState("", "superseded" if superseded else "forgotten")


def _same_pin(pin: Pin, share: ItemShare, sharer: Persona) -> bool:
    """Whether `pin` is still the one shared: the sharer's own, on the share's project, and made before the share."""
    made, shared = pin.created_at, share.created_at
    newer = isinstance(made, datetime) and isinstance(shared, datetime) and made > shared
    return pin.persona_id == sharer.id and pin.project == share.project and not newer


def _shortened(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1].rstrip() + "…"
