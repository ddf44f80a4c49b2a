"""Block Kit views of domain values: help, personas, a persona's memory and lessons, lesson notes, history, App Home.

Built from blocks.py's building blocks, which escape text from people and models and keep to Slack's limits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from nightwatch.adapters.slack.blocks import (
    MESSAGE_BLOCKS,
    VIEW_BLOCKS,
    Block,
    button,
    clip,
    confirm_dialog,
    context,
    escape,
    mrkdwn,
    plain,
    text_blocks,
)
from nightwatch.domain.deliberation.models import Deliberation
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import CATEGORIES, CLI_AUTHOR
from nightwatch.domain.models import Lesson, Persona
from nightwatch.prompts import Prompt

OVERVIEW_SHOWN = 700  # characters of an overview in a lesson's block (an overview is at most 600 when written)

PERSONA_NEW = "persona_new"
PERSONA_EDIT = "persona_edit"
PERSONA_DELETE = "persona_delete"
LESSON_FORGET = "lesson_forget"

_SLACK_USER = re.compile(r"[UW][A-Z0-9]+")  # a user id: shown as a mention, which Slack displays as their name


@dataclass(frozen=True)
class HelpText(Prompt):
    """The /nightwatch help text."""

    template: ClassVar[str] = "help.md.j2"
    command: str
    bot: str
    personas: str
    categories: str = ", ".join(f"`{category}`" for category in CATEGORIES)

    @classmethod
    def example(cls) -> HelpText:
        return cls(command="/nightwatch", bot="@Night Watch", personas="Maya, Carlos, Priya and Dev")


@dataclass(frozen=True)
class ForgetTarget:
    """What a Forget button points at; `source` says where the button sits (home, list or note)."""

    persona: str
    project: str
    lesson: str
    source: str

    def encode(self) -> str:
        return json.dumps({"p": self.persona, "j": self.project, "l": self.lesson, "s": self.source})

    @classmethod
    def decode(cls, value: str) -> ForgetTarget:
        """The target a button's value names; InvalidInputError for a value this app did not write."""
        try:
            data = json.loads(value)
            return cls(persona=str(data["p"]), project=str(data["j"]), lesson=str(data["l"]), source=str(data["s"]))
        except (ValueError, TypeError, KeyError) as err:
            raise InvalidInputError(
                "This Forget button no longer points at a lesson: open the memory list again and retry."
            ) from err


def help_blocks(*, command: str, bot: str, personas: Sequence[Persona]) -> list[Block]:
    names = [p.name for p in personas if p.active] or ["no personas yet"]
    shown = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return text_blocks(HelpText(command=command, bot=bot, personas=escape(shown)).render())


# --- personas and memory ---------------------------------------------------------------------------------------


def avatar_mark(persona: Persona) -> str:
    """The avatar as mrkdwn: an emoji or :shortcode: as is, an image URL not at all."""
    return "" if persona.avatar.startswith(("http://", "https://")) else persona.avatar


def persona_line(persona: Persona) -> str:
    mark = avatar_mark(persona)
    inactive = " _(inactive)_" if not persona.active else ""
    return f"{mark + ' ' if mark else ''}*{escape(persona.name)}* · {escape(persona.role)}{inactive}"


def persona_admin_buttons(persona: Persona) -> Block:
    delete_text = f"Delete {persona.name}? Its memory is archived, not erased."
    return {
        "type": "actions",
        "block_id": f"persona-{persona.id}",
        "elements": [
            button("Edit", PERSONA_EDIT, str(persona.id)),
            button(
                "Delete",
                PERSONA_DELETE,
                str(persona.id),
                style="danger",
                confirm=confirm_dialog(f"Delete {persona.name}", delete_text, "Delete"),
            ),
        ],
    }


def personas_blocks(personas: Sequence[Persona]) -> list[Block]:
    """The personas list with Edit and Delete buttons (the buttons check the clicker is an admin)."""
    if not personas:
        return [mrkdwn("There are no personas yet. An admin can create one with `/nightwatch persona new`.")]
    blocks: list[Block] = [mrkdwn(f"*Personas* ({len(personas)})")]
    room = (MESSAGE_BLOCKS - 2) // 2
    for persona in personas[:room]:
        blocks += [mrkdwn(persona_line(persona)), persona_admin_buttons(persona)]
    if len(personas) > room:
        blocks.append(context(f"…and {len(personas) - room} more; see the Home tab."))
    return blocks


def added_by(lesson: Lesson) -> str:
    """Who added the lesson, as mrkdwn: 'added by <@U123ABC>', 'added from the CLI', or '' for the persona itself."""
    author = lesson.author
    if author is None:
        return ""
    if author == CLI_AUTHOR:
        return "added from the CLI"
    return f"added by <@{author}>" if _SLACK_USER.fullmatch(author) else f"added by {escape(author)}"


def lesson_block(persona: Persona, project: str, lesson: Lesson, source: str) -> Block:
    """A lesson as a person reads it: its abstract, its overview (when it has one) in a quote under it, then its id,
    date, category, count and author, with a Forget button."""
    pin = "📌 " if lesson.pinned else ""
    overview = f"\n>{escape(clip(lesson.overview, OVERVIEW_SHOWN))}" if lesson.overview else ""
    category = f" · {lesson.category}" if lesson.category else ""
    seen = f" · seen {lesson.seen}×" if lesson.seen > 1 else ""
    by = f" · {added_by(lesson)}" if lesson.author else ""
    text = f"{pin}{escape(lesson.text)}{overview}\n`{lesson.id}` · {lesson.recorded_at:%Y-%m-%d}{category}{seen}{by}"
    block = mrkdwn(text)
    target = ForgetTarget(persona.slug, project, lesson.id, source)
    block["accessory"] = button(
        "Forget",
        LESSON_FORGET,
        target.encode(),
        confirm=confirm_dialog("Forget this lesson?", clip(lesson.text, 250), "Forget"),
    )
    return block


def memory_blocks(
    persona: Persona, project: str, lessons: Sequence[Lesson], *, title: str = "", unread: str = ""
) -> list[Block]:
    """A persona's lessons for one project, each with a Forget button (ephemeral list).

    `unread` says which lines of the file were not understood (see `unread_summary`); it is shown under the heading.
    """
    heading = title or f"*{escape(persona.name)}* remembers {len(lessons)} lessons about *{escape(project)}*"
    notice = [context(f"⚠️ {escape(unread)}")] if unread else []
    if not lessons:
        return [mrkdwn(f"*{escape(persona.name)}* has no memory of *{escape(project)}* yet."), *notice]
    room = MESSAGE_BLOCKS - 2 - len(notice)
    blocks = [mrkdwn(heading), *notice] + [lesson_block(persona, project, lesson, "list") for lesson in lessons[:room]]
    if len(lessons) > room:
        blocks.append(context(f"…and {len(lessons) - room} more; `nightwatch memory show` lists them all."))
    return blocks


def lesson_note_blocks(
    persona: Persona, project: str, lesson_id: str, safe_text: str, *, taught_by: str = "", said: str = ""
) -> list[Block]:
    """The compact '★ Carlos remembered: …' note posted in a thread after reflection, with a Forget button.

    `safe_text` must already be sanitised mrkdwn (the poster runs model text through `sanitize`); `taught_by` is the
    Slack user id of the person who taught the lesson, shown as "taught by @name"; `said` is what recording did
    ("created", "merged into <id>", "superseded <id>").
    """
    target = ForgetTarget(persona.slug, project, lesson_id, "note")
    by = f" · taught by <@{taught_by}>" if _SLACK_USER.fullmatch(taught_by) else ""
    what = f" · {escape(said)}" if said else ""
    return [
        context(f"★ *{escape(persona.name)}* remembered: {safe_text}{what}{by}"),
        {
            "type": "actions",
            "elements": [
                button(
                    "Forget",
                    LESSON_FORGET,
                    target.encode(),
                    confirm=confirm_dialog("Forget this lesson?", clip(safe_text, 250), "Forget"),
                )
            ],
        },
    ]


def forgotten_note_blocks(persona_name: str, text: str, user: str) -> list[Block]:
    return [context(f"~{escape(clip(text, 500))}~ — {escape(persona_name)} forgot this (<@{user}>).")]


def history_blocks(deliberations: Sequence[Deliberation]) -> list[Block]:
    if not deliberations:
        return [mrkdwn("No deliberations here yet. Mention the app with a topic, or use `/nightwatch ask <topic>`.")]
    lines = []
    for item in deliberations[: MESSAGE_BLOCKS - 1]:
        when = f"{item.started_at:%Y-%m-%d %H:%M}" if item.started_at else "?"
        outcome = item.verdict.decision.value if item.verdict else item.status.value
        lines.append(f"• {when} · *{escape(clip(item.topic, 120))}* · {escape(item.project)} · {outcome}")
    return [mrkdwn("*Recent deliberations*"), *text_blocks("\n".join(lines))]


# --- App Home ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PersonaMemory:
    """One persona and its most useful lessons per project, for the Home tab."""

    persona: Persona
    projects: tuple[tuple[str, tuple[Lesson, ...], int], ...]  # (project, shown lessons, total lessons)


def home_view(entries: Sequence[PersonaMemory], *, admin: bool, held: Sequence[Block] = ()) -> Block:
    """The App Home tab: lessons held for approval (`held`, for an admin), then each persona and its memory per
    project, most useful first."""
    blocks: list[Block] = [
        {"type": "header", "text": plain("Night Watch", 150)},
        context("Your AI teammates and what each remembers, per project. Most useful lessons first."),
    ]
    if admin:
        blocks.append({"type": "actions", "elements": [button("New persona", PERSONA_NEW, "new", style="primary")]})
    blocks += held
    for entry in entries:
        section = _home_persona(entry, admin=admin)
        if len(blocks) + len(section) > VIEW_BLOCKS - 1:
            blocks.append(context("More personas than fit here; `/nightwatch personas` lists them all."))
            break
        blocks += section
    if not entries:
        blocks.append(mrkdwn("No personas yet."))
    return {"type": "home", "blocks": blocks}


def _home_persona(entry: PersonaMemory, *, admin: bool) -> list[Block]:
    persona = entry.persona
    blocks: list[Block] = [{"type": "divider"}, mrkdwn(persona_line(persona))]
    if admin:
        blocks.append(persona_admin_buttons(persona))
    if not entry.projects:
        blocks.append(context("No memory yet."))
    for project, lessons, total in entry.projects:
        more = f" · showing {len(lessons)}" if total > len(lessons) else ""
        blocks.append(context(f"*{escape(project)}* · {total} lessons{more}"))
        blocks += [lesson_block(persona, project, lesson, "home") for lesson in lessons]
    return blocks
