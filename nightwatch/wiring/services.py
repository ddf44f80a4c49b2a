"""The domain's services: memory, personas, pins, sharing, deliberation, proactive messages and teaching.

Each is built from the ports AdapterModule binds; the policies read the settings (the live ones where a reload may
change them).
"""

from __future__ import annotations

from datetime import timedelta

from injector import Module, provider, singleton
from sqlalchemy import Engine

from nightwatch.adapters.db import SqlPersonaTransactions
from nightwatch.adapters.encoder import embeddings
from nightwatch.adapters.persona_files import PersonaFolders
from nightwatch.adapters.runtime import Metrics, TimedSource
from nightwatch.config import Settings
from nightwatch.domain.context import ContextReader
from nightwatch.domain.deliberation import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.deliberation.ports import DeliberationLog, Liveness
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory import LessonSuccession, MemoryPolicy, MemoryService, MemorySource, MemoryTransfer
from nightwatch.domain.memory.ports import ForgottenLessons, MemoryStore, PendingLessons
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.personas.ports import PersonaRepository
from nightwatch.domain.pins import PinService, PinsSource
from nightwatch.domain.pins.ports import PinFiles, PinPages, PinRepository
from nightwatch.domain.ports import Clock
from nightwatch.domain.proactive import ProactivePolicy, ProactiveService
from nightwatch.domain.recall import Recall
from nightwatch.domain.sharing import SharedSource, SharingService
from nightwatch.domain.sharing.ports import ItemShareRepository, ShareRepository
from nightwatch.domain.soul import SoulCompiler
from nightwatch.domain.teaching import Forgetting, HeldLessons, LessonReview, TeachingService
from nightwatch.live_settings import LiveSettings
from nightwatch.startup import StartUp


class ServiceModule(Module):
    """The domain's services, each built from the ports it uses."""

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
    def provide_recall(self, settings: Settings) -> Recall:
        # Without the model package start-up says so once (startup.py) and recall runs on keywords alone.
        wanted = settings.memory.dense == "on" and embeddings.available()
        encoder = embeddings.MiniLMEncoder() if wanted else None
        return Recall(half_life_days=settings.memory.half_life_days, encoder=encoder, succession=LessonSuccession())

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
        metrics: Metrics,
    ) -> MemoryService:
        limits = settings.memory
        policy = MemoryPolicy(
            token_budget=limits.token_budget,
            max_lines=limits.max_lines,
            compaction_target=limits.compaction_target,
            use_model_for_curation=settings.llm != "offline",
            use_model_for_compaction=settings.llm != "offline",
            inject_offline_lessons=settings.llm == "offline" or limits.inject_offline_lessons,
        )
        return MemoryService(
            store=store, llm=llm, clock=clock, recall=recall, policy=policy, pending=pending, tally=metrics
        )

    @singleton
    @provider
    def provide_transfer(self, store: MemoryStore, memory: MemoryService) -> MemoryTransfer:
        return MemoryTransfer(store=store, memory=memory)

    @singleton
    @provider
    def provide_forgetting(
        self, memory: MemoryService, transfer: MemoryTransfer, kept: ForgottenLessons, personas: PersonaService
    ) -> Forgetting:
        return Forgetting(memory=memory, transfer=transfer, kept=kept, personas=personas)

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
        items: ItemShareRepository,
        personas: PersonaService,
        memory: MemoryService,
        pins: PinService,
        clock: Clock,
    ) -> SharingService:
        budget = settings.memory.shared_token_budget
        return SharingService(
            shares=shares, items=items, personas=personas, memory=memory, pins=pins, clock=clock, token_budget=budget
        )

    @singleton
    @provider
    def provide_compiler(self) -> SoulCompiler:
        return SoulCompiler()

    @singleton
    @provider
    def provide_context(
        self, memory: MemoryService, pins: PinService, sharing: SharingService, metrics: Metrics
    ) -> ContextReader:
        """What a persona knows for a turn: its sources, in the order their blocks go into the prompt."""
        return ContextReader([PinsSource(pins), TimedSource(MemorySource(memory), metrics), SharedSource(sharing)])

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
        forgetting: Forgetting,
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
            forgetting=forgetting,
        )

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
    def provide_review(self, held: HeldLessons, memory: MemoryService, clock: Clock) -> LessonReview:
        return LessonReview(held=held, memory=memory, clock=clock)

    @singleton
    @provider
    def provide_start_up(
        self,
        settings: Settings,
        engine: Engine,
        folders: PersonaFolders,
        personas: PersonaService,
        deliberations: DeliberationEngine,
    ) -> StartUp:
        return StartUp(
            settings=settings, engine=engine, folders=folders, personas=personas, deliberations=deliberations
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
        turn_retries=limits.turn_retries,
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
