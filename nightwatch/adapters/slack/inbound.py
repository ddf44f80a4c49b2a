"""Secrets are redacted from what people typed, in every Slack payload, before any listener reads it.

A Bolt middleware rewrites the payload in place: listeners get `event`, `command` and `view` as parts of the same
`body`, so a topic, a slash command's words or a modal's fields reach the domain already clean. Thread messages read
back through the Web API are redacted by the poster (poster.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nightwatch.adapters.secrets import redact

Body = dict[str, Any]


def redact_payload(body: Body) -> None:
    """Redact, in place, the texts a person wrote: a message's text, a command's text, a modal's input values."""
    _redact_key(body, "text")  # a slash command
    event = body.get("event")
    if isinstance(event, dict):
        _redact_key(event, "text")
        if isinstance(event.get("message"), dict):  # an edited message
            _redact_key(event["message"], "text")
    values = ((body.get("view") or {}).get("state") or {}).get("values") or {}
    for block in values.values():
        for element in block.values() if isinstance(block, dict) else ():
            if isinstance(element, dict):
                _redact_key(element, "value")


def redact_inbound(body: Body, next_: Callable[[], Any]) -> Any:
    """The Bolt middleware: redact the payload, then let the listeners have it."""
    redact_payload(body)
    return next_()


def _redact_key(holder: Body, key: str) -> None:
    if isinstance(holder.get(key), str):
        holder[key] = redact(holder[key])
