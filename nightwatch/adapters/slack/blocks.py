"""Block Kit's building blocks: escaped mrkdwn, plain text, context, buttons, confirm dialogs, a notice modal.

Text that came from people or models is escaped (`&`, `<`, `>`) before it goes into mrkdwn, so it can never become
a mention or a link. Every builder keeps to Slack's limits: 3,000 characters per text, 50 blocks per message,
100 per view, 75 characters per button label, 2,000 per button value.
"""

from __future__ import annotations

from typing import Any

Block = dict[str, Any]

TEXT_MAX = 3000
MESSAGE_BLOCKS = 50
VIEW_BLOCKS = 100


# --- text ------------------------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Escape the three characters Slack's mrkdwn treats as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mrkdwn(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, TEXT_MAX)}}


def plain(text: str, limit: int = 75) -> dict[str, Any]:
    return {"type": "plain_text", "text": clip(text, limit), "emoji": True}


def context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, TEXT_MAX)}]}


def button(label: str, action_id: str, value: str, *, style: str | None = None, confirm: Block | None = None) -> Block:
    element: Block = {"type": "button", "text": plain(label), "action_id": action_id, "value": value}
    if style:
        element["style"] = style
    if confirm:
        element["confirm"] = confirm
    return element


def confirm_dialog(title: str, text: str, yes: str) -> Block:
    return {
        "title": plain(title, 100),
        "text": plain(text, 300),
        "confirm": plain(yes, 30),
        "deny": plain("Cancel", 30),
    }


def text_blocks(text: str) -> list[Block]:
    """Plain mrkdwn text as section blocks (split at line ends to respect the section limit)."""
    blocks: list[Block] = []
    chunk = ""
    for line in text.splitlines():
        if chunk and len(chunk) + len(line) + 1 > TEXT_MAX:
            blocks.append(mrkdwn(chunk))
            chunk = ""
        chunk = f"{chunk}\n{line}" if chunk else line
    if chunk.strip():
        blocks.append(mrkdwn(chunk))
    return blocks


# --- modals ------------------------------------------------------------------------------------------------------


def notice_modal(title: str, text: str) -> Block:
    """A modal that only tells the user something (a refusal, a result)."""
    return {"type": "modal", "title": plain(title, 24), "close": plain("Close", 24), "blocks": [mrkdwn(text)]}
