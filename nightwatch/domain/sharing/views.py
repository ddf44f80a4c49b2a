"""What a person says to sharing and is told by it: whom and what (checked), a share as it is listed, an outcome."""

from __future__ import annotations

from dataclasses import dataclass

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import shown
from nightwatch.domain.models import Persona
from nightwatch.domain.names import validate_persona_name
from nightwatch.domain.sharing.items import ItemState
from nightwatch.domain.sharing.models import Item, ItemShare, Share, ShareContent

EVERYONE = "all"  # the receiver that means every persona

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


@dataclass(frozen=True)
class ShareView:
    """A share as a person reads it: personas, not ids; for one item, what that item is now."""

    sharer: Persona
    receiver: Persona | None  # None: every persona
    project: str
    what: ShareContent
    item: Item | None = None  # None: all of the sharer's `what`
    state: ItemState | None = None  # what the item is now

    @property
    def audience(self) -> str:
        return self.receiver.name if self.receiver is not None else EVERYONE

    @property
    def shown(self) -> str:
        """What the share opens, for a person: 'lessons', 'lesson 3f9a2c1d: <text>', 'pin #3 (gone: unpinned)'."""
        if self.item is None:
            return describe(self.what)
        if self.state is None:
            return str(self.item)
        if self.state.gone is not None:
            return f"{self.item} (gone: {self.state.gone})"
        return f"{self.item}: {self.state.text}"


@dataclass(frozen=True)
class ShareOutcome:
    """What share or unshare did, and a message for a person."""

    share: Share | ItemShare
    message: str


def named(
    sharer_id: int, receiver_id: int | None, known: dict[int | None, Persona], who: Persona | None
) -> tuple[Persona, Persona | None] | None:
    """A share's personas, or None when it is not `who`'s (given, received, or to all) or a persona is gone."""
    if who is not None and who.id not in (sharer_id, receiver_id) and receiver_id is not None:
        return None
    sharer = known.get(sharer_id)
    receiver = known.get(receiver_id) if receiver_id is not None else None
    if sharer is None or (receiver_id is not None and receiver is None):
        return None  # a persona deleted meanwhile: its shares went with it
    return sharer, receiver
