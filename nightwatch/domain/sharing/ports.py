"""Where shares of persona knowledge are kept."""

from __future__ import annotations

import builtins
from typing import Protocol

from nightwatch.domain.sharing.models import Item, ItemShare, Share


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


class ItemShareRepository(Protocol):
    """Shares of one lesson or one pin (models.ItemShare), keyed by persona ids and the item; oldest first.

    A persona's item shares, given and received, are deleted with it (the database's foreign keys).
    """

    def put(self, share: ItemShare) -> ItemShare | None:
        """Store the share; returns the one already stored (left as it is), or None when the share is new."""
        ...

    def remove(self, sharer_id: int, receiver_id: int | None, project: str, item: Item) -> ItemShare | None:
        """Delete that share; returns it, or None when there was none."""
        ...

    def list(self, *, project: str | None = None, persona_id: int | None = None) -> builtins.list[ItemShare]:
        """Every item share, or one project's, or those naming this persona as sharer or receiver."""
        ...

    def received(self, receiver_id: int, project: str) -> builtins.list[ItemShare]:
        """The item shares open to this persona on this project: those naming it and those to every persona."""
        ...
