"""The composition root: binds every port to an adapter. No I/O happens here.

`build_injector(settings, *overrides)` builds the container; a test passes a module of fakes that wins over the
real bindings. Start-up I/O (schema upgrade, seeding) lives in nightwatch/startup.py.
"""

from __future__ import annotations

from datetime import timedelta

from injector import Injector, Module, provider, singleton
from sqlalchemy import Engine

from nightwatch.adapters.db import (
    DatabaseMemoryStore,
    SlackState,
    SqlDeliberationLog,
    SqlPendingLessons,
    SqlPersonaRepository,
    SqlPersonaTransactions,
    SqlPinRepository,
    SqlShareRepository,
    make_engine,
)
from nightwatch.adapters.encoder import embeddings
from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.adapters.offline import OfflineLLM
from nightwatch.adapters.persona_files import PersonaFolders
from nightwatch.adapters.pins.files import SafePinFiles
from nightwatch.adapters.pins.pages import PageFetcher
from nightwatch.adapters.runtime.clock import SystemClock
from nightwatch.adapters.runtime.hot_reload import HotReload
from nightwatch.adapters.runtime.liveness import ProcessLiveness
from nightwatch.adapters.secrets.redaction import RedactingLLM
from nightwatch.adapters.slack import SlackApp
from nightwatch.config import Settings
from nightwatch.domain.context import ContextReader
from nightwatch.domain.deliberation import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.deliberation.ports import DeliberationLog, Liveness
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory import MemoryPolicy, MemoryService, MemorySource, MemoryTransfer
from nightwatch.domain.memory.ports import MemoryStore, PendingLessons
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.personas.ports import PersonaRepository
from nightwatch.domain.pins import PinService, PinsSource
from nightwatch.domain.pins.ports import PinFiles, PinPages, PinRepository
from nightwatch.domain.ports import Clock
from nightwatch.domain.proactive import ProactivePolicy, ProactiveService
from nightwatch.domain.recall import Recall
from nightwatch.domain.sharing import SharedSource, SharingService
from nightwatch.domain.sharing.ports import ShareRepository
from nightwatch.domain.soul import SoulCompiler
from nightwatch.domain.teaching import TeachingService
from nightwatch.live_settings import LiveSettings


class NightWatchModule(Module):
    """Real bindings for every port and service."""

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
        return make_engine(settings.database_url)  # lazy: connects on first use

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
    def provide_llm(self, settings: Settings) -> LLM:
        # Model output is redacted where it leaves the adapter: a lesson's id is a hash of its clean text.
        if settings.llm == "offline":
            return RedactingLLM(OfflineLLM())
        from nightwatch.adapters.anthropic_llm import AnthropicLLM

        assert settings.anthropic_api_key is not None  # Settings.from_env guarantees it
        model = AnthropicLLM(
            api_key=settings.anthropic_api_key,
            default_model=settings.model,
            timeout=settings.llm_timeout_seconds,
        )
        return RedactingLLM(model)

    @singleton
    @provider
    def provide_personas_repo(self, engine: Engine) -> PersonaRepository:
        return SqlPersonaRepository(engine)

    @singleton
    @provider
    def provide_memory_store(self, settings: Settings, engine: Engine) -> MemoryStore:
        if settings.memory_store == "database":
            return DatabaseMemoryStore(engine)
        return FileMemoryStore(settings.home)

    @singleton
    @provider
    def provide_pending(self, engine: Engine) -> PendingLessons:
        return SqlPendingLessons(engine)

    @singleton
    @provider
    def provide_shares(self, engine: Engine) -> ShareRepository:
        return SqlShareRepository(engine)

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
    def provide_pins(
        self,
        settings: Settings,
        repo: PinRepository,
        personas: PersonaService,
        files: PinFiles,
        pages: PinPages,
        clock: Clock,
    ) -> PinService:
        budget = settings.pins.token_budget
        return PinService(pins=repo, personas=personas, files=files, pages=pages, clock=clock, token_budget=budget)

    @singleton
    @provider
    def provide_log(self, engine: Engine) -> DeliberationLog:
        return SqlDeliberationLog(engine)

    @singleton
    @provider
    def provide_recall(self, settings: Settings) -> Recall:
        # Without the model package start-up says so once (startup.py) and recall runs on keywords alone.
        wanted = settings.memory.dense == "on" and embeddings.available()
        encoder = embeddings.MiniLMEncoder() if wanted else None
        return Recall(half_life_days=settings.memory.half_life_days, encoder=encoder)

    @singleton
    @provider
    def provide_memory(
        self,
        settings: Settings,
        store: MemoryStore,
        llm: LLM,
        clock: Clock,
        recall: Recall,
        pending: PendingLessons,
    ) -> MemoryService:
        limits = settings.memory
        policy = MemoryPolicy(
            token_budget=limits.token_budget,
            max_lines=limits.max_lines,
            compaction_target=limits.compaction_target,
            use_model_for_curation=settings.llm != "offline",
        )
        return MemoryService(store=store, llm=llm, clock=clock, recall=recall, policy=policy, pending=pending)

    @singleton
    @provider
    def provide_transfer(self, store: MemoryStore, memory: MemoryService) -> MemoryTransfer:
        return MemoryTransfer(store=store, memory=memory)

    @singleton
    @provider
    def provide_personas(
        self,
        settings: Settings,
        engine: Engine,
        repo: PersonaRepository,
        store: MemoryStore,
        clock: Clock,
        pending: PendingLessons,
        pins: PinRepository,
        shares: ShareRepository,
    ) -> PersonaService:
        # With memory in the database, a rename or delete moves it in the persona's own transaction.
        transactions = SqlPersonaTransactions(engine) if settings.memory_store == "database" else None
        return PersonaService(
            repo=repo,
            store=store,
            clock=clock,
            pending=pending,
            transactions=transactions,
            shares=shares,
            pins=pins,
        )

    @singleton
    @provider
    def provide_sharing(
        self,
        settings: Settings,
        shares: ShareRepository,
        personas: PersonaService,
        memory: MemoryService,
        pins: PinService,
        clock: Clock,
    ) -> SharingService:
        budget = settings.memory.shared_token_budget
        return SharingService(
            shares=shares, personas=personas, memory=memory, pins=pins, clock=clock, token_budget=budget
        )

    @singleton
    @provider
    def provide_compiler(self) -> SoulCompiler:
        return SoulCompiler()

    @singleton
    @provider
    def provide_context(self, memory: MemoryService, pins: PinService, sharing: SharingService) -> ContextReader:
        """What a persona knows for a turn: its sources, in the order their blocks go into the prompt."""
        return ContextReader([PinsSource(pins), MemorySource(memory), SharedSource(sharing)])

    @singleton
    @provider
    def provide_deliberation(
        self,
        live: LiveSettings,
        personas: PersonaService,
        memory: MemoryService,
        compiler: SoulCompiler,
        llm: LLM,
        log: DeliberationLog,
        clock: Clock,
        liveness: Liveness,
        context: ContextReader,
    ) -> DeliberationEngine:
        return DeliberationEngine(
            personas=personas,
            memory=memory,
            compiler=compiler,
            llm=llm,
            log=log,
            clock=clock,
            policy=lambda: deliberation_policy(live.current()),  # taken once per deliberation: reloads reach the next
            liveness=liveness,
            context=context,
        )

    @singleton
    @provider
    def provide_slack_state(self, engine: Engine) -> SlackState:
        return SlackState(engine)

    @singleton
    @provider
    def provide_proactive(
        self,
        live: LiveSettings,
        personas: PersonaService,
        memory: MemoryService,
        compiler: SoulCompiler,
        llm: LLM,
        log: DeliberationLog,
        clock: Clock,
        context: ContextReader,
    ) -> ProactiveService:
        return ProactiveService(
            personas=personas,
            memory=memory,
            compiler=compiler,
            llm=llm,
            log=log,
            clock=clock,
            policy=lambda: proactive_policy(live.current()),
            context=context,
        )

    @singleton
    @provider
    def provide_teaching(self, memory: MemoryService, log: DeliberationLog, llm: LLM) -> TeachingService:
        return TeachingService(memory=memory, log=log, llm=llm)

    @singleton
    @provider
    def provide_slack_app(
        self,
        settings: Settings,
        live: LiveSettings,
        personas: PersonaService,
        memory: MemoryService,
        engine: DeliberationEngine,
        log: DeliberationLog,
        state: SlackState,
        clock: Clock,
        proactive: ProactiveService,
        pins: PinService,
        teaching: TeachingService,
        sharing: SharingService,
    ) -> SlackApp:
        return SlackApp(
            settings=settings.slack,
            personas=personas,
            memory=memory,
            engine=engine,
            log=log,
            state=state,
            clock=clock,
            proactive=proactive,
            pins=pins,
            teaching=teaching,
            sharing=sharing,
            admin_ids=lambda: live.current().slack.admins,  # read at each click: a reload reaches the next one
            lesson_notes=lambda: live.current().slack.lesson_notes,  # read at each lessons message
        )


def deliberation_policy(settings: Settings) -> DeliberationPolicy:
    """A deliberation's bounds from the settings (the reloadable ones are those in live_settings.RELOADABLE)."""
    limits = settings.deliberation
    return DeliberationPolicy(
        max_rounds=limits.max_rounds,
        max_contributors=limits.max_contributors,
        max_replies=limits.max_replies,
        reply_chars=limits.reply_chars,
        turn_words=limits.turn_words,
        lead=limits.lead,
        context_tokens=limits.context_tokens,
        model_window=limits.model_window,
        lease_for=timedelta(seconds=limits.lease_seconds),
        memory_tokens=settings.memory.token_budget,
        shared_tokens=settings.memory.shared_token_budget,
        pins_tokens=settings.pins.token_budget,
    )


def proactive_policy(settings: Settings) -> ProactivePolicy:
    """When personas may speak unprompted, from the settings."""
    return ProactivePolicy(
        interval_minutes=settings.slack.proactive_interval_minutes,
        quiet_minutes=settings.slack.proactive_quiet_minutes,
        memory_tokens=settings.memory.token_budget,
    )


def build_injector(settings: Settings, *overrides: Module) -> Injector:
    """Build the container from the real module; `overrides` (e.g. a module of fakes) win over it."""
    return Injector([NightWatchModule(settings), *overrides])
