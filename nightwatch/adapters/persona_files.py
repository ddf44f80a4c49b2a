"""The default personas shipped as YAML files (personas/*.yml), read into Persona values."""

from __future__ import annotations

from pathlib import Path

import yaml

import nightwatch
from nightwatch.domain.errors import ConfigError, InvalidInputError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import persona_from_dict


def default_persona_dir() -> Path:
    """Where the default persona files are: inside an installed package, else the source checkout's personas/."""
    package = Path(nightwatch.__file__).resolve().parent
    for candidate in (package / "default_personas", package.parent / "personas"):
        if any(candidate.glob("*.yml")):
            return candidate
    raise ConfigError(
        f"The default persona files were not found beside {package}; reinstall Night Watch (pip install .)."
    )


def load_default_personas(folder: Path | None = None) -> list[Persona]:
    """Read every *.yml file in `folder` (default: default_persona_dir()) as a persona, in file-name order.

    A file that is not valid YAML or not a valid persona raises InvalidInputError naming the file and the field.
    """
    folder = default_persona_dir() if folder is None else folder
    personas: list[Persona] = []
    for path in sorted(folder.glob("*.yml")):
        personas.append(_load(path))
    slugs = [persona.slug for persona in personas]
    duplicates = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if duplicates:
        raise InvalidInputError(f"Two default persona files in {folder} share the names {duplicates}; rename one.")
    return personas


def _load(path: Path) -> Persona:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidInputError(f"{path}: could not be read ({err}).") from err
    except yaml.YAMLError as err:
        raise InvalidInputError(f"{path}: is not valid YAML ({err}); fix the file.") from err
    try:
        return persona_from_dict(data)
    except InvalidInputError as err:
        raise InvalidInputError(f"{path}: {err}") from err
