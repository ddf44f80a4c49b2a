"""Memory as its direct users reach it beside a turn's read and reflection: the tools a persona may call during its
turn, `memory_recall` (search), `remember` (record a lesson) and `memory_forget` (made by domain/teaching/forgetting.py,
offered when one is given); and whole documents a person exports, edits and
imports again (`MemoryTransfer`; format.merge_imported merges a file by lesson id; `settle_appended` files the lines
a person appended at the end of a file, under its history, as live lessons).

`MemoryTools` is bound to one persona, project and thread. Recall ranks exactly as `memory search` does and hands
back the best few lessons with their ids, as data (`as_data`) inside a `<memory>` block. Remember goes through
`MemoryService.record`, so the junk guard, redaction (the model's output is redacted where it leaves the model
adapter) and deduplication apply; the persona itself is the lesson's author (None). Bad input raises
InvalidInputError with a message the model can act on; the turn's tool loop turns any error into an error result.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from functools import cache
from typing import ClassVar, Protocol

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory.compaction import clear
from nightwatch.domain.memory.document import Line
from nightwatch.domain.memory.format import Merged, merge_imported, parse
from nightwatch.domain.memory.lesson_text import QUERY_MAX, validate_query
from nightwatch.domain.memory.models import CATEGORIES, DESCRIPTIONS, LESSON_MAX, Remembered, validate_category
from nightwatch.domain.memory.ports import Forgotten, MemoryStore, TurnForgetting
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.models import Category, Lesson, Persona
from nightwatch.domain.names import check_slug
from nightwatch.domain.quoting import as_data
from nightwatch.domain.recall import Scored
from nightwatch.domain.tool_use import ToolCall, ToolSpec
from nightwatch.prompts import Prompt

RECALL_TOOL = "memory_recall"
REMEMBER_TOOL = "remember"
FORGET_TOOL = "memory_forget"
RECALL_LIMIT = 5  # lessons one recall hands back
MAX_TOOL_CALLS = 3  # tool calls one turn may make (the loop that enforces it is deliberation/tool_turn.py)
TOOL_KIND = "turn"  # the dated section a remembered lesson goes under, as reflection's go under the interaction's


class ToolMemory(Protocol):
    """What the memory tools need of the memory service."""

    def search(self, persona: Persona, project: str, query: str, limit: int = 10) -> builtins.list[Scored]: ...

    def record(
        self,
        persona: Persona,
        project: str,
        text: str,
        *,
        kind: str = "manual",
        link: str | None = None,
        author: str | None = None,
        category: Category | None = None,
    ) -> Remembered: ...


@dataclass(frozen=True)
class RecallToolPrompt(Prompt):
    """What `memory_recall` is for, as the model reads it."""

    template: ClassVar[str] = "tool_recall.md.j2"
    limit: int
    calls: int

    @classmethod
    def example(cls) -> RecallToolPrompt:
        return cls(limit=RECALL_LIMIT, calls=MAX_TOOL_CALLS)


@dataclass(frozen=True)
class RememberToolPrompt(Prompt):
    """What `remember` is for, as the model reads it, with each category's meaning."""

    template: ClassVar[str] = "tool_remember.md.j2"
    max_chars: int
    categories: tuple[tuple[str, str], ...]

    @classmethod
    def example(cls) -> RememberToolPrompt:
        return cls(max_chars=LESSON_MAX, categories=tuple((name, DESCRIPTIONS[name]) for name in CATEGORIES))


@dataclass(frozen=True)
class RecallResultPrompt(Prompt):
    """A recall's answer for the model: the lessons found (id, text already made data), or that there were none."""

    template: ClassVar[str] = "tool_recall_result.md.j2"
    project: str
    query: str
    lessons: tuple[tuple[str, str], ...]

    @classmethod
    def example(cls) -> RecallResultPrompt:
        return cls(
            project="night-watch",
            query="rate limiting",
            lessons=(("3f9a2c1d", "The login endpoint allows 10 attempts a minute per IP."),),
        )


@cache
def memory_tool_specs(max_chars: int = LESSON_MAX) -> tuple[ToolSpec, ...]:
    """The two tools' definitions; the same every call, so they stay a cacheable prefix of each request."""
    recall = ToolSpec(
        name=RECALL_TOOL,
        description=RecallToolPrompt(limit=RECALL_LIMIT, calls=MAX_TOOL_CALLS).render(),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for, in a few words", "maxLength": QUERY_MAX}
            },
            "required": ["query"],
        },
    )
    remember = ToolSpec(
        name=REMEMBER_TOOL,
        description=RememberToolPrompt(
            max_chars=max_chars, categories=tuple((name, DESCRIPTIONS[name]) for name in CATEGORIES)
        ).render(),
        input_schema={
            "type": "object",
            "properties": {
                "lesson": {"type": "string", "description": "the lesson, one sentence", "maxLength": max_chars},
                "category": {"type": "string", "enum": list(CATEGORIES), "description": "what the lesson is about"},
            },
            "required": ["lesson", "category"],
        },
    )
    return (recall, remember)


@dataclass(frozen=True)
class ToolOutcome:
    """What one memory tool call did: the text for the model, a short line for people, and what it touched."""

    content: str
    summary: str
    recalled: tuple[Lesson, ...] = ()
    query: str = ""
    remembered: Remembered | None = None  # what a remember call did: created, merged (counted again), superseded
    forgotten: Forgotten | None = None


class MemoryTools:
    """The memory tools of one persona's turn in one project's thread."""

    def __init__(
        self,
        *,
        memory: ToolMemory,
        persona: Persona,
        project: str,
        link: str | None,
        max_chars: int = LESSON_MAX,
        forgetting: TurnForgetting | None = None,
        thread: str = "",
    ) -> None:
        self._memory = memory
        self._persona = persona
        self._project = project
        self._link = link
        self._forget = forgetting.for_turn(persona, project, thread) if forgetting else None
        self.specs = memory_tool_specs(max_chars) + ((forgetting.spec,) if forgetting else ())

    def run(self, call: ToolCall) -> ToolOutcome:
        """Run one call; raise InvalidInputError (or what the memory raised) when it cannot be done."""
        if call.name == RECALL_TOOL:
            return self._recall(call.input)
        if call.name == REMEMBER_TOOL:
            return self._remember(call.input)
        if call.name == FORGET_TOOL and self._forget is not None:
            content, summary, forgotten = self._forget.run(call.input)
            return ToolOutcome(content, summary, forgotten=forgotten)
        names = ", ".join(spec.name for spec in self.specs)
        raise InvalidInputError(f"There is no tool named {call.name!r}; the memory tools are {names}.")

    def _recall(self, given: Mapping[str, object]) -> ToolOutcome:
        query = validate_query(given.get("query"))
        hits = self._memory.search(self._persona, self._project, query, limit=RECALL_LIMIT)
        lessons = tuple(hit.lesson for hit in hits)
        content = RecallResultPrompt(
            project=self._project,
            query=as_data(" ".join(query.split())),
            lessons=tuple((lesson.id, as_data(lesson.text)) for lesson in lessons),
        ).render()
        found = f"{len(lessons)} lesson{'' if len(lessons) == 1 else 's'}"
        ids = f": {', '.join(lesson.id for lesson in lessons)}" if lessons else ""
        return ToolOutcome(content, found + ids, recalled=lessons, query=query)

    def _remember(self, given: Mapping[str, object]) -> ToolOutcome:
        raw = given.get("category")
        if not isinstance(raw, str):
            raise InvalidInputError(f"Give the lesson a category: one of {', '.join(CATEGORIES)}.")
        category = validate_category(raw)
        text = given.get("lesson")
        if not isinstance(text, str):
            raise InvalidInputError("Give the lesson to remember as text: one sentence a teammate could act on.")
        found = self._memory.record(
            self._persona, self._project, text, kind=TOOL_KIND, link=self._link, author=None, category=category
        )
        lesson = found.lesson
        if found.outcome == "merged":  # a restatement: the kept lesson was counted again, nothing new was written
            content = f"You already remember this as [{lesson.id}] (seen {lesson.seen} times); nothing new was stored."
            return ToolOutcome(content, f"already remembered as {lesson.id}", remembered=found)
        return ToolOutcome(f"Remembered as [{lesson.id}] ({category}).", f"remembered {lesson.id}", remembered=found)


class MemoryTransfer:
    """Memory as whole documents: read one, import a file into one, or replace one that nobody changed meanwhile."""

    def __init__(self, *, store: MemoryStore, memory: MemoryService) -> None:
        self._store = store
        self._memory = memory

    def text(self, persona: Persona, project: str) -> str:
        """The document's text as stored ('' when there is none)."""
        return self._store.read(persona.slug, check_slug(project))

    def documents(self, persona: Persona) -> list[tuple[str, str]]:
        """Every (project, text) of the persona's memory that holds anything."""
        found = ((project, self._store.read(persona.slug, project)) for project in self._store.projects(persona.slug))
        return [(project, text) for project, text in found if text]

    def merge_in(self, persona: Persona, project: str, imported: str) -> Merged:
        """Merge a file's text into the persona's memory of `project` (see merge_imported), then embed new lessons."""
        project = check_slug(project)
        outcome: list[Merged] = []

        def change(current: str) -> str:
            outcome[:] = [merge_imported(current, imported)]  # a store may apply `change` again after a race
            return outcome[0].text

        self._store.update(persona.slug, project, change)
        if outcome[0].added:
            self._memory.backfill(persona.slug, project)
        return outcome[0]

    def clear(self, persona: Persona, project: str) -> int:
        """Empty the memory to its title, the old version kept for `memory rollback`; how many lessons it held."""
        return clear(self._store, persona, check_slug(project))

    def replace(self, persona: Persona, project: str, expected: str, text: str) -> bool:
        """Write `text` if the document still holds `expected`; False (nothing written) when someone wrote meanwhile."""
        project = check_slug(project)
        text = settle_appended(expected, text, self._memory.clock.now().date())
        written: list[bool] = []

        def change(current: str) -> str:
            written[:] = [current == expected]
            return text if written[0] else current

        self._store.update(persona.slug, project, change)
        if written[0] and text != expected:
            self._memory.backfill(persona.slug, project)
        return written[0]


# --- a hand edit made whole -------------------------------------------------------------------------------------
# A memory file ends with its `## Superseded` section once anything was superseded, so a lesson a person types at the
# end of the file (`nightwatch memory edit`) lands under that header. Night Watch writes every history entry struck
# through with its `superseded-by` mark, so a new, plain bullet after the last of them was not meant as history: it
# moves into a dated section of its own (`## <day> · edit`). A bullet put among the history entries stays history.

EDIT_KIND = "edit"


def settle_appended(before: str, after: str, day: date) -> str:
    """`after` with the new plain lessons that trail its history section moved into a live section dated `day`."""
    doc = parse(after)
    if not doc.sections or not doc.sections[-1].history:
        return after
    history = doc.sections[-1]
    known = {lesson.id for lesson in parse(before).all_lessons()}
    lines = list(history.lines)
    end = len(lines)
    while end and lines[end - 1].lesson is None and not (lines[end - 1].raw or "").strip():
        end -= 1
    start = end
    while start and _appended(lines[start - 1], known):
        start -= 1
    if start == end:
        return after
    fresh = [replace(line.lesson, superseded_by=None) for line in lines[start:end] if line.lesson is not None]
    kept = replace(history, lines=tuple(lines[:start] + lines[end:]))
    return replace(doc, sections=(*doc.sections[:-1], kept)).append(fresh, day, EDIT_KIND, None).render()


def _appended(line: Line, known: set[str]) -> bool:
    """Whether the line is a lesson a person added plainly: new, neither struck through nor marked superseded."""
    raw = line.raw or ""
    return line.lesson is not None and line.lesson.id not in known and "~~" not in raw and "superseded-by:" not in raw
