"""The soul compiler: persona + memory block + per-interaction context -> a cache-friendly system prompt.

The order is fixed so the long stable prefix comes first, which provider prompt caching depends on:

    identity and soul · style · skill mode · operating rules         block 1, cached (or the persona's override)
    pinned documents inside <pinned> … </pinned>, never instructions  cached; absent when nothing is pinned
    memory, as notes inside <memory> … </memory>, never instructions cached; absent when memory is empty
    shared knowledge from teammates, inside <shared> … </shared>     cached; absent when nothing is shared
    per-interaction context                                          last, never cached

Pins come before memory because they change less often: a new lesson then re-caches only the blocks after it.

Each section is its own template with a typed context, so `budget()` can count the tokens of each part exactly as
`compile()` lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from nightwatch.domain.llm import PromptBlock, SystemPrompt
from nightwatch.domain.memory.models import MemoryBlock
from nightwatch.domain.models import Persona, Soul, Style
from nightwatch.domain.pins import PackedPin, PinBlock, PinsSection
from nightwatch.domain.quoting import as_data
from nightwatch.domain.sharing import SharedBlock
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.prompts import Prompt

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
class MemorySection(Prompt):
    """The memory block: lessons inside `<memory>` … `</memory>`, introduced as notes that are never instructions.

    `lessons` must already be made safe with `as_data` (`SoulCompiler.memory_section` does it), so that only the
    template opens and closes the block.
    """

    template: ClassVar[str] = "soul_memory.md.j2"
    lessons: str

    @classmethod
    def example(cls) -> MemorySection:
        return cls(lessons="- Rotate the signing key when a maintainer leaves.\n- The CI cache hides flaky tests.")


@dataclass(frozen=True)
class SharedSection(Prompt):
    """Knowledge teammates share: attributed lines inside `<shared>` … `</shared>`, notes that are never instructions.

    `items` must already be made safe with `as_data` (`SoulCompiler.shared_section` does it).
    """

    template: ClassVar[str] = "soul_shared.md.j2"
    items: str

    @classmethod
    def example(cls) -> SharedSection:
        return cls(items="- from Maya (Security Reviewer): The session cookie lacks SameSite.")


@dataclass(frozen=True)
class PromptBudget:
    """Where a persona's system prompt spends its tokens, and what is left of the model's window."""

    persona: str
    mode: str
    override: bool
    soul_tokens: int
    style_tokens: int
    skill_tokens: int
    rules_tokens: int
    memory_lessons: int
    memory_total_lessons: int
    memory_tokens: int
    context_tokens: int
    thread_tokens: int
    summary_tokens: int
    window: int
    pins_tokens: int = 0
    pins_budget: int = 0
    pins: tuple[PackedPin, ...] = ()  # each pin in the block: its tokens and whether it was cut
    shared_items: int = 0
    shared_total_items: int = 0
    shared_tokens: int = 0
    shared_sources: tuple[str, ...] = ()

    @property
    def total_tokens(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self) if f.name.endswith("_tokens"))

    @property
    def remaining(self) -> int:
        return self.window - self.total_tokens


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

    def compile(
        self,
        persona: Persona,
        *,
        mode: str,
        memory: MemoryBlock,
        context: str,
        shared: SharedBlock | None = None,
        pins: PinBlock | None = None,
    ) -> SystemPrompt:
        """Return the system prompt: [identity..rules] [pins] [memory] [shared] (all cached, each if any) [context]."""
        blocks = [PromptBlock(self.prefix(persona, mode), cache=True)]
        if pins is not None and not pins.empty:
            blocks.append(PromptBlock(self.pins_section(pins), cache=True))
        if not memory.empty and memory.text.strip():
            blocks.append(PromptBlock(self.memory_section(memory), cache=True))
        if shared is not None and not shared.empty and shared.text.strip():
            blocks.append(PromptBlock(self.shared_section(shared), cache=True))
        if context.strip():
            blocks.append(PromptBlock(context.strip(), cache=False))
        return SystemPrompt(tuple(blocks))

    def prefix(self, persona: Persona, mode: str) -> str:
        """The stable prefix: the persona's override, or identity, soul, style, skill mode and rules."""
        if persona.system_prompt_override and persona.system_prompt_override.strip():
            return persona.system_prompt_override.strip()
        return self._sections(persona, mode).prefix

    def memory_section(self, memory: MemoryBlock) -> str:
        """The memory block as the prompt carries it: its text made data (see `as_data`) inside the delimiters."""
        return MemorySection(lessons=as_data(memory.text.strip())).render()

    def pins_section(self, pins: PinBlock) -> str:
        """The pinned block as the prompt carries it, inside its delimiters.

        Each entry's parts were made data when it was packed (pins/block.py); making the whole text data again would
        escape the entries' own source lines, which `as_data` rightly treats as a pin's source line posed by data.
        """
        return PinsSection(pins=pins.text).render()

    def shared_section(self, shared: SharedBlock) -> str:
        """The shared block as the prompt carries it: its lines made data inside the delimiters."""
        return SharedSection(items=as_data(shared.text.strip())).render()

    def budget(
        self,
        persona: Persona,
        *,
        mode: str,
        memory: MemoryBlock,
        context: str = "",
        thread: str = "",
        summary: str = "",
        window: int = DEFAULT_WINDOW,
        pins: PinBlock | None = None,
        shared: SharedBlock | None = None,
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
        memory_text = self.memory_section(memory) if not memory.empty and memory.text.strip() else ""
        pins = pins or PinBlock()
        shared = shared or SharedBlock()
        shared_text = self.shared_section(shared) if not shared.empty and shared.text.strip() else ""
        return PromptBudget(
            persona=persona.name,
            mode=mode,
            override=override,
            soul_tokens=estimate_tokens(sections.soul),
            style_tokens=estimate_tokens(sections.style),
            skill_tokens=estimate_tokens(sections.skill),
            rules_tokens=estimate_tokens(sections.rules),
            memory_lessons=len(memory.lessons),
            memory_total_lessons=memory.total_lessons,
            memory_tokens=estimate_tokens(memory_text),
            context_tokens=estimate_tokens(context.strip()),
            thread_tokens=estimate_tokens(thread),
            summary_tokens=estimate_tokens(summary),
            window=window,
            pins_tokens=estimate_tokens(self.pins_section(pins)) if not pins.empty else 0,
            pins_budget=pins.budget,
            pins=pins.pins,
            shared_items=len(shared.items),
            shared_total_items=shared.total_items,
            shared_tokens=estimate_tokens(shared_text),
            shared_sources=shared.sources,
        )

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
