"""The persona dict codec: round trips and errors that name the field at fault."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from nightwatch.domain.errors import InvalidInputError, InvalidNameError
from nightwatch.domain.models import Persona, Skill, Soul, Style
from nightwatch.domain.personas.codec import section_to_dict
from nightwatch.domain.personas.service import persona_from_dict, persona_to_dict


def full_persona() -> Persona:
    """A persona with every field set to something other than its default, including unicode text."""
    return Persona(
        name="Zoe Test",
        slug="zoe-test",
        role="Security Reviewer — AppSec",
        avatar="🔐",
        soul=Soul(
            who_i_am="I'm Zoë; I review auth flows. 日本語も話します.",
            worldview=("Every input is hostile.", "Fail closed."),
            opinions={"security": ("Least privilege.", "Rotate keys."), "api design": ("Version public APIs.",)},
            expertise=("OAuth", "JWT"),
            interests=("CTFs",),
            tensions=("Speed versus safety.",),
            boundaries=("No secrets in threads.",),
            pet_peeves=('"It\'s internal."',),
        ),
        style=Style(
            voice_principles=("Risk first.",),
            sentence_structure="Short.\nDeclarative.",
            tone="calm",
            words_used=("blast radius",),
            words_avoided=("bulletproof",),
            emoji_usage="⚠️ only for blockers",
            rhetorical_moves=("Walks the attack.",),
            anti_patterns=("Generic OWASP lists.",),
            good_examples=("⚠️ Blocking: IDOR on /invoices/{id}.",),
        ),
        skill=Skill(modes={"pr_review": "Check auth.", "incident": "Contain first."}, additional_instructions=("x",)),
        model="claude-haiku-4-5",
        system_prompt_override="You are Zoë.\n",
        active=False,
    )


def test_the_full_persona_sets_every_section_field() -> None:
    persona = full_persona()
    for section in (persona.soul, persona.style, persona.skill):
        for field in dataclasses.fields(section):
            assert getattr(section, field.name), f"{type(section).__name__}.{field.name} is left at its default"


def test_round_trip_keeps_every_field() -> None:
    persona = full_persona()
    data = persona_to_dict(persona)
    again = persona_from_dict(data)
    assert again == dataclasses.replace(persona, system_prompt_override="You are Zoë.")
    assert persona_to_dict(again)["soul"]["opinions"] == {
        "security": ["Least privilege.", "Rotate keys."],
        "api design": ["Version public APIs."],
    }


def test_dict_output_is_plain_data() -> None:
    data = section_to_dict(full_persona().skill)
    assert data == {
        "modes": {"pr_review": "Check auth.", "incident": "Contain first."},
        "additional_instructions": ["x"],
    }
    assert type(data["modes"]) is dict


def test_missing_sections_and_empty_values_take_defaults() -> None:
    persona = persona_from_dict({"name": "Dev", "role": "Implementer", "soul": None, "style": {"tone": None}})
    assert persona == Persona(name="Dev", slug="dev", role="Implementer")


def test_text_is_trimmed() -> None:
    persona = persona_from_dict({"name": " Dev ", "role": "Implementer", "soul": {"worldview": ["  Ship small.  "]}})
    assert persona.soul.worldview == ("Ship small.",)


BAD: list[tuple[dict[str, Any], str]] = [
    ({"role": "x"}, "no 'name'"),
    ({"name": "Dev"}, "needs a role"),
    ({"name": "Dev", "role": "x", "colour": "red"}, "unknown fields ['colour']"),
    ({"name": "Dev", "role": "x", "soul": {"soull": "x"}}, "soul has unknown fields ['soull']"),
    ({"name": "Dev", "role": "x", "soul": "I am Dev"}, "soul must be a mapping"),
    ({"name": "Dev", "role": "x", "soul": {"worldview": "one big string"}}, "soul.worldview must be a list"),
    (
        {"name": "Dev", "role": "x", "soul": {"worldview": ["ok", 3]}},
        "soul.worldview item 2 must be text, not a number",
    ),
    ({"name": "Dev", "role": "x", "soul": {"worldview": ["ok", " "]}}, "soul.worldview item 2 is empty"),
    ({"name": "Dev", "role": "x", "soul": {"opinions": ["a"]}}, "soul.opinions must be a mapping"),
    ({"name": "Dev", "role": "x", "soul": {"opinions": {"db": [{"a": 1}]}}}, "soul.opinions.db item 1 must be text"),
    ({"name": "Dev", "role": "x", "soul": {"opinions": {3: ["a"]}}}, "soul.opinions has a key 3"),
    ({"name": "Dev", "role": "x", "style": {"tone": ["calm"]}}, "style.tone must be text, not a list"),
    ({"name": "Dev", "role": "x", "skill": {"modes": {"PR Review": "x"}}}, "skill.modes has the mode 'PR Review'"),
    ({"name": "Dev", "role": "x", "skill": {"modes": {"pr_review": True}}}, "skill.modes.pr_review must be text"),
    ({"name": "Dev", "role": "x", "active": "yes"}, "active must be true or false"),
    ({"name": "Dev", "role": "x", "avatar": 5}, "avatar must be text"),
    ({"name": "Dev", "role": "x", "system_prompt_override": 5}, "override must be text"),
    ({"name": "Dev", "role": "x", "system_prompt_override": "x" * 50_001}, "at most 50,000"),
    ({"name": "Dev", "role": "QA\x00lead"}, "The role contains the control character '\\x00'"),
    ({"name": "Dev", "role": "QA \udcff"}, "The role contains '\\udcff', a stray byte"),
    ({"name": "Dev", "role": "x", "system_prompt_override": "Be \x1b[5m brief"}, "override contains the control"),
]


@pytest.mark.parametrize(("data", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_content_names_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        persona_from_dict(data)
    assert message in str(caught.value)


@pytest.mark.parametrize("data", [None, ["name", "Dev"], "name: Dev"])
def test_a_persona_must_be_a_mapping(data: object) -> None:
    with pytest.raises(InvalidInputError, match="must be a mapping"):
        persona_from_dict(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["../../etc", "Dev\x00", "x" * 10_000, "Dеv", 42])
def test_bad_names_are_refused(name: object) -> None:
    with pytest.raises(InvalidNameError):
        persona_from_dict({"name": name, "role": "Implementer"})
