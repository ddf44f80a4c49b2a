"""Block Kit for teaching in a thread: the offer to forget a lesson (Forget it / Keep it), what became of it, and the
answer when nothing close was found. Every lesson text passed in is sanitised mrkdwn already.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nightwatch.adapters.slack.blocks import Block, button, clip, confirm_dialog, context, escape, mrkdwn
from nightwatch.adapters.slack.views import added_by
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.teaching import TAUGHT, Match

TEACH_FORGET = "teach_forget"
TEACH_KEEP = "teach_keep"

_PERSONAS_MAX = 10
_FIELD_MAX = 100
_SLACK_USER = re.compile(r"[UW][A-Z0-9]+")
STALE_BUTTON = 'This button no longer points at a lesson: ask again in the thread ("forget that …").'


@dataclass(frozen=True)
class TeachTarget:
    """What the Forget it / Keep it buttons point at: the personas holding the lesson, its project, its id, and who
    asked to forget it."""

    personas: tuple[str, ...]
    project: str
    lesson: str
    asker: str

    def encode(self) -> str:
        return json.dumps({"p": list(self.personas), "j": self.project, "l": self.lesson, "a": self.asker})

    @classmethod
    def decode(cls, value: str) -> TeachTarget:
        """The target a button's value names; InvalidInputError for a value this app did not write."""
        try:
            data = json.loads(value)
        except ValueError as err:
            raise InvalidInputError(STALE_BUTTON) from err
        if not isinstance(data, dict):
            raise InvalidInputError(STALE_BUTTON)
        personas, fields = data.get("p"), [data.get(key) for key in ("j", "l", "a")]
        if not isinstance(personas, list) or not 0 < len(personas) <= _PERSONAS_MAX:
            raise InvalidInputError(STALE_BUTTON)
        if not all(_short_text(item) for item in [*personas, *fields]):
            raise InvalidInputError(STALE_BUTTON)
        project, lesson, asker = (str(item) for item in fields)
        return cls(tuple(str(slug) for slug in personas), project, lesson, asker)


def _short_text(item: Any) -> bool:
    return isinstance(item, str) and 0 < len(item) <= _FIELD_MAX


def names_text(personas: Sequence[Persona], *, bold: bool = False) -> str:
    """ "Maya", "Maya and Carlos", "Maya, Carlos and Priya" (escaped for mrkdwn; each in bold if asked)."""
    names = [f"*{escape(p.name)}*" if bold else escape(p.name) for p in personas]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def slack_author(lesson: Lesson) -> str | None:
    """The Slack user who taught or added the lesson; None for the persona's own, or the CLI's."""
    return lesson.author if lesson.author and _SLACK_USER.fullmatch(lesson.author) else None


def who_may_forget(lessons: Sequence[Lesson]) -> str:
    """Who may confirm forgetting these copies of a lesson: their author (a Slack user), or an admin."""
    authors = sorted({author for lesson in lessons if (author := slack_author(lesson))})
    if authors:
        return f"Only {' or '.join(f'<@{author}>' for author in authors)} (who taught it) or a Night Watch admin"
    return "Only a Night Watch admin"


def origin_text(lesson: Lesson) -> str:
    """Where the lesson came from: "taught by @name", "added by @name", "added from the CLI", or the persona."""
    if lesson.kind == TAUGHT and slack_author(lesson):
        return f"taught by <@{lesson.author}>"
    return added_by(lesson) or "recorded by the persona itself"


def forget_offer_blocks(match: Match, target: TeachTarget, safe_text: str) -> list[Block]:
    """The confirmation posted in the thread: the lesson, whose it is, who may confirm, and the two buttons."""
    lesson = match.lesson
    origin = origin_text(lesson)
    who = who_may_forget([lesson])
    value = target.encode()
    return [
        mrkdwn(
            f"<@{target.asker}> asked to forget this lesson of {names_text(match.personas, bold=True)} "
            f"(project *{escape(target.project)}*):\n>{safe_text}"
        ),
        context(f"`{lesson.id}` · {origin} · {who} can forget it."),
        {
            "type": "actions",
            "elements": [
                button(
                    "Forget it",
                    TEACH_FORGET,
                    value,
                    style="danger",
                    confirm=confirm_dialog("Forget this lesson?", clip(safe_text, 250), "Forget"),
                ),
                button("Keep it", TEACH_KEEP, value),
            ],
        },
    ]


def forgotten_blocks(personas: Sequence[Persona], safe_text: str, user: str) -> list[Block]:
    return [context(f"~{clip(safe_text, 500)}~ — forgotten by <@{user}>; {names_text(personas)} no longer know it.")]


def kept_blocks(safe_text: str, user: str) -> list[Block]:
    return [context(f"{clip(safe_text, 500)} — kept; <@{user}> chose not to forget it.")]


def nothing_close_blocks(
    personas: Sequence[Persona], project: str, safe_wanted: str, nearest: Sequence[tuple[Match, str]]
) -> list[Block]:
    """Nothing was close enough to offer: say so, and show the nearest lessons (each with its sanitised text)."""
    who, wanted = names_text(personas, bold=True), clip(safe_wanted, 300)
    blocks = [mrkdwn(f"Nothing {who} remember about *{escape(project)}* is close to “{wanted}”.")]
    if nearest:
        lines = [f"• `{match.lesson.id}` {clip(text, 300)} ({names_text(match.personas)})" for match, text in nearest]
        blocks.append(mrkdwn("The nearest:\n" + "\n".join(lines)))
    blocks.append(
        context("Say it again with words from the lesson, or an admin can use `/nightwatch forget <persona> <id>`.")
    )
    return blocks
