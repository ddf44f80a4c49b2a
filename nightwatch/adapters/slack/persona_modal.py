"""The persona modal: build it from a persona, and read a submission back into a draft or inline errors.

Each input's block id names the field, so a validation error lands under the input it is about
(`response_action: errors`). Fields the modal does not show (interests, tensions, skill modes, ...) are kept from the
persona being edited.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from nightwatch.adapters.slack.blocks import Block, plain
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.models import Persona, Skill, Soul, Style
from nightwatch.domain.personas import (
    AVATAR_MAX,
    MODEL_MAX,
    PERSONA_NAME_MAX,
    ROLE_MAX,
    PersonaDraft,
    validate_avatar,
    validate_model,
    validate_override,
    validate_persona_name,
    validate_role,
)

CALLBACK_ID = "persona_save"
INPUT_MAX = 3000  # Slack's limit for a plain_text_input
ACTIVE = "active"


@dataclass(frozen=True)
class Field:
    """One input of the modal: block/action id, label, whether it is multi-line, its limit and a hint."""

    key: str
    label: str
    multiline: bool = False
    max_length: int = INPUT_MAX
    hint: str = ""
    optional: bool = True


FIELDS = (
    Field("name", "Name", max_length=PERSONA_NAME_MAX, hint="1-40 letters, digits, spaces, - or _.", optional=False),
    Field("role", "Role", max_length=ROLE_MAX, hint="For example: Security Reviewer.", optional=False),
    Field("avatar", "Avatar", max_length=AVATAR_MAX, hint="An emoji (🔒), a :shortcode: or an https:// image URL."),
    Field("who_i_am", "Who I am", multiline=True),
    Field("worldview", "Worldview", multiline=True, hint="One belief per line."),
    Field("expertise", "Expertise", multiline=True, hint="One area per line."),
    Field("opinions", "Opinions", multiline=True, hint="One per line, as 'domain: opinion'."),
    Field("tone", "Tone", max_length=500),
    Field("voice_principles", "Voice principles", multiline=True, hint="One per line."),
    Field("words_used", "Words used", multiline=True, hint="Separate with commas or new lines."),
    Field("words_avoided", "Words avoided", multiline=True, hint="Separate with commas or new lines."),
    Field("instructions", "Skill instructions", multiline=True, hint="Extra instructions, one per line."),
    Field("model", "Model override", max_length=MODEL_MAX, hint="Empty: the default model."),
    Field(
        "system_prompt_override",
        "System prompt override",
        multiline=True,
        hint="Replaces the compiled soul, style and skill. Leave empty to compile them.",
    ),
)


# --- building ----------------------------------------------------------------------------------------------------


def persona_modal(persona: Persona | None = None) -> Block:
    """The create (no persona) or edit modal; the persona's id travels in private_metadata."""
    current = _current_values(persona) if persona else {}
    blocks = [_input(field, current.get(field.key, "")) for field in FIELDS]
    blocks.append(_active_input(persona.active if persona else True))
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "private_metadata": json.dumps({"id": persona.id if persona else None}),
        "title": plain("Edit persona" if persona else "New persona", 24),
        "submit": plain("Save" if persona else "Create", 24),
        "close": plain("Cancel", 24),
        "blocks": blocks,
    }


def _input(field: Field, value: str) -> Block:
    element: Block = {
        "type": "plain_text_input",
        "action_id": field.key,
        "multiline": field.multiline,
        "max_length": field.max_length,
    }
    if value:
        element["initial_value"] = value[: field.max_length]
    block: Block = {
        "type": "input",
        "block_id": field.key,
        "label": plain(field.label, 2000),
        "element": element,
        "optional": field.optional,
    }
    if field.hint:
        block["hint"] = plain(field.hint, 2000)
    return block


def _active_input(active: bool) -> Block:
    option = {"text": plain("Active: takes part in deliberations"), "value": ACTIVE}
    element: Block = {"type": "checkboxes", "action_id": ACTIVE, "options": [option]}
    if active:
        element["initial_options"] = [option]
    return {"type": "input", "block_id": ACTIVE, "label": plain("Status"), "element": element, "optional": True}


def _current_values(persona: Persona) -> dict[str, str]:
    soul, style = persona.soul, persona.style
    opinions = [f"{domain}: {item}" for domain, items in soul.opinions.items() for item in items]
    return {
        "name": persona.name,
        "role": persona.role,
        "avatar": persona.avatar,
        "who_i_am": soul.who_i_am,
        "worldview": "\n".join(soul.worldview),
        "expertise": "\n".join(soul.expertise),
        "opinions": "\n".join(opinions),
        "tone": style.tone,
        "voice_principles": "\n".join(style.voice_principles),
        "words_used": ", ".join(style.words_used),
        "words_avoided": ", ".join(style.words_avoided),
        "instructions": "\n".join(persona.skill.additional_instructions),
        "model": persona.model or "",
        "system_prompt_override": persona.system_prompt_override or "",
    }


# --- reading -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    """A submitted persona modal: the persona id being edited (None on create) and the values given."""

    persona_id: int | None
    values: Mapping[str, str]
    active: bool

    @classmethod
    def parse(cls, view: Mapping[str, Any]) -> Submission:
        meta = json.loads(view.get("private_metadata") or "{}")
        state: Mapping[str, Mapping[str, Any]] = view.get("state", {}).get("values", {})
        values = {field.key: _text(state, field.key) for field in FIELDS}
        selected = state.get(ACTIVE, {}).get(ACTIVE, {}).get("selected_options") or []
        active = any(option.get("value") == ACTIVE for option in selected) if ACTIVE in state else True
        persona_id = meta.get("id")
        return cls(
            persona_id=int(persona_id) if persona_id is not None else None,
            values=values,
            active=active,
        )


def _text(state: Mapping[str, Mapping[str, Any]], key: str) -> str:
    value = state.get(key, {}).get(key, {}).get("value")
    return value.strip() if isinstance(value, str) else ""


def field_errors(submission: Submission) -> dict[str, str]:
    """Inline errors by block id for every field that breaks its rule (duplicates are checked by the caller)."""
    errors: dict[str, str] = {}
    for key, check in _CHECKS.items():
        try:
            check(submission.values[key])
        except InvalidInputError as err:
            errors[key] = str(err)
    for field in FIELDS:
        if len(submission.values[field.key]) > field.max_length and field.key not in errors:
            errors[field.key] = (
                f"{field.label} is {len(submission.values[field.key])} characters; use at most {field.max_length}."
            )
    return errors


def _opinions(text: str) -> Mapping[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    for number, line in enumerate(_lines(text), start=1):
        domain, sep, opinion = line.partition(":")
        if not sep or not domain.strip() or not opinion.strip():
            raise InvalidInputError(f"Opinions line {number} should read 'domain: opinion', e.g. 'testing: ...'.")
        grouped.setdefault(domain.strip(), []).append(opinion.strip())
    return MappingProxyType({domain: tuple(items) for domain, items in grouped.items()})


_CHECKS: dict[str, Callable[[str], object]] = {
    "name": validate_persona_name,
    "role": validate_role,
    "avatar": validate_avatar,
    "model": validate_model,
    "system_prompt_override": validate_override,
    "opinions": _opinions,
}


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip().lstrip("-•*").strip() for line in text.splitlines() if line.strip().lstrip("-•*").strip())


def _words(text: str) -> tuple[str, ...]:
    return tuple(word.strip() for word in text.replace("\n", ",").split(",") if word.strip())


def to_draft(submission: Submission, base: Persona | None) -> PersonaDraft:
    """The draft to create or update from; sections start from `base` so fields not in the modal are kept."""
    v = submission.values
    soul, style, skill = (base.soul, base.style, base.skill) if base else (Soul(), Style(), Skill())
    return PersonaDraft(
        name=v["name"],
        role=v["role"],
        avatar=v["avatar"],
        soul=replace(
            soul,
            who_i_am=v["who_i_am"],
            worldview=_lines(v["worldview"]),
            expertise=_lines(v["expertise"]),
            opinions=_opinions(v["opinions"]),
        ),
        style=replace(
            style,
            tone=v["tone"],
            voice_principles=_lines(v["voice_principles"]),
            words_used=_words(v["words_used"]),
            words_avoided=_words(v["words_avoided"]),
        ),
        skill=replace(skill, additional_instructions=_lines(v["instructions"])),
        model=v["model"],
        system_prompt_override=v["system_prompt_override"],
        active=submission.active,
    )
