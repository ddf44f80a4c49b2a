"""What a lesson is about: six categories, after the layered memory design in the seeds.

The category decides how curation treats a new lesson close to an old one: `events` and `cases` always stand alone
(each happened once), `profile` and `preferences` merge into the entry they update, and `entities` and `patterns`
follow the meaning-based rule every lesson had before categories.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from nightwatch.domain.errors import InvalidInputError

Category = Literal["profile", "preferences", "entities", "events", "cases", "patterns"]

CATEGORIES: Final[tuple[Category, ...]] = get_args(Category)

DESCRIPTIONS: Final[dict[Category, str]] = {
    "profile": "who the team and the project are: people, roles, ownership, the product",
    "preferences": "how the team likes things done: conventions, tools, style, process choices",
    "entities": "named things and their state: services, dependencies, versions, environments",
    "events": "something that happened once: an incident, a release, a decision taken on a date",
    "cases": "a problem and how it was solved",
    "patterns": "a reusable way of working that held more than once",
}


def validate_category(value: str) -> Category:
    """`value` as a category (case and surrounding spaces ignored), or InvalidInputError naming the six."""
    name = value.strip().lower()
    for category in CATEGORIES:
        if name == category:
            return category
    raise InvalidInputError(f"{value!r} is not a lesson category: use one of {', '.join(CATEGORIES)}.")
