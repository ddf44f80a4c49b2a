"""Pinned context in a deliberation: each turn's prompt carries the persona's pins, read afresh; they never fail it."""

from __future__ import annotations

from dataclasses import dataclass, field

from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.errors import StorageError
from nightwatch.domain.llm import Purpose
from nightwatch.domain.models import Persona
from nightwatch.domain.pins import PinBlock, PinService
from nightwatch.domain.pins.block import pack
from nightwatch.domain.pins.models import Pin, PinKind
from nightwatch.domain.soul import SoulCompiler
from tests.domain.deliberation.cast import TEAM, FakeMemory, Voices, ask, verdict_json
from tests.domain.knowing import reading
from tests.domain.pins.pinning import DOC, pinning
from tests.fakes import (
    T0,
    FakeClock,
    FakeLiveness,
    InMemoryDeliberationLog,
    InMemoryPersonaRepository,
    RecordingPoster,
    ScriptedLLM,
)


@dataclass
class FakePins:
    """PersonaPins from fixed pins per persona slug; `broken` raises as an unreachable database would."""

    pins: dict[str, list[Pin]] = field(default_factory=dict)
    broken: bool = False
    reads: list[tuple[str, str, int | None]] = field(default_factory=list)

    def block(self, persona: Persona, project: str, *, budget: int | None = None) -> PinBlock:
        self.reads.append((persona.slug, project, budget))
        if self.broken:
            raise StorageError("The database could not read a persona's pins (OperationalError).")
        return pack(self.pins.get(persona.slug, []), budget or 1500)


def note(pin_id: int, text: str) -> Pin:
    return Pin(1, "night-watch", PinKind.TEXT, text[:20], text, str(pin_id), T0, "cli", id=pin_id)


def engine(
    pins: FakePins | PinService,
    personas: InMemoryPersonaRepository | None = None,
    policy: DeliberationPolicy | None = None,
) -> tuple[DeliberationEngine, ScriptedLLM]:
    llm = ScriptedLLM({Purpose.TURN: Voices(), Purpose.CONSENSUS: verdict_json("APPROVE")})
    built = DeliberationEngine(
        personas=personas or InMemoryPersonaRepository(TEAM),
        memory=FakeMemory(),
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=FakeClock(),
        policy=policy or DeliberationPolicy(max_rounds=1),
        liveness=FakeLiveness(),
        context=reading(pins=pins),
    )
    return built, llm


def test_each_turn_carries_the_persona_s_pins_and_counts_them() -> None:
    pins = FakePins({"maya": [note(1, "The admin API is VPN-only."), note(2, "Tokens live 15 minutes.")]})
    run, llm = engine(pins)
    result = run.run(ask("Should we expose the admin API?", personas=("Maya", "Dev")), RecordingPoster())
    systems = {r.persona.name: r.system.text for r in llm.calls(Purpose.TURN) if r.persona}
    assert "<pinned>" in systems["Maya"]
    assert "The admin API is VPN-only." in systems["Maya"]
    assert "<pinned>" not in systems["Dev"]
    assert {turn.persona: turn.pins_injected for turn in result.turns} == {"Maya": 2, "Dev": 0, "Carlos": 0}
    assert ("maya", "night-watch", None) in pins.reads


def test_the_lead_s_decision_carries_its_pins_too() -> None:
    run, llm = engine(FakePins({"carlos": [note(3, "We ship on Tuesdays.")]}))
    run.run(ask("Ship the cache?"), RecordingPoster())
    decision = llm.calls(Purpose.CONSENSUS)[0]
    assert "We ship on Tuesdays." in decision.system.text


def test_pins_that_cannot_be_read_never_fail_a_turn() -> None:
    run, llm = engine(FakePins(broken=True))
    result = run.run(ask("Ship the cache?", personas=("Maya",)), RecordingPoster())
    assert result.turns
    assert all(turn.pins_injected == 0 for turn in result.turns)
    assert all("<pinned>" not in r.system.text for r in llm.calls(Purpose.TURN))


def test_an_edited_file_reaches_the_next_turn() -> None:
    env = pinning()
    env.service.add("maya", "night-watch", PinKind.FILE, DOC, added_by="cli")
    run, llm = engine(env.service, env.repo)
    run.run(ask("Review the gateway", personas=("Maya",)), RecordingPoster())
    env.files.write(DOC, "The gateway moved to Envoy last week.")
    run.run(ask("Review the gateway again", personas=("Maya",)), RecordingPoster())
    maya = [r.system.text for r in llm.calls(Purpose.TURN) if r.persona and r.persona.name == "Maya"]
    assert "terminates TLS" in maya[0]
    assert "moved to Envoy" not in maya[0]
    assert "moved to Envoy" in maya[-1]


def test_the_context_budget_shows_the_pins() -> None:
    run, _ = engine(FakePins({"maya": [note(1, "Pinned fact.")]}))
    budget = run.context_budget("Maya", "night-watch")
    assert [p.id for p in budget.pins] == [1]
    assert budget.pins_tokens > 0


def test_the_pin_budget_is_the_one_the_deliberation_started_with() -> None:
    pins = FakePins({"maya": [note(1, "Pinned fact.")]})
    run, _ = engine(pins, policy=DeliberationPolicy(max_rounds=1, pins_tokens=700))
    run.run(ask("Ship the cache?", personas=("Maya",)), RecordingPoster())
    assert ("maya", "night-watch", 700) in pins.reads
    assert run.context_budget("Maya", "night-watch").pins_budget == 700
