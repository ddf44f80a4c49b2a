"""/nightwatch share, unshare and shares: open a persona's knowledge to teammates, close it, and list what is open.

`share <persona> with <other|all> [project <p>] [lessons|pins|all]` and `unshare <persona> with <other|all>
[project <p>]` are for admins; anyone may list with `shares [persona]`. One item instead of all: `share Maya with Dev
lesson 3f9a2c1d` or `pin 12` (and `unshare` the same). The project defaults to the channel's, a pin's to its own.
Each handler parses the words, makes one SharingService call and says what happened; SlashCommands dispatches to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.blocks import Block, escape, mrkdwn, text_blocks
from nightwatch.adapters.slack.commands import COMMAND, Handler, Invocation, Reply
from nightwatch.adapters.slack.threads import ChannelDirectory
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import validate_lesson_id
from nightwatch.domain.pins import validate_pin_id
from nightwatch.domain.sharing import Item, ItemKind, ShareView, SharingService
from nightwatch.domain.sharing.models import ShareContent

LISTED_MAX = 200  # shares shown in one answer; the rest are counted
_CONTENTS = frozenset(content.value for content in ShareContent)
_ITEMS = frozenset(kind.value for kind in ItemKind)


@dataclass(frozen=True)
class ShareWords:
    """What `share` or `unshare` was told: names as typed (the domain checks them)."""

    sharer: str
    receiver: str
    project: str | None = None
    what: str | None = None
    item: Item | None = None  # one lesson or one pin rather than all


def parse_share(text: str, *, command: str, with_what: bool) -> ShareWords:
    """Read `<persona> with <other|all> [lesson <id>|pin <n>] [project <p>]` (and, for share, instead of an item, a
    last word lessons, pins or all)."""
    words = text.split()
    lowered = [word.lower() for word in words]
    if "with" not in lowered[1:]:
        extra = " [lessons|pins|all]" if with_what else ""
        raise InvalidInputError(
            f"Say whose knowledge and with whom: `{COMMAND} {command} Maya with Dev [project night-watch]{extra}` "
            f"(`with all` means every persona; `lesson 3f9a2c1d` or `pin 12` after the name: only that one)."
        )
    at = lowered.index("with", 1)
    sharer, rest = " ".join(words[:at]), words[at + 1 :]
    what = rest.pop() if with_what and len(rest) >= 2 and rest[-1].lower() in _CONTENTS else None
    project = None
    if "project" in [word.lower() for word in rest[1:]]:
        cut = [word.lower() for word in rest].index("project", 1)
        project, rest = " ".join(rest[cut + 1 :]), rest[:cut]
        if not project:
            raise InvalidInputError("Name the project after `project`, for example `project night-watch`.")
    item = None
    if what is None and len(rest) >= 3 and rest[-2].lower() in _ITEMS:
        item = _item(rest[-2].lower(), rest[-1])
        rest = rest[:-2]
    return ShareWords(sharer, " ".join(rest), project, what, item)


def _item(kind: str, raw: str) -> Item:
    if kind == ItemKind.LESSON:
        return Item(ItemKind.LESSON, validate_lesson_id(raw))
    return Item(ItemKind.PIN, str(validate_pin_id(raw)))


class ShareCommands:
    """The share subcommands of /nightwatch, as handlers SlashCommands dispatches to."""

    def __init__(self, *, sharing: SharingService, admins: AdminCheck, channels: ChannelDirectory) -> None:
        self._sharing = sharing
        self._admins = admins
        self._channels = channels

    def handlers(self) -> dict[str, Handler]:
        return {"share": self.share, "unshare": self.unshare, "shares": self.shares}

    def share(self, call: Invocation, rest: str) -> Reply:
        self._admins.require(call.user, "share a persona's knowledge")
        asked = parse_share(rest, command="share", with_what=True)
        if asked.item is not None:
            project = self._item_project(call, asked.project, asked.item)
            return Reply(escape(self._sharing.share_item(asked.sharer, asked.receiver, project, asked.item).message))
        project = asked.project or self._channels.project_for(call.channel)
        outcome = self._sharing.share(asked.sharer, asked.receiver, project, asked.what or ShareContent.LESSONS)
        return Reply(escape(outcome.message))

    def unshare(self, call: Invocation, rest: str) -> Reply:
        self._admins.require(call.user, "stop a persona's sharing")
        asked = parse_share(rest, command="unshare", with_what=False)
        if asked.item is not None:
            project = self._item_project(call, asked.project, asked.item)
            return Reply(escape(self._sharing.unshare_item(asked.sharer, asked.receiver, project, asked.item).message))
        project = asked.project or self._channels.project_for(call.channel)
        return Reply(escape(self._sharing.unshare(asked.sharer, asked.receiver, project).message))

    def _item_project(self, call: Invocation, project: str | None, item: Item) -> str | None:
        """A lesson's project: the one named, else the channel's; a pin's: the one named, else the pin's own."""
        if project is not None or item.kind is ItemKind.PIN:
            return project
        return self._channels.project_for(call.channel)

    def shares(self, call: Invocation, rest: str) -> Reply:
        persona = rest.strip() or None
        views = self._sharing.shares(persona=persona)
        return Reply("Shared knowledge", shares_blocks(views, persona))


def shares_blocks(views: Sequence[ShareView], persona: str | None = None) -> list[Block]:
    """The shares as one line each: sharer → receiver · project · what."""
    if not views:
        whose = f" by or with {escape(persona)}" if persona else ""
        return [mrkdwn(f"Nothing is shared{whose} yet. An admin can share: `{COMMAND} share Maya with Dev`.")]
    lines = [
        f"• *{escape(view.sharer.name)}* → *{escape(view.audience)}* · {escape(view.project)} · {escape(view.shown)}"
        for view in views[:LISTED_MAX]
    ]
    if len(views) > LISTED_MAX:
        lines.append(f"…and {len(views) - LISTED_MAX} more; name a persona to see only its shares.")
    return [
        mrkdwn("*Shared knowledge* (read-only: sharer → receiver · project · what)"),
        *text_blocks("\n".join(lines)),
    ]
