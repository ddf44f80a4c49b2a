"""A persona's turn with memory tools: ask, run the calls the model makes, hand back their results, until it answers.

The loop knows no model: requests carry the tools and the rounds so far, answers carry calls (domain/tool_use.py),
and the model adapter speaks its own protocol. At most `limit` calls (MAX_TOOL_CALLS) run in one turn; a call
beyond that gets the error result LIMIT_REACHED and the next request makes the model answer in text (`answer_now`),
so a turn makes at most `limit + 2` model calls. A call that fails (bad input, a refused lesson, a storage fault)
gets an error result with its message, so the model can fix it or carry on without it. A model failure mid-loop
raises LLMError like any failed turn; what the calls did before it stays done, shown and counted.

Each recall is shown in the thread or terminal (`Poster.post_recall`: "🔎 Dev recalled: …"), and each lesson newly
remembered is announced as reflection's are (`Poster.post_lesson`, saying whether it was created, merged into a lesson
it restates or superseded one, with a Forget button), and
each lesson forgotten with `memory_forget` too (`Poster.post_forgotten`: "Dev forgot: …" with an Undo button), as the
call happens.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from nightwatch.domain.deliberation.ports import Poster, announce
from nightwatch.domain.errors import LLMOutputError, NightWatchError
from nightwatch.domain.llm import LLM, LLMRequest, LLMResponse, Usage
from nightwatch.domain.memory import MAX_TOOL_CALLS, MemoryTools, Remembered, ToolOutcome
from nightwatch.domain.memory.ports import Forgotten
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.tool_use import ToolCall, ToolResult, ToolRound, ToolTrace

log = logging.getLogger(__name__)

LIMIT_REACHED = "limit reached; answer now, without tools (at most {limit} tool calls a turn)"
FAILED = "The tool failed ({kind}); answer without it."


@dataclass
class ToolTurn:
    """One turn's tool loop, and what its calls did so far (kept even when the model fails later in the turn)."""

    llm: LLM
    tools: MemoryTools
    poster: Poster
    persona: Persona
    project: str
    limit: int = MAX_TOOL_CALLS
    traces: list[ToolTrace] = field(default_factory=list)
    recalled: list[Lesson] = field(default_factory=list)
    remembered: list[Remembered] = field(default_factory=list)
    forgotten: list[Forgotten] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  # of every model call so far

    def answer(self, request: LLMRequest) -> LLMResponse:
        """The model's text answer to `request`, after the tool calls it made; its usage is the whole loop's."""
        request = replace(request, tools=self.tools.specs)
        rounds: list[ToolRound] = []
        made = 0
        for _ in range(self.limit + 2):
            response = self.llm.complete(replace(request, tool_rounds=tuple(rounds)))
            self.usage += response.usage
            if request.answer_now or not response.tool_calls:
                return self._final(response)
            results = []
            for call in response.tool_calls:
                if made >= self.limit:
                    results.append(self._refuse(call))
                    request = replace(request, answer_now=True)
                else:
                    made += 1
                    results.append(self._run(call))
            rounds.append(ToolRound(response.text, response.tool_calls, tuple(results)))
        raise AssertionError("unreachable: every round runs a call or refuses one")  # pragma: no cover

    def _final(self, response: LLMResponse) -> LLMResponse:
        if response.tool_calls and not response.text.strip():
            raise LLMOutputError(
                f"The model kept calling tools after the limit of {self.limit} and gave no answer; try again."
            )
        return replace(response, usage=self.usage, tool_calls=())

    def _refuse(self, call: ToolCall) -> ToolResult:
        message = LIMIT_REACHED.format(limit=self.limit)
        self.traces.append(ToolTrace(call.name, call.input, message, error=True))
        return ToolResult(call.id, message, is_error=True)

    def _run(self, call: ToolCall) -> ToolResult:
        try:
            outcome = self.tools.run(call)
        except (NightWatchError, OSError) as error:
            log.info("%s's %s call failed: %s", self.persona.name, call.name, error)
            return self._failed(call, str(error))
        except Exception as error:  # a tool's bug must not cost the turn; the model hears it failed
            log.exception("%s's %s call raised", self.persona.name, call.name)
            return self._failed(call, FAILED.format(kind=type(error).__name__))
        self.traces.append(ToolTrace(call.name, call.input, outcome.summary))
        self._keep(outcome)
        return ToolResult(call.id, outcome.content)

    def _failed(self, call: ToolCall, message: str) -> ToolResult:
        self.traces.append(ToolTrace(call.name, call.input, message, error=True))
        return ToolResult(call.id, message, is_error=True)

    def _keep(self, outcome: ToolOutcome) -> None:
        """Count what the call touched and tell the thread; a failed post never fails the call."""
        try:
            if outcome.query:
                self.recalled += outcome.recalled
                self.poster.post_recall(self.persona, outcome.query, len(outcome.recalled))
            if outcome.remembered is not None:
                self.remembered.append(outcome.remembered)
                announce(self.poster, self.persona, self.project, outcome.remembered)
            if outcome.forgotten is not None:
                self.forgotten.append(outcome.forgotten)
                self.poster.post_forgotten(self.persona, outcome.forgotten)
        except Exception:
            log.exception("could not show %s's memory tool call in the thread", self.persona.name)
