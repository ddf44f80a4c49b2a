"""Shared team knowledge: a persona opens its lessons (and pinned documents) of one project to a teammate, read-only.

A share is opt-in and names its sharer, its receiver (one persona, or every persona: `all`, ones created later
included), the project, and what it opens (`lessons`, `pins` or `all`; or one lesson or pin: items.py). Shares are
keyed by persona ids, so a rename changes nothing; deleting a persona deletes the shares it gives and receives with
it (PersonaRepository.remove). Sharing twice updates what is shared; sharing with oneself is refused.

Before a turn, `SharingService.read` builds the receiver's shared block (shared_block.py): the sharers' lessons
ranked by the sharer's own recall for the turn's topic, and the sharers' own pinned documents (shared_pins.py), packed
under their own token budget, each attributed. It is read afresh every turn, so an unshare takes effect on the next
one; it never writes to the sharer's memory.

Pins are not ranked for the topic: a person pinned them, and the sharer's own turns inject them whole, unranked, as
recall puts the lessons a person pinned first. They come after the sharers' pinned lessons and before the ranked
ones, within a share of the budget (shared_block.DOCUMENTS_SHARE), cut to fit with a marker. Scoring them as lessons
are scored would need their vectors, which pins do not have (embedding a document at every change, on a turn's path,
is the slow part of recall), and a score on words alone would not be the same recall.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from nightwatch.domain.errors import InvalidInputError, NightWatchError, NotFoundError
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.names import check_slug, project_slug, validate_persona_name
from nightwatch.domain.pins.models import Pin
from nightwatch.domain.ports import Clock, PersonaLookup
from nightwatch.domain.sharing.block import Candidate, LineCosts, SharedBlock, SharedItem, pack_shared
from nightwatch.domain.sharing.items import ItemShares, SharerPins
from nightwatch.domain.sharing.models import Item, ItemKind, ItemShare, Share, ShareContent
from nightwatch.domain.sharing.pins import SharedPin
from nightwatch.domain.sharing.ports import ItemShareRepository, ShareRepository
from nightwatch.domain.sharing.views import (
    EVERYONE,
    ShareOutcome,
    ShareView,
    describe,
    named,
    validate_receiver,
    validate_share_content,
)

log = logging.getLogger(__name__)

SHARED_TOKEN_BUDGET = 600
T = TypeVar("T")


class SharingService:
    """Share, unshare and list (all of a persona's lessons or pins, or one of them); and the shared block a persona's
    turn reads."""

    def __init__(
        self,
        *,
        shares: ShareRepository,
        personas: PersonaLookup,
        memory: MemoryService,
        clock: Clock,
        pins: SharerPins | None = None,
        items: ItemShareRepository | None = None,
        token_budget: int = SHARED_TOKEN_BUDGET,
    ) -> None:
        """`pins` None: no pin is read, so a share of pins opens nothing (for tests of lessons alone); `items` None:
        no one item can be shared (items.py)."""
        self._shares = shares
        self._personas = personas
        self._memory = memory
        self._pins = pins
        self._items = ItemShares(shares=items, memory=memory, pins=pins)
        self._clock = clock
        self.token_budget = token_budget
        self._costs = LineCosts()

    # --- changing -------------------------------------------------------------------------------------------------

    def share(
        self, sharer: str, receiver: str, project: str, what: ShareContent | str = ShareContent.LESSONS
    ) -> ShareOutcome:
        """Open `sharer`'s knowledge of `project` to `receiver` (a persona, or `all`); again: change what it opens."""
        giver, taker, slug = self._parties(sharer, receiver, project)
        content = validate_share_content(what)
        share = Share(_id(giver), _id_or_none(taker), slug, content, self._clock.now())
        before = self._shares.put(share)
        audience = _audience(taker)
        if before is None:
            text = f"{giver.name} now shares {describe(content)} on project {slug} with {audience}."
        elif before.what is content:
            text = (
                f"{giver.name} already shares {describe(content)} on project {slug} with {audience}; nothing changed."
            )
        else:
            text = (
                f"{giver.name} now shares {describe(content)} on project {slug} with {audience} "
                f"(before: {describe(before.what)})."
            )
        return ShareOutcome(share, text)

    def share_item(self, sharer: str, receiver: str, project: str | None, item: Item) -> ShareOutcome:
        """Open one lesson or one pin of `sharer` to `receiver` (a persona, or `all`), read-only (items.py).

        A pin's share is on the pin's project (`project` None, or the same one). Unknown lessons and pins, a lesson
        superseded, a pin that is not the sharer's own, and sharing with oneself are refused, saying why.
        """
        giver, taker = self._persons(sharer, receiver)
        slug = self._items.project_of(giver, item, project)
        what = self._items.check(giver, item, slug)
        share = ItemShare(_id(giver), _id_or_none(taker), slug, item, self._clock.now())
        before = self._items.put(share)
        audience = _audience(taker)
        if before is not None:
            text = f"{giver.name} already shares {item} on project {slug} with {audience}; nothing changed."
            return ShareOutcome(before, text)
        return ShareOutcome(share, f"{giver.name} now shares {item} on project {slug} with {audience}: {what}")

    def unshare(self, sharer: str, receiver: str, project: str) -> ShareOutcome:
        """Close the share; the receiver's next turn goes without it. NotFoundError when there is no such share."""
        giver, taker, slug = self._parties(sharer, receiver, project)
        removed = self._shares.remove(_id(giver), _id_or_none(taker), slug)
        audience = _audience(taker)
        if removed is None:
            raise NotFoundError(
                f"{giver.name} shares nothing on project {slug} with {audience}, so there is nothing to unshare. "
                "List the shares to see what is shared."
            )
        text = f"{giver.name} no longer shares {describe(removed.what)} on project {slug} with {audience}."
        still = self._shared_with_everyone(giver, slug) if taker is not None else None
        if taker is not None and still is not None:
            text += f" {taker.name} still receives them through {giver.name}'s share with all ({describe(still)})."
        return ShareOutcome(removed, text)

    def unshare_item(self, sharer: str, receiver: str, project: str | None, item: Item) -> ShareOutcome:
        """Close the share of one item (`project` None: the project it is shared on); NotFoundError when none."""
        giver, taker = self._persons(sharer, receiver)
        audience = _audience(taker)
        projects = [project_slug(project)] if project is not None else self._items.projects(giver, taker, item)
        if len(projects) > 1:
            raise InvalidInputError(f"{giver.name} shares {item} on projects {', '.join(projects)}; name one.")
        removed = self._items.remove(_id(giver), _id_or_none(taker), projects[0], item) if projects else None
        if removed is None:
            where = f" on project {projects[0]}" if projects else ""
            raise NotFoundError(
                f"{giver.name} does not share {item}{where} with {audience}, so there is nothing to unshare. "
                "List the shares to see what is shared."
            )
        return ShareOutcome(
            removed, f"{giver.name} no longer shares {item} on project {removed.project} with {audience}."
        )

    # --- reading --------------------------------------------------------------------------------------------------

    def shares(self, *, project: str | None = None, persona: str | None = None) -> builtins.list[ShareView]:
        """The shares, oldest first, then the shares of one item: all, one project's, or those a persona gives or
        receives (also through all). An item share says what its item is now, or that it is gone."""
        slug = project_slug(project) if project is not None else None
        who = self._personas.get(persona) if persona is not None else None
        known = {p.id: p for p in self._personas.list()}
        views = []
        for whole in self._shares.list(project=slug):
            parties = named(whole.sharer_id, whole.receiver_id, known, who)
            if parties is not None:
                views.append(ShareView(*parties, whole.project, whole.what))
        items = [
            (share, parties)
            for share in self._items.listed(slug)
            if (parties := named(share.sharer_id, share.receiver_id, known, who)) is not None
        ]
        states = self._items.states((share, parties[0]) for share, parties in items)
        for (share, (sharer, receiver)), state in zip(items, states, strict=True):
            what = ShareContent.LESSONS if share.item.kind is ItemKind.LESSON else ShareContent.PINS
            views.append(ShareView(sharer, receiver, share.project, what, share.item, state))
        return views

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock:
        """The knowledge shared with `persona` on `project`, ranked for the topic and packed under the budget.

        Each sharer's lessons are ranked as its own read ranks them (`MemoryService.rank_shared`); pinned lessons and
        lessons shared one by one first, then the sharers' own pins (not ranked, see above), then the sharers take
        turns by rank (shared_block.pack_shared), and every line says whose it is. Read-only: a pinned file that
        changed is read again and one that is gone is flagged, as the sharer's own next turn would
        (PinService.current). `budget` overrides the service's for this read (a deliberation passes the one it
        started with).
        """
        budget = self.token_budget if budget is None else budget
        if persona.id is None or budget <= 0:
            return SharedBlock()
        slug = check_slug(project)
        candidates: list[Candidate] = []
        documents: list[SharedPin] = []
        for sharer, opened, items in self._sharers(persona, slug):
            chosen = self._read(sharer, "lessons", slug, partial(self._items.lessons, sharer, slug, items))
            picked = [Candidate(_item(sharer, lesson), rank, first=True) for rank, lesson in enumerate(chosen)]
            candidates += picked
            if ShareContent.LESSONS in opened:
                seen = {candidate.item for candidate in picked}
                candidates += [c for c in self._lessons_of(sharer, slug, topic, thread) if c.item not in seen]
            pins = self._pins_of(sharer, persona, slug) if ShareContent.PINS in opened else []
            ids = {pin.id for pin in pins}
            pins += [
                pin
                for pin in self._read(sharer, "pins", slug, partial(self._items.pins, sharer, persona, slug, items))
                if pin.id not in ids
            ]
            documents += [SharedPin(sharer.name, sharer.role, pin) for pin in pins]
        return pack_shared(candidates, budget, self._costs, documents)

    # --- steps ----------------------------------------------------------------------------------------------------

    def _persons(self, sharer: str, receiver: str) -> tuple[Persona, Persona | None]:
        giver = self._personas.get(validate_persona_name(sharer))
        wanted = validate_receiver(receiver)
        taker = None if wanted == EVERYONE else self._personas.get(wanted)
        if taker is not None and taker.id == giver.id:
            raise InvalidInputError(
                f"{giver.name} cannot share with itself: a persona always reads its own memory. "
                "Name another persona, or all."
            )
        return giver, taker

    def _parties(self, sharer: str, receiver: str, project: str) -> tuple[Persona, Persona | None, str]:
        slug = project_slug(project)
        giver, taker = self._persons(sharer, receiver)
        return giver, taker, slug

    def _shared_with_everyone(self, giver: Persona, project: str) -> ShareContent | None:
        """What `giver`'s share with all opens on `project`, or None when it has none."""
        for share in self._shares.list(project=project, persona_id=giver.id):
            if share.sharer_id == giver.id and share.receiver_id is None:
                return share.what
        return None

    def _sharers(
        self, persona: Persona, project: str
    ) -> builtins.list[tuple[Persona, set[ShareContent], builtins.list[ItemShare]]]:
        """Each persona sharing with `persona` on `project`, with what it opens (its shares to it and to all) and
        the items it shares one by one."""
        opened: dict[int, set[ShareContent]] = {}
        for share in self._shares.received(_id(persona), project):
            if share.sharer_id != persona.id:
                opened.setdefault(share.sharer_id, set()).update(
                    kind for kind in (ShareContent.LESSONS, ShareContent.PINS) if share.what.covers(kind)
                )
        items: dict[int, builtins.list[ItemShare]] = {}
        for item in self._items.received(persona, project):
            items.setdefault(item.sharer_id, []).append(item)
            opened.setdefault(item.sharer_id, set())
        if not opened:
            return []
        known = {p.id: p for p in self._personas.list()}  # one query (a lookup per sharer costs more from two on)
        return [(known[sharer], kinds, items.get(sharer, [])) for sharer, kinds in opened.items() if sharer in known]

    def _lessons_of(self, sharer: Persona, project: str, topic: str, thread: str) -> builtins.list[Candidate]:
        ranked = self._read(sharer, "memory", project, lambda: self._memory.rank_shared(sharer, project, topic, thread))
        pinned = [hit.lesson for hit in ranked if hit.lesson.pinned]
        others = [hit.lesson for hit in ranked if not hit.lesson.pinned]
        return [Candidate(_item(sharer, lesson), rank, first=True) for rank, lesson in enumerate(pinned)] + [
            Candidate(_item(sharer, lesson), rank) for rank, lesson in enumerate(others)
        ]

    def _pins_of(self, sharer: Persona, receiver: Persona, project: str) -> builtins.list[Pin]:
        pins = self._pins
        if pins is None:
            return []
        return self._read(sharer, "pins", project, lambda: pins.opened(sharer, receiver, project))

    @staticmethod
    def _read(sharer: Persona, what: str, project: str, read: Callable[[], builtins.list[T]]) -> builtins.list[T]:
        """What `read` returns; one sharer's unreadable memory or pins cost only their own lines, never the turn."""
        try:
            return read()
        except (NightWatchError, OSError) as error:
            log.warning("could not read %s's shared %s of %s (%s); the turn goes on", sharer.name, what, project, error)
            return []


def _item(sharer: Persona, lesson: Lesson) -> SharedItem:
    return SharedItem(sharer.name, sharer.role, SharedItem.LESSON, lesson.text)


def _id(persona: Persona) -> int:
    if persona.id is None:
        raise NotFoundError(f"The persona {persona.name} has not been stored yet; create it first.")
    return persona.id


def _id_or_none(persona: Persona | None) -> int | None:
    return _id(persona) if persona is not None else None


def _audience(receiver: Persona | None) -> str:
    return receiver.name if receiver is not None else "every persona (ones created later too)"
