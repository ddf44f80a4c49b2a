"""Tokens never reach a log line: message, arguments or traceback."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from nightwatch.adapters.redaction import TokenRedactingFilter, install_redaction, redact

BOT = "xoxb-1234-5678-abcdefABCDEF"
APP = "xapp-1-A111-222-abcdef0123"
ANTHROPIC = "sk-ant-api03-Zz_9-abc"


def test_redact_keeps_the_prefix_and_hides_the_secret() -> None:
    text = redact(f"bot={BOT} app={APP} key={ANTHROPIC} plain=xoxb")
    assert "1234" not in text
    assert "A111" not in text
    assert "Zz_9" not in text
    assert "xoxb-[redacted]" in text
    assert "xapp-[redacted]" in text
    assert "sk-ant-[redacted]" in text
    assert text.endswith("plain=xoxb")


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    logger = logging.getLogger("nightwatch.test.redaction")
    logger.propagate = False
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)
        logger.propagate = True


def test_installed_filter_redacts_messages_arguments_and_tracebacks(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    install_redaction(logger)
    logger.warning("connecting with %s", APP)
    logger.warning(f"posting with {BOT}")
    try:
        raise ValueError(f"refused {ANTHROPIC}")
    except ValueError:
        logger.exception("call failed")
    out = stream.getvalue()
    assert "A111" not in out
    assert "5678" not in out
    assert "Zz_9" not in out
    assert out.count("[redacted]") == 3
    assert "ValueError" in out  # the traceback is still there, only cleaned


def test_installing_twice_adds_one_filter(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, _ = captured
    first = install_redaction(logger)
    second = install_redaction(logger)
    assert first is second
    assert sum(isinstance(f, TokenRedactingFilter) for f in logger.handlers[0].filters) == 1
