"""Validation of persona and project names, and the slugs derived from them.

Slugs are the only strings that ever become path segments, so they are built from validated input and
checked again against a strict pattern: lower-case ASCII letters, digits and single hyphens.
"""

from __future__ import annotations

import re
import unicodedata

from nightwatch.domain.errors import InvalidNameError

PERSONA_NAME_MAX = 40
PROJECT_NAME_MAX = 80

_PERSONA_NAME = re.compile(r"[A-Za-z0-9 _-]+")
_PROJECT_NAME = re.compile(r"[A-Za-z0-9._ -]+")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _describe(raw: str) -> str:
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    return repr(shown.replace("\x00", "\\0"))


def validate_persona_name(raw: str) -> str:
    """Return the persona name with outer spaces removed, or raise InvalidNameError saying what to fix."""
    if not isinstance(raw, str):
        raise InvalidNameError("A persona name must be text.")
    name = raw.strip()
    if not name:
        raise InvalidNameError("A persona name cannot be empty: give 1-40 letters, digits, spaces, - or _.")
    if len(name) > PERSONA_NAME_MAX:
        raise InvalidNameError(
            f"The persona name {_describe(name)} is {len(name)} characters long; use at most {PERSONA_NAME_MAX}."
        )
    if not _PERSONA_NAME.fullmatch(name):
        raise InvalidNameError(
            f"The persona name {_describe(name)} has characters that are not allowed; "
            "use only letters A-Z, digits, spaces, - and _."
        )
    slug = _slugify(name)
    if not slug:
        raise InvalidNameError(f"The persona name {_describe(name)} needs at least one letter or digit.")
    return " ".join(name.split())


def persona_slug(name: str) -> str:
    """Derive the folder slug for a persona name (validating it first)."""
    return _slugify(validate_persona_name(name))


def project_slug(raw: str) -> str:
    """Derive the folder slug for a project or channel name, or raise InvalidNameError.

    Accepts letters, digits, spaces, '.', '_' and '-', up to 80 characters; `Night Watch_CLI` -> `night-watch-cli`.
    """
    if not isinstance(raw, str):
        raise InvalidNameError("A project name must be text.")
    name = raw.strip().lstrip("#")
    if not name or len(name) > PROJECT_NAME_MAX or not _PROJECT_NAME.fullmatch(name):
        raise InvalidNameError(
            f"The project name {_describe(raw)} is not usable; give 1-{PROJECT_NAME_MAX} letters A-Z, digits, "
            "spaces, '.', '_' or '-' (for example: night-watch-cli)."
        )
    slug = _slugify(name)
    if not slug:
        raise InvalidNameError(f"The project name {_describe(raw)} needs at least one letter or digit.")
    return slug


def check_slug(slug: str) -> str:
    """Return `slug` if it is a well-formed slug, else raise InvalidNameError. Guards every path segment."""
    if not isinstance(slug, str) or len(slug) > PROJECT_NAME_MAX or not _SLUG.fullmatch(slug):
        raise InvalidNameError(
            f"{_describe(str(slug))} is not a valid slug; slugs are lower-case letters, digits and single hyphens."
        )
    return slug


def _slugify(name: str) -> str:
    # NFKC would fold look-alikes into ASCII; we refuse non-ASCII earlier instead, so this only lower-cases.
    ascii_only = unicodedata.normalize("NFC", name).encode("ascii", "ignore").decode()
    return "-".join(part for part in re.split(r"[^a-z0-9]+", ascii_only.lower()) if part)
