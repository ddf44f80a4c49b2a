"""The memory block a turn's system prompt carries: its template context (the soul compiler puts its own heading above
it). Each lesson is its abstract, one line, made data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from nightwatch.prompts import Prompt


@dataclass(frozen=True)
class MemoryBlockPrompt(Prompt):
    """The lessons injected into a system prompt (the soul compiler puts its own heading above them)."""

    template: ClassVar[str] = "memory_block.md.j2"

    lessons: tuple[str, ...]

    @classmethod
    def example(cls) -> MemoryBlockPrompt:
        return cls(
            lessons=(
                "Never merge a migration without a rollback script.",
                "The auth module couples to the session store; review changes to both together.",
            )
        )
