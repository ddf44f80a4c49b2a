"""A real Night Watch stack (wiring, SQLite, memory files, offline model) with its Slack app pointed at FakeSlack."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from injector import Injector, Module, provider, singleton
from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient
from sqlalchemy import Engine

from nightwatch.adapters.db.slack_state import SlackState
from nightwatch.adapters.offline.llm import OfflineLLM
from nightwatch.adapters.slack.app import Authorization, SlackApp
from nightwatch.config import Settings
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.llm import LLM, LLMRequest, LLMResponse
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.personas.service import PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.sharing import SharingService
from nightwatch.startup import StartUp
from nightwatch.wiring import build_injector
from tests import payloads
from tests.fake_slack import FakeSlack

ADMIN = "UADMIN"
MEMBER = "U1"
BOT_TOKEN = "xoxb-1-test-token"  # shaped like a real one (a number first), so the redactor knows it
APP_TOKEN = "xapp-1-test-token"


def stack_settings(home: Path, api_url: str, *, workers: int = 4, **extra: str) -> Settings:
    env = {
        "NIGHTWATCH_HOME": str(home),
        "NIGHTWATCH_LLM": "offline",
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": api_url,
        "NIGHTWATCH_ADMINS": ADMIN,
        "NIGHTWATCH_WORKERS": str(workers),
        **extra,
    }
    return Settings.from_env(env)


class GatedLLM:
    """The offline model held at a gate, so deliberations stay running while a test looks."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.inner = OfflineLLM()
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        self.gate.wait(10)
        return self.inner.complete(request)

    def module(self) -> Module:
        """An injector module binding this model as the LLM (it wins over the real binding)."""
        gated = self

        class Gate(Module):
            @singleton
            @provider
            def llm(self) -> LLM:
                return gated

        return Gate()


def authorize(**_: Any) -> AuthorizeResult:
    return AuthorizeResult(enterprise_id=None, team_id="T1", bot_user_id="UBOT", bot_id="B1", bot_token=BOT_TOKEN)


@dataclass
class Stack:
    """The container, the Slack app and the bits tests look at."""

    settings: Settings
    container: Injector
    slack: SlackApp
    state: SlackState

    @property
    def app(self) -> App:
        return self.slack.app

    @property
    def personas(self) -> PersonaService:
        return self.container.get(PersonaService)

    @property
    def memory(self) -> MemoryService:
        return self.container.get(MemoryService)

    @property
    def pins(self) -> PinService:
        return self.container.get(PinService)

    @property
    def sharing(self) -> SharingService:
        return self.container.get(SharingService)

    @property
    def log(self) -> DeliberationLog:
        return self.container.get(DeliberationLog)

    def dispatch(self, body: dict[str, Any]) -> BoltResponse:
        """Hand a payload to Bolt as the Socket Mode adapter does; returns Bolt's response (the ack)."""
        return self.app.dispatch(BoltRequest(body=body, mode="socket_mode"))

    def command(self, fake: FakeSlack, text: str, *, user: str = "U1") -> dict[str, Any]:
        """Run `/nightwatch <text>` and return what it answered through its response_url."""
        before = len(fake.calls_to("response_url"))
        response_url = f"{fake.http_url}/response/{uuid.uuid4().hex}"
        trigger_id = fake.new_trigger_id()
        ack = self.dispatch(payloads.slash_command(text, user=user, response_url=response_url, trigger_id=trigger_id))
        assert ack.status == 200
        fake.wait_for(lambda: len(fake.calls_to("response_url")) > before)
        return fake.calls_to("response_url")[before].args

    def drain(self, timeout: float = 10.0) -> None:
        """Let every listener and deliberation finish (the app takes no more work afterwards)."""
        assert self.slack.shutdown(timeout), "deliberations still running"


def build_stack(
    home: Path,
    fake: FakeSlack,
    *,
    overrides: tuple[Module, ...] = (),
    workers: int = 4,
    with_authorize: bool = True,
    env: dict[str, str] | None = None,
) -> Stack:
    """Wire the real stack; `with_authorize` uses a fixed AuthorizeResult (listener tests) instead of auth.test.

    `env` adds settings (e.g. NIGHTWATCH_PIN_ROOTS).
    """
    settings = stack_settings(home, fake.api_url, workers=workers, **(env or {}))
    container = build_injector(settings, OnFakeSlack(fake, with_authorize=with_authorize), *overrides)
    container.get(StartUp).run()
    return Stack(settings, container, container.get(SlackApp), container.get(SlackState))


class OnFakeSlack(Module):
    """The app's own Web API client on FakeSlack (the app installs the retry handlers), and a fixed bot identity."""

    def __init__(self, fake: FakeSlack, *, with_authorize: bool) -> None:
        self._fake = fake
        self._with_authorize = with_authorize

    @singleton
    @provider
    def client(self) -> WebClient:
        return WebClient(token=BOT_TOKEN, base_url=self._fake.api_url)

    @singleton
    @provider
    def authorization(self) -> Authorization:
        return Authorization(authorize if self._with_authorize else None)


@contextmanager
def running_stack(home: Path, fake: FakeSlack, **kwargs: Any) -> Iterator[Stack]:
    stack = build_stack(home, fake, **kwargs)
    try:
        yield stack
    finally:
        stack.slack.shutdown(5)
        stack.container.get(Engine).dispose()
