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

__all__ = [
    "EVERYONE",
    "SHARED_TOKEN_BUDGET",
    "ShareOutcome",
    "ShareView",
    "SharedBlock",
    "SharedItem",
    "SharingService",
    "describe",
    "validate_receiver",
    "validate_share_content",
]
