from __future__ import annotations

import pytest

from nightwatch.domain.errors import InvalidNameError
from nightwatch.domain.names import check_slug, persona_slug, project_slug, validate_persona_name


@pytest.mark.parametrize(
    ("name", "slug"),
    [("Maya", "maya"), ("Tech Lead_2", "tech-lead-2"), ("  Dev  ", "dev"), ("a-b  c", "a-b-c"), ("X" * 40, "x" * 40)],
)
def test_valid_persona_names_give_path_safe_slugs(name: str, slug: str) -> None:
    assert persona_slug(name) == slug
    assert check_slug(slug) == slug


@pytest.mark.parametrize(
    "hostile",
    ["../../etc", "..", "/abs/path", "maya\x00", "x" * 10_000, "m\u0430ya", "", "   ", "---", "a/b", "ma\nya"],
)
def test_hostile_persona_names_are_refused_with_a_message(hostile: str) -> None:
    with pytest.raises(InvalidNameError) as caught:
        validate_persona_name(hostile)
    message = str(caught.value)
    assert "persona name" in message
    assert len(message) < 300  # a 10,000-character name is not echoed back whole


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("night-watch-cli", "night-watch-cli"),
        ("#General", "general"),
        ("Night Watch_CLI", "night-watch-cli"),
        ("v1.2", "v1-2"),
    ],
)
def test_project_slugs(raw: str, slug: str) -> None:
    assert project_slug(raw) == slug


@pytest.mark.parametrize("hostile", ["../x", "/etc", "a\x00", "p" * 81, "", "..", "prоject"])
def test_hostile_projects_are_refused(hostile: str) -> None:
    with pytest.raises(InvalidNameError):
        project_slug(hostile)


@pytest.mark.parametrize("bad", ["..", "a/b", "A", "-a", "a-", "a--b", "", "a\x00", "é"])
def test_check_slug_refuses_anything_but_plain_slugs(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        check_slug(bad)
