"""Start-up checks of the Slack app and of serving it: tokens, the Web API client, retries, and the stop signals."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from slack_sdk import WebClient
from slack_sdk.http_retry import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler
from sqlalchemy import Engine

from nightwatch.adapters.slack.app import web_client
from nightwatch.config import SlackSettings
from nightwatch.domain.errors import ConfigError
from nightwatch.serve import run_socket_mode, stop_on_signals
from tests.adapters.slack.stack import Stack, build_stack
from tests.fake_slack import FakeSlack


def test_a_missing_bot_token_points_at_the_readme() -> None:
    with pytest.raises(ConfigError, match=r'SLACK_BOT_TOKEN is not set.*"Slack set-up" in the README'):
        web_client(SlackSettings())


def test_a_missing_app_token_points_at_the_readme(stack: Stack) -> None:
    with pytest.raises(ConfigError, match=r'SLACK_APP_TOKEN is not set.*"Slack set-up" in the README'):
        run_socket_mode(stack.slack, None)


def test_the_client_uses_slack_api_url_and_both_retry_handlers() -> None:
    client = web_client(SlackSettings(bot_token="xoxb-1", api_url="http://127.0.0.1:9/api/"))
    assert client.base_url == "http://127.0.0.1:9/api/"
    assert client.token == "xoxb-1"
    kinds = {type(handler) for handler in client.retry_handlers}
    assert {RateLimitErrorRetryHandler, ConnectionErrorRetryHandler} <= kinds


def test_a_given_client_gets_the_retry_handlers_installed(home: Path, fake: FakeSlack) -> None:
    stack = build_stack(home, fake)
    try:
        assert isinstance(stack.slack.client, WebClient)
        assert any(isinstance(h, RateLimitErrorRetryHandler) for h in stack.slack.client.retry_handlers)
        assert stack.app.client is stack.slack.client
    finally:
        stack.drain()
        stack.container.get(Engine).dispose()


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_ask_the_app_to_stop(number: signal.Signals) -> None:
    previous = {n: signal.getsignal(n) for n in (signal.SIGTERM, signal.SIGINT)}
    try:
        stop = stop_on_signals()
        assert not stop.is_set()
        os.kill(os.getpid(), number)
        assert stop.wait(2)
    finally:
        for n, handler in previous.items():
            signal.signal(n, handler)


def test_bolts_own_token_notice_is_not_logged_when_the_env_has_the_bot_token(
    home: Path, fake: FakeSlack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    with caplog.at_level("WARNING"):
        stack = build_stack(home, fake)
    try:
        assert not [r for r in caplog.records if "will be unused" in r.getMessage()]
    finally:
        stack.drain()
        stack.container.get(Engine).dispose()
