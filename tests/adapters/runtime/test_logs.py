"""JSON logs: one object a line with the known context, secrets redacted by the same filter as text logs."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from nightwatch.adapters.runtime.logs import JsonFormatter, log_context
from nightwatch.adapters.secrets.redaction import install_redaction


@pytest.fixture
def logged() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    logger = logging.getLogger("nightwatch.test.json")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    install_redaction(logger)
    yield logger, stream
    logger.removeHandler(handler)
    logger.propagate = True


def lines(stream: io.StringIO) -> list[dict[str, str]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_record_is_one_json_object_with_time_level_logger_and_message(
    logged: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = logged
    logger.warning("Turn of %s took %d ms", "Maya", 12)
    [entry] = lines(stream)
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "nightwatch.test.json"
    assert entry["message"] == "Turn of Maya took 12 ms"
    assert entry["time"].endswith("+00:00")


def test_the_context_and_the_records_own_fields_are_added(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = logged
    with log_context(channel="C1", thread="1700000000.000100"):
        logger.info("turn", extra={"deliberation": 7, "persona": "Maya"})
    logger.info("after")
    first, after = lines(stream)
    assert (first["channel"], first["thread"], first["deliberation"], first["persona"]) == (
        "C1",
        "1700000000.000100",
        "7",
        "Maya",
    )
    assert "channel" not in after


def test_secrets_are_redacted_in_json_too(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = logged
    logger.error("token xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx leaked")
    assert "abcdefghijklmnop" not in stream.getvalue()
    assert "[redacted" in lines(stream)[0]["message"]
