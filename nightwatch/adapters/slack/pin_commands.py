"""/nightwatch pin, pins and unpin: pin a page, a text or a server file to a persona (or all) for the channel's project.

`pin <persona|all> <url|text…>`, `pin file <persona|all> <path under a root>`, `pin refresh [id]` and `unpin <id>`
(or `pin remove <id>`) are for admins; anyone may list with `pins [persona]`. A file can be pinned from Slack only
under NIGHTWATCH_PIN_ROOTS (a relative path is resolved against the roots in order). Each handler parses the words,
makes one PinService call and says what happened; SlashCommands dispatches to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.blocks import Block, escape, mrkdwn, text_blocks
from nightwatch.adapters.slack.commands import COMMAND, Handler, Invocation, Reply
from nightwatch.adapters.slack.threads import ChannelDirectory
from nightwatch.domain.deliberation import find_persona
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.pins import (
    EVERY_PERSONA,
    PinService,
    PinView,
    label_of,
    pin_files,
    validate_pin_id,
    validate_pin_path,
    validate_pin_text,
    validate_pin_url,
)
from nightwatch.domain.pins.models import PinKind, PinStatus
from nightwatch.domain.pins.ports import PinFiles

LISTED_MAX = 100  # pins shown in one answer; the rest are counted
_LINK = re.compile(r"^<?(https?://[^\s|<>]+)(?:\|[^<>]*)?>?$", re.IGNORECASE)  # Slack may send <url> or <url|label>
_SAY_WHAT = (
    f"Say whose pin and what to pin: `{COMMAND} pin Maya https://wiki.example.com/runbook`, "
    f"`{COMMAND} pin all Deploys freeze on Fridays.` or `{COMMAND} pin file Maya docs/ARCHITECTURE.md`."
)


class PinCommands:
    """The pin subcommands of /nightwatch, as handlers SlashCommands dispatches to."""

    def __init__(
        self,
        *,
        pins: PinService,
        personas: PersonaService,
        admins: AdminCheck,
        channels: ChannelDirectory,
        files: PinFiles,
        changed: Callable[[], object] = lambda: None,
    ) -> None:
        self._pins = pins
        self._files = files
        self._personas = personas
        self._admins = admins
        self._channels = channels
        self._changed = changed  # the file watch learns of a new or removed pin

    def handlers(self) -> dict[str, Handler]:
        return {"pin": self.pin, "pins": self.list_pins, "unpin": self.unpin}

    def pin(self, call: Invocation, rest: str) -> Reply:
        action, after = _first_word(rest)
        if action.lower() in ("remove", "delete"):
            return self.unpin(call, after)
        if action.lower() == "list":
            return self.list_pins(call, after)
        self._admins.require(call.user, "pin context to personas")
        if action.lower() == "refresh":
            return self._refresh(after)
        project = self._channels.project_for(call.channel)
        if action.lower() == "file":
            persona, path = self._persona_and_rest(after)
            recursive = path.split()[-1:] == ["recursive"]
            path = path.rsplit(None, 1)[0] if recursive and len(path.split()) > 1 else path
            value = validate_pin_path(path or _missing("the file's path"))
            pinned = pin_files(
                self._pins, self._files, persona, project, value, added_by=call.user, recursive=recursive
            )
            self._changed()
            return Reply("Pinned", text_blocks("\n".join(f"• {escape(message)}" for message in pinned.messages)))
        persona, what = self._persona_and_rest(rest)
        kind, value = _page_or_text(what or _missing("a URL or the text"))
        outcome = self._pins.add(persona, project, kind, value, added_by=call.user, anywhere=False)
        self._changed()
        return Reply(escape(outcome.message))

    def list_pins(self, call: Invocation, rest: str) -> Reply:
        persona = rest.strip() or None
        project = self._channels.project_for(call.channel)
        views = self._pins.list(persona, project)
        return Reply(f"Pinned context of {project}", pins_blocks(views, project, persona))

    def unpin(self, call: Invocation, rest: str) -> Reply:
        self._admins.require(call.user, "unpin context")
        removed = self._pins.remove(validate_pin_id(rest))
        self._changed()
        return Reply(f"Unpinned #{removed.id}: {escape(label_of(removed))}.")

    def _refresh(self, rest: str) -> Reply:
        outcomes = self._pins.refresh(validate_pin_id(rest) if rest.strip() else None)
        if not outcomes:
            return Reply("No file or page is pinned, so there is nothing to read again.")
        return Reply("Pins read again", text_blocks("\n".join(f"• {escape(o.message)}" for o in outcomes)))

    def _persona_and_rest(self, text: str) -> tuple[str, str]:
        """The persona named at the start of `text` (or `all`), longest name first, and the rest."""
        words = text.split()
        if not words:
            raise InvalidInputError(_SAY_WHAT)
        if words[0].lower() == EVERY_PERSONA:
            return EVERY_PERSONA, " ".join(words[1:])
        personas = self._personas.list()
        longest = max((len(p.name.split()) for p in personas), default=1)
        for count in range(min(len(words), longest), 0, -1):
            found = find_persona(personas, " ".join(words[:count]))
            if found is not None:
                return found.name, _after_words(text, count)
        return self._personas.get(words[0]).name, ""  # raises NotFoundError listing the known names


def pins_blocks(views: Sequence[PinView], project: str, persona: str | None = None) -> list[Block]:
    """The pins as one line each: #id · whose · what · tokens · a flag when the file is gone or unreadable."""
    if not views:
        whose = f" for {escape(persona)}" if persona else ""
        return [
            mrkdwn(
                f"Nothing is pinned{whose} on *{escape(project)}* yet. An admin can pin a page or a text: "
                f"`{COMMAND} pin Maya https://wiki.example.com/runbook`."
            )
        ]
    lines = [pin_line(view) for view in views[:LISTED_MAX]]
    if len(views) > LISTED_MAX:
        lines.append(f"…and {len(views) - LISTED_MAX} more; name a persona to see only its pins.")
    return [
        mrkdwn(f"*Pinned context of {escape(project)}* (#id · for whom · what · size)"),
        *text_blocks("\n".join(lines)),
    ]


def pin_line(view: PinView) -> str:
    pin = view.pin
    whose = escape(view.persona) if view.persona else "every persona"
    flag = f" · :warning: {pin.status.value}" if pin.status is not PinStatus.OK else ""
    return f"• `#{pin.id}` · {whose} · {escape(view.label)} · {view.tokens:,} tokens{flag}"


def _page_or_text(what: str) -> tuple[PinKind, str]:
    """One link alone is a page to fetch; anything else is the text to pin."""
    link = _LINK.match(what.strip())
    if link:
        return PinKind.URL, validate_pin_url(link.group(1))
    return PinKind.TEXT, validate_pin_text(what)


def _missing(what: str) -> str:
    raise InvalidInputError(f"Give {what} after the persona. {_SAY_WHAT}")


def _first_word(text: str) -> tuple[str, str]:
    words = text.split(maxsplit=1)
    return (words[0] if words else ""), (words[1] if len(words) > 1 else "")


def _after_words(text: str, count: int) -> str:
    """`text` after its first `count` words, its own line breaks kept (a text pin keeps its lines)."""
    rest = text.lstrip()
    for _ in range(count):
        rest = rest[len(rest.split(maxsplit=1)[0]) :].lstrip() if rest else ""
    return rest
