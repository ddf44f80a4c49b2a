"""The abandoned-run rule with fakes: an owner that exited, or silence for too long; never a live deliberation."""

from __future__ import annotations

from datetime import datetime, timedelta

from nightwatch.domain.deliberation import STALE_AFTER
from nightwatch.domain.deliberation.abandoned import abandoned, close_abandoned
from nightwatch.domain.deliberation.models import Decision, Deliberation, DeliberationStatus, Turn, Verdict
from tests.fakes import T0, FakeLiveness, InMemoryDeliberationLog


def start(log: InMemoryDeliberationLog, topic: str, owner: str | None, at: datetime = T0) -> int:
    deliberation = log.start(Deliberation(topic, "p", f"terminal:{topic}", started_at=at, owner=owner))
    assert deliberation.id is not None
    return deliberation.id


def test_a_deliberation_whose_process_exited_is_abandoned_at_once() -> None:
    log, liveness = InMemoryDeliberationLog(), FakeLiveness()
    killed = start(log, "killed", "here/7/100")
    live = start(log, "live", "here/8/100")
    log.add_turn(killed, Turn("Maya", "Security", "Half way.", 1, created_at=T0))
    liveness.exited.add("here/7/100")
    assert [d.id for d in abandoned(log, liveness, T0 + timedelta(seconds=1))] == [killed]
    assert live not in [d.id for d in abandoned(log, liveness, T0 + timedelta(seconds=1))]


def test_silence_for_the_stale_period_abandons_even_a_deliberation_with_no_owner() -> None:
    log, liveness = InMemoryDeliberationLog(), FakeLiveness()
    legacy = start(log, "legacy", None)
    elsewhere = start(log, "elsewhere", "other-machine/9/1")
    log.add_turn(elsewhere, Turn("Dev", "Implementer", "Still on it.", 1, created_at=T0 + timedelta(minutes=10)))
    assert abandoned(log, liveness, T0 + STALE_AFTER - timedelta(seconds=1)) == []
    later = T0 + STALE_AFTER + timedelta(minutes=1)
    assert [d.id for d in abandoned(log, liveness, later)] == [legacy]  # the other made progress 6 minutes ago
    assert [d.id for d in abandoned(log, liveness, later + timedelta(minutes=15))] == [legacy, elsewhere]


def test_closing_leaves_a_deliberation_that_ended_meanwhile_as_it_ended() -> None:
    class FinishingFirst(InMemoryDeliberationLog):
        """The owner finishes it between the look and the close, as a slow replica might."""

        def interrupt(self, deliberation_id: int, now: datetime) -> bool:
            self.finish(deliberation_id, DeliberationStatus.DONE, Verdict(Decision.APPROVE, "Ok."), now)
            return super().interrupt(deliberation_id, now)

    log, liveness = FinishingFirst(), FakeLiveness()
    slow = start(log, "slow", None)
    assert close_abandoned(log, liveness, T0 + STALE_AFTER + timedelta(minutes=1)) == []
    assert log.get(slow).status is DeliberationStatus.DONE  # type: ignore[union-attr]
