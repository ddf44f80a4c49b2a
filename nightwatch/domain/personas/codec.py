"""Personas to and from plain dicts (YAML files, JSON columns, forms), and the rules for each persona field.

Every error names the field it is about (`soul.worldview item 3`, `skill.modes`), so a person fixing a YAML file or
a form knows where to look. The soul, style and skill sections are read field by field from their dataclasses, so a
field added to models.py is picked up here without a second list to keep in step.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import urlsplit

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable
from nightwatch.domain.models import Persona, Skill, Soul, Style
from nightwatch.domain.names import persona_slug, validate_persona_name

ROLE_MAX = 200
AVATAR_MAX = 500
MODEL_MAX = 100
OVERRIDE_MAX = 50_000

PERSONA_KEYS = ("name", "role", "avatar", "model", "system_prompt_override", "active", "soul", "style", "skill")

_SHORTCODE = re.compile(r":[a-z0-9_+'-]{1,60}:")
_MODE_KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
_MODEL = re.compile(r"[A-Za-z0-9._:/@-]+")
_EMOJI_JOINERS = frozenset("\u200d\ufe0e\ufe0f\u20e3")
_KEYCAP_BASES = frozenset("0123456789#*")

Section = TypeVar("Section", Soul, Style, Skill)


# --- single fields ------------------------------------------------------------------------------------------------


def validate_role(raw: object) -> str:
    """Return the role trimmed, or raise InvalidInputError: a role is 1-200 characters of printable text."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInputError("A persona needs a role, such as 'Security Reviewer' (at most 200 characters).")
    role = " ".join(raw.split())
    if len(role) > ROLE_MAX:
        raise InvalidInputError(f"The role is {len(role)} characters long; shorten it to at most {ROLE_MAX}.")
    return check_printable(role, what="The role")


def validate_avatar(raw: object) -> str:
    """Return the avatar (an emoji, a `:shortcode:` or an http(s) image URL), '' for none, or raise."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise InvalidInputError("The avatar must be text: an emoji, a :shortcode: or an https:// image URL.")
    avatar = raw.strip()
    if not avatar or _SHORTCODE.fullmatch(avatar) or _is_emoji(avatar) or _is_image_url(avatar):
        return avatar
    shown = avatar if len(avatar) <= 40 else avatar[:37] + "..."
    raise InvalidInputError(
        f"The avatar {shown!r} is not usable; give an emoji (🔒), a Slack shortcode (:lock:) "
        f"or an http(s) image URL of at most {AVATAR_MAX} characters."
    )


def validate_model(raw: object) -> str | None:
    """Return a model-name override, None for none, or raise InvalidInputError."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str) or len(raw.strip()) > MODEL_MAX or not _MODEL.fullmatch(raw.strip()):
        raise InvalidInputError(
            f"The model override must be a model name such as 'claude-sonnet-4-5' (at most {MODEL_MAX} characters, "
            "no spaces); leave it empty to use the default model."
        )
    return raw.strip()


def validate_override(raw: object) -> str | None:
    """Return a system-prompt override, None for none, or raise InvalidInputError."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str):
        raise InvalidInputError("The system-prompt override must be text; leave it empty to use the compiled prompt.")
    if len(raw) > OVERRIDE_MAX:
        raise InvalidInputError(
            f"The system-prompt override is {len(raw):,} characters long; shorten it to at most {OVERRIDE_MAX:,}."
        )
    return check_printable(raw.strip(), what="The system-prompt override")


def _is_emoji(text: str) -> bool:
    if len(text) > 16:
        return False
    for char in text:
        code = ord(char)
        if char in _EMOJI_JOINERS or unicodedata.category(char) == "So":
            continue
        if 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:  # skin tones; tag letters of flags
            continue
        if char in _KEYCAP_BASES and "\u20e3" in text:
            continue
        return False
    return True


def _is_image_url(text: str) -> bool:
    if len(text) > AVATAR_MAX or any(char.isspace() or not char.isprintable() for char in text):
        return False
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host)


# --- typed readers for section fields ------------------------------------------------------------------------------


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _text(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInputError(f"{where} must be text, not {_kind(value)}.")
    return value.strip()


def _texts(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInputError(f"{where} must be a list of text items, not {_kind(value)}.")
    items: list[str] = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise InvalidInputError(f"{where} item {number} must be text, not {_kind(item)}.")
        if not item.strip():
            raise InvalidInputError(f"{where} item {number} is empty; fill it in or remove it.")
        items.append(item.strip())
    return tuple(items)


def _mapping(value: object, where: str) -> Mapping[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where} must be a mapping of names to values, not {_kind(value)}.")
    return value


def _key(key: object, where: str) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidInputError(f"{where} has a key {key!r} that is not a name; use words such as 'security'.")
    return key.strip()


def _texts_by_key(value: object, where: str) -> Mapping[str, tuple[str, ...]]:
    result: dict[str, tuple[str, ...]] = {}
    for raw_key, item in _mapping(value, where).items():
        key = _key(raw_key, where)
        result[key] = _texts(item, f"{where}.{key}")
    return MappingProxyType(result)


def _modes(value: object, where: str) -> Mapping[str, str]:
    result: dict[str, str] = {}
    for raw_key, item in _mapping(value, where).items():
        key = _key(raw_key, where)
        if not _MODE_KEY.fullmatch(key):
            raise InvalidInputError(
                f"{where} has the mode {key!r}; mode names are lower-case words joined by _, such as 'pr_review'."
            )
        result[key] = _text(item, f"{where}.{key}")
    return MappingProxyType(result)


_READERS: dict[str, Callable[[object, str], object]] = {
    "str": _text,
    "tuple[str, ...]": _texts,
    "Mapping[str, tuple[str, ...]]": _texts_by_key,
    "Mapping[str, str]": _modes,
}


def _writer(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return {key: _writer(item) for key, item in value.items()}
    return value


# --- sections -------------------------------------------------------------------------------------------------------


def _section_from_dict(cls: type[Section], data: object, where: str) -> Section:
    mapping = _mapping(data, where)
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(str(key) for key in mapping if key not in fields)
    if unknown:
        raise InvalidInputError(f"{where} has unknown fields {unknown}; known fields are {sorted(fields)}.")
    values: dict[str, Any] = {
        name: _READERS[str(fields[name].type)](item, f"{where}.{name}") for name, item in mapping.items()
    }
    return cls(**values)


def _section_to_dict(section: Soul | Style | Skill) -> dict[str, Any]:
    return {field.name: _writer(getattr(section, field.name)) for field in dataclasses.fields(section)}


def soul_from_dict(data: object, where: str = "soul") -> Soul:
    """Read a Soul from a mapping; raise InvalidInputError naming the field at fault."""
    return _section_from_dict(Soul, data, where)


def style_from_dict(data: object, where: str = "style") -> Style:
    """Read a Style from a mapping; raise InvalidInputError naming the field at fault."""
    return _section_from_dict(Style, data, where)


def skill_from_dict(data: object, where: str = "skill") -> Skill:
    """Read a Skill from a mapping; raise InvalidInputError naming the field at fault."""
    return _section_from_dict(Skill, data, where)


def section_to_dict(section: Soul | Style | Skill) -> dict[str, Any]:
    """Write a Soul, Style or Skill as plain lists and dicts (JSON and YAML ready)."""
    return _section_to_dict(section)


# --- whole personas -------------------------------------------------------------------------------------------------


def persona_from_dict(data: Mapping[str, Any]) -> Persona:
    """Build a Persona (no id, no times) from a mapping such as a parsed YAML file; raise InvalidInputError."""
    if not isinstance(data, Mapping):
        raise InvalidInputError(
            f"A persona must be a mapping of fields ({', '.join(PERSONA_KEYS)}), not {_kind(data)}."
        )
    unknown = sorted(str(key) for key in data if key not in PERSONA_KEYS)
    if unknown:
        raise InvalidInputError(f"The persona has unknown fields {unknown}; known fields are {list(PERSONA_KEYS)}.")
    if "name" not in data:
        raise InvalidInputError("The persona has no 'name'; give 1-40 letters, digits, spaces, - or _.")
    active = data.get("active", True)
    if not isinstance(active, bool):
        raise InvalidInputError(f"active must be true or false, not {_kind(active)}.")
    name = validate_persona_name(data["name"])
    return Persona(
        name=name,
        slug=persona_slug(name),
        role=validate_role(data.get("role")),
        avatar=validate_avatar(data.get("avatar")),
        soul=soul_from_dict(data.get("soul")),
        style=style_from_dict(data.get("style")),
        skill=skill_from_dict(data.get("skill")),
        model=validate_model(data.get("model")),
        system_prompt_override=validate_override(data.get("system_prompt_override")),
        active=active,
    )


def persona_to_dict(persona: Persona) -> dict[str, Any]:
    """Write a persona's own fields as plain data; `persona_from_dict` reads it back (id and times are left out)."""
    return {
        "name": persona.name,
        "role": persona.role,
        "avatar": persona.avatar,
        "model": persona.model,
        "system_prompt_override": persona.system_prompt_override,
        "active": persona.active,
        "soul": _section_to_dict(persona.soul),
        "style": _section_to_dict(persona.style),
        "skill": _section_to_dict(persona.skill),
    }
