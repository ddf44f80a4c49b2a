"""The words and buttons of `/nightwatch memory` and `remember`: a category given in the text, and the question a
clear asks first, with its Clear button behind a confirm dialog."""

from __future__ import annotations

import json
from dataclasses import dataclass

from nightwatch.adapters.slack.blocks import Block, button, confirm_dialog, escape, mrkdwn
from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.memory import CATEGORIES, validate_category
from nightwatch.domain.models import Category, Persona

MEMORY_CLEAR = "memory_clear"
# A category misspelt the likely ways (a singular, a plural): refused with the six names rather than kept as words.
_NEAR_CATEGORIES = frozenset({"profiles", "preference", "entity", "event", "case", "pattern"})


def category_and_lesson(text: str) -> tuple[Category | None, str]:
    """`events: the outage…` as its category and lesson; text without such a first word is all lesson.

    A first word that looks meant as a category but is none (`event:`) is refused with the six names.
    """
    words = text.split(maxsplit=1)
    first, rest = (words[0] if words else ""), (words[1] if len(words) > 1 else "")
    if not first.endswith(":"):
        return None, text
    name = first[:-1].lower()
    if name in CATEGORIES or name in _NEAR_CATEGORIES:
        return validate_category(name), rest
    return None, text


def category_filter(text: str) -> tuple[Category | None, str]:
    """`category:events` (or `category events`) anywhere in `text` as the category to filter by, and the other words.

    An unknown category is refused with the six names.
    """
    words = text.split()
    for at, word in enumerate(words):
        if word.lower().startswith("category:"):
            name, used = word.split(":", 1)[1], 1
            if not name and at + 1 < len(words):
                name, used = words[at + 1], 2
            return validate_category(name), " ".join(words[:at] + words[at + used :])
    return None, text


@dataclass(frozen=True)
class ClearTarget:
    """What a Clear button points at: one persona's memory of one project."""

    persona: str
    project: str

    def encode(self) -> str:
        return json.dumps({"p": self.persona, "j": self.project})

    @classmethod
    def decode(cls, value: str) -> ClearTarget:
        """The target a button's value names; InvalidInputError for a value this app did not write."""
        try:
            data = json.loads(value)
            return cls(persona=str(data["p"]), project=str(data["j"]))
        except (ValueError, TypeError, KeyError) as err:
            raise InvalidInputError(
                "This Clear button no longer points at a memory: run `/nightwatch memory clear` again."
            ) from err


def clear_blocks(persona: Persona, project: str, held: int) -> list[Block]:
    """The question before a clear: what it forgets, how to undo it, and a Clear button behind a confirm dialog;
    NotFoundError when there is nothing to clear."""
    if not held:
        raise NotFoundError(f"{persona.name} has no memory of {project} to clear.")
    what = f"all {held} lesson{'' if held == 1 else 's'} of *{escape(persona.name)}*'s memory of *{escape(project)}*"
    target = ClearTarget(persona.slug, project).encode()
    dialog = confirm_dialog(
        f"Clear {persona.name}'s memory?",
        f"Every lesson of {project} is forgotten. `nightwatch memory rollback` brings them back.",
        "Clear",
    )
    return [
        mrkdwn(f"Clear {what}? The old version is kept: `nightwatch memory rollback` brings it back."),
        {"type": "actions", "elements": [button("Clear memory", MEMORY_CLEAR, target, style="danger", confirm=dialog)]},
    ]
