"""A persona's soul when a person gives only a role, and a soul a person wrote in a file of their own.

A persona created with just a name and a role still needs something to think with: its soul is built from the role
(who it is, how it sees the work, the role as its expertise), so the model, the offline model and the choice of
who takes part all have the role's words to match a topic against. Nothing here names a role: any role gets one.

A soul file is either the soul section of a persona file (a mapping, already parsed by whoever read the file) or
prose, which becomes "who I am" as written.
"""

from __future__ import annotations

from collections.abc import Mapping

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable
from nightwatch.domain.models import Soul
from nightwatch.domain.personas.codec import soul_from_dict

SOUL_TEXT_MAX = 20_000  # characters of prose: a rich soul section is a few thousand


def soul_for_role(name: str, role: str) -> Soul:
    """A short, sensible soul for a persona known only by its name and role."""
    side = role.lower()
    return Soul(
        who_i_am=(
            f"{name} is the team's {role}. {name} looks at every topic from the {side} side, says plainly what that "
            "side needs before the team goes ahead, and leaves to teammates what their roles own."
        ),
        worldview=(
            f"A decision is done only when its {side} side is done too.",
            "Say what you need in a sentence, with the reason, and who will do it.",
        ),
        expertise=(role,),
        boundaries=("Speak for your own role; defer to teammates on theirs.",),
    )


def soul_from_prose(text: str, *, where: str) -> Soul:
    """A soul whose "who I am" is this prose; InvalidInputError (naming `where`) when it is empty or not text."""
    prose = check_printable(text, what=where).strip()
    if not prose:
        raise InvalidInputError(f"{where} is empty; write who the persona is, in a few sentences.")
    if len(prose) > SOUL_TEXT_MAX:
        raise InvalidInputError(f"{where} holds {len(prose):,} characters; a soul is at most {SOUL_TEXT_MAX:,}.")
    return Soul(who_i_am=prose)


def soul_from_section(data: object, *, where: str) -> Soul:
    """A soul from a parsed soul section (or a whole persona mapping with a `soul` key); errors name the field."""
    if isinstance(data, Mapping) and set(data) == {"soul"}:
        data = data["soul"]
    if not isinstance(data, Mapping) or not data:
        raise InvalidInputError(
            f"{where} holds no soul section: write a mapping such as `who_i_am: ...` and `worldview: [...]`, or "
            "give a .md or .txt file of prose."
        )
    try:
        soul = soul_from_dict(data)
    except InvalidInputError as err:
        raise InvalidInputError(f"{where}: {err}") from err
    for text in (soul.who_i_am, *soul.worldview, *soul.expertise, *soul.boundaries, *soul.pet_peeves):
        check_printable(text, what=where)
    return soul
