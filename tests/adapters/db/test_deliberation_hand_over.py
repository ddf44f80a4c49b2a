"""Handing a lease over on the real deliberation log, asking who holds it, and the lead's stored request for changes.

Runs on SQLite and, with DATABASE_URL pointing at it, on PostgreSQL (where several replicas share one log).
"""

from __future__ import annotations

import threading

from sqlalchemy import Engine

from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.domain.deliberation.models import ChangesRequest, Decision, DeliberationStatus, Verdict
from tests.adapters.db.test_deliberation_leases import LATER, leased
from tests.fakes import T0, FakeClock

ME, THEM = "me/1/1", "them/2/2"


def test_release_hands_over_only_the_owners_running_leased_rows_in_its_threads(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    mine = leased(log, "C1:1.0", ME)
    other_thread = leased(log, "C1:2.0", ME)
    theirs = leased(log, "C1:1.0", THEM)
    done = leased(log, "C1:1.0", ME)
    log.finish(done.id or 0, DeliberationStatus.DONE, None, T0)
    assert log.release(ME, ["C1:1.0"]) == 1
    assert log.release(ME, []) == 0
    owners = {x.id: stored.owner for x in (mine, other_thread, theirs, done) if (stored := log.get(x.id or 0))}
    assert owners == {mine.id: None, other_thread.id: ME, theirs.id: THEM, done.id: ME}
    assert log.get(mine.id or 0).status is DeliberationStatus.RUNNING  # type: ignore[union-attr]


def test_holds_says_whether_the_owner_still_runs_it(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    row = leased(log, "C1:1.0", ME)
    assert log.holds(row.id or 0, ME)
    assert not log.holds(row.id or 0, THEM)
    log.release(ME, ["C1:1.0"])
    assert not log.holds(row.id or 0, ME)  # handed over: nobody holds it until a replica claims it
    assert not log.holds(9999, ME)


def test_a_handed_over_row_is_claimed_at_once_by_exactly_one_replica_and_not_counted(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    row = leased(log, "C1:1.0", ME)
    log.release(ME, ["C1:1.0"])
    results: list[object] = []
    barrier = threading.Barrier(3)

    def claim(owner: str) -> None:
        barrier.wait()
        results.append(log.claim(row.id or 0, holder=None, owner=owner, now=LATER, stale_before=None))

    threads = [threading.Thread(target=claim, args=(f"replica/{n}/1",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    [won] = [r for r in results if r is not None]
    stored = log.get(row.id or 0)
    assert stored == won
    assert stored is not None
    assert (stored.heartbeat_at, stored.takeovers) == (LATER, 0)


def test_the_leads_request_for_changes_is_stored_and_read_back(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    row = leased(log, "C1:1.0", ME)
    assert log.get(row.id or 0).changes is None  # type: ignore[union-attr]
    verdict = Verdict(Decision.CHANGES, "Cover token expiry.", ("No test for it.",), ("Priya: add the test.",))
    log.save_changes(row.id or 0, ChangesRequest(2, verdict))
    assert log.get(row.id or 0).changes == ChangesRequest(2, verdict)  # type: ignore[union-attr]
    later = Verdict(Decision.CHANGES, "Now the clock skew.", (), ())
    log.save_changes(row.id or 0, ChangesRequest(3, later))
    assert log.get(row.id or 0).changes == ChangesRequest(3, later)  # type: ignore[union-attr]


def test_a_secret_in_the_request_for_changes_is_redacted_before_it_is_stored(engine: Engine) -> None:
    log = SqlDeliberationLog(engine, clock=FakeClock())
    row = leased(log, "C1:1.0", ME)
    secret = "xoxb-" + "1234567890-abcdefghijklmnop"
    log.save_changes(row.id or 0, ChangesRequest(2, Verdict(Decision.CHANGES, f"Rotate {secret} first.")))
    stored = log.get(row.id or 0)
    assert stored is not None
    assert stored.changes is not None
    assert secret not in stored.changes.verdict.summary
