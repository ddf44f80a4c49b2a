"""How the process logs: plain text or one JSON object a line, through the redaction filter, with what is known.

`log_context(channel=..., thread=...)` marks the work a thread runs (a deliberation in a Slack thread); every record
logged inside it carries those fields, and a record's own `extra` (a `deliberation` id, a `persona`) adds to them.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Literal

from nightwatch.adapters.secrets import install_redaction

CONTEXT_FIELDS = ("deliberation", "channel", "thread", "persona")
# Those a record's `extra` may carry (a LogRecord's own `thread` is the OS thread, so a Slack thread comes from the
# context only).
RECORD_FIELDS = ("deliberation", "channel", "persona")
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
# Libraries that log one INFO line per request or per run; shown only at DEBUG.
_CHATTY = ("alembic", "watchfiles", "httpx", "httpcore", "anthropic")

_NOTHING: Mapping[str, str] = MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("nightwatch_log_context", default=_NOTHING)


@contextmanager
def log_context(**fields: str) -> Iterator[None]:
    """Within the block, every record logged by this thread carries `fields` (in JSON logs)."""
    token = _context.set({**_context.get(), **{k: v for k, v in fields.items() if v}})
    try:
        yield
    finally:
        _context.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, and the context fields known for the record."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_context.get())
        for name in RECORD_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = str(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["error"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str, log_format: Literal["text", "json"]) -> None:
    """Set the root logger's level and format, quiet chatty libraries, install redaction.

    Like `logging.basicConfig`, the stderr handler is added only when the root logger has none of its own (a host
    such as pytest keeps its handlers and their format); called again, it re-formats the handler it added.
    """
    root = logging.getLogger()
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    ours = [handler for handler in root.handlers if isinstance(handler, _StderrHandler)]
    if not root.handlers:
        ours = [_StderrHandler()]
        root.addHandler(ours[0])
    for handler in ours:
        handler.setFormatter(formatter)
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(logging.DEBUG if level == "DEBUG" else logging.WARNING)
    install_redaction(root)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler `configure_logging` adds (told apart from a host's own)."""
