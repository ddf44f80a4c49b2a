"""Proactive messages: which channels are due, which persona speaks, and what it is told.

A channel mapped to a project is due when the interval has passed since its last proactive message and nobody has
spoken in it for the quiet period. One persona speaks per due channel: personas that remember something about the
project come first, and among them the turn rotates, so the same voice does not speak every time. The persona is
shown what it already flagged in that channel, so it says something new or answers SKIP. It knows what a turn would:
its memory, its pinned context and what teammates share with it, read through domain/context.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar

from nightwatch.domain.context import ContextAsk, ContextReader
from nightwatch.domain.deliberation import shape_reply
from nightwatch.domain.deliberation.models import Deliberation, DeliberationStatus, Turn
from nightwatch.domain.deliberation.ports import DeliberationLog, Poster, announce
from nightwatch.domain.errors import LLMError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, Purpose
from nightwatch.domain.memory import MEMORY, MemoryService
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.ports import Clock
from nightwatch.domain.soul import SoulCompiler
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

MODE = "proactive"
THREAD_PREFIX = "proactive:"


@dataclass(frozen=True)
class ProactivePolicy:
    """When and how much a persona may say unprompted. `interval_minutes` 0 turns proactive messages off."""

    interval_minutes: int = 180
    quiet_minutes: int = 60
    recent_flags: int = 5
    reply_chars: int = 700
    max_sentences: int = 3
    max_tokens: int = 300
    memory_tokens: int | None = None  # most tokens of memory in the prompt; None: the memory service's own


@dataclass(frozen=True)
class ChannelActivity:
    """A channel mapped to a project, with when it last saw activity and a proactive message."""

    channel: str
    project: str
    last_activity_at: datetime | None = None
    last_proactive_at: datetime | None = None


@dataclass(frozen=True)
class ProactivePrompt(Prompt):
    """The user message asking a persona for one unprompted observation."""

    template: ClassVar[str] = "proactive.md.j2"
    channel_name: str
    project: str
    name: str
    role: str
    max_sentences: int
    recent: tuple[str, ...] = ()

    @classmethod
    def example(cls) -> ProactivePrompt:
        return cls(
            channel_name="night-watch",
            project="night-watch",
            name="Maya",
            role="security reviewer",
            max_sentences=3,
            recent=("The signing key has not been rotated since the maintainer change.",),
        )


@dataclass(frozen=True)
class ProactiveOutcome:
    """What a proactive attempt did in one channel."""

    channel: str
    persona: str | None
    posted: bool
    text: str = ""
    reason: str = ""


def due_channels(channels: Sequence[ChannelActivity], now: datetime, policy: ProactivePolicy) -> list[ChannelActivity]:
    """The channels where a proactive message may be posted now, longest-waiting first."""
    if policy.interval_minutes <= 0:
        return []
    interval = timedelta(minutes=policy.interval_minutes)
    quiet = timedelta(minutes=policy.quiet_minutes)
    due = [
        channel
        for channel in channels
        if (channel.last_proactive_at is None or now - channel.last_proactive_at >= interval)
        and (channel.last_activity_at is None or now - channel.last_activity_at >= quiet)
    ]
    return sorted(due, key=lambda c: (c.last_proactive_at is not None, c.last_proactive_at or now))


def choose_speaker(
    personas: Sequence[Persona], *, last_speaker: str | None, with_memory: Collection[str]
) -> Persona | None:
    """The persona to speak next: active ones with memory of the project first, rotating after `last_speaker`.

    `last_speaker` and `with_memory` hold persona slugs.
    """
    active = [p for p in personas if p.active]
    remembering = [p for p in active if p.slug in with_memory]
    candidates = remembering or active
    if not candidates:
        return None
    slugs = [p.slug for p in candidates]
    if last_speaker in slugs:
        return candidates[(slugs.index(last_speaker) + 1) % len(candidates)]
    return candidates[0]


class ProactiveService:
    """Lets one persona post an unprompted observation in a quiet project channel, then reflect on it."""

    def __init__(
        self,
        *,
        personas: PersonaService,
        memory: MemoryService,
        compiler: SoulCompiler,
        llm: LLM,
        log: DeliberationLog,
        clock: Clock,
        policy: ProactivePolicy | Callable[[], ProactivePolicy],
        context: ContextReader | None = None,
    ) -> None:
        """`context` reads what the persona knows (domain/context.py); without it, the persona knows nothing."""
        self._personas = personas
        self._known = context or ContextReader()
        self._memory = memory
        self._compiler = compiler
        self._llm = llm
        self._log = log
        self._clock = clock
        self._policies = policy

    @property
    def policy(self) -> ProactivePolicy:
        """The policy now (settings can be reloaded; each proactive message takes it once)."""
        return self._policies if isinstance(self._policies, ProactivePolicy) else self._policies()

    def due(self, channels: Sequence[ChannelActivity]) -> list[ChannelActivity]:
        """The channels where a proactive message may be posted now."""
        return due_channels(channels, self._clock.now(), self.policy)

    def speak(self, channel: ChannelActivity, poster: Poster, *, channel_name: str) -> ProactiveOutcome:
        """Pick a persona, ask it for one observation, post it (unless it answers SKIP) and let it reflect."""
        policy = self.policy
        personas = self._personas.list(include_inactive=False)
        history = self._history(channel.channel, policy)
        by_name = {p.name: p.slug for p in personas}
        last = by_name.get(history[0].persona) if history else None
        with_memory = {p.slug for p in personas if self._memory.lessons(p, channel.project)}
        speaker = choose_speaker(personas, last_speaker=last, with_memory=with_memory)
        if speaker is None:
            return ProactiveOutcome(channel.channel, None, posted=False, reason="no active persona")
        recent = tuple(t.text for t in history if t.persona == speaker.name and not t.skipped)
        try:
            raw = self._ask(speaker, channel, channel_name, recent[: policy.recent_flags], policy)
        except LLMError as err:
            log.warning("proactive message for %s failed: %s", channel.channel, err)
            return ProactiveOutcome(channel.channel, speaker.name, posted=False, reason=str(err))
        # SKIP, an empty answer and a repeat of something already flagged are all kept quiet.
        reply = shape_reply(raw, earlier=recent, limit=policy.reply_chars)
        self._record(channel, speaker, reply.text if reply.posted else "SKIP", skipped=not reply.posted)
        if not reply.posted:
            return ProactiveOutcome(channel.channel, speaker.name, posted=False, reason=f"dropped: {reply.dropped}")
        poster.post_turn(speaker, reply.text)
        self._reflect(speaker, channel, reply.text, poster)
        return ProactiveOutcome(channel.channel, speaker.name, posted=True, text=reply.text)

    def _ask(
        self,
        persona: Persona,
        channel: ChannelActivity,
        channel_name: str,
        recent: tuple[str, ...],
        policy: ProactivePolicy,
    ) -> str:
        topic = f"what is worth flagging now in {channel.project}"
        known = self._known.read(ContextAsk(persona, channel.project, topic, budgets={MEMORY: policy.memory_tokens}))
        prompt = ProactivePrompt(
            channel_name=channel_name,
            project=channel.project,
            name=persona.name,
            role=persona.role,
            max_sentences=policy.max_sentences,
            recent=recent,
        )
        request = LLMRequest(
            purpose=Purpose.PROACTIVE,
            system=self._compiler.compile(persona, mode=MODE, known=known, context=""),
            messages=(ChatMessage("user", prompt.render()),),
            max_tokens=policy.max_tokens,
            model=persona.model,
            persona=persona,
            topic=topic,
        )
        return self._llm.complete(request).text

    def _history(self, channel: str, policy: ProactivePolicy) -> list[Turn]:
        """Earlier proactive turns in the channel, newest first."""
        stored = self._log.recent(limit=policy.recent_flags * 3, thread_prefix=f"{THREAD_PREFIX}{channel}:")
        return [turn for item in stored if item.id is not None for turn in self._log.turns(item.id)]

    def _record(self, channel: ChannelActivity, persona: Persona, text: str, skipped: bool) -> None:
        now = self._clock.now()
        started = self._log.start(
            Deliberation(
                topic=f"proactive observation in {channel.project}",
                project=channel.project,
                thread=f"{THREAD_PREFIX}{channel.channel}:{now:%Y%m%dT%H%M%S.%f}",
                started_at=now,
            )
        )
        assert started.id is not None
        turn = Turn(persona=persona.name, role=persona.role, text=text, round=1, skipped=skipped, created_at=now)
        self._log.add_turn(started.id, turn)
        self._log.finish(started.id, DeliberationStatus.DONE, None, now)

    def _reflect(self, persona: Persona, channel: ChannelActivity, text: str, poster: Poster) -> None:
        context = ReflectionContext(kind=MODE, topic=f"proactive observation in {channel.project}", summary=text)
        try:
            recorded = self._memory.reflect(persona, channel.project, context)
        except Exception:  # a failed reflection must never undo a posted message
            log.exception("reflection after a proactive message by %s failed", persona.name)
            return
        for found in recorded:
            announce(poster, persona, channel.project, found)
