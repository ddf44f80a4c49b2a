"""A persona's face in Slack: the name and icon its posts carry (chat:write.customize)."""

from __future__ import annotations

import unicodedata

from nightwatch.domain.models import Persona


def persona_identity(persona: Persona) -> dict[str, str]:
    """`username` and the icon argument for chat.postMessage (chat:write.customize)."""
    identity = {"username": persona.name}
    avatar = persona.avatar.strip()
    if avatar.startswith(("http://", "https://")):
        identity["icon_url"] = avatar
    elif avatar.startswith(":") and avatar.endswith(":"):
        identity["icon_emoji"] = avatar
    elif shortcode(avatar):
        identity["icon_emoji"] = shortcode(avatar)
    return identity


def shortcode(emoji: str) -> str:
    """Slack's :shortcode: for a single-character emoji, from its Unicode name ('🔒' -> ':lock:'); '' if none.

    Slack names most emoji after their Unicode names; sequences (flags, skin tones, joined emoji) have no
    such name and are left to lead the message text instead.
    """
    base = emoji.replace("\ufe0f", "")
    if len(base) != 1:
        return ""
    name = unicodedata.name(base, "")
    return f":{name.lower().replace(' ', '_').replace('-', '_')}:" if name else ""
