"""The personas, a recording memory fake and an engine builder shared by the deliberation tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy, DeliberationRequest
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.memory.models import Discarded, MemoryBlock, ReflectionContext, Remembered
from nightwatch.domain.models import Lesson, Persona, Soul
from nightwatch.domain.recall import Scored, ScoreParts
from nightwatch.domain.soul import SoulCompiler
from tests.domain.knowing import reading
from tests.fakes import T0, FakeClock, FakeLiveness, InMemoryDeliberationLog, InMemoryPersonaRepository, ScriptedLLM


def persona(
    name: str, role: str, expertise: Sequence[str] = (), opinions: dict[str, tuple[str, ...]] | None = None
) -> Persona:
    return Persona(
        name=name,
        slug=name.lower(),
        role=role,
        soul=Soul(expertise=tuple(expertise), opinions=MappingProxyType(dict(opinions or {}))),
    )


MAYA = persona(
    "Maya",
    "Security reviewer",
    ("threat modelling", "authentication", "secrets management"),
    {"security": ("Tokens must expire and be revocable.",)},
)
CARLOS = persona("Carlos", "Tech lead", ("architecture", "system design"), {"delivery": ("Small slices ship.",)})
PRIYA = persona(
    "Priya", "QA engineer", ("testing", "regression suites", "flaky tests"), {"quality": ("Test the edge.",)}
)
DEV = persona("Dev", "Implementer", ("python", "refactoring", "performance"), {"code": ("Readable beats clever.",)})
INES = persona("Ines", "Data engineer", ("sql", "warehouse", "pipelines"), {"data": ("Schemas are contracts.",)})
TEAM = (MAYA, CARLOS, PRIYA, DEV)


def verdict_json(
    decision: str, summary: str = "Decided.", reasons: Sequence[str] = ("A reason.",), action_items: Sequence[str] = ()
) -> str:
    return json.dumps(
        {"decision": decision, "summary": summary, "reasons": list(reasons), "action_items": list(action_items)}
    )


POINTS = {
    "Maya": [
        "Tokens must expire hourly.",
        "Rotate the signing key too.",
        "Log no secrets anywhere.",
        "Audit admin paths.",
    ],
    "Carlos": ["Ship it behind a flag.", "Keep the slice small.", "Write the ADR first.", "Plan the rollback."],
    "Priya": ["Add an expiry test.", "Cover the clock skew case.", "Quarantine the flaky suite.", "Check retries."],
    "Dev": ["Refactor the session store.", "Use a dataclass here.", "Profile the hot loop.", "Drop the dead branch."],
    "Ines": ["Migrate the warehouse table.", "Version the schema.", "Backfill overnight.", "Partition by day."],
}


class Voices:
    """Distinct replies per persona and per call, so nothing is dropped as a near-duplicate."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, request: LLMRequest) -> str:
        name = request.persona.name if request.persona else "someone"
        n = self.calls.get(name, 0)
        self.calls[name] = n + 1
        points = POINTS.get(name, ["Look closer.", "Ask the owner.", "Read the logs.", "Sleep on it."])
        return f"{points[n % len(points)]} ({name}, reply {n + 1})"


@dataclass
class FakeMemory:
    """The PersonaMemory port in memory: fixed blocks per persona, scripted lessons, recorded calls."""

    blocks: dict[str, MemoryBlock] = field(default_factory=dict)
    lessons: dict[str, list[str]] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)
    refusing: dict[str, Exception] = field(default_factory=dict)  # by slug: what storage raised
    reads: list[tuple[str, str, str, str]] = field(default_factory=list)
    budgets: list[int | None] = field(default_factory=list)  # the token budget of each read
    reflections: list[tuple[str, str, ReflectionContext]] = field(default_factory=list)
    extractions: list[tuple[str, str, Discarded]] = field(default_factory=list)
    extracted: dict[str, list[str]] = field(default_factory=dict)  # by slug: lessons an extraction gives
    injected: list[tuple[str, str, list[str]]] = field(default_factory=list)
    searches: list[tuple[str, str, str]] = field(default_factory=list)  # (slug, project, query) of each recall
    kept: list[tuple[str, str, Lesson, str | None]] = field(default_factory=list)  # (slug, project, lesson, category)

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> MemoryBlock:
        self.reads.append((persona.slug, project, topic, thread))
        self.budgets.append(budget)
        return self.blocks.get(persona.slug, MemoryBlock())

    def reflect(self, persona: Persona, project: str, context: ReflectionContext) -> list[Remembered]:
        self.reflections.append((persona.slug, project, context))
        if persona.slug in self.failing:
            raise RuntimeError(f"{persona.name}'s memory file is locked")
        if persona.slug in self.refusing:
            raise self.refusing[persona.slug]
        return [
            Remembered(Lesson(id=f"{persona.slug[:3]}{i:05d}", text=text, recorded_at=T0), "created")
            for i, text in enumerate(self.lessons.get(persona.slug, []))
        ]

    def extract(self, persona: Persona, project: str, discarded: Discarded) -> list[Remembered]:
        self.extractions.append((persona.slug, project, discarded))
        if persona.slug in self.refusing:
            raise self.refusing[persona.slug]
        return [
            Remembered(Lesson(id=f"x{persona.slug[:2]}{i:05d}", text=text, recorded_at=T0), "created")
            for i, text in enumerate(self.extracted.get(persona.slug, []))
        ]

    def note_injected(self, persona: Persona, project: str, lesson_ids: list[str]) -> None:
        self.injected.append((persona.slug, project, list(lesson_ids)))

    def search(self, persona: Persona, project: str, query: str, limit: int = 10) -> list[Scored]:
        """The persona's block, every lesson a hit, in order."""
        self.searches.append((persona.slug, project, query))
        lessons = self.blocks.get(persona.slug, MemoryBlock()).lessons
        return [Scored(lesson, 1.0, ScoreParts(1.0, 0.0, 0.0, 0.0)) for lesson in lessons][:limit]

    def record(
        self,
        persona: Persona,
        project: str,
        text: str,
        *,
        kind: str = "manual",
        link: str | None = None,
        author: str | None = None,
        category: str | None = None,
    ) -> Remembered:
        lesson = Lesson(f"{persona.slug[:3]}r{len(self.kept):04d}", text, T0, kind=kind, link=link, author=author)
        self.kept.append((persona.slug, project, lesson, category))
        return Remembered(lesson, "created")


def block(*texts: str) -> MemoryBlock:
    lessons = tuple(Lesson(id=f"l{i:07d}", text=text, recorded_at=T0) for i, text in enumerate(texts))
    return MemoryBlock(lessons=lessons, text="\n".join(f"- {t}" for t in texts), tokens=10, total_lessons=len(texts))


@dataclass
class Stage:
    """An engine wired to fakes, with the fakes at hand."""

    llm: ScriptedLLM
    memory: FakeMemory
    log: InMemoryDeliberationLog
    clock: FakeClock
    engine: DeliberationEngine
    liveness: FakeLiveness


def stage(
    *,
    personas: Sequence[Persona] = TEAM,
    llm: ScriptedLLM | None = None,
    memory: FakeMemory | None = None,
    policy: DeliberationPolicy | None = None,
) -> Stage:
    llm = llm or ScriptedLLM()
    llm.default.setdefault(Purpose.TURN, Voices())
    llm.default.setdefault(Purpose.CONSENSUS, verdict_json("APPROVE"))
    llm.default.setdefault(Purpose.SUMMARY, "Earlier, the team discussed the basics.")
    memory = memory or FakeMemory()
    log = InMemoryDeliberationLog()
    clock = FakeClock()
    liveness = FakeLiveness()
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository(personas),
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=log,
        clock=clock,
        policy=policy or DeliberationPolicy(),
        liveness=liveness,
        context=reading(memory),
    )
    return Stage(llm, memory, log, clock, engine, liveness)


def ask(topic: str, **changes: object) -> DeliberationRequest:
    values: dict[str, object] = {"topic": topic, "project": "night-watch", "thread": "C1:1700000000.000100"}
    values.update(changes)
    return DeliberationRequest(**values)  # type: ignore[arg-type]
