"""A logging filter that keeps Slack and Anthropic tokens out of every log line."""

from __future__ import annotations

import logging
import re

TOKEN = re.compile(r"\b(xox[abposer]-|xapp-|sk-ant-)[A-Za-z0-9_-]+")
REDACTED = r"\1[redacted]"


def redact(text: str) -> str:
    """Replace the secret part of every token in `text`, keeping its prefix so the kind stays visible."""
    return TOKEN.sub(REDACTED, text)


class TokenRedactingFilter(logging.Filter):
    """Rewrites a record's message, arguments and traceback text with tokens redacted; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def install_redaction(logger: logging.Logger | None = None) -> TokenRedactingFilter:
    """Add the filter to every handler of `logger` (default: the root logger), creating one if it has none.

    Handler filters see records from every logger that propagates to them; a logger filter would not.
    """
    target = logger or logging.getLogger()
    if not target.handlers:
        target.addHandler(logging.StreamHandler())
    found = next((f for h in target.handlers for f in h.filters if isinstance(f, TokenRedactingFilter)), None)
    redactor = found or TokenRedactingFilter()
    for handler in target.handlers:
        if redactor not in handler.filters:
            handler.addFilter(redactor)
    return redactor
