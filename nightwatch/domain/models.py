"""Values several rooms share: personas, lessons and thread messages. Frozen, typed dataclasses; times are UTC."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from types import MappingProxyType
from typing import Literal


def _frozen_map(value: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class Soul:
    """Who a persona is: the stable core of its system prompt."""

    who_i_am: str = ""
    worldview: tuple[str, ...] = ()
    opinions: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    expertise: tuple[str, ...] = ()
    interests: tuple[str, ...] = ()
    tensions: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()
    pet_peeves: tuple[str, ...] = ()


@dataclass(frozen=True)
class Style:
    """How a persona speaks."""

    voice_principles: tuple[str, ...] = ()
    sentence_structure: str = ""
    tone: str = ""
    words_used: tuple[str, ...] = ()
    words_avoided: tuple[str, ...] = ()
    emoji_usage: str = ""
    rhetorical_moves: tuple[str, ...] = ()
    anti_patterns: tuple[str, ...] = ()
    good_examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skill:
    """What a persona does in each interaction mode (pr_review, incident, proactive, deliberation, ...)."""

    modes: Mapping[str, str] = field(default_factory=_frozen_map)
    additional_instructions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Persona:
    """An AI team member. `slug` names its memory folder and is derived from `name`."""

    name: str
    slug: str
    role: str
    avatar: str = ""
    soul: Soul = field(default_factory=Soul)
    style: Style = field(default_factory=Style)
    skill: Skill = field(default_factory=Skill)
    model: str | None = None
    system_prompt_override: str | None = None
    active: bool = True
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: int | None = None
    created_by: str | None = None  # the Slack user id of whoever created it in Slack (None from the CLI or a file)


# What a lesson is about (memory/models.py describes each and how curation treats it).
Category = Literal["profile", "preferences", "entities", "events", "cases", "patterns"]


@dataclass(frozen=True, slots=True)
class Lesson:
    """One remembered bullet. `id` is a short hash of the normalised text only (see memory.format.lesson_id).

    `text` is the lesson's abstract: the one line injected into prompts. `overview` is its longer form, shown in
    recall results, search and the Home tab (None: the abstract is all there is). `category` is None for lessons
    written before categories, or by hand without one. `author` says which person wrote it (a Slack user id, or "cli"
    for the command line); None when the persona recorded it itself. `last_seen` is the day a restatement last
    counted it as seen again (None: never), what compaction reads as its freshness. Slotted: a cold read builds
    10,000 of them, and with instance dictionaries the garbage collector's passes over them cost that read about a
    tenth more.
    """

    id: str
    text: str
    recorded_at: datetime
    kind: str = "note"
    link: str | None = None
    pinned: bool = False
    seen: int = 1
    injected: int = 0
    superseded_by: str | None = None
    author: str | None = None
    category: Category | None = None
    overview: str | None = None
    last_seen: date | None = None

    @property
    def stale(self) -> bool:
        return self.superseded_by is not None

    @property
    def last_said(self) -> datetime:
        """When the lesson was recorded or last seen again (a restatement's day counts from its start)."""
        seen = self.last_seen
        again = datetime(seen.year, seen.month, seen.day, tzinfo=UTC) if seen else self.recorded_at
        return max(self.recorded_at, again)

    @property
    def abstract(self) -> str:
        """The one line a prompt carries (the bullet's text)."""
        return self.text

    @property
    def detail(self) -> str:
        """What a person is shown: the overview, or the abstract when there is none."""
        return self.overview or self.text


@dataclass(frozen=True)
class ThreadMessage:
    """A message seen in the thread: by a human (`persona` None) or by a persona."""

    author: str
    text: str
    persona: str | None = None
    ts: str = ""
