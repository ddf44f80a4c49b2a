"""Sharing's values: a share and what it opens. Frozen, typed dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ShareContent(StrEnum):
    """What a share opens to its receiver: the sharer's lessons, its pinned documents, or both."""

    LESSONS = "lessons"
    PINS = "pins"
    ALL = "all"

    def covers(self, kind: ShareContent) -> bool:
        """Whether this share includes `kind` (LESSONS or PINS)."""
        return self is ShareContent.ALL or self is kind


@dataclass(frozen=True)
class Share:
    """One persona's knowledge of one project, opened read-only to another persona or to every persona.

    Personas are named by database id, so a rename changes nothing here. `receiver_id` None means every persona,
    ones created later included (stored as such, never expanded into one share per persona).
    """

    sharer_id: int
    receiver_id: int | None
    project: str  # a slug
    what: ShareContent
    created_at: datetime | None = None


class ItemKind(StrEnum):
    """What one shared item is: one lesson, or one pinned document."""

    LESSON = "lesson"
    PIN = "pin"


@dataclass(frozen=True)
class Item:
    """One lesson (by its id, 8 hex characters) or one pin (by its number, written out) a share opens."""

    kind: ItemKind
    id: str

    def __str__(self) -> str:
        return f"lesson {self.id}" if self.kind is ItemKind.LESSON else f"pin #{self.id}"


@dataclass(frozen=True)
class ItemShare:
    """One lesson or one pin of a persona on one project, opened read-only to another persona or to every persona.

    The item is named, not copied: each read looks it up in the sharer's memory or pins, so a lesson forgotten or
    superseded, or a pin removed, is no longer shown (the share stays, and listing it says the item is gone).
    """

    sharer_id: int
    receiver_id: int | None  # None: every persona
    project: str  # a slug
    item: Item
    created_at: datetime | None = None
