"""The soul compiler: persona + what it knows for the turn + per-interaction context -> a cache-friendly system prompt.

The order is fixed so the long stable prefix comes first, which provider prompt caching depends on:

    identity and soul · style · skill mode · operating rules         block 1, cached (or the persona's override)
    the turn's context, one block per source that has something      cached, in the order the wiring lists the
      (pinned documents, memory, shared knowledge: each delimited      sources; each block absent when empty
      as notes, never instructions; see domain/context.py)
    per-interaction context                                          last, never cached

Each section is its own template with a typed context, so `budget()` can count the tokens of each part exactly as
`compile()` lays them out. The compiler knows no context source by name: a new one reaches the prompt unchanged here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from nightwatch.domain.budget import PromptBudget
from nightwatch.domain.context import TurnContext
from nightwatch.domain.llm import PromptBlock, SystemPrompt
from nightwatch.domain.models import Persona, Soul, Style
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.prompts import Prompt

__all__ = [
    "DEFAULT_WINDOW",
    "PromptBudget",
    "RulesSection",
    "SkillSection",
    "SoulCompiler",
    "SoulPrompt",
    "StyleSection",
    "skill_instruction",
]

FALLBACK_MODE = "deliberation"
GENERIC_INSTRUCTION = "Give your view on the topic from the angle of your role, briefly and concretely."
DEFAULT_WINDOW = 200_000
SECTION_JOIN = "\n\n"


@dataclass(frozen=True)
class SoulPrompt(Prompt):
    """Identity and soul: who the persona is."""

    template: ClassVar[str] = "soul.md.j2"
    name: str
    role: str
    soul: Soul

    @classmethod
    def example(cls) -> SoulPrompt:
        return cls(
            name="Maya",
            role="security reviewer",
            soul=Soul(
                who_i_am="I review changes for how they fail under attack.",
                worldview=("Every input is hostile until proven otherwise.",),
                opinions={"auth": ("Tokens expire; sessions are revocable.",)},
                expertise=("threat modelling", "OAuth"),
                interests=("supply chain",),
                tensions=("Speed of delivery against depth of review.",),
                boundaries=("I do not approve what I have not read.",),
                pet_peeves=("Secrets in logs.",),
            ),
        )


@dataclass(frozen=True)
class StyleSection(Prompt):
    """How the persona speaks."""

    template: ClassVar[str] = "soul_style.md.j2"
    style: Style

    @classmethod
    def example(cls) -> StyleSection:
        return cls(
            style=Style(
                voice_principles=("Lead with the risk.",),
                sentence_structure="Short declaratives.",
                tone="calm, exact",
                words_used=("threat", "blast radius"),
                words_avoided=("just",),
                emoji_usage="none",
                rhetorical_moves=("Ask what an attacker sees.",),
                anti_patterns=("Vague warnings without a fix.",),
                good_examples=("The token never expires; add a TTL and a revocation list.",),
            )
        )


@dataclass(frozen=True)
class SkillSection(Prompt):
    """What the persona does in this kind of interaction."""

    template: ClassVar[str] = "soul_skill.md.j2"
    mode: str
    instruction: str
    additional_instructions: tuple[str, ...] = ()

    @classmethod
    def example(cls) -> SkillSection:
        return cls(
            mode="pr_review",
            instruction="Review the change for security risks; name the line and the fix.",
            additional_instructions=("Flag secrets and unvalidated input first.",),
        )


@dataclass(frozen=True)
class RulesSection(Prompt):
    """The operating rules every persona follows."""

    template: ClassVar[str] = "soul_rules.md.j2"
    name: str

    @classmethod
    def example(cls) -> RulesSection:
        return cls(name="Maya")


@dataclass(frozen=True)
class _Sections:
    soul: str
    style: str
    skill: str
    rules: str

    @property
    def prefix(self) -> str:
        return SECTION_JOIN.join(part for part in (self.soul, self.style, self.skill, self.rules) if part)


class SoulCompiler:
    """Renders a persona's system prompt for one interaction, stable parts first."""

    def compile(self, persona: Persona, *, mode: str, known: TurnContext, context: str) -> SystemPrompt:
        """Return the system prompt: [identity..rules] [each block `known` has] (all cached) [context]."""
        blocks = [PromptBlock(self.prefix(persona, mode), cache=True)]
        blocks += [PromptBlock(section, cache=True) for section in known.sections]
        if context.strip():
            blocks.append(PromptBlock(context.strip(), cache=False))
        return SystemPrompt(tuple(blocks))

    def prefix(self, persona: Persona, mode: str) -> str:
        """The stable prefix: the persona's override, or identity, soul, style, skill mode and rules."""
        if persona.system_prompt_override and persona.system_prompt_override.strip():
            return persona.system_prompt_override.strip()
        return self._sections(persona, mode).prefix

    def budget(
        self,
        persona: Persona,
        *,
        mode: str,
        known: TurnContext,
        context: str = "",
        thread: str = "",
        summary: str = "",
        window: int = DEFAULT_WINDOW,
    ) -> PromptBudget:
        """Count the tokens of each part of a turn's prompt, against the model's window.

        `context` is the per-interaction block of the system prompt; `thread` and `summary` are the thread window
        and the stored summary of older messages that go with the turn.
        """
        override = bool(persona.system_prompt_override and persona.system_prompt_override.strip())
        if override:
            sections = _Sections(soul=self.prefix(persona, mode), style="", skill="", rules="")
        else:
            sections = self._sections(persona, mode)
        return PromptBudget(
            persona=persona.name,
            mode=mode,
            override=override,
            soul_tokens=estimate_tokens(sections.soul),
            style_tokens=estimate_tokens(sections.style),
            skill_tokens=estimate_tokens(sections.skill),
            rules_tokens=estimate_tokens(sections.rules),
            context_tokens=estimate_tokens(context.strip()),
            thread_tokens=estimate_tokens(thread),
            summary_tokens=estimate_tokens(summary),
            window=window,
        ).counting(known)

    def _sections(self, persona: Persona, mode: str) -> _Sections:
        return _Sections(
            soul=SoulPrompt(name=persona.name, role=persona.role, soul=persona.soul).render(),
            style=StyleSection(style=persona.style).render() if _has_style(persona.style) else "",
            skill=SkillSection(
                mode=mode,
                instruction=skill_instruction(persona, mode),
                additional_instructions=persona.skill.additional_instructions,
            ).render(),
            rules=RulesSection(name=persona.name).render(),
        )


def skill_instruction(persona: Persona, mode: str) -> str:
    """The persona's instruction for `mode`, else for deliberation, else a generic one."""
    modes = persona.skill.modes
    for key in (mode, FALLBACK_MODE):
        instruction = modes.get(key, "").strip()
        if instruction:
            return instruction
    return GENERIC_INSTRUCTION


def _has_style(style: Style) -> bool:
    return any(getattr(style, f.name) for f in fields(style))
