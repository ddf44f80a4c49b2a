"""One persona's turn in a deliberation: memory, system prompt, thread window, the model, the posted reply.

A turn reads the persona's memory for the topic (with its pinned context and what teammates share with it), compiles
its system prompt around the thread window, asks the model (which may first call the memory tools, at most three
times: tool_turn.py) and posts the answer unless it is SKIP or a near-duplicate (those are stored as skipped, not
posted). An answer that fails (the model call, or an empty or impersonating answer) is asked for once more with the
problem fed back (answers.py); if that fails too, only that persona's turn is skipped: stored as skipped, with a
notice in the thread saying who and why. A turn is stored before it is posted.
"""

from __future__ import annotations

import builtins
import logging
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from nightwatch.domain.deliberation.answers import answer_turn, skip_notice
from nightwatch.domain.deliberation.extraction import learn_discarded
from nightwatch.domain.deliberation.models import Deliberation, RememberedLesson, Turn, Verdict
from nightwatch.domain.deliberation.participants import Panel
from nightwatch.domain.deliberation.policy import DeliberationPolicy
from nightwatch.domain.deliberation.ports import DeliberationLog, Poster
from nightwatch.domain.deliberation.replies import shape_reply
from nightwatch.domain.deliberation.thread_context import ThreadContext, ThreadPrompt, ThreadWindow
from nightwatch.domain.deliberation.tool_turn import ToolTurn
from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, Purpose, SystemPrompt, Usage
from nightwatch.domain.memory import MemoryTools, ToolMemory
from nightwatch.domain.memory.models import Discarded, MemoryBlock, ReflectionContext
from nightwatch.domain.models import Lesson, Persona, ThreadMessage
from nightwatch.domain.pins import NoPins, PersonaPins, PinBlock, read_pins
from nightwatch.domain.ports import Clock
from nightwatch.domain.sharing import SharedBlock
from nightwatch.domain.soul import SoulCompiler
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

CHARS_PER_WORD = 8  # turns the character cap into a word limit the model can follow


class PersonaMemory(ToolMemory, Protocol):
    """What a deliberation needs of the memory service (its turns' memory tools need `search` and `remember`)."""

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> MemoryBlock: ...

    def reflect(self, persona: Persona, project: str, context: ReflectionContext) -> builtins.list[Lesson]: ...

    def extract(self, persona: Persona, project: str, discarded: Discarded) -> builtins.list[Lesson]: ...

    def note_injected(self, persona: Persona, project: str, lesson_ids: builtins.list[str]) -> None: ...


class SharedKnowledge(Protocol):
    """What teammates share with a persona (SharingService): read afresh before each of its turns."""

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock: ...


class NothingShared:
    """SharedKnowledge when sharing is not wired in: every block is empty."""

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock:
        return SharedBlock()


@dataclass(frozen=True)
class TurnPrompt(Prompt):
    """The instruction for one persona's turn (the thread itself is in the system prompt)."""

    template: ClassVar[str] = "turn.md.j2"
    name: str
    round: int
    words: int
    as_lead: bool = False
    lead: str = ""
    changes: str = ""
    action_items: tuple[str, ...] = ()
    addressed: bool = False

    @classmethod
    def example(cls) -> TurnPrompt:
        return cls(
            name="Priya",
            round=2,
            words=150,
            lead="Carlos",
            changes="Cover token expiry before merging.",
            action_items=("Priya: add an expiry test.",),
            addressed=True,
        )


@dataclass(frozen=True)
class InteractionPrompt(Prompt):
    """The per-interaction context at the end of the system prompt: project, kind, round, topic."""

    template: ClassVar[str] = "interaction.md.j2"
    project: str
    kind: str
    round: int
    max_rounds: int
    topic: str
    link: str | None = None

    @classmethod
    def example(cls) -> InteractionPrompt:
        return cls(
            project="night-watch",
            kind="pr_review",
            round=1,
            max_rounds=2,
            topic="Store sessions in Redis?",
            link="https://example.com/pr/42",
        )


@dataclass(frozen=True)
class Scope:
    """What every turn of one deliberation shares."""

    topic: str
    project: str  # a slug
    thread: str
    kind: str
    link: str | None
    max_rounds: int


@dataclass
class RunState:
    """The working state of one deliberation; only the engine and its turns change it."""

    scope: Scope
    poster: Poster
    panel: Panel
    deliberation: Deliberation
    first_message: int  # index in the thread where this deliberation began
    human_seen: int  # human messages before this index have been scanned for names
    usage: Usage = field(default_factory=Usage)
    unsaved_usage: Usage = field(default_factory=Usage)  # added to the stored total at the end of each round
    turns: list[Turn] = field(default_factory=list)
    replies: int = 0
    speakers: dict[str, Persona] = field(default_factory=dict)  # by slug, in order of first turn
    memory: dict[str, MemoryBlock] = field(default_factory=dict)  # last block read, by slug
    pins: dict[str, PinBlock] = field(default_factory=dict)  # last pinned block read with it, by slug
    shared: dict[str, SharedBlock] = field(default_factory=dict)  # last shared block read with it, by slug
    injected: dict[str, set[str]] = field(default_factory=dict)  # lesson ids injected, by slug
    addressed: set[str] = field(default_factory=set)  # slugs a person addressed since the last round
    changes: Verdict | None = None  # the lead's CHANGES verdict that opened this round
    taken: set[tuple[str, int]] = field(default_factory=set)  # (name casefolded, round) stored before a takeover
    # Recorded during the run: with the memory tools in turns, or from summarised messages (extraction.py).
    remembered: list[RememberedLesson] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)  # one message per extraction whose lessons storage refused
    policy: DeliberationPolicy = field(default_factory=DeliberationPolicy)  # taken when it started (policy.py)

    @property
    def id(self) -> int:
        if self.deliberation.id is None:
            raise ValueError("the deliberation was not started in the log")
        return self.deliberation.id


class TurnTaker:
    """Takes one persona's turn and keeps the run's usage and log up to date."""

    def __init__(
        self,
        *,
        memory: PersonaMemory,
        compiler: SoulCompiler,
        llm: LLM,
        log: DeliberationLog,
        clock: Clock,
        context: ThreadContext,
        reply_chars: int,
        pins: PersonaPins | None = None,
        shared: SharedKnowledge | None = None,
    ) -> None:
        self._memory = memory
        self._pins = pins or NoPins()
        self._shared = shared or NothingShared()
        self._compiler = compiler
        self._llm = llm
        self._log = log
        self._clock = clock
        self._context = context
        self._reply_chars = reply_chars

    def take(self, state: RunState, persona: Persona, round_no: int) -> None:
        """Ask `persona` for its reply, post it unless dropped, and store the turn."""
        messages = state.poster.messages()
        window = self.window(state, messages)
        memory = self.read_memory(state, persona, window)
        state.speakers.setdefault(persona.slug, persona)
        request = LLMRequest(
            purpose=Purpose.TURN,
            system=self.system(state, persona, memory, round_no),
            messages=conversation(window, self._instruction(state, persona, round_no)),
            max_tokens=max(100, self._reply_chars // 3),
            model=persona.model,
            persona=persona,
            topic=state.scope.topic,
        )
        tools = self.tools(state, persona)
        try:
            answer = answer_turn(
                tools.answer, request, speaker=persona.name, others=self._names(state), words=self._words()
            )
        finally:
            self.keep_tool_work(state, persona, tools)  # the usage of every call, both attempts, even a failed one
        if answer.problem is None:
            shaped = shape_reply(answer.text, earlier=[m.text for m in messages], limit=self._reply_chars)
            text, posted = shaped.text, shaped.posted
        else:
            log.warning("%s's turn was skipped after %d attempts: %s", persona.name, answer.attempts, answer.problem)
            text, posted = f"(skipped: {answer.problem})", False
        turn = Turn(
            persona=persona.name,
            role=persona.role,
            text=text,
            round=round_no,
            lessons_injected=len(memory.lessons),
            pins_injected=len(state.pins.get(persona.slug, PinBlock()).pins),
            skipped=not posted,
            usage=tools.usage,
            created_at=self._clock.now(),
            tool_calls=tuple(tools.traces),
        )
        # Stored before it is posted: a replica that takes the deliberation over skips every stored turn, so a
        # crash between the two leaves the turn in history but not in the thread, and never posts it twice.
        self._log.add_turn(state.id, turn)
        state.turns.append(turn)
        if answer.problem is not None:
            state.poster.post_notice(skip_notice(persona.name, answer.problem))
            return
        if posted:
            state.poster.post_turn(persona, text)
            state.replies += 1
        state.injected.setdefault(persona.slug, set()).update(lesson.id for lesson in memory.lessons)

    def _names(self, state: RunState) -> list[str]:
        """Every persona of the deliberation so far, by name: who an answer must not speak for."""
        return [p.name for p in (*state.panel.everyone, *state.speakers.values())]

    def _words(self) -> int:
        return max(20, self._reply_chars // CHARS_PER_WORD)

    def tools(self, state: RunState, persona: Persona) -> ToolTurn:
        """The memory tools of `persona`'s turn, and the loop that lets the model call them (see tool_turn.py)."""
        scope = state.scope
        tools = MemoryTools(memory=self._memory, persona=persona, project=scope.project, link=scope.link)
        return ToolTurn(llm=self._llm, tools=tools, poster=state.poster, persona=persona, project=scope.project)

    def keep_tool_work(self, state: RunState, persona: Persona, tools: ToolTurn) -> None:
        """Add what the turn's model calls cost and its tool calls did to the run, even when the turn failed.

        The lessons recalled went into a prompt, so they count as injected; those remembered are the run's.
        """
        self.add_usage(state, tools.usage)
        state.injected.setdefault(persona.slug, set()).update(lesson.id for lesson in tools.recalled)
        state.remembered += [RememberedLesson(persona.name, lesson) for lesson in tools.remembered]

    def window(self, state: RunState, messages: list[ThreadMessage]) -> ThreadWindow:
        """The thread window for the next call (summarising older messages when they fell out, and taking lessons
        from them once: extraction.py)."""
        window = self._context.window(state.scope.thread, messages, state.scope.topic)
        self.add_usage(state, window.usage)
        learn_discarded(self._memory, self._log, state, messages, window.covered)
        return window

    def read_memory(self, state: RunState, persona: Persona, window: ThreadWindow) -> MemoryBlock:
        """The persona's memory for the topic; an unreadable memory gives an empty block, not a failed turn.

        Its pinned context and what teammates share with it are read afresh alongside (kept in `state.pins` and
        `state.shared` for `system`), so an edited file, a new pin or an unshare holds from the next turn on; neither
        ever fails the turn.
        """
        scope, thread = state.scope, window.recent_text()
        try:
            block = self._memory.read(
                persona, scope.project, scope.topic, thread=thread, budget=state.policy.memory_tokens
            )
        except (NightWatchError, OSError) as error:
            log.warning("could not read %s's memory (%s); the turn goes on without it", persona.name, error)
            block = MemoryBlock()
        try:
            shared = self._shared.read(
                persona, scope.project, scope.topic, thread=thread, budget=state.policy.shared_tokens
            )
        except (NightWatchError, OSError) as error:
            log.warning("could not read what is shared with %s (%s); the turn goes on without it", persona.name, error)
            shared = SharedBlock()
        state.memory[persona.slug] = block
        state.shared[persona.slug] = shared
        state.pins[persona.slug] = self.read_pins(persona, scope.project, state.policy.pins_tokens)
        return block

    def read_pins(self, persona: Persona, project: str, budget: int | None = None) -> PinBlock:
        """The persona's pinned context; when it cannot be read the turn goes on without it (see pinned.py)."""
        return read_pins(self._pins, persona, project, budget)

    def system(self, state: RunState, persona: Persona, memory: MemoryBlock, round_no: int) -> SystemPrompt:
        """The persona's system prompt, ending with this interaction's context."""
        scope = state.scope
        context = InteractionPrompt(
            project=scope.project,
            kind=scope.kind,
            round=round_no,
            max_rounds=scope.max_rounds,
            topic=scope.topic,
            link=scope.link,
        ).render()
        pins, shared = state.pins.get(persona.slug), state.shared.get(persona.slug)
        return self._compiler.compile(
            persona, mode=scope.kind, memory=memory, context=context, pins=pins, shared=shared
        )

    def add_usage(self, state: RunState, usage: Usage) -> None:
        """Add a call's token usage to the run; `save_usage` adds it to the stored deliberation."""
        state.usage += usage
        state.unsaved_usage += usage

    def save_usage(self, state: RunState) -> None:
        """Add the usage not yet stored to the deliberation's total.

        Called once per round and at the end rather than per call: each write is a commit, and a turn's own usage
        is stored with the turn anyway, so a crash mid-round loses at most one round from the total.
        """
        if state.unsaved_usage != Usage():
            self._log.add_usage(state.id, state.unsaved_usage)
            state.unsaved_usage = Usage()

    def _instruction(self, state: RunState, persona: Persona, round_no: int) -> str:
        changes = state.changes
        return TurnPrompt(
            name=persona.name,
            round=round_no,
            words=self._words(),
            as_lead=persona.slug == state.panel.lead.slug,
            lead=state.panel.lead.name,
            changes=changes.summary if changes else "",
            action_items=changes.action_items if changes else (),
            addressed=persona.slug in state.addressed,
        ).render()


def conversation(window: ThreadWindow, instruction: str) -> tuple[ChatMessage, ...]:
    """The user turn of a call: the thread window, then what is asked, as two messages (the API joins them)."""
    thread = ThreadPrompt(summary=window.summary, messages=window.recent).render()
    return (ChatMessage("user", thread), ChatMessage("user", instruction))
