"""One redaction step: every secret in the corpus is named and hidden, no look-alike is touched, and logs are clean."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator

import pytest

from nightwatch.adapters.secrets.patterns import high_entropy
from nightwatch.adapters.secrets.redaction import (
    RedactingLLM,
    TokenRedactingFilter,
    install_redaction,
    redact,
    redact_backstop,
    redact_data,
    redact_new_lines,
)
from nightwatch.domain.llm import ChatMessage, LLMRequest, Purpose, SystemPrompt, Usage
from tests.adapters.secrets.secret_corpus import NOT_SECRETS, SECRETS, Secret, digits, fake, jwt
from tests.fakes import ScriptedLLM

GITHUB = f"ghp_{fake('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 36)}"
AWS = f"AKIA{fake('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}"
BROWSER = f"xoxc-{digits(10)}-{digits(10)}-{digits(13)}-{fake('0123456789abcdef', 64)}"
SESSION = jwt({"sub": "1234567890", "admin": True})


def test_the_corpus_is_large_enough() -> None:
    assert len(SECRETS) >= 30
    assert len(NOT_SECRETS) >= 30
    assert len({case.name for case in SECRETS}) == len(SECRETS)


@pytest.mark.parametrize("case", SECRETS, ids=lambda case: case.name)
def test_every_secret_is_replaced_by_its_kind_and_nothing_else_changes(case: Secret) -> None:
    assert redact(case.text) == case.redacted


@pytest.mark.parametrize("case", SECRETS, ids=lambda case: case.name)
def test_redacting_redacted_text_changes_nothing(case: Secret) -> None:
    once = redact(case.text)
    assert redact(once) == once


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_no_look_alike_is_touched(text: str) -> None:
    assert redact(text) == text


def test_secrets_in_one_text_are_each_named_and_the_sentence_still_reads() -> None:
    slack, anthropic = SECRETS[0].value, SECRETS[9].value
    text = f"Our bot token {slack} and key {anthropic} leaked, rotate? See commit 3f9a1c2b."
    assert redact(text) == (
        "Our bot token [redacted slack token] and key [redacted anthropic key] leaked, rotate? See commit 3f9a1c2b."
    )


def test_a_token_assigned_to_a_keyword_is_one_finding_named_by_its_own_kind() -> None:
    assert redact(f"SLACK_BOT_TOKEN={SECRETS[0].value}") == "SLACK_BOT_TOKEN=[redacted slack token]"


def test_a_token_longer_than_its_pattern_leaves_no_tail_behind() -> None:
    longer = GITHUB + "EXTRA42"
    assert redact(f"({longer})") == "([redacted github token])"


@pytest.mark.parametrize(
    "text",
    [
        ("sk-ant-" * 6000)[:40_000],  # each `sk-` made the OpenAI pattern rescan the rest of the text
        "eyJ" * 27_000 + ".",  # each `eyJ` made the JWT pattern rescan up to the dot
        "-----BEGIN RSA PRIVATE KEY-----\n" * 3_000,  # each BEGIN looked for an END up to the end
        "xoxb-1-" * 21_000,  # each match grew over the rest of the run
        "password=" * 5_000,  # each secret word looked for a value to the end of the line
        " --token" * 6_000,
        "key " * 10_000,
        "date,token\n" + "a1b2c3d4e5,f6g7h8i9j0\n" * 2_000,
    ],
    ids=["sk-", "eyJ", "BEGIN", "xoxb", "password=", "--token", "key", "csv"],
)
def test_a_text_made_to_be_slow_is_redacted_in_linear_time(text: str) -> None:
    # How the time grows, not how long it takes (a busy machine changes that): four times the text takes about four
    # times as long when redaction is linear, sixteen times as long when it is quadratic, as it was (2-5 s each).
    quarter = text[: len(text) // 4]
    assert _fastest(text) < 8 * _fastest(quarter) + 0.01


def _fastest(text: str) -> float:
    """The shortest of three redactions of `text`, in seconds (the least disturbed by other work on the machine)."""
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        redact(text)
        timings.append(time.perf_counter() - started)
    return min(timings)


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("required", False),
        ("environment_variable", False),  # one class of character
        ("Hunter2", False),  # too short
        ("${DB_PASSWORD_VALUE}", False),  # a placeholder
        ("Xk9mP2qLw7Zt", True),
        ("MySuperSecretPass", True),
        ("bcrypt-12-rounds", False),  # words and a number
        ("authentication-middleware-v2", False),
        ("/home/deploy/app2", False),  # a path
        ("4AEE18F83AFDEB23", False),  # a short hex id (a GPG key id, a short commit)
        ("Wq7!rTz2#pLm", True),  # punctuation counts
        ("sk-...4f2a", False),  # a placeholder
    ],
)
def test_assigned_values_count_as_secrets_only_when_high_entropy(value: str, secret: bool) -> None:
    assert high_entropy(value) is secret


def test_json_data_is_redacted_in_every_string_and_keeps_its_shape() -> None:
    data = {"topic": f"rotate {GITHUB}", "turns": [{"text": AWS, "round": 1}], "ok": True, "none": None}
    assert redact_data(data) == {
        "topic": "rotate [redacted github token]",
        "turns": [{"text": "[redacted aws access key]", "round": 1}],
        "ok": True,
        "none": None,
    }


def test_a_backstop_redacts_and_says_a_secret_got_past_its_entry(caplog: pytest.LogCaptureFixture) -> None:
    assert redact_backstop("plain words", "a test store") == "plain words"
    assert not caplog.records
    assert redact_backstop(f"key {AWS}", "a test store") == "key [redacted aws access key]"
    assert "reached a test store unredacted" in caplog.text
    assert AWS not in caplog.text


def test_only_new_or_changed_lines_are_redacted() -> None:
    old = f"# title\n- hand-typed {GITHUB}\n- kept\n"
    new = f"# title\n- hand-typed {GITHUB}\n- kept\n- new {AWS}\n"
    assert (
        redact_new_lines(old, new, "a test store")
        == f"# title\n- hand-typed {GITHUB}\n- kept\n- new [redacted aws access key]\n"
    )


def test_the_redacting_llm_hides_secrets_in_answers_and_keeps_the_rest() -> None:
    inner = ScriptedLLM().script(Purpose.TURN, f"Rotate {BROWSER} now.")
    request = LLMRequest(Purpose.TURN, SystemPrompt(()), (ChatMessage("user", "hi"),))
    response = RedactingLLM(inner).complete(request)
    assert response.text == "Rotate [redacted slack token] now."
    assert inner.requests == [request]
    assert (response.usage, response.model) == (Usage(input_tokens=10, output_tokens=5), "scripted")


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
    logger.warning("pushing with %s", GITHUB)
    logger.warning(f"signing with {AWS}")
    logger.error("browser session %s, bearer %s", BROWSER, SESSION)
    try:
        raise ValueError(f"refused {SECRETS[9].value}")
    except ValueError:
        logger.exception("call failed")
    out = stream.getvalue()
    for secret in (GITHUB, AWS, BROWSER, SESSION, SECRETS[9].value):
        assert secret not in out
    assert "pushing with [redacted github token]" in out
    assert "signing with [redacted aws access key]" in out
    assert "browser session [redacted slack token], bearer [redacted json web token]" in out
    assert "refused [redacted anthropic key]" in out
    assert "ValueError" in out  # the traceback is still there, only cleaned


def test_installing_twice_adds_one_filter(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, _ = captured
    first = install_redaction(logger)
    second = install_redaction(logger)
    assert first is second
    assert sum(isinstance(f, TokenRedactingFilter) for f in logger.handlers[0].filters) == 1
