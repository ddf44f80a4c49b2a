"""Shared knowledge in deliberations: what Maya records reaches Dev's next turn, attributed, and only while shared."""

from __future__ import annotations

from dataclasses import dataclass

from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.recall import Recall
from nightwatch.domain.sharing import SharingService
from nightwatch.domain.soul import SoulCompiler
from tests.domain.deliberation.cast import TEAM, Voices, ask, verdict_json
from tests.domain.knowing import reading
from tests.fakes import (
    FakeClock,
    FakeLiveness,
    InMemoryDeliberationLog,
    InMemoryMemoryStore,
    InMemoryPendingLessons,
    InMemoryPersonaRepository,
    InMemoryShareRepository,
    RecordingPoster,
    ScriptedLLM,
)

CVE = "Lodash 4.17.20 has a prototype pollution CVE; pin 4.17.21 in every service."
TOPIC = "Which lodash version should the build pin?"


def reflection(request: LLMRequest) -> str:
    """Maya learns about the CVE; nobody else learns anything."""
    return f"- {CVE}" if request.persona is not None and request.persona.name == "Maya" else "NONE"


@dataclass
class Team:
    llm: ScriptedLLM
    store: InMemoryMemoryStore
    personas: PersonaService
    sharing: SharingService
    engine: DeliberationEngine
    clock: FakeClock

    def run(self, *names: str) -> None:
        self.engine.run(ask(TOPIC, personas=names), RecordingPoster())
        self.clock.advance(minutes=5)

    def turn_prompts(self, name: str) -> list[str]:
        return [r.system.text for r in self.llm.calls(Purpose.TURN) if r.persona and r.persona.name == name]


def team() -> Team:
    llm = ScriptedLLM()
    llm.default.update(
        {Purpose.TURN: Voices(), Purpose.CONSENSUS: verdict_json("APPROVE"), Purpose.REFLECTION: reflection}
    )
    repo, store, clock = InMemoryPersonaRepository(TEAM), InMemoryMemoryStore(), FakeClock()
    shares = InMemoryShareRepository(repo)
    personas = PersonaService(repo=repo, store=store, clock=clock, pending=InMemoryPendingLessons(), shares=shares)
    memory = MemoryService(
        store=store, llm=llm, clock=clock, recall=Recall(), policy=MemoryPolicy(use_model_for_curation=False)
    )
    sharing = SharingService(shares=shares, personas=personas, memory=memory, clock=clock)
    engine = DeliberationEngine(
        personas=personas,
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=clock,
        policy=DeliberationPolicy(max_rounds=1),
        liveness=FakeLiveness(),
        context=reading(memory, shared=sharing),
    )
    return Team(llm, store, personas, sharing, engine, clock)


def test_a_lesson_maya_records_reaches_devs_next_turn_from_maya() -> None:
    t = team()
    t.sharing.share("Maya", "Dev", "night-watch")
    t.run("Maya")
    assert CVE in t.store.files[("maya", "night-watch")]
    t.run("Dev")
    [prompt] = t.turn_prompts("Dev")
    assert f"<shared>\n- from Maya (Security reviewer): {CVE}\n</shared>" in prompt
    assert prompt.index("## Operating rules") < prompt.index("<shared>") < prompt.index("## This conversation")
    assert all("<shared>" not in text for text in t.turn_prompts("Carlos"))  # shared with Dev only


def test_the_lead_deciding_sees_what_is_shared_with_it() -> None:
    t = team()
    t.sharing.share("Maya", "all", "night-watch")
    t.run("Maya")
    t.run("Dev")
    verdicts = [r.system.text for r in t.llm.calls(Purpose.CONSENSUS)]
    assert f"- from Maya (Security reviewer): {CVE}" in verdicts[-1]


def test_after_an_unshare_the_next_turn_goes_without_it() -> None:
    t = team()
    t.sharing.share("Maya", "Dev", "night-watch")
    t.run("Maya")
    t.run("Dev")
    t.sharing.unshare("Maya", "Dev", "night-watch")
    t.run("Dev")
    first, second = t.turn_prompts("Dev")
    assert "from Maya" in first
    assert "<shared>" not in second
    assert CVE not in second


def test_devs_turns_never_change_mayas_memory() -> None:
    t = team()
    t.sharing.share("Maya", "Dev", "night-watch")
    t.run("Maya")
    before = t.store.files[("maya", "night-watch")]
    t.run("Dev")
    t.run("Dev")
    assert t.store.files[("maya", "night-watch")] == before
    assert len(t.turn_prompts("Dev")) == 2
    assert all("from Maya" in text for text in t.turn_prompts("Dev"))


def test_after_a_rename_the_share_holds_and_the_line_carries_the_new_name() -> None:
    t = team()
    t.sharing.share("Maya", "Dev", "night-watch")
    t.run("Maya")
    t.personas.rename("Maya", "Maya Sec")
    t.run("Dev")
    [prompt] = t.turn_prompts("Dev")
    assert f"- from Maya Sec (Security reviewer): {CVE}" in prompt


def test_after_a_delete_nothing_is_shared() -> None:
    t = team()
    t.sharing.share("Maya", "Dev", "night-watch")
    t.run("Maya")
    assert t.personas.delete("Maya").message.endswith("; the one share it gave or received was removed.")
    t.run("Dev")
    [prompt] = t.turn_prompts("Dev")
    assert "<shared>" not in prompt
    assert t.sharing.shares() == []


def test_the_context_budget_shows_what_is_shared() -> None:
    t = team()
    t.sharing.share("Maya", "Dev", "night-watch")
    t.run("Maya")
    budget = t.engine.context_budget("Dev", "night-watch", TOPIC)
    assert (budget.shared_items, budget.shared_sources) == (1, ("Maya",))
    assert budget.shared_tokens > 0
    assert t.engine.context_budget("Carlos", "night-watch", TOPIC).shared_tokens == 0
