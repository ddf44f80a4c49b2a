"""The Slack app's object graph: the Web API client, the Bolt app, the worker pool, the listeners and what they call.

Nothing here connects: the client and Bolt call Slack only when a listener or `serve.py` first needs it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from injector import Module, provider, singleton
from slack_bolt import App
from slack_sdk import WebClient

from nightwatch.adapters.db import SlackState
from nightwatch.adapters.pins import PinWatch
from nightwatch.adapters.runtime import Metrics, ProactiveScheduler
from nightwatch.adapters.slack import (
    AdminCheck,
    Authorization,
    ChannelDirectory,
    Deliberations,
    ForgetUndo,
    HeldReview,
    HomeTab,
    LeaseKeeper,
    LessonNotes,
    Listeners,
    PersonaAdmin,
    PinCommands,
    ShareCommands,
    SlackApp,
    SlackPoster,
    SlashCommands,
    ThreadTeaching,
    WorkerPool,
    bolt_app,
    listener_threads,
    web_client,
)
from nightwatch.config import Settings
from nightwatch.domain.deliberation import DeliberationEngine, renew_every
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.memory import MemoryService, MemoryTransfer
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.pins.ports import PinFiles
from nightwatch.domain.ports import Clock
from nightwatch.domain.proactive import ProactiveService
from nightwatch.domain.sharing import SharingService
from nightwatch.domain.teaching import TeachingService
from nightwatch.live_settings import LiveSettings


class SlackModule(Module):
    """Every piece of the Slack app, down to the domain services it calls."""

    @singleton
    @provider
    def provide_client(self, settings: Settings) -> WebClient:
        return web_client(settings.slack)

    @singleton
    @provider
    def provide_authorization(self) -> Authorization:
        return Authorization()

    @singleton
    @provider
    def provide_listener_threads(self) -> ThreadPoolExecutor:
        return listener_threads()

    @singleton
    @provider
    def provide_bolt_app(self, client: WebClient, threads: ThreadPoolExecutor, authorization: Authorization) -> App:
        return bolt_app(client, threads, authorization)

    @singleton
    @provider
    def provide_pool(self, settings: Settings) -> WorkerPool:
        return WorkerPool(size=settings.slack.workers)

    @singleton
    @provider
    def provide_channels(self, client: WebClient, state: SlackState, clock: Clock) -> ChannelDirectory:
        return ChannelDirectory(client=client, state=state, clock=clock)

    @singleton
    @provider
    def provide_home(
        self, client: WebClient, personas: PersonaService, memory: MemoryService, admins: AdminCheck, held: HeldReview
    ) -> HomeTab:
        return HomeTab(client=client, personas=personas, memory=memory, admins=admins, held=held)

    @singleton
    @provider
    def provide_lesson_notes(self, live: LiveSettings, client: WebClient) -> LessonNotes:
        """Each thread's one lessons message; NIGHTWATCH_LESSON_NOTES is read at each message, so it reloads."""
        return LessonNotes(client=client, mode=lambda: live.current().slack.lesson_notes)

    @singleton
    @provider
    def provide_deliberations(
        self,
        engine: DeliberationEngine,
        log: DeliberationLog,
        client: WebClient,
        pool: WorkerPool,
        channels: ChannelDirectory,
        clock: Clock,
        metrics: Metrics,
        notes: LessonNotes,
    ) -> Deliberations:
        return Deliberations(
            engine=engine,
            log=log,
            client=client,
            pool=pool,
            channels=channels,
            clock=clock,
            metrics=metrics,
            notes=notes,
        )

    @singleton
    @provider
    def provide_pin_watch(self, pins: PinService) -> PinWatch:
        return PinWatch(pins=pins)  # pinned files are watched while the app runs

    @singleton
    @provider
    def provide_pin_commands(
        self,
        pins: PinService,
        personas: PersonaService,
        admins: AdminCheck,
        channels: ChannelDirectory,
        watch: PinWatch,
        files: PinFiles,
    ) -> PinCommands:
        return PinCommands(
            pins=pins, personas=personas, admins=admins, channels=channels, files=files, changed=watch.sync
        )

    @singleton
    @provider
    def provide_share_commands(
        self, sharing: SharingService, admins: AdminCheck, channels: ChannelDirectory
    ) -> ShareCommands:
        return ShareCommands(sharing=sharing, admins=admins, channels=channels)

    @singleton
    @provider
    def provide_commands(
        self,
        personas: PersonaService,
        memory: MemoryService,
        engine: DeliberationEngine,
        log: DeliberationLog,
        state: SlackState,
        clock: Clock,
        client: WebClient,
        admins: AdminCheck,
        home: HomeTab,
        deliberations: Deliberations,
        channels: ChannelDirectory,
        shares: ShareCommands,
        pinning: PinCommands,
        held: HeldReview,
    ) -> SlashCommands:
        return SlashCommands(
            personas=personas,
            memory=memory,
            engine=engine,
            log=log,
            state=state,
            clock=clock,
            client=client,
            admins=admins,
            home=home,
            deliberations=deliberations,
            channels=channels,
            held=held,
            more={**shares.handlers(), **pinning.handlers()},
        )

    @singleton
    @provider
    def provide_leases(self, deliberations: Deliberations, engine: DeliberationEngine) -> LeaseKeeper:
        return LeaseKeeper(deliberations=deliberations, every_seconds=renew_every(engine.lease_for))

    @singleton
    @provider
    def provide_persona_admin(
        self,
        personas: PersonaService,
        memory: MemoryService,
        transfer: MemoryTransfer,
        admins: AdminCheck,
        client: WebClient,
    ) -> PersonaAdmin:
        return PersonaAdmin(personas=personas, memory=memory, transfer=transfer, admins=admins, client=client)

    @singleton
    @provider
    def provide_thread_teaching(
        self,
        teaching: TeachingService,
        personas: PersonaService,
        channels: ChannelDirectory,
        client: WebClient,
        admins: AdminCheck,
        held: HeldReview,
        notes: LessonNotes,
    ) -> ThreadTeaching:
        return ThreadTeaching(
            teaching=teaching,
            personas=personas,
            channels=channels,
            client=client,
            admins=admins,
            held=held,
            notes=notes,
        )

    @singleton
    @provider
    def provide_listeners(
        self,
        state: SlackState,
        clock: Clock,
        deliberations: Deliberations,
        commands: SlashCommands,
        admin: PersonaAdmin,
        home: HomeTab,
        teaching: ThreadTeaching,
        held: HeldReview,
        notes: LessonNotes,
        undo: ForgetUndo,
    ) -> Listeners:
        return Listeners(
            held=held,
            state=state,
            clock=clock,
            deliberations=deliberations,
            commands=commands,
            admin=admin,
            home=home,
            teaching=teaching,
            notes=notes,
            undo=undo,
        )

    @singleton
    @provider
    def provide_scheduler(
        self,
        proactive: ProactiveService,
        state: SlackState,
        clock: Clock,
        client: WebClient,
        channels: ChannelDirectory,
        engine: DeliberationEngine,
        notes: LessonNotes,
    ) -> ProactiveScheduler:
        return ProactiveScheduler(
            service=proactive,
            state=state,
            clock=clock,
            poster_for=lambda channel: SlackPoster(client=client, channel=channel, thread_ts=None, notes=notes),
            channel_name=channels.name_of,
            housekeeping=engine.close_abandoned,
        )

    @singleton
    @provider
    def provide_slack_app(
        self,
        app: App,
        listeners: Listeners,
        pool: WorkerPool,
        threads: ThreadPoolExecutor,
        deliberations: Deliberations,
        leases: LeaseKeeper,
        scheduler: ProactiveScheduler,
        pin_watch: PinWatch,
    ) -> SlackApp:
        return SlackApp(
            app=app,
            listeners=listeners,
            pool=pool,
            listener_threads=threads,
            deliberations=deliberations,
            leases=leases,
            scheduler=scheduler,
            pin_watch=pin_watch,
        )
