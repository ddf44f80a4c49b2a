"""The proactive scheduler on a real SQLite database: the lease lets one replica post, and ticks are bounded."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.slack_state import SlackState
from nightwatch.adapters.runtime.scheduler import ProactiveScheduler
from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.personas.service import PersonaService
from nightwatch.domain.proactive import ProactivePolicy, ProactiveService
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.soul import SoulCompiler
from tests.fakes import (
    T0,
    FakeClock,
    InMemoryDeliberationLog,
    InMemoryMemoryStore,
    InMemoryPersonaRepository,
    RecordingPoster,
    ScriptedLLM,
)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'nw.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


class Replica:
    """One process's scheduler with its own posters; all replicas share the database and the clock."""

    def __init__(self, engine: Engine, clock: FakeClock, llm: ScriptedLLM, name: str) -> None:
        store = InMemoryMemoryStore()
        personas = InMemoryPersonaRepository([Persona(name="Maya", slug="maya", role="Security Reviewer")])
        service = ProactiveService(
            personas=PersonaService(repo=personas, store=store, clock=clock),
            memory=MemoryService(
                store=store, llm=llm, clock=clock, recall=Recall(), policy=MemoryPolicy(use_model_for_curation=False)
            ),
            compiler=SoulCompiler(),
            llm=llm,
            log=InMemoryDeliberationLog(),
            clock=clock,
            policy=ProactivePolicy(interval_minutes=180, quiet_minutes=60),
        )
        self.posters: dict[str, RecordingPoster] = {}
        self.unreachable: set[str] = set()
        self.state = SlackState(engine)
        self.scheduler = ProactiveScheduler(
            service=service,
            state=self.state,
            clock=clock,
            poster_for=self._poster,
            channel_name=lambda channel: f"name-of-{channel}",
            tick_seconds=60,
            holder=name,
        )

    def _poster(self, channel: str) -> RecordingPoster:
        if channel in self.unreachable:
            raise RuntimeError(f"Slack is down for {channel}")
        return self.posters.setdefault(channel, RecordingPoster())

    def posted(self) -> int:
        return sum(len(p.turns) for p in self.posters.values())


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM(
        {
            Purpose.PROACTIVE: lambda r: f"Observation {len(r.messages[0].content)}: rotate the key.",
            Purpose.REFLECTION: "NONE",
        }
    )


def test_only_the_lease_holder_posts_and_each_due_channel_gets_one_message(engine: Engine, llm: ScriptedLLM) -> None:
    clock = FakeClock(T0)
    a, b = Replica(engine, clock, llm, "a"), Replica(engine, clock, llm, "b")
    a.state.map_channel("C1", "night-watch", T0 - timedelta(hours=2))
    a.state.map_channel("C2", "other", T0 - timedelta(minutes=5))  # not quiet yet
    assert [o.channel for o in a.scheduler.tick()] == ["C1"]
    assert b.scheduler.tick() == []
    assert a.posted() == 1
    assert b.posted() == 0
    [c1, c2] = a.state.channels()
    assert c1.last_proactive_at == T0
    assert c2.last_proactive_at is None


def test_the_next_message_waits_for_the_interval(engine: Engine, llm: ScriptedLLM) -> None:
    clock = FakeClock(T0)
    a = Replica(engine, clock, llm, "a")
    a.state.map_channel("C1", "night-watch", T0 - timedelta(hours=2))
    a.scheduler.tick()
    clock.advance(minutes=179)
    assert a.scheduler.tick() == []
    clock.advance(minutes=1)
    assert len(a.scheduler.tick()) == 1


def test_another_replica_takes_over_when_the_holder_stops(engine: Engine, llm: ScriptedLLM) -> None:
    clock = FakeClock(T0)
    a, b = Replica(engine, clock, llm, "a"), Replica(engine, clock, llm, "b")
    a.state.map_channel("C1", "night-watch", T0 - timedelta(hours=2))
    a.scheduler.tick()
    a.scheduler.stop()  # releases the lease
    clock.advance(hours=4)
    assert len(b.scheduler.tick()) == 1
    assert b.posted() == 1


def test_a_failing_channel_does_not_stop_the_others(engine: Engine, llm: ScriptedLLM) -> None:
    clock = FakeClock(T0)
    a = Replica(engine, clock, llm, "a")
    for channel in ("C1", "C2"):
        a.state.map_channel(channel, "night-watch", T0 - timedelta(hours=2))
    a.unreachable.add("C1")
    outcomes = a.scheduler.tick()
    assert [(o.channel, o.posted) for o in outcomes] == [("C1", False), ("C2", True)]
    assert all(c.last_proactive_at == T0 for c in a.state.channels())


def test_housekeeping_runs_only_on_the_lease_holder_and_failures_do_not_stop_it(
    engine: Engine, llm: ScriptedLLM
) -> None:
    clock = FakeClock(T0)
    calls: list[str] = []

    def housekeeping(name: str) -> None:
        calls.append(name)
        raise RuntimeError("database hiccup")

    a, b = Replica(engine, clock, llm, "a"), Replica(engine, clock, llm, "b")
    a.scheduler._housekeeping = lambda: housekeeping("a")
    b.scheduler._housekeeping = lambda: housekeeping("b")
    a.state.map_channel("C1", "night-watch", T0 - timedelta(hours=2))
    assert len(a.scheduler.tick()) == 1  # the failing housekeeping did not stop the proactive message
    b.scheduler.tick()
    assert calls == ["a"]
