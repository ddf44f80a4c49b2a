"""Shared team knowledge: a persona opens its lessons (and pinned documents) of one project to a teammate, read-only.

A share is opt-in and names its sharer, its receiver (one persona, or every persona: `all`, ones created later
included), the project, and what it opens (`lessons`, `pins` or `all`). Shares are keyed by persona ids, so a rename
changes nothing; deleting a persona deletes the shares it gives and receives with it (PersonaRepository.remove).
Sharing twice updates what is shared; sharing with oneself is refused.

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
from dataclasses import dataclass
from typing import Protocol

from nightwatch.domain.errors import InvalidInputError, NightWatchError, NotFoundError
from nightwatch.domain.inputs import shown
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.names import check_slug, project_slug, validate_persona_name
from nightwatch.domain.pins.models import Pin
from nightwatch.domain.ports import Clock, PersonaLookup
from nightwatch.domain.sharing.block import Candidate, LineCosts, SharedBlock, SharedItem, pack_shared
from nightwatch.domain.sharing.models import Share, ShareContent
from nightwatch.domain.sharing.pins import SharedPin
from nightwatch.domain.sharing.ports import ShareRepository

log = logging.getLogger(__name__)

EVERYONE = "all"  # the receiver that means every persona
SHARED_TOKEN_BUDGET = 600

_CONTENT = {
    ShareContent.LESSONS: "lessons",
    ShareContent.PINS: "pinned documents",
    ShareContent.ALL: "lessons and pinned documents",
}


def validate_receiver(raw: object) -> str:
    """Return `all` (any case) or a persona name, or raise InvalidInputError saying what is accepted."""
    if isinstance(raw, str) and raw.strip().lower() == EVERYONE:
        return EVERYONE
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInputError("Say whom to share with: a persona's name, or all for every persona.")
    return validate_persona_name(raw)


def validate_share_content(raw: object) -> ShareContent:
    """Return what a share opens, or raise InvalidInputError: lessons, pins or all."""
    try:
        return ShareContent(raw.strip().lower() if isinstance(raw, str) else "")
    except ValueError:
        raise InvalidInputError(
            f"What to share is one of lessons, pins or all (got {shown(raw)}); lessons is the default."
        ) from None


def describe(what: ShareContent) -> str:
    """What a share opens, for a person: 'lessons', 'pinned documents', 'lessons and pinned documents'."""
    return _CONTENT[what]


class SharerPins(Protocol):
    """The pins a share opens (PinService.opened): the sharer's own, as its own turn reads them."""

    def opened(self, sharer: Persona, receiver: Persona, project: str) -> builtins.list[Pin]: ...


@dataclass(frozen=True)
class ShareView:
    """A share as a person reads it: personas, not ids."""

    sharer: Persona
    receiver: Persona | None  # None: every persona
    project: str
    what: ShareContent

    @property
    def audience(self) -> str:
        return self.receiver.name if self.receiver is not None else EVERYONE


@dataclass(frozen=True)
class ShareOutcome:
    """What share or unshare did, and a message for a person."""

    share: Share
    message: str


class SharingService:
    """Share, unshare and list; and the shared block a persona's turn reads."""

    def __init__(
        self,
        *,
        shares: ShareRepository,
        personas: PersonaLookup,
        memory: MemoryService,
        clock: Clock,
        pins: SharerPins | None = None,
        token_budget: int = SHARED_TOKEN_BUDGET,
    ) -> None:
        """`pins` None: no pin is read, so a share of pins opens nothing (for tests of lessons alone)."""
        self._shares = shares
        self._personas = personas
        self._memory = memory
        self._pins = pins
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

    # --- reading --------------------------------------------------------------------------------------------------

    def shares(self, *, project: str | None = None, persona: str | None = None) -> builtins.list[ShareView]:
        """The shares, oldest first: all, one project's, or those a persona gives or receives (also through all)."""
        slug = project_slug(project) if project is not None else None
        who = self._personas.get(persona) if persona is not None else None
        known = {p.id: p for p in self._personas.list()}
        views = []
        for share in self._shares.list(project=slug):
            if who is not None and who.id not in (share.sharer_id, share.receiver_id) and share.receiver_id is not None:
                continue
            sharer = known.get(share.sharer_id)
            receiver = known.get(share.receiver_id) if share.receiver_id is not None else None
            if sharer is None or (share.receiver_id is not None and receiver is None):
                continue  # a persona deleted meanwhile: its shares went with it
            views.append(ShareView(sharer, receiver, share.project, share.what))
        return views

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock:
        """The knowledge shared with `persona` on `project`, ranked for the topic and packed under the budget.

        Each sharer's lessons are ranked as its own read ranks them (`MemoryService.rank_shared`); pinned lessons
        first, then the sharers' own pins (not ranked, see above), then the sharers take turns by rank
        (shared_block.pack_shared), and every line says whose it is. Read-only: a pinned file that changed is read
        again and one that is gone is flagged, as the sharer's own next turn would (PinService.current).
        `budget` overrides the service's for this read (a deliberation passes the one it started with).
        """
        budget = self.token_budget if budget is None else budget
        if persona.id is None or budget <= 0:
            return SharedBlock()
        slug = check_slug(project)
        candidates: list[Candidate] = []
        documents: list[SharedPin] = []
        for sharer, opened in self._sharers(persona, slug):
            if ShareContent.LESSONS in opened:
                candidates += self._lessons_of(sharer, slug, topic, thread)
            if ShareContent.PINS in opened:
                documents += self._pins_of(sharer, persona, slug)
        return pack_shared(candidates, budget, self._costs, documents)

    # --- steps ----------------------------------------------------------------------------------------------------

    def _parties(self, sharer: str, receiver: str, project: str) -> tuple[Persona, Persona | None, str]:
        slug = project_slug(project)
        giver = self._personas.get(validate_persona_name(sharer))
        wanted = validate_receiver(receiver)
        taker = None if wanted == EVERYONE else self._personas.get(wanted)
        if taker is not None and taker.id == giver.id:
            raise InvalidInputError(
                f"{giver.name} cannot share with itself: a persona always reads its own memory. "
                "Name another persona, or all."
            )
        return giver, taker, slug

    def _shared_with_everyone(self, giver: Persona, project: str) -> ShareContent | None:
        """What `giver`'s share with all opens on `project`, or None when it has none."""
        for share in self._shares.list(project=project, persona_id=giver.id):
            if share.sharer_id == giver.id and share.receiver_id is None:
                return share.what
        return None

    def _sharers(self, persona: Persona, project: str) -> builtins.list[tuple[Persona, set[ShareContent]]]:
        """Each persona sharing with `persona` on `project`, with what it opens (its shares to it and to all)."""
        opened: dict[int, set[ShareContent]] = {}
        for share in self._shares.received(_id(persona), project):
            if share.sharer_id != persona.id:
                opened.setdefault(share.sharer_id, set()).update(
                    kind for kind in (ShareContent.LESSONS, ShareContent.PINS) if share.what.covers(kind)
                )
        if not opened:
            return []
        known = {p.id: p for p in self._personas.list()}  # one query (a lookup per sharer costs more from two on)
        return [(known[sharer], kinds) for sharer, kinds in opened.items() if sharer in known]

    def _lessons_of(self, sharer: Persona, project: str, topic: str, thread: str) -> builtins.list[Candidate]:
        try:
            ranked = self._memory.rank_shared(sharer, project, topic, thread)
        except (NightWatchError, OSError) as error:  # one unreadable memory costs only its own lines
            log.warning(
                "could not read %s's shared memory of %s (%s); the turn goes on without it", sharer.name, project, error
            )
            return []
        pinned = [hit.lesson for hit in ranked if hit.lesson.pinned]
        others = [hit.lesson for hit in ranked if not hit.lesson.pinned]

        def item(lesson: Lesson) -> SharedItem:
            return SharedItem(sharer.name, sharer.role, SharedItem.LESSON, lesson.text)

        return [Candidate(item(lesson), rank, first=True) for rank, lesson in enumerate(pinned)] + [
            Candidate(item(lesson), rank) for rank, lesson in enumerate(others)
        ]

    def _pins_of(self, sharer: Persona, receiver: Persona, project: str) -> builtins.list[SharedPin]:
        if self._pins is None:
            return []
        try:
            pins = self._pins.opened(sharer, receiver, project)
        except (NightWatchError, OSError) as error:  # pins that cannot be listed cost only their own lines
            log.warning(
                "could not read %s's shared pins of %s (%s); the turn goes on without them", sharer.name, project, error
            )
            return []
        return [SharedPin(sharer.name, sharer.role, pin) for pin in pins]


def _id(persona: Persona) -> int:
    if persona.id is None:
        raise NotFoundError(f"The persona {persona.name} has not been stored yet; create it first.")
    return persona.id


def _id_or_none(persona: Persona | None) -> int | None:
    return _id(persona) if persona is not None else None


def _audience(receiver: Persona | None) -> str:
    return receiver.name if receiver is not None else "every persona (ones created later too)"
