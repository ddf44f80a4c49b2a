"""The deliberation engine: bounded rounds of short persona turns, a lead's decision, then reflection.

Every loop has a bound: at most `max_rounds` rounds, `max_replies` posted replies, `max_contributors` (plus the lead
and anyone a person addresses) per round, and `consensus_retries` retries of the lead's decision. There are no
sleeps. Before each turn (and the lead's decision) the engine reads the thread window, then takes lessons from the
messages it summarised away (extraction.py, a step of its own: reading never writes); the turn reads what the persona
knows (domain/context.py), compiles its system prompt, adds the window, asks the model and posts the answer. The
deliberation and each turn are stored as they happen (token usage is added to the stored total once per round), with
the process that runs it as its owner, so a deliberation cut off midway (its process killed) is found and closed as
interrupted by the next command (`close_abandoned`, see abandoned.py). A Slack deliberation holds a lease instead and
is taken over by another replica (takeover.py, resume.py), posts only while it holds that lease and, stopped, hands
the run over (lease_guard.py). How it ends is closing.py; what `nightwatch context` counts is context_budget.py.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import Protocol

from nightwatch.domain.budget import PromptBudget
from nightwatch.domain.context import ContextReader
from nightwatch.domain.deliberation import takeover
from nightwatch.domain.deliberation.abandoned import Unowned, close_abandoned
from nightwatch.domain.deliberation.closing import Closing
from nightwatch.domain.deliberation.consensus import ConsensusPrompt, decide
from nightwatch.domain.deliberation.context_budget import ContextBudget
from nightwatch.domain.deliberation.extraction import learn_discarded
from nightwatch.domain.deliberation.inputs import validate_topic
from nightwatch.domain.deliberation.lease_guard import LeaseEndedError, LeaseGuard, hand_over, leased
from nightwatch.domain.deliberation.models import (
    ChangesRequest,
    Decision,
    Deliberation,
    DeliberationRequest,
    DeliberationResult,
    DeliberationStatus,
    Verdict,
)
from nightwatch.domain.deliberation.participants import Panel, choose_panel, find_persona
from nightwatch.domain.deliberation.policy import DeliberationPolicy, PolicySource, policy_now
from nightwatch.domain.deliberation.ports import DeliberationLog, Liveness, PersonaMemory, Poster
from nightwatch.domain.deliberation.resume import resumed_state, round_in_progress
from nightwatch.domain.deliberation.speakers import speakers
from nightwatch.domain.deliberation.state import RunState, Scope
from nightwatch.domain.deliberation.thread_context import ThreadContext, ThreadView
from nightwatch.domain.deliberation.turns import TurnTaker, conversation
from nightwatch.domain.errors import NotFoundError
from nightwatch.domain.llm import LLM, LLMRequest, Purpose
from nightwatch.domain.memory import memory_tool_specs
from nightwatch.domain.memory.ports import TurnForgetting
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import project_slug
from nightwatch.domain.ports import Clock
from nightwatch.domain.soul import SoulCompiler

__all__ = ["DeliberationEngine", "DeliberationPolicy", "DeliberationRequest", "DeliberationResult"]
__all__ += ["PersonaDirectory", "PersonaMemory"]

CONSENSUS_MAX_TOKENS = 600


class PersonaDirectory(Protocol):
    """The personas the engine can call on (PersonaService or a PersonaRepository)."""

    def list(self, *, include_inactive: bool = False) -> builtins.list[Persona]: ...


STOPPED = "This deliberation was stopped before a decision; ask again to start it over."


class _StoppedError(Exception):
    """should_stop() said stop: finish the deliberation as INTERRUPTED."""


class DeliberationEngine:
    """Runs one deliberation in one thread, from choosing participants to recording what they learned."""

    def __init__(
        self,
        *,
        personas: PersonaDirectory,
        memory: PersonaMemory,
        compiler: SoulCompiler,
        llm: LLM,
        log: DeliberationLog,
        clock: Clock,
        policy: PolicySource,
        liveness: Liveness | None = None,
        context: ContextReader | None = None,
        forgetting: TurnForgetting | None = None,
    ) -> None:
        """`context`: what a persona knows for a turn (domain/context.py); `forgetting`: the `memory_forget` tool."""
        known = context or ContextReader()
        self._personas = personas
        self._memory = memory
        self._llm = llm
        self._log = log
        self._clock = clock
        self._policies = policy
        self._policy = fixed = policy_now(policy)  # for the bounds read once (see policy.py); each run takes its own
        self._liveness = liveness or Unowned()
        thread = ThreadContext(
            llm=llm, log=log, context_tokens=fixed.context_tokens, recent_messages=fixed.recent_messages
        )
        self._turns = TurnTaker(
            memory=memory,
            known=known,
            compiler=compiler,
            llm=llm,
            log=log,
            clock=clock,
            thread=thread,
            reply_chars=fixed.reply_chars,
            forgetting=forgetting,
        )
        self._tools = memory_tool_specs() + ((forgetting.spec,) if forgetting else ())  # as the turns offer them
        self._closing = Closing(memory=memory, log=log, clock=clock, reply_chars=fixed.reply_chars)
        self._budget = ContextBudget(
            log=log, thread=thread, known=known, compiler=compiler, model_window=fixed.model_window
        )

    @property
    def policy(self) -> DeliberationPolicy:
        """The policy a deliberation starting now would run with."""
        return policy_now(self._policies)

    def run(
        self, request: DeliberationRequest, poster: Poster, *, should_stop: Callable[[], bool] | None = None
    ) -> DeliberationResult:
        """Run it to a verdict (INTERRUPTED when `should_stop` says so); a leased run raises LeaseEndedError when
        stopped or taken over (lease_guard.py)."""
        policy = self.policy
        active = self._personas.list(include_inactive=False)
        scope, panel = self._setting(request, active, policy)
        owner = self._liveness.owner() or None
        now = self._clock.now()
        lease = now if request.leased and owner else None
        started = self._log.start(
            Deliberation(scope.topic, scope.project, scope.thread, started_at=now, owner=owner, heartbeat_at=lease)
        )
        seen = len(poster.messages())
        guard = LeaseGuard(self._log, started)
        state = RunState(
            scope, guard.poster(poster), panel, started, first_message=seen, human_seen=seen, policy=policy, lease=guard
        )
        return self._drive(state, active, should_stop)

    def resume(
        self,
        claimed: Deliberation,
        request: DeliberationRequest,
        poster: Poster,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> DeliberationResult:
        """Finish `claimed` (taken over with `claim`) from its stored turns in its own thread; see resume.py."""
        policy = self.policy
        active = self._personas.list(include_inactive=False)
        scope, panel = self._setting(request, active, policy)
        stored = self._log.turns(claimed.id) if claimed.id is not None else []
        guard = LeaseGuard(self._log, claimed)
        posting = guard.poster(poster)
        state = resumed_state(claimed, stored, scope=scope, panel=panel, poster=posting, personas=active, policy=policy)
        state.lease = guard
        if claimed.takeovers > takeover.MAX_TAKEOVERS:
            return self._ended(state, DeliberationStatus.FAILED, takeover.GAVE_UP.format(times=claimed.takeovers))
        return self._drive(state, active, should_stop, round_in_progress(stored, claimed.changes))

    def _setting(
        self, request: DeliberationRequest, active: list[Persona], policy: DeliberationPolicy
    ) -> tuple[Scope, Panel]:
        topic = validate_topic(request.topic)
        panel = choose_panel(
            active, topic=topic, requested=request.personas, max_contributors=policy.max_contributors, lead=policy.lead
        )
        scope = Scope(topic, project_slug(request.project), request.thread, request.kind, request.link, policy.rounds)
        return scope, panel

    def _drive(
        self, state: RunState, active: list[Persona], should_stop: Callable[[], bool] | None, first_round: int = 1
    ) -> DeliberationResult:
        try:
            return self._closing.decided(state, self._rounds(state, active, should_stop, first_round))
        except _StoppedError:
            if not leased(state.deliberation):
                return self._ended(state, DeliberationStatus.INTERRUPTED, STOPPED)
            self._turns.save_usage(state)
            raise hand_over(self._log, state.deliberation) from None
        except LeaseEndedError:
            self._turns.save_usage(state)  # the tokens were spent; the row is another replica's now, left running
            raise
        except Exception:
            self._turns.save_usage(state)
            self._log.finish(state.id, DeliberationStatus.FAILED, None, self._clock.now())
            raise
        except BaseException:  # Ctrl-C or exit mid-call: the process is going away, close the record cleanly
            self._turns.save_usage(state)
            self._log.finish(state.id, DeliberationStatus.INTERRUPTED, None, self._clock.now())
            raise

    def _rounds(
        self, state: RunState, active: list[Persona], should_stop: Callable[[], bool] | None, first_round: int
    ) -> Verdict:
        rounds, max_replies = state.policy.rounds, state.policy.max_replies
        for round_no in range(min(first_round, rounds), rounds + 1):
            for persona in speakers(state, active):
                _checkpoint(should_stop)
                if state.replies >= max_replies:
                    break
                if (persona.name.casefold(), round_no) not in state.taken:
                    view = self._turns.view(state)
                    self._extract(state, view)
                    self._turns.take(state, persona, round_no, view)
            _checkpoint(should_stop)
            final = round_no >= rounds or state.replies >= max_replies
            verdict = self._decide(state, round_no, final)
            self._turns.save_usage(state)
            if verdict.decision is not Decision.CHANGES or final:
                return verdict
            state.changes = verdict
            self._log.save_changes(state.id, ChangesRequest(round_no + 1, verdict))
            state.poster.post_round_request(state.panel.lead, verdict.summary)
        raise AssertionError("the last round always returns a verdict")  # pragma: no cover

    def _decide(self, state: RunState, round_no: int, final: bool) -> Verdict:
        """The lead's verdict; its tools and system prompt are the same as for its turn, so the prefix cache is reused.

        The memory tools are defined (the cached prefix starts with them) but may not be called: `answer_now`.
        """
        lead = state.panel.lead
        view = self._turns.view(state)
        self._extract(state, view)
        known = state.known.get(lead.slug) or self._turns.read_context(state, lead, view.window)
        request = LLMRequest(
            purpose=Purpose.CONSENSUS,
            system=self._turns.system(state, lead, known, round_no),
            messages=conversation(view.window, ConsensusPrompt(state.scope.kind, round_no, final).render()),
            max_tokens=CONSENSUS_MAX_TOKENS,
            model=lead.model,
            persona=lead,
            topic=state.scope.topic,
            tools=self._tools,
            answer_now=True,
        )
        decided = decide(self._llm, request, retries=max(0, state.policy.consensus_retries), final_round=final)
        self._turns.add_usage(state, decided.usage)
        return decided.verdict

    def _extract(self, state: RunState, view: ThreadView) -> None:
        """The loop's extraction step: lessons from what `view`'s window summarised away, taken once (extraction.py)."""
        learn_discarded(self._memory, self._log, state, view.messages, view.window.covered)

    def _ended(self, state: RunState, status: DeliberationStatus, notice: str) -> DeliberationResult:
        """Close the deliberation before a decision (stopped, or given up on) and say so in the thread."""
        self._turns.save_usage(state)
        return self._closing.ended(state, status, notice)

    def close_abandoned(self) -> list[Deliberation]:
        """Close as INTERRUPTED the RUNNING deliberations nobody works on any more (see abandoned.py)."""
        return close_abandoned(self._log, self._liveness, self._clock.now())

    @property
    def lease_for(self) -> timedelta:
        return self._policy.lease_for

    def renew_leases(self, threads: Collection[str]) -> int:
        """Renew this process's leases on its running deliberations in `threads` (see takeover.py)."""
        owner = self._liveness.owner()
        return self._log.renew(owner, list(threads), self._clock.now()) if owner and threads else 0

    def release_leases(self, threads: Collection[str]) -> int:
        """Hand over this process's running deliberations in `threads`: another replica claims them at once."""
        owner = self._liveness.owner()
        return self._log.release(owner, list(threads)) if owner and threads else 0

    def orphans(self) -> list[Deliberation]:
        """Leased deliberations whose owner is gone, for this process to take over (see takeover.py)."""
        return takeover.orphans(self._log, self._liveness, self._clock.now(), self._policy.lease_for)

    def claim(self, orphan: Deliberation) -> Deliberation | None:
        """Take `orphan` over for this process; None when another process claimed it first."""
        return takeover.claim(self._log, self._liveness, orphan, self._clock.now(), self._policy.lease_for)

    def context_budget(self, persona: str, project: str, topic: str = "") -> PromptBudget:
        """The token budget of a persona's turn prompt, against the project's latest deliberation (if any)."""
        found = find_persona(self._personas.list(include_inactive=True), persona)
        if found is None:
            raise NotFoundError(f"No persona is named {persona!r}; see `nightwatch personas list` for the names.")
        return self._budget.count(found, project_slug(project), topic, self.policy)


def _checkpoint(should_stop: Callable[[], bool] | None) -> None:
    if should_stop is not None and should_stop():
        raise _StoppedError
