"""One persona's turn in a deliberation: what it knows, its system prompt, the thread window, the model, the reply.

A turn reads what the persona knows for the topic (its memory, pinned context and what teammates share with it: one
read through domain/context.py), compiles its system prompt around the thread window the engine read for it, asks
the model for at most `turn_words` words (max_tokens sized to them; a longer answer is cut at a sentence with a
visible "…", its whole text kept in the log), which may first call the memory tools, at most three times
(tool_turn.py), and posts the answer unless it
is SKIP or a near-duplicate (those are stored as skipped, not posted). An answer that fails (the model call, or an
empty or impersonating answer) is asked for once more with the problem fed back (answers.py); if that fails too, only
that persona's turn is skipped: stored as skipped, with a notice in the thread saying who and why. A turn is stored
before it is posted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar

from nightwatch.domain.context import ContextAsk, ContextReader, TurnContext
from nightwatch.domain.deliberation.answers import answer_turn, skip_notice
from nightwatch.domain.deliberation.models import FAILED_TURN_PREFIX, RememberedLesson, Turn
from nightwatch.domain.deliberation.ports import DeliberationLog, PersonaMemory
from nightwatch.domain.deliberation.replies import shape_reply
from nightwatch.domain.deliberation.state import RunState
from nightwatch.domain.deliberation.thread_context import ThreadContext, ThreadPrompt, ThreadView, ThreadWindow
from nightwatch.domain.deliberation.tool_turn import ToolTurn
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, Purpose, SystemPrompt, Usage
from nightwatch.domain.memory import MemoryTools
from nightwatch.domain.memory.ports import TurnForgetting
from nightwatch.domain.models import Persona
from nightwatch.domain.pins import PINS
from nightwatch.domain.ports import Clock
from nightwatch.domain.soul import SoulCompiler
from nightwatch.prompts import Prompt

log = logging.getLogger(__name__)

CHARS_PER_WORD = 8  # turns the character cap into a word limit the model can follow
TOKENS_PER_WORD = 1.5  # English runs about 1.3 tokens a word; the rest is room to finish the last sentence
TOKEN_MARGIN = 40  # a tag, a list's markup, and the sentence the limit falls in


def turn_tokens(words: int) -> int:
    """The max_tokens of a turn asked for at most `words` words: enough to say them, not enough to ramble on."""
    return int(words * TOKENS_PER_WORD) + TOKEN_MARGIN


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


class TurnTaker:
    """Takes one persona's turn and keeps the run's usage and log up to date."""

    def __init__(
        self,
        *,
        memory: PersonaMemory,
        known: ContextReader,
        compiler: SoulCompiler,
        llm: LLM,
        log: DeliberationLog,
        clock: Clock,
        thread: ThreadContext,
        reply_chars: int,
        forgetting: TurnForgetting | None = None,
    ) -> None:
        self._memory = memory
        self._forgetting = forgetting
        self._known = known
        self._compiler = compiler
        self._llm = llm
        self._log = log
        self._clock = clock
        self._thread = thread
        self._reply_chars = reply_chars

    def take(self, state: RunState, persona: Persona, round_no: int, view: ThreadView) -> None:
        """Ask `persona` for its reply to the thread as `view` shows it, post it unless dropped, and store the turn."""
        known = self.read_context(state, persona, view.window)
        state.speakers.setdefault(persona.slug, persona)
        request = LLMRequest(
            purpose=Purpose.TURN,
            system=self.system(state, persona, known, round_no),
            messages=conversation(view.window, self._instruction(state, persona, round_no)),
            max_tokens=turn_tokens(self._words(state)),
            model=persona.model,
            persona=persona,
            topic=state.scope.topic,
        )
        tools = self.tools(state, persona)
        try:
            answer = answer_turn(
                tools.answer,
                request,
                speaker=persona.name,
                others=self._names(state),
                words=self._words(state),
                retries=state.policy.turn_retries,
            )
        finally:
            self.keep_tool_work(state, persona, tools)  # the usage of every call, both attempts, even a failed one
        if answer.problem is None:
            shaped = shape_reply(
                answer.text, earlier=[m.text for m in view.messages], limit=self._reply_chars, words=self._words(state)
            )
            text, posted, full = shaped.text, shaped.posted, shaped.full
        else:
            log.warning("%s's turn was skipped after %d attempts: %s", persona.name, answer.attempts, answer.problem)
            text, posted, full = f"{FAILED_TURN_PREFIX}{answer.problem})", False, ""
        turn = Turn(
            persona=persona.name,
            role=persona.role,
            text=text,
            round=round_no,
            lessons_injected=len(known.lesson_ids),
            pins_injected=known.count(PINS),
            skipped=not posted,
            usage=tools.usage,
            created_at=self._clock.now(),
            tool_calls=tuple(tools.traces),
            full_text=full,
        )
        # Stored before it is posted: a replica that takes the deliberation over skips every stored turn, so a
        # crash between the two leaves the turn in history but not in the thread, and never posts it twice.
        state.lease.check()  # a run handed over or taken over during the model call stores nothing more
        self._log.add_turn(state.id, turn)
        state.turns.append(turn)
        if answer.problem is not None:
            state.poster.post_notice(skip_notice(persona.name, answer.problem, answer.attempts))
            return
        if posted:
            state.poster.post_turn(persona, text)
            state.replies += 1
        state.injected.setdefault(persona.slug, set()).update(known.lesson_ids)

    def _names(self, state: RunState) -> list[str]:
        """Every persona of the deliberation so far, by name: who an answer must not speak for."""
        return [p.name for p in (*state.panel.everyone, *state.speakers.values())]

    def _words(self, state: RunState) -> int:
        """The words a turn asks for: the run's `turn_words`, or fewer when the character cap allows fewer."""
        return max(20, min(state.policy.turn_words, self._reply_chars // CHARS_PER_WORD))

    def tools(self, state: RunState, persona: Persona) -> ToolTurn:
        """The memory tools of `persona`'s turn, and the loop that lets the model call them (see tool_turn.py)."""
        scope = state.scope
        tools = MemoryTools(
            memory=self._memory,
            persona=persona,
            project=scope.project,
            link=scope.link,
            forgetting=self._forgetting,
            thread=scope.thread,
        )
        return ToolTurn(llm=self._llm, tools=tools, poster=state.poster, persona=persona, project=scope.project)

    def keep_tool_work(self, state: RunState, persona: Persona, tools: ToolTurn) -> None:
        """Add what the turn's model calls cost and its tool calls did to the run, even when the turn failed.

        The lessons recalled went into a prompt, so they count as injected; those remembered are the run's.
        """
        self.add_usage(state, tools.usage)
        state.injected.setdefault(persona.slug, set()).update(lesson.id for lesson in tools.recalled)
        state.remembered += [RememberedLesson(persona.name, found.lesson, found.said) for found in tools.remembered]

    def view(self, state: RunState) -> ThreadView:
        """The thread as the next call sees it, summarising older messages when they fell out; it records nothing
        learned from them (that is the engine's extraction step: extraction.py)."""
        messages = state.poster.messages()
        window = self._thread.window(state.scope.thread, messages, state.scope.topic)
        self.add_usage(state, window.usage)
        return ThreadView(tuple(messages), window)

    def read_context(self, state: RunState, persona: Persona, window: ThreadWindow) -> TurnContext:
        """What `persona` knows for this turn, read afresh under the run's budgets (a failing source is left out:
        context.py); kept in `state.known` for the lead's decision."""
        scope = state.scope
        ask = ContextAsk(persona, scope.project, scope.topic, window.recent_text(), state.policy.budgets)
        known = state.known[persona.slug] = self._known.read(ask)
        return known

    def system(self, state: RunState, persona: Persona, known: TurnContext, round_no: int) -> SystemPrompt:
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
        return self._compiler.compile(persona, mode=scope.kind, known=known, context=context)

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
            words=self._words(state),
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
