"""The one redaction step: secrets taken out of text before it is stored, logged or sent to a model."""

from nightwatch.adapters.secrets.redaction import (
    RedactingLLM,
    install_redaction,
    redact,
    redact_backstop,
    redact_data,
    redact_new_lines,
)

__all__ = [
    "RedactingLLM",
    "install_redaction",
    "redact",
    "redact_backstop",
    "redact_data",
    "redact_new_lines",
]
