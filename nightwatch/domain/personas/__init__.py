"""Personas: who takes part, and the rules for their names, slugs and fields.

The service creates, updates, renames (memory migrates) and deletes (memory is archived) personas, so this room stands
above memory, pins and shares and uses their ports; the codec turns personas into and out of the YAML/dict form; files
keeps the personas that YAML files define in step with their files (while nobody edits them in Slack or the CLI). The
name and slug rules every room shares are `nightwatch.domain.names`, handed on here too.
"""

from nightwatch.domain.names import (
    PERSONA_NAME_MAX,
    PROJECT_NAME_MAX,
    check_slug,
    persona_slug,
    project_slug,
    validate_persona_name,
)
from nightwatch.domain.personas.codec import (
    AVATAR_MAX,
    MODEL_MAX,
    ROLE_MAX,
    persona_from_dict,
    section_to_dict,
    skill_from_dict,
    soul_from_dict,
    style_from_dict,
    validate_avatar,
    validate_model,
    validate_override,
    validate_role,
)
from nightwatch.domain.personas.files import FileApplied, FileOutcome, FilePersona, fingerprint
from nightwatch.domain.personas.service import PersonaDraft, PersonaOutcome, PersonaService, persona_to_dict
from nightwatch.domain.personas.souls import SOUL_TEXT_MAX, soul_for_role, soul_from_prose, soul_from_section

__all__ = [
    "AVATAR_MAX",
    "MODEL_MAX",
    "PERSONA_NAME_MAX",
    "PROJECT_NAME_MAX",
    "ROLE_MAX",
    "SOUL_TEXT_MAX",
    "FileApplied",
    "FileOutcome",
    "FilePersona",
    "PersonaDraft",
    "PersonaOutcome",
    "PersonaService",
    "check_slug",
    "fingerprint",
    "persona_from_dict",
    "persona_slug",
    "persona_to_dict",
    "project_slug",
    "section_to_dict",
    "skill_from_dict",
    "soul_for_role",
    "soul_from_dict",
    "soul_from_prose",
    "soul_from_section",
    "style_from_dict",
    "validate_avatar",
    "validate_model",
    "validate_override",
    "validate_persona_name",
    "validate_role",
]
