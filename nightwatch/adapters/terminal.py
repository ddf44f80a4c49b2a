"""The terminal surface: a Poster that prints a deliberation as it happens, and the JSON and budget renderings.

`TerminalPoster` prints each turn (name, role, text), then the lead's verdict, then one "Carlos remembered: ..." line
per lesson. With `quiet=True` it prints nothing and only collects, for `nightwatch deliberate --json`, which prints
`render_result_json(result)` instead.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from typing import Any, ClassVar, TextIO

from nightwatch.domain.deliberation import DeliberationResult
from nightwatch.domain.models import Persona, ThreadMessage, Usage, Verdict
from nightwatch.domain.soul import PromptBudget
from nightwatch.prompts import Prompt

INDENT = "  "


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
        self._print(f"{_who(persona)}\n{_indented(text)}\n")

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None:
        self.verdict = verdict
        self.thread.append(ThreadMessage(author=lead.name, text=text, persona=lead.name))
        self._print(f"{_who(lead)} · decision: {verdict.decision.value}\n{_indented(text)}\n")

    def post_lesson(self, persona: Persona, project: str, lesson_id: str, text: str) -> None:
        self.lessons.append(PostedLesson(persona.name, project, lesson_id, text))
        self._print(f"{persona.name} remembered: {text} ({lesson_id})")

    def post_notice(self, text: str) -> None:
        self.notices.append(text)
        self._print(f"· {text}\n")

    def messages(self) -> list[ThreadMessage]:
        return list(self.thread)

    def _print(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self._out or sys.stdout, flush=True)


def _who(persona: Persona) -> str:
    return f"{persona.name} ({persona.role})"


def _indented(text: str) -> str:
    return textwrap.indent(text.strip(), INDENT)


def render_result_json(result: DeliberationResult) -> dict[str, Any]:
    """One JSON-ready document for `nightwatch deliberate --json`."""
    deliberation = result.deliberation
    return {
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
            {"persona": item.persona, "id": item.lesson.id, "text": item.lesson.text} for item in result.remembered
        ],
        "usage": _usage(result.usage),
    }


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
            ),
        )


def render_budget(persona: Persona, project: str, budget: PromptBudget) -> str:
    """The budget breakdown as text for a person."""
    return BudgetReport(persona=persona.name, role=persona.role, project=project, budget=budget).render()
