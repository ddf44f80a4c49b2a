"""The terminal surface: a Poster that prints a deliberation as it happens, and the JSON and budget renderings.

`TerminalPoster` prints each turn (name, role, text), then the lead's verdict, then one "Carlos remembered: ..." line
per lesson; a persona's memory tools print "🔎 Dev recalled: <query> (3 lessons)", "Dev remembered: ..." and
"Dev forgot: ..." before its turn. With `quiet=True` it prints nothing and only collects, for `nightwatch deliberate
--json`, which prints `render_result_json(result)` instead (each turn with its `tool_calls`). Texts are written for
Slack (mrkdwn); the terminal prints them as plain text (`plain_text`), while what it keeps (`messages()`, the
verdict) stays as posted.
What it prints, and the JSON, is redacted first (a backstop: secrets are redacted where they enter and where the
model answers).
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from typing import Any, ClassVar, TextIO

from nightwatch.adapters.secrets import redact_backstop, redact_data
from nightwatch.domain.deliberation import DeliberationResult
from nightwatch.domain.deliberation.models import Verdict
from nightwatch.domain.llm import Usage
from nightwatch.domain.memory import Retried
from nightwatch.domain.memory.ports import Forgotten
from nightwatch.domain.models import Persona, ThreadMessage
from nightwatch.domain.pins import PackedPin
from nightwatch.domain.pins.models import PinStatus
from nightwatch.domain.soul import PromptBudget
from nightwatch.prompts import Prompt

INDENT = "  "
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)
# *bold*, _italic_ and ~strike~ around words, not inside them (snake_case_names, 2*3*4 stay as they are).
_EMPHASIS = tuple(re.compile(rf"(?<![\w{m}]){m}(?=\S)([^{m}\n]*?\S){m}(?![\w{m}])") for m in (re.escape("*"), "_", "~"))
_LINK = re.compile(r"<(https?://[^|>\s]+)\|([^>]+)>|<(https?://[^|>\s]+)>")


@dataclass(frozen=True)
class PostedLesson:
    persona: str
    project: str
    id: str
    text: str


class TerminalPoster:
    """A Poster bound to one terminal run: prints (unless quiet) and keeps everything posted."""

    def __init__(self, *, out: TextIO | None = None, quiet: bool = False) -> None:
        self._out = out
        self.quiet = quiet
        self.thread: list[ThreadMessage] = []
        self.verdict: Verdict | None = None
        self.lessons: list[PostedLesson] = []
        self.notices: list[str] = []

    def post_turn(self, persona: Persona, text: str) -> None:
        self.thread.append(ThreadMessage(author=persona.name, text=text, persona=persona.name))
        self._print(f"{_who(persona)}\n{_indented(plain_text(text))}\n")

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None:
        self.verdict = verdict
        self.thread.append(ThreadMessage(author=lead.name, text=text, persona=lead.name))
        self._print(f"{_who(lead)} · decision: {verdict.decision.value}\n{_indented(plain_text(text))}\n")

    def post_lesson(
        self,
        persona: Persona,
        project: str,
        lesson_id: str,
        text: str,
        *,
        category: str | None = None,
        change: str = "created",
    ) -> None:
        self.lessons.append(PostedLesson(persona.name, project, lesson_id, text))
        said = "" if change == "created" else f" · {change}"  # merged into a restated lesson, or superseding one
        self._print(f"{persona.name} remembered: {plain_text(text)} ({lesson_id}{said})")

    def post_forgotten(self, persona: Persona, forgotten: Forgotten) -> None:
        self._print(f"{persona.name} forgot: {plain_text(forgotten.text)} ({forgotten.lesson_id})")

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        self._print(f"🔎 {persona.name} recalled: {plain_text(query)} ({found} lesson{'' if found == 1 else 's'})")

    def post_round_request(self, lead: Persona, summary: str) -> None:
        self.post_notice(f"{lead.name} asks for one more round: {summary}")

    def post_notice(self, text: str) -> None:
        self.notices.append(text)
        self._print(f"· {plain_text(text)}\n")

    def messages(self) -> list[ThreadMessage]:
        return list(self.thread)

    def _print(self, text: str) -> None:
        if not self.quiet:
            print(redact_backstop(text, "the terminal"), file=self._out or sys.stdout, flush=True)


def plain_text(mrkdwn: str) -> str:
    """Slack mrkdwn as terminal text: emphasis markers dropped, links as "label (url)"; code spans kept as written."""
    parts = _CODE.split(mrkdwn)
    for index in range(0, len(parts), 2):  # the odd parts are code spans
        text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(1) else m.group(3), parts[index])
        for emphasis in _EMPHASIS:
            text = emphasis.sub(r"\1", text)
        parts[index] = text
    return "".join(parts)


def _who(persona: Persona) -> str:
    return f"{persona.name} ({persona.role})"


def _indented(text: str) -> str:
    return textwrap.indent(text.strip(), INDENT)


def render_result_json(result: DeliberationResult) -> dict[str, Any]:
    """One JSON-ready document for `nightwatch deliberate --json`, with every text in it redacted."""
    deliberation = result.deliberation
    document = {
        "deliberation": {
            "id": deliberation.id,
            "topic": deliberation.topic,
            "project": deliberation.project,
            "thread": deliberation.thread,
            "status": deliberation.status.value,
        },
        "turns": [
            {
                "persona": turn.persona,
                "role": turn.role,
                "round": turn.round,
                "text": turn.text,
                "skipped": turn.skipped,
                "lessons_injected": turn.lessons_injected,
                "pins_injected": turn.pins_injected,
                "tool_calls": [
                    {"name": call.name, "input": dict(call.input), "result": call.result, "error": call.error}
                    for call in turn.tool_calls
                ],
            }
            for turn in result.turns
        ],
        "verdict": {
            "decision": result.verdict.decision.value,
            "summary": result.verdict.summary,
            "reasons": list(result.verdict.reasons),
            "action_items": list(result.verdict.action_items),
        },
        "summary": result.verdict.summary,
        "lessons": [
            {"persona": item.persona, "id": item.lesson.id, "text": item.lesson.text, "said": item.said}
            for item in result.remembered
        ],
        "usage": _usage(result.usage),
        "unsaved": list(result.unsaved),
    }
    return dict(redact_data(document))


def render_retry(report: list[Retried]) -> str:
    """What `nightwatch memory retry` wrote and what still waits, one line per persona and project."""
    if not report:
        return "Nothing to retry: no lessons are waiting to be saved."
    lines = []
    for item in report:
        where = f"{item.persona} · {item.project}"
        if item.written:
            lines.append(f"{where}: recorded {_lessons(item.written)}.")
        if item.waiting:
            lines.append(f"{where}: {_lessons(item.waiting)} still waiting: {item.error}.")
    if any(item.waiting for item in report):
        lines.append(
            "Fix that, then run `nightwatch memory retry` again; the next lesson written there retries them too."
        )
    return "\n".join(lines)


def _lessons(count: int) -> str:
    return f"{count} lesson" + ("" if count == 1 else "s")


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }


@dataclass(frozen=True)
class BudgetReport(Prompt):
    """The `nightwatch context` breakdown of a persona's prompt budget."""

    template: ClassVar[str] = "context_budget.md.j2"
    persona: str
    role: str
    project: str
    budget: PromptBudget
    full: bool = False  # list every lesson, pin and shared item that went in

    @classmethod
    def example(cls) -> BudgetReport:
        return cls(
            persona="Maya",
            role="security reviewer",
            project="night-watch",
            budget=PromptBudget(
                persona="Maya",
                mode="deliberation",
                override=False,
                soul_tokens=620,
                style_tokens=180,
                skill_tokens=40,
                rules_tokens=90,
                memory_lessons=12,
                memory_total_lessons=48,
                memory_tokens=410,
                context_tokens=45,
                thread_tokens=1300,
                summary_tokens=160,
                window=200_000,
                shared_items=3,
                shared_total_items=20,
                shared_tokens=120,
                shared_sources=("Priya", "Dev"),
                pins_tokens=900,
                pins_budget=1500,
                pins=(
                    PackedPin(3, "file /srv/docs/ARCHITECTURE.md", PinStatus.OK, False, "…", 700, 640, 2100, True),
                    PackedPin(5, 'note "Deploys freeze on Fridays."', PinStatus.OK, True, "…", 20, 12, 12, False),
                ),
            ),
        )


def render_budget(persona: Persona, project: str, budget: PromptBudget, *, full: bool = False) -> str:
    """The budget breakdown as text for a person; `full` lists what went in, item by item."""
    return BudgetReport(persona=persona.name, role=persona.role, project=project, budget=budget, full=full).render()
