"""Leases end cleanly, with fakes: a stopping replica hands its deliberation over, a replica that lost its lease posts
nothing more, and the lead's request for changes survives a resume.

Two engines share one deliberation log, as two replicas share one database (see test_takeover.py).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest

from nightwatch.domain.deliberation import HandedOverError, LeaseLostError
from nightwatch.domain.deliberation.engine import DeliberationPolicy
from nightwatch.domain.deliberation.models import DeliberationStatus
from nightwatch.domain.llm import LLMRequest, Purpose
from tests.domain.deliberation.cast import Voices, ask, stage, verdict_json
from tests.domain.deliberation.test_takeover import ALIVE, DEAD, TOPIC, Killed, replica
from tests.fakes import RecordingPoster

CHANGES = "token expiry is not covered."
ITEM = "Priya: add an expiry test."


def instruction(request: LLMRequest) -> str:
    return request.messages[-1].content


def test_a_stopped_leased_deliberation_is_handed_over_and_another_replica_resumes_it_at_once() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s = stage(policy=policy)
    poster = RecordingPoster()
    stop_after = 2  # two turns, then the replica is told to stop
    with pytest.raises(HandedOverError):
        s.engine.run(ask(TOPIC, leased=True), poster, should_stop=lambda: len(poster.turns) >= stop_after)

    [row] = s.log.deliberations.values()
    assert row.status is DeliberationStatus.RUNNING  # left for another replica, not closed as interrupted
    assert row.owner is None
    assert poster.notices == []  # nothing said: the next replica carries on in the thread
    assert [name for name, _ in poster.turns] == ["Maya", "Priya"]

    engine, llm, _ = replica(s, ALIVE, policy)  # no time passes: the lease is fresh, its owner alive
    [orphan] = engine.orphans()
    claimed = engine.claim(orphan)
    assert claimed is not None
    assert (claimed.owner, claimed.takeovers) == (ALIVE, 0)  # a hand-over is not counted as a takeover
    result = engine.resume(claimed, ask(TOPIC, leased=True), poster)
    assert result.deliberation.status is DeliberationStatus.DONE
    assert [r.persona.name for r in llm.calls(Purpose.TURN) if r.persona] == ["Dev", "Carlos"]
    assert [name for name, _ in poster.turns] == ["Maya", "Priya", "Dev", "Carlos"]


def test_a_stopped_terminal_deliberation_is_still_closed_as_interrupted() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask(TOPIC), poster, should_stop=lambda: True)
    assert result.deliberation.status is DeliberationStatus.INTERRUPTED
    assert len(poster.notices) == 1


def test_a_replica_whose_lease_was_taken_during_a_model_call_stores_and_posts_nothing_more() -> None:
    policy = DeliberationPolicy(max_rounds=1)
    s = stage(policy=policy)
    voices = Voices()

    def taken_over_meanwhile(request: LLMRequest) -> str:
        [row] = s.log.deliberations.values()  # another replica claims it while this one waits for the model
        s.log.deliberations[row.id or 0] = replace(row, owner=ALIVE, takeovers=1)
        return voices(request)

    s.llm.script(Purpose.TURN, voices, taken_over_meanwhile)
    poster = RecordingPoster()
    with pytest.raises(LeaseLostError):
        s.engine.run(ask(TOPIC, leased=True), poster)

    [row] = s.log.deliberations.values()
    assert [name for name, _ in poster.turns] == ["Maya"]  # Priya's answer came too late: not posted
    assert [t.persona for t in s.log.turns(row.id or 0)] == ["Maya"]  # nor stored: the new owner takes it again
    assert (row.status, row.owner) == (DeliberationStatus.RUNNING, ALIVE)  # left to the replica that holds it
    assert poster.notices == []
    assert poster.verdicts == []


def test_a_lost_lease_stops_the_verdict_being_posted() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))

    def taken_over_meanwhile(request: LLMRequest) -> str:
        [row] = s.log.deliberations.values()
        s.log.deliberations[row.id or 0] = replace(row, owner=ALIVE)
        return verdict_json("APPROVE")

    s.llm.script(Purpose.CONSENSUS, taken_over_meanwhile)
    poster = RecordingPoster()
    with pytest.raises(LeaseLostError):
        s.engine.run(ask(TOPIC, leased=True), poster)
    assert len(poster.turns) == 4
    assert poster.verdicts == []
    [row] = s.log.deliberations.values()
    assert row.status is DeliberationStatus.RUNNING


def test_the_leads_request_for_changes_is_stored_and_honoured_by_the_replica_that_resumes() -> None:
    policy = DeliberationPolicy(max_rounds=2)
    s = stage(policy=policy)
    s.llm.script(Purpose.TURN, *([Voices()] * 5), Killed())  # round 1, then Maya in round 2, then the replica dies
    s.llm.script(Purpose.CONSENSUS, verdict_json("CHANGES", CHANGES, action_items=[ITEM]))
    poster = RecordingPoster()
    with contextlib.suppress(Killed):
        s.engine.run(ask(TOPIC, leased=True), poster)
    [row] = s.log.deliberations.values()
    s.log.deliberations[row.id or 0] = replace(row, status=DeliberationStatus.RUNNING, finished_at=None)
    stored = s.log.get(row.id or 0)
    assert stored is not None
    assert stored.changes is not None
    assert (stored.changes.round, stored.changes.verdict.summary) == (2, CHANGES)

    engine, llm, liveness = replica(s, ALIVE, policy)
    liveness.exited.add(DEAD)
    claimed = engine.claim(engine.orphans()[0])
    assert claimed is not None
    engine.resume(claimed, ask(TOPIC, leased=True), poster)

    resumed = [r for r in llm.calls(Purpose.TURN) if r.persona]
    assert [r.persona.name for r in resumed if r.persona] == ["Priya", "Dev", "Carlos"]
    assert all(CHANGES in instruction(r) and ITEM in instruction(r) for r in resumed)


def test_a_replica_that_dies_right_after_the_lead_asked_for_changes_resumes_the_new_round() -> None:
    policy = DeliberationPolicy(max_rounds=2)
    s = stage(policy=policy)
    s.llm.script(Purpose.TURN, *([Voices()] * 4), Killed())  # round 1 whole; killed on round 2's first turn
    s.llm.script(Purpose.CONSENSUS, verdict_json("CHANGES", CHANGES))
    poster = RecordingPoster()
    with contextlib.suppress(Killed):
        s.engine.run(ask(TOPIC, leased=True), poster)
    [row] = s.log.deliberations.values()
    s.log.deliberations[row.id or 0] = replace(row, status=DeliberationStatus.RUNNING, finished_at=None)

    engine, llm, liveness = replica(s, ALIVE, policy)
    liveness.exited.add(DEAD)
    claimed = engine.claim(engine.orphans()[0])
    assert claimed is not None
    assert claimed.changes is not None
    assert claimed.changes.round == 2
    engine.resume(claimed, ask(TOPIC, leased=True), poster)

    assert len(llm.calls(Purpose.CONSENSUS)) == 1  # round 1 is not decided again: only round 2
    assert [(t.persona, t.round) for t in s.log.turns(row.id or 0)][4:] == [
        ("Maya", 2),
        ("Priya", 2),
        ("Dev", 2),
        ("Carlos", 2),
    ]
    assert len(poster.round_requests) == 1  # the request was posted once, by the replica that died
