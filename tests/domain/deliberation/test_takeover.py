"""Takeover with fakes: a replica killed mid-deliberation is finished by another from its stored turns.

Two engines share one deliberation log, as two replicas share one database. The first one's model call raises
`Killed` (a BaseException, as SIGKILL stops everything); since SIGKILL runs no handler, the test then puts the row
back as the killed process left it: running, owned by the dead replica.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import replace

import pytest

from nightwatch.domain.deliberation.abandoned import close_abandoned
from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.deliberation.models import Deliberation, DeliberationStatus
from nightwatch.domain.deliberation.takeover import LEASE_FOR, MAX_TAKEOVERS
from nightwatch.domain.llm import Purpose
from nightwatch.domain.soul import SoulCompiler
from tests.domain.deliberation.cast import TEAM, FakeMemory, Voices, ask, stage, verdict_json
from tests.fakes import FakeLiveness, InMemoryPersonaRepository, RecordingPoster, ScriptedLLM

DEAD, ALIVE = "here/1/100", "there/2/200"
TOPIC = "Maya, Priya, Dev: merge the session store?"


class Killed(BaseException):
    """The process went away mid-call."""


def replica(s, me: str, policy: DeliberationPolicy) -> tuple[DeliberationEngine, ScriptedLLM, FakeLiveness]:  # type: ignore[no-untyped-def]
    """Another engine on the same log and clock, as another process on the same database."""
    voices = Voices()
    voices.calls = {p.name: 2 for p in TEAM}  # its own words, not the dead replica's again (dropped as repeats)
    llm = ScriptedLLM({Purpose.TURN: voices, Purpose.CONSENSUS: verdict_json("APPROVE")})
    liveness = FakeLiveness(me)
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository(TEAM),
        memory=FakeMemory(),
        compiler=SoulCompiler(),
        llm=llm,
        log=s.log,
        clock=s.clock,
        policy=policy,
        liveness=liveness,
    )
    return engine, llm, liveness


def killed_mid_turn(policy: DeliberationPolicy, turns_before: int, consensus: str = ""):  # type: ignore[no-untyped-def]
    """A leased deliberation whose replica died while the model wrote turn number `turns_before + 1`."""
    s = stage(policy=policy)
    voices = Voices()
    s.llm.script(Purpose.TURN, *([voices] * turns_before), Killed())
    if consensus:
        s.llm.script(Purpose.CONSENSUS, consensus)
    poster = RecordingPoster()
    with contextlib.suppress(Killed):
        s.engine.run(ask(TOPIC, leased=True), poster)
    [row] = s.log.deliberations.values()
    s.log.deliberations[row.id or 0] = replace(row, status=DeliberationStatus.RUNNING, finished_at=None)
    return s, poster, row


def test_the_replica_that_takes_over_skips_the_stored_turns_and_finishes_in_the_same_thread() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s, poster, row = killed_mid_turn(policy, turns_before=2)
    assert [name for name, _ in poster.turns] == ["Maya", "Priya"]
    engine, llm, liveness = replica(s, ALIVE, policy)
    liveness.exited.add(DEAD)

    [orphan] = engine.orphans()
    claimed = engine.claim(orphan)
    assert claimed is not None
    assert (claimed.owner, claimed.takeovers, claimed.heartbeat_at) == (ALIVE, 1, s.clock.now())
    result = engine.resume(claimed, ask(TOPIC, leased=True), poster)

    assert [r.persona.name for r in llm.calls(Purpose.TURN) if r.persona] == ["Dev", "Carlos"]
    assert [name for name, _ in poster.turns] == ["Maya", "Priya", "Dev", "Carlos"]  # no turn posted twice
    assert len(poster.verdicts) == 1
    assert result.deliberation.status is DeliberationStatus.DONE
    stored = s.log.get(row.id or 0)
    assert stored is not None
    assert stored.status is DeliberationStatus.DONE
    assert [t.persona for t in s.log.turns(row.id or 0)] == ["Maya", "Priya", "Dev", "Carlos"]
    assert {slug for slug, _, _ in engine._memory.reflections} == {"maya", "priya", "dev", "carlos"}  # type: ignore[attr-defined]


def test_the_round_in_progress_carries_on_without_asking_again_for_the_decided_round() -> None:
    policy = DeliberationPolicy(max_rounds=2)
    changes = verdict_json("CHANGES", "Cover token expiry first.")
    s, poster, row = killed_mid_turn(policy, turns_before=5, consensus=changes)  # round 1 (4 turns), then Maya
    assert [t.round for t in s.log.turns(row.id or 0)] == [1, 1, 1, 1, 2]
    engine, llm, liveness = replica(s, ALIVE, policy)
    liveness.exited.add(DEAD)

    claimed = engine.claim(engine.orphans()[0])
    assert claimed is not None
    result = engine.resume(claimed, ask(TOPIC, leased=True), poster)

    assert [r.persona.name for r in llm.calls(Purpose.TURN) if r.persona] == ["Priya", "Dev", "Carlos"]
    assert len(llm.calls(Purpose.CONSENSUS)) == 1  # only round 2's decision
    assert [(t.persona, t.round) for t in s.log.turns(row.id or 0)][4:] == [
        ("Maya", 2),
        ("Priya", 2),
        ("Dev", 2),
        ("Carlos", 2),
    ]
    assert len(poster.turns) == 8
    assert result.deliberation.status is DeliberationStatus.DONE


def test_a_live_replica_renewing_its_lease_is_not_taken_over_until_the_lease_lapses() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s, _poster, row = killed_mid_turn(policy, turns_before=1)
    engine, _llm, _liveness = replica(s, ALIVE, policy)  # the owner is on another machine: never known gone
    s.clock.advance(seconds=LEASE_FOR.total_seconds() - 1)
    assert engine.orphans() == []
    assert s.engine.renew_leases([row.thread]) == 1  # the owner renews while its model call runs
    s.clock.advance(seconds=LEASE_FOR.total_seconds() - 1)
    assert engine.orphans() == []
    s.clock.advance(seconds=2)
    [orphan] = engine.orphans()
    assert orphan.id == row.id
    assert s.engine.orphans() == []  # a replica never takes over its own deliberation


def test_a_renewal_between_looking_and_claiming_makes_the_claim_fail() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s, _poster, row = killed_mid_turn(policy, turns_before=1)
    engine, _llm, _liveness = replica(s, ALIVE, policy)
    s.clock.advance(seconds=LEASE_FOR.total_seconds() + 1)
    [orphan] = engine.orphans()
    s.engine.renew_leases([row.thread])
    assert engine.claim(orphan) is None
    assert s.log.get(row.id or 0).owner == DEAD  # type: ignore[union-attr]


def test_of_three_replicas_claiming_at_once_exactly_one_wins() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s, _poster, row = killed_mid_turn(policy, turns_before=1)
    engines = [replica(s, f"there/{n}/1", policy)[0] for n in range(3)]
    s.clock.advance(seconds=LEASE_FOR.total_seconds() + 1)
    orphans = [engine.orphans()[0] for engine in engines]
    start, results = threading.Barrier(3), [None] * 3

    def claim(n: int) -> None:
        start.wait()
        results[n] = engines[n].claim(orphans[n])  # type: ignore[call-overload]

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [r for r in results if r is not None]
    assert len(winners) == 1
    assert s.log.get(row.id or 0).owner == winners[0].owner  # type: ignore[union-attr]
    assert s.log.get(row.id or 0).takeovers == 1  # type: ignore[union-attr]


def test_a_deliberation_taken_over_too_often_is_closed_as_failed_with_a_notice() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s, poster, row = killed_mid_turn(policy, turns_before=1)
    s.log.deliberations[row.id or 0] = replace(row, status=DeliberationStatus.RUNNING, takeovers=MAX_TAKEOVERS)
    engine, llm, liveness = replica(s, ALIVE, policy)
    liveness.exited.add(DEAD)
    claimed = engine.claim(engine.orphans()[0])
    assert claimed is not None
    assert claimed.takeovers == MAX_TAKEOVERS + 1
    result = engine.resume(claimed, ask(TOPIC, leased=True), poster)
    assert result.deliberation.status is DeliberationStatus.FAILED
    assert s.log.get(row.id or 0).status is DeliberationStatus.FAILED  # type: ignore[union-attr]
    assert llm.requests == []
    assert any("taken over 4 times" in notice for notice in poster.notices)
    assert engine.orphans() == []


def test_terminal_deliberations_are_never_taken_over() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s = stage(policy=policy)
    terminal = s.log.start(Deliberation("In a terminal", "p", "terminal:1", started_at=s.clock.now(), owner=DEAD))
    engine, _llm, liveness = replica(s, ALIVE, policy)
    liveness.exited.add(DEAD)
    s.clock.advance(hours=1)
    assert engine.orphans() == []
    assert terminal.heartbeat_at is None


def test_the_start_up_sweep_leaves_a_leased_deliberation_to_the_replicas_until_its_lease_is_long_stale() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s, _poster, row = killed_mid_turn(policy, turns_before=1)
    cli = FakeLiveness("cli/9/9")
    cli.exited.add(DEAD)  # the owner is known gone, and nothing was stored for long
    s.clock.advance(minutes=14)
    s.engine.renew_leases([row.thread])  # a replica holds it (the owner here, or one that took it over)
    s.clock.advance(minutes=14)
    assert close_abandoned(s.log, cli, s.clock.now()) == []
    s.clock.advance(minutes=2)  # the lease is now 16 minutes old: no replica is left to take it over
    assert [d.id for d in close_abandoned(s.log, cli, s.clock.now())] == [row.id]


def test_a_turn_is_stored_before_it_is_posted() -> None:
    class DeadSlack(RecordingPoster):
        def post_turn(self, persona, text):  # type: ignore[no-untyped-def]
            raise ConnectionError("Slack is down")

    s = stage(policy=DeliberationPolicy(max_rounds=1))
    with pytest.raises(ConnectionError):
        s.engine.run(ask("Dev: merge?", leased=True), DeadSlack())
    [row] = s.log.deliberations.values()
    assert [t.persona for t in s.log.turns(row.id or 0)] == ["Dev"]
