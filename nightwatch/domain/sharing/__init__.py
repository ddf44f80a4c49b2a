"""Shared team knowledge: a persona opens its lessons and pins of a project (all of them, or one) to teammates,
read-only."""

from nightwatch.domain.sharing.block import SharedBlock, SharedItem
from nightwatch.domain.sharing.items import ItemState
from nightwatch.domain.sharing.models import Item, ItemKind, ItemShare
from nightwatch.domain.sharing.service import SHARED_TOKEN_BUDGET, SharingService
from nightwatch.domain.sharing.source import (
    SHARED,
    SharedKnowledge,
    SharedSection,
    SharedSource,
    shared_part,
    shared_section,
)
from nightwatch.domain.sharing.views import (
    EVERYONE,
    ShareOutcome,
    ShareView,
    describe,
    validate_receiver,
    validate_share_content,
)

__all__ = [
    "EVERYONE",
    "SHARED",
    "SHARED_TOKEN_BUDGET",
    "Item",
    "ItemKind",
    "ItemShare",
    "ItemState",
    "ShareOutcome",
    "ShareView",
    "SharedBlock",
    "SharedItem",
    "SharedKnowledge",
    "SharedSection",
    "SharedSource",
    "SharingService",
    "describe",
    "shared_part",
    "shared_section",
    "validate_receiver",
    "validate_share_content",
]
