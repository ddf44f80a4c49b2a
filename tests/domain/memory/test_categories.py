"""The six lesson categories and their validation."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory.models import CATEGORIES, DESCRIPTIONS, validate_category


def test_there_are_six_categories_each_described() -> None:
    assert CATEGORIES == ("profile", "preferences", "entities", "events", "cases", "patterns")
    assert set(DESCRIPTIONS) == set(CATEGORIES)


@pytest.mark.parametrize(("value", "expected"), [("events", "events"), (" Cases ", "cases"), ("PROFILE", "profile")])
def test_a_category_is_read_ignoring_case_and_spaces(value: str, expected: str) -> None:
    assert validate_category(value) == expected


@pytest.mark.parametrize("value", ["", "event", "misc", "profile,events"])
def test_anything_else_is_refused_with_the_six_names(value: str) -> None:
    with pytest.raises(InvalidInputError, match="profile, preferences, entities, events, cases, patterns"):
        validate_category(value)
