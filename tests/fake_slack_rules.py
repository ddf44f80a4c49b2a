"""Rules Slack applies to every Web API request, shared by the fake's methods: tokens, content limits, paging."""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

# Limits Slack enforces on chat.postMessage / chat.update (answered with the same errors Slack uses).
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_MESSAGE_TEXT = 40000


def error(code: str, **extra: Any) -> Json:
    return {"ok": False, "error": code, **extra}


def check_token(method: str, token: str | None) -> Json | None:
    if not token:
        return error("not_authed")
    if not token.startswith(("xoxb-", "xoxp-", "xapp-")):
        return error("invalid_auth")
    app_level = token.startswith("xapp-")
    if app_level != (method == "apps.connections.open"):
        return error("not_allowed_token_type")
    return None


def check_content(args: Json) -> Json | None:
    """Slack's own checks on message content: something to show, and Block Kit / length limits."""
    blocks = args.get("blocks")
    text = args.get("text")
    if not text and not blocks and not args.get("attachments"):
        return error("no_text")
    if isinstance(text, str) and len(text) > MAX_MESSAGE_TEXT:
        return error("msg_too_long")
    if blocks is None:
        return None
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return _invalid_blocks(f"no more than {MAX_BLOCKS} items allowed")
    for index, block in enumerate(blocks):
        if not isinstance(block, dict) or "type" not in block:
            return _invalid_blocks(f"missing block type [json-pointer:/blocks/{index}]")
        section_text = (block.get("text") or {}).get("text", "")
        if block["type"] == "section" and len(section_text) > MAX_SECTION_TEXT:
            return _invalid_blocks(
                f"must be less than {MAX_SECTION_TEXT + 1} characters [json-pointer:/blocks/{index}/text/text]"
            )
    return None


def _invalid_blocks(why: str) -> Json:
    return error("invalid_blocks", response_metadata={"messages": [f"[ERROR] {why}"]})


def ts_key(ts: str) -> tuple[int, int]:
    seconds, _, fraction = ts.partition(".")
    return int(seconds), int(fraction or 0)


def between(messages: list[Json], args: Json) -> list[Json]:
    """Applies `oldest` / `latest` (exclusive unless `inclusive`), as Slack does."""
    inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")
    oldest, latest = args.get("oldest"), args.get("latest")

    def keep(message: Json) -> bool:
        key = ts_key(message["ts"])
        if oldest and (key < ts_key(str(oldest)) or (key == ts_key(str(oldest)) and not inclusive)):
            return False
        return not (latest and (key > ts_key(str(latest)) or (key == ts_key(str(latest)) and not inclusive)))

    return [m for m in messages if keep(m)]


def page(messages: list[Json], args: Json) -> Json:
    """Cursor pagination: the cursor is the offset of the next page."""
    start = int(args.get("cursor") or 0)
    limit = int(args.get("limit") or 100)
    page = messages[start : start + limit]
    more = start + limit < len(messages)
    return {
        "ok": True,
        "messages": page,
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }
