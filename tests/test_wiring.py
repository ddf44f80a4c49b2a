"""The composition root builds from test settings and resolves every root object; overrides win."""

from __future__ import annotations

import dataclasses

import pytest
from injector import Module, provider, singleton
from sqlalchemy import Engine

from nightwatch.adapters.anthropic_llm import AnthropicLLM
from nightwatch.adapters.db.slack_state import SlackState
from nightwatch.adapters.offline.llm import OfflineLLM
from nightwatch.adapters.slack.app import SlackApp
from nightwatch.config import Settings
from nightwatch.domain.deliberation.engine import DeliberationEngine
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.personas.service import PersonaService
from nightwatch.domain.ports import LLM, Clock, DeliberationLog, MemoryStore, PersonaRepository
from nightwatch.domain.proactive import ProactiveService
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.soul import SoulCompiler
from nightwatch.wiring import build_injector
from tests.fakes import FakeClock, ScriptedLLM

ROOTS = [
    Settings,
    Engine,
    Clock,
    LLM,
    PersonaRepository,
    MemoryStore,
    DeliberationLog,
    Recall,
    MemoryService,
    PersonaService,
    SoulCompiler,
    DeliberationEngine,
    SlackState,
    ProactiveService,
    SlackApp,
]


@pytest.fixture
def slack_settings(settings: Settings) -> Settings:
    slack = dataclasses.replace(settings.slack, bot_token="xoxb-test", app_token="xapp-test")
    return dataclasses.replace(settings, slack=slack)


@pytest.mark.parametrize("root", ROOTS, ids=lambda r: r.__name__)
def test_every_root_object_resolves(slack_settings: Settings, root: type) -> None:
    container = build_injector(slack_settings)
    try:
        assert container.get(root) is not None
    finally:
        container.get(Engine).dispose()


def test_services_are_singletons(settings: Settings) -> None:
    container = build_injector(settings)
    assert container.get(MemoryService) is container.get(MemoryService)
    assert container.get(DeliberationEngine) is container.get(DeliberationEngine)


def test_the_llm_follows_the_settings(settings: Settings) -> None:
    assert isinstance(build_injector(settings).get(LLM), OfflineLLM)
    anthropic = dataclasses.replace(settings, llm="anthropic", anthropic_api_key="sk-ant-test")
    assert isinstance(build_injector(anthropic).get(LLM), AnthropicLLM)


def test_building_does_no_io(slack_settings: Settings) -> None:
    container = build_injector(slack_settings)
    for root in ROOTS:
        container.get(root)
    assert list(slack_settings.home.iterdir()) == []
    container.get(Engine).dispose()


def test_an_override_module_of_fakes_wins(settings: Settings) -> None:
    fake_llm, fake_clock = ScriptedLLM(), FakeClock()

    class Fakes(Module):
        @singleton
        @provider
        def llm(self) -> LLM:
            return fake_llm

        @singleton
        @provider
        def clock(self) -> Clock:
            return fake_clock

    container = build_injector(settings, Fakes())
    assert container.get(LLM) is fake_llm
    assert container.get(Clock) is fake_clock


def test_dense_recall_on_without_the_extra_says_how_to_install_it(settings: Settings) -> None:
    from nightwatch.adapters import embeddings
    from nightwatch.domain.errors import ConfigError

    if embeddings.available():
        pytest.skip("the semantic extra is installed here")
    dense = dataclasses.replace(settings, memory=dataclasses.replace(settings.memory, dense="on"))
    with pytest.raises(ConfigError, match=r"NIGHTWATCH_RECALL_DENSE=on: .*pip install"):
        build_injector(dense).get(Recall)


def test_dense_recall_auto_falls_back_to_keywords_without_the_extra(settings: Settings) -> None:
    from nightwatch.adapters import embeddings

    auto = dataclasses.replace(settings, memory=dataclasses.replace(settings.memory, dense="auto"))
    recall = build_injector(auto).get(Recall)
    assert (recall.encoder is not None) == embeddings.available()
