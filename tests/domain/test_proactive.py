"""Proactive rules: which channels are due, who speaks, what the persona is told, SKIP and reflection."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from nightwatch.domain.errors import LLMUnavailableError
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.personas.service import PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.pins.models import PinKind
from nightwatch.domain.proactive import (
    ChannelActivity,
    ProactivePolicy,
    ProactiveService,
    choose_speaker,
    due_channels,
)
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.sharing import SharingService
from nightwatch.domain.soul import SoulCompiler
from tests.domain.knowing import reading
from tests.fakes import (
    T0,
    FakeClock,
    FakePinFiles,
    FakePinPages,
    InMemoryDeliberationLog,
    InMemoryMemoryStore,
    InMemoryPendingLessons,
    InMemoryPersonaRepository,
    InMemoryPinRepository,
    InMemoryShareRepository,
    RecordingPoster,
    ScriptedLLM,
)

POLICY = ProactivePolicy(interval_minutes=180, quiet_minutes=60)
MAYA = Persona(name="Maya", slug="maya", role="Security Reviewer", id=1)
CARLOS = Persona(name="Carlos", slug="carlos", role="Tech Lead", id=2)
PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer", id=3)


def channel(name: str, *, active_ago: float | None = None, posted_ago: float | None = None) -> ChannelActivity:
    return ChannelActivity(
        channel=name,
        project="night-watch",
        last_activity_at=None if active_ago is None else T0 - timedelta(minutes=active_ago),
        last_proactive_at=None if posted_ago is None else T0 - timedelta(minutes=posted_ago),
    )


def test_a_channel_is_due_when_quiet_long_enough_and_the_interval_has_passed() -> None:
    channels = [
        channel("never-posted", active_ago=61),
        channel("busy", active_ago=10),
        channel("posted-recently", active_ago=500, posted_ago=100),
        channel("posted-long-ago", active_ago=500, posted_ago=400),
        channel("silent-since-mapping"),
    ]
    due = [c.channel for c in due_channels(channels, T0, POLICY)]
    assert due == ["never-posted", "silent-since-mapping", "posted-long-ago"]


def test_interval_zero_turns_proactive_messages_off() -> None:
    assert due_channels([channel("c", active_ago=999)], T0, replace(POLICY, interval_minutes=0)) == []


def test_personas_with_memory_of_the_project_speak_first_and_take_turns() -> None:
    personas = [MAYA, CARLOS, PRIYA]
    assert choose_speaker(personas, last_speaker=None, with_memory={"carlos", "priya"}) == CARLOS
    assert choose_speaker(personas, last_speaker="carlos", with_memory={"carlos", "priya"}) == PRIYA
    assert choose_speaker(personas, last_speaker="priya", with_memory={"carlos", "priya"}) == CARLOS


def test_without_memory_every_active_persona_takes_a_turn() -> None:
    personas = [MAYA, replace(CARLOS, active=False), PRIYA]
    assert choose_speaker(personas, last_speaker="maya", with_memory=set()) == PRIYA
    assert choose_speaker(personas, last_speaker="priya", with_memory=set()) == MAYA
    assert choose_speaker([replace(MAYA, active=False)], last_speaker=None, with_memory=set()) is None


@dataclass
class World:
    service: ProactiveService
    llm: ScriptedLLM
    memory: MemoryService
    log: InMemoryDeliberationLog
    clock: FakeClock
    pins: PinService
    sharing: SharingService


def world(*personas: Persona) -> World:
    clock = FakeClock(T0)
    store = InMemoryMemoryStore()
    llm = ScriptedLLM(
        {
            Purpose.REFLECTION: "- Flagged the unrotated signing key in night-watch.",
            Purpose.CURATION: '{"action": "add"}',
        }
    )
    memory = MemoryService(
        store=store,
        llm=llm,
        clock=clock,
        recall=Recall(),
        policy=MemoryPolicy(use_model_for_curation=False),
    )
    repo = InMemoryPersonaRepository(personas)
    log = InMemoryDeliberationLog()
    shares, pin_repo = InMemoryShareRepository(repo), InMemoryPinRepository(repo)
    persona_service = PersonaService(
        repo=repo, store=store, clock=clock, pending=InMemoryPendingLessons(), shares=shares, pins=pin_repo
    )
    pins = PinService(pins=pin_repo, personas=persona_service, files=FakePinFiles(), pages=FakePinPages(), clock=clock)
    sharing = SharingService(shares=shares, personas=persona_service, memory=memory, pins=pins, clock=clock)
    service = ProactiveService(
        personas=persona_service,
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=log,
        clock=clock,
        policy=POLICY,
        context=reading(memory, pins=pins, shared=sharing),
    )
    return World(service, llm, memory, log, clock, pins, sharing)


def test_a_persona_posts_an_observation_informed_by_its_memory_then_reflects() -> None:
    w = world(MAYA, CARLOS)
    w.memory.remember(CARLOS, "night-watch", "The billing module reads the users table directly.")
    w.llm.script(Purpose.PROACTIVE, "The billing module still reads users directly; route it through accounts.")
    poster = RecordingPoster()
    outcome = w.service.speak(channel("C1", active_ago=90), poster, channel_name="night-watch")
    assert outcome.posted
    assert outcome.persona == "Carlos"
    assert poster.turns == [("Carlos", "The billing module still reads users directly; route it through accounts.")]
    request = w.llm.calls(Purpose.PROACTIVE)[0]
    assert "billing module reads the users table" in request.system.text  # its memory is in the prompt
    assert "#night-watch" in request.messages[0].content
    assert "SKIP" in request.messages[0].content
    assert [lesson[0] for lesson in poster.lessons] == ["Carlos"]  # reflected, and the note was posted
    assert any("signing key" in lesson.text for lesson in w.memory.lessons(CARLOS, "night-watch"))


def test_a_proactive_message_knows_the_personas_pins_and_what_teammates_share_with_it() -> None:
    w = world(MAYA, CARLOS)
    w.memory.remember(MAYA, "night-watch", "The signing key was not rotated after the maintainer left.")
    w.pins.add("Maya", "night-watch", PinKind.TEXT, "Deploys freeze on Fridays.", added_by="cli")
    w.memory.remember(CARLOS, "night-watch", "The billing module reads the users table directly.")
    w.sharing.share("Carlos", "Maya", "night-watch")
    w.llm.script(Purpose.PROACTIVE, "Rotate the signing key before Friday's freeze.")
    outcome = w.service.speak(channel("C1", active_ago=90), RecordingPoster(), channel_name="night-watch")
    assert outcome.persona == "Maya"
    system = w.llm.calls(Purpose.PROACTIVE)[0].system.text
    assert "Deploys freeze on Fridays." in system  # her pin
    assert "The signing key was not rotated" in system  # her memory
    assert "from Carlos (Tech Lead): The billing module reads the users table" in system  # the lesson Carlos shares
    assert system.index("<pinned>") < system.index("<memory>") < system.index("<shared>")


def test_the_persona_is_told_what_it_already_flagged_and_a_repeat_is_not_posted() -> None:
    w = world(MAYA)
    said = "The signing key has not been rotated since the maintainer change; rotate it this week."
    w.llm.script(Purpose.PROACTIVE, said, said)
    w.service.speak(channel("C1", active_ago=90), RecordingPoster(), channel_name="nw")
    w.clock.advance(hours=4)
    poster = RecordingPoster()
    outcome = w.service.speak(channel("C1", active_ago=300), poster, channel_name="nw")
    second: LLMRequest = w.llm.calls(Purpose.PROACTIVE)[1]
    assert "already flagged" in second.messages[0].content
    assert said in second.messages[0].content
    assert not outcome.posted
    assert poster.turns == []


def test_a_skip_posts_nothing_but_still_rotates_the_speaker() -> None:
    w = world(MAYA, CARLOS)
    w.llm.script(Purpose.PROACTIVE, "SKIP", "Carlos here: write down the queue decision as an ADR.")
    poster = RecordingPoster()
    first = w.service.speak(channel("C1", active_ago=90), poster, channel_name="nw")
    second = w.service.speak(channel("C1", active_ago=90), poster, channel_name="nw")
    assert (first.persona, first.posted) == ("Maya", False)
    assert (second.persona, second.posted) == ("Carlos", True)
    assert len(w.log.recent()) == 2
    assert w.log.turns(w.log.recent()[1].id or 0)[0].skipped


def test_a_model_failure_posts_nothing_and_says_why() -> None:
    w = world(MAYA)
    w.llm.script(Purpose.PROACTIVE, LLMUnavailableError("the model is overloaded; try later"))
    poster = RecordingPoster()
    outcome = w.service.speak(channel("C1", active_ago=90), poster, channel_name="nw")
    assert not outcome.posted
    assert "overloaded" in outcome.reason
    assert poster.turns == []


def test_no_active_persona_means_no_message() -> None:
    w = world(replace(MAYA, active=False))
    outcome = w.service.speak(channel("C1", active_ago=90), RecordingPoster(), channel_name="nw")
    assert outcome.persona is None
    assert not outcome.posted


@pytest.mark.parametrize("reply", ["", "  skip.  "])
def test_empty_and_skip_answers_are_kept_quiet(reply: str) -> None:
    w = world(MAYA)
    w.llm.script(Purpose.PROACTIVE, reply)
    poster = RecordingPoster()
    assert not w.service.speak(channel("C1", active_ago=90), poster, channel_name="nw").posted
    assert poster.turns == []
