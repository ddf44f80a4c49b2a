"""`nightwatch context`: where a persona's turn prompt spends its tokens, against the project's latest deliberation.

It reads what the persona knows through the same seam a turn does (domain/context.py) and the thread window as it
is stored, without calling the model; a source that cannot be read is left out, as in a turn.
"""

from __future__ import annotations

from dataclasses import replace

from nightwatch.domain.budget import PromptBudget
from nightwatch.domain.context import ContextAsk, ContextReader
from nightwatch.domain.deliberation.models import DEFAULT_KIND
from nightwatch.domain.deliberation.policy import DeliberationPolicy
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.deliberation.thread_context import ThreadContext, ThreadPrompt, ThreadWindow
from nightwatch.domain.deliberation.turns import InteractionPrompt
from nightwatch.domain.models import Persona, ThreadMessage
from nightwatch.domain.soul import SoulCompiler

LATEST_OF = 50  # how many recent deliberations are searched for the project's latest


class ContextBudget:
    """Counts a persona's turn prompt as the next deliberation in the project would lay it out."""

    def __init__(
        self,
        *,
        log: DeliberationLog,
        thread: ThreadContext,
        known: ContextReader,
        compiler: SoulCompiler,
        model_window: int,
    ) -> None:
        self._log = log
        self._thread = thread
        self._known = known
        self._compiler = compiler
        self._model_window = model_window  # read once, when the engine is built, as its turns read it

    def count(self, persona: Persona, project: str, topic: str, policy: DeliberationPolicy) -> PromptBudget:
        """The budget of `persona`'s turn in `project` (a slug); the latest deliberation's topic when none is given."""
        latest = next((d for d in self._log.recent(LATEST_OF) if d.project == project and d.id is not None), None)
        window = ThreadWindow("", 0, ())
        if latest is not None and latest.id is not None:
            turns = [t for t in self._log.turns(latest.id) if not t.skipped]
            window = self._thread.peek(latest.thread, [ThreadMessage(t.persona, t.text, t.persona) for t in turns])
            topic = topic or latest.topic
        known = self._known.read(ContextAsk(persona, project, topic, window.recent_text(), policy.budgets))
        context = InteractionPrompt(project, DEFAULT_KIND, 1, policy.rounds, topic).render()
        budget = self._compiler.budget(
            persona,
            mode=DEFAULT_KIND,
            known=known,
            context=context,
            thread=ThreadPrompt(summary="", messages=window.recent).render(),
            summary=window.summary,
            window=self._model_window,
        )
        system = self._compiler.compile(persona, mode=DEFAULT_KIND, known=known, context=context)
        return replace(budget, system_prompt=system.text)
