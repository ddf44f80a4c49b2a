"""The settings and the outside things: each port bound to its adapter (the database, files, the model, the clock)."""

from __future__ import annotations

from injector import Module, provider, singleton
from sqlalchemy import Engine

from nightwatch.adapters.db import (
    DatabaseMemoryStore,
    DatabaseProbe,
    SlackState,
    SqlDeliberationLog,
    SqlForgottenLessons,
    SqlHeldLessons,
    SqlItemShareRepository,
    SqlPendingLessons,
    SqlPersonaRepository,
    SqlPinRepository,
    SqlShareRepository,
    make_engine,
)
from nightwatch.adapters.files import FileMemoryStore
from nightwatch.adapters.offline import OfflineLLM
from nightwatch.adapters.persona_files import PersonaFolders
from nightwatch.adapters.pins import PageFetcher, SafePinFiles
from nightwatch.adapters.runtime import HotReload, MeteredLLM, Metrics, ProcessLiveness, SystemClock
from nightwatch.adapters.secrets import RedactingLLM
from nightwatch.config import Settings
from nightwatch.domain.deliberation.ports import DeliberationLog, Liveness
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory.ports import ForgottenLessons, MemoryStore, PendingLessons
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.personas.ports import PersonaRepository
from nightwatch.domain.pins.ports import PinFiles, PinPages, PinRepository
from nightwatch.domain.ports import Clock
from nightwatch.domain.sharing.ports import ItemShareRepository, ShareRepository
from nightwatch.domain.teaching import HeldLessons
from nightwatch.live_settings import LiveSettings


class AdapterModule(Module):
    """The settings, and every port bound to its real adapter."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    @singleton
    @provider
    def provide_settings(self) -> Settings:
        return self._settings

    @singleton
    @provider
    def provide_live_settings(self, settings: Settings) -> LiveSettings:
        return LiveSettings(settings)

    @singleton
    @provider
    def provide_persona_folders(self, settings: Settings) -> PersonaFolders:
        return PersonaFolders(extra=settings.personas_dir)  # the packaged defaults' folder is found when first read

    @singleton
    @provider
    def provide_hot_reload(self, live: LiveSettings, personas: PersonaService, folders: PersonaFolders) -> HotReload:
        return HotReload(live=live, personas=personas, folders=folders)

    @singleton
    @provider
    def provide_engine(self, settings: Settings) -> Engine:
        return make_engine(
            settings.database_url, pool_size=settings.operations.db_pool_size
        )  # lazy: connects on first use

    @singleton
    @provider
    def provide_clock(self) -> Clock:
        return SystemClock()

    @singleton
    @provider
    def provide_liveness(self) -> Liveness:
        return ProcessLiveness()  # reads the host name and /proc: quick, and only when first asked for

    @singleton
    @provider
    def provide_database_probe(self, engine: Engine) -> DatabaseProbe:
        return DatabaseProbe(engine)

    @singleton
    @provider
    def provide_metrics(self) -> Metrics:
        return Metrics()

    @singleton
    @provider
    def provide_llm(self, settings: Settings, metrics: Metrics) -> LLM:
        # Model output is redacted where it leaves the adapter: a lesson's id is a hash of its clean text.
        if settings.llm == "offline":
            return MeteredLLM(RedactingLLM(OfflineLLM()), metrics)
        from nightwatch.adapters.anthropic_llm import AnthropicLLM

        assert settings.anthropic_api_key is not None  # Settings.from_env guarantees it
        model = AnthropicLLM(
            api_key=settings.anthropic_api_key,
            default_model=settings.model,
            timeout=settings.llm_timeout_seconds,
        )
        return MeteredLLM(RedactingLLM(model), metrics)

    @singleton
    @provider
    def provide_personas_repo(self, engine: Engine) -> PersonaRepository:
        return SqlPersonaRepository(engine)

    @singleton
    @provider
    def provide_memory_store(self, settings: Settings, engine: Engine, repo: PersonaRepository) -> MemoryStore:
        # Fenced: a write to a slug no persona holds (renamed or deleted meanwhile) is refused, never lost.
        if settings.memory_store == "database":
            return DatabaseMemoryStore(engine, fenced=True)
        return FileMemoryStore(settings.home, personas=repo)

    @singleton
    @provider
    def provide_pending(self, engine: Engine) -> PendingLessons:
        return SqlPendingLessons(engine)

    @singleton
    @provider
    def provide_held(self, engine: Engine) -> HeldLessons:
        return SqlHeldLessons(engine)  # in the database whatever the memory store: every replica sees them

    @singleton
    @provider
    def provide_forgotten(self, engine: Engine) -> ForgottenLessons:
        return SqlForgottenLessons(engine)  # likewise: an Undo may reach any replica

    @singleton
    @provider
    def provide_shares(self, engine: Engine) -> ShareRepository:
        return SqlShareRepository(engine)

    @singleton
    @provider
    def provide_item_shares(self, engine: Engine) -> ItemShareRepository:
        return SqlItemShareRepository(engine)

    @singleton
    @provider
    def provide_pin_repo(self, engine: Engine) -> PinRepository:
        return SqlPinRepository(engine)

    @singleton
    @provider
    def provide_pin_files(self, settings: Settings) -> PinFiles:
        return SafePinFiles(settings.pins.roots)

    @singleton
    @provider
    def provide_pin_pages(self, settings: Settings) -> PinPages:
        return PageFetcher(allowed_hosts=settings.pins.url_hosts)

    @singleton
    @provider
    def provide_log(self, engine: Engine) -> DeliberationLog:
        return SqlDeliberationLog(engine)

    @singleton
    @provider
    def provide_slack_state(self, engine: Engine) -> SlackState:
        return SlackState(engine)
