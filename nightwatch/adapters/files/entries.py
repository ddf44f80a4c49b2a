"""What a path under the data root is, as the files store checks it: a real file or folder, a slug a persona holds."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from nightwatch.domain.errors import InvalidNameError
from nightwatch.domain.personas import check_slug
from nightwatch.domain.personas.ports import PersonaRepository


def is_file(path: Path) -> bool:
    """True for a regular file; a link is never a file here."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_folder(path: Path) -> bool:
    """True for a real folder; a link is never a folder here."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def held_by_a_persona(personas: PersonaRepository, slug: str) -> bool:
    found = personas.find(slug)  # a name matches before a slug does; a name that is a slug is that persona's
    return found is not None and found.slug == slug


def is_slug(name: str) -> bool:
    try:
        check_slug(name)
    except InvalidNameError:
        return False
    return True
