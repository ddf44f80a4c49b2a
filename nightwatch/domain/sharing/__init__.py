"""Shared team knowledge: a persona opens its lessons and pins of a project to teammates, read-only."""

from nightwatch.domain.sharing.block import SharedBlock, SharedItem
from nightwatch.domain.sharing.service import (
    EVERYONE,
    SHARED_TOKEN_BUDGET,
    ShareOutcome,
    ShareView,
    SharingService,
    describe,
    validate_receiver,
    validate_share_content,
)
from nightwatch.domain.sharing.source import (
    SHARED,
    SharedKnowledge,
    SharedSection,
    SharedSource,
    shared_part,
    shared_section,
)

__all__ = [
    "EVERYONE",
    "SHARED",
    "SHARED_TOKEN_BUDGET",
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
