"""A persona's soul from its role alone, and from what a person wrote: prose or a soul section."""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation.participants import relevance
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.models import Persona, Soul
from nightwatch.domain.personas import SOUL_TEXT_MAX, soul_for_role, soul_from_prose, soul_from_section
from nightwatch.domain.personas.service import PersonaDraft, PersonaService
from tests.fakes import FakeClock, InMemoryMemoryStore, InMemoryPersonaRepository


@pytest.fixture
def service() -> PersonaService:
    return PersonaService(repo=InMemoryPersonaRepository(), store=InMemoryMemoryStore(), clock=FakeClock())


def test_a_persona_created_with_only_a_role_gets_a_soul_built_from_it(service: PersonaService) -> None:
    rita = service.create(PersonaDraft(name="Rita", role="Release Manager")).persona
    assert rita is not None
    assert rita.soul == soul_for_role("Rita", "Release Manager")
    assert rita.soul.who_i_am.startswith("Rita is the team's Release Manager.")
    assert rita.soul.expertise == ("Release Manager",)
    assert all(rita.soul.worldview)
    assert rita.soul.boundaries


def test_a_soul_given_on_create_is_kept_as_given(service: PersonaService) -> None:
    soul = Soul(who_i_am="Rita keeps releases boring.")
    rita = service.create(PersonaDraft(name="Rita", role="Release Manager", soul=soul)).persona
    assert rita is not None
    assert rita.soul == soul


def test_a_soul_from_the_role_makes_a_topic_in_the_role_matter_more() -> None:
    bare = Persona(name="Rita", slug="rita", role="Release Manager")
    whole = Persona(name="Rita", slug="rita", role="Release Manager", soul=soul_for_role("Rita", "Release Manager"))
    topic = "Should we cut the release on Friday?"
    assert relevance(whole, topic) >= relevance(bare, topic) > 0
    assert relevance(whole, "Rotate the signing keys") == 0


def test_prose_becomes_who_the_persona_is() -> None:
    assert soul_from_prose("  Rita keeps releases boring.\n", where="f") == Soul(who_i_am="Rita keeps releases boring.")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   \n", "f is empty"),
        ("Rita\x00keeps", "control character"),
        ("x" * (SOUL_TEXT_MAX + 1), "at most 20,000"),
    ],
)
def test_prose_that_is_not_a_soul_is_refused(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        soul_from_prose(text, where="f")


def test_a_soul_section_is_read_field_by_field_or_from_under_a_soul_key() -> None:
    section = {"who_i_am": "Rita keeps releases boring.", "expertise": ["release trains", "changelogs"]}
    soul = soul_from_section(section, where="f")
    assert soul == Soul(who_i_am="Rita keeps releases boring.", expertise=("release trains", "changelogs"))
    assert soul_from_section({"soul": section}, where="f") == soul


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (None, "holds no soul section"),
        ("just words", "holds no soul section"),
        ({"who_i_am": "x", "tone": "calm"}, r"f: soul has unknown fields \['tone'\]"),
        ({"worldview": "one string"}, "soul.worldview must be a list"),
    ],
)
def test_a_soul_section_that_is_wrong_names_the_file_and_the_field(data: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        soul_from_section(data, where="f")
