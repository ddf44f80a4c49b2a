"""Lessons from a long thread's older messages, taken once as the window summarises them away (extraction.py)."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest

from nightwatch.domain.deliberation.engine import DeliberationEngine, DeliberationPolicy
from nightwatch.domain.deliberation.models import DeliberationStatus
from nightwatch.domain.errors import LessonsPendingError
from nightwatch.domain.llm import Purpose
from nightwatch.domain.models import ThreadMessage
from nightwatch.domain.soul import SoulCompiler
from tests.domain.deliberation.cast import TEAM, FakeMemory, Voices, ask, stage, verdict_json
from tests.domain.knowing import reading
from tests.fakes import FakeLiveness, InMemoryPersonaRepository, RecordingPoster, ScriptedLLM

THREAD = "C1:1700000000.000100"
WINDOW = DeliberationPolicy(max_rounds=1, recent_messages=4)


def history(count: int) -> list[ThreadMessage]:
    return [ThreadMessage(author="alice", text=f"Earlier message number {i} about caching.") for i in range(count)]


def test_the_messages_summarised_away_are_learned_from_once_each() -> None:
    s = stage(policy=WINDOW)
    s.memory.extracted = {"carlos": ["Cache keys include the tenant id."], "maya": ["Never cache session tokens."]}
    poster = RecordingPoster(history(6))
    result = s.engine.run(ask("Maya, Priya, Dev: caching"), poster)

    # As in test_engine: the first summary covers 4 messages (alice's only), the second 7 (alice's two more, Maya's).
    first, second = s.memory.extractions
    assert (first[0], [m.text for m in first[2].messages]) == (
        "carlos",  # only a person wrote them: the lead learns
        [f"Earlier message number {i} about caching." for i in range(4)],
    )
    assert second[0] == "maya"  # Maya wrote one of them: she learns, in her own voice
    assert [m.author for m in second[2].messages] == ["alice", "alice", "Maya"]
    assert (first[1], first[2].kind, first[2].topic) == ("night-watch", "deliberation", "Maya, Priya, Dev: caching")
    assert s.log.extractions[THREAD] == 7
    notes = [(name, text) for name, _, _, text in poster.lessons]
    assert ("Carlos", "Cache keys include the tenant id.") in notes
    assert ("Maya", "Never cache session tokens.") in notes
    assert {(item.persona, item.lesson.text) for item in result.remembered} >= {
        ("Carlos", "Cache keys include the tenant id."),
        ("Maya", "Never cache session tokens."),
    }


def test_a_short_thread_learns_nothing_early() -> None:
    s = stage(policy=WINDOW)
    s.engine.run(ask("Maya: caching"), RecordingPoster(history(2)))
    assert s.memory.extractions == []
    assert THREAD not in s.log.extractions


def test_a_later_deliberation_in_the_thread_takes_only_what_was_summarised_since() -> None:
    s = stage(policy=WINDOW)
    s.log.save_summary(THREAD, 4, "Stored summary of the first four.")
    s.log.save_extracted(THREAD, 4)
    s.engine.run(ask("Maya: caching"), RecordingPoster(history(6)))
    assert s.llm.calls(Purpose.SUMMARY) == []
    assert s.memory.extractions == []  # the stored summary is reused and its messages were already learned from


def test_a_thread_summarised_before_extraction_existed_is_learned_from_at_its_next_turn() -> None:
    s = stage(policy=WINDOW)
    s.log.save_summary(THREAD, 4, "Stored summary of the first four.")
    s.engine.run(ask("Maya: caching"), RecordingPoster(history(6)))
    [(slug, _, discarded)] = s.memory.extractions
    assert (slug, len(discarded.messages)) == ("carlos", 4)
    assert s.log.extractions[THREAD] == 4


def test_a_replica_that_takes_over_does_not_learn_from_the_same_messages_again() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1, recent_messages=4))
    s.llm.script(Purpose.TURN, Voices(), Voices(), KilledError())
    poster = RecordingPoster(history(6))
    with contextlib.suppress(KilledError):
        s.engine.run(ask("Maya, Priya, Dev: caching", leased=True), poster)
    [(slug, _, discarded)] = s.memory.extractions  # the dead replica learned from the 4 messages it summarised
    assert (slug, len(discarded.messages), s.log.extractions[THREAD]) == ("carlos", 4, 4)
    [row] = s.log.deliberations.values()
    s.log.deliberations[row.id or 0] = replace(row, status=DeliberationStatus.RUNNING, finished_at=None)

    memory = FakeMemory()
    liveness = FakeLiveness("there/2/200")
    liveness.exited.add(row.owner or "")
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository(TEAM),
        memory=memory,
        compiler=SoulCompiler(),
        llm=ScriptedLLM({Purpose.TURN: Voices(), Purpose.CONSENSUS: verdict_json("APPROVE"), Purpose.SUMMARY: "S."}),
        log=s.log,
        clock=s.clock,
        policy=WINDOW,
        liveness=liveness,
        context=reading(memory),
    )
    claimed = engine.claim(engine.orphans()[0])
    assert claimed is not None
    engine.resume(claimed, ask("Maya, Priya, Dev: caching", leased=True), poster)
    # Only what was summarised after the takeover: alice's last two messages and Maya's turn, by Maya.
    [(slug, _, discarded)] = memory.extractions
    assert (slug, discarded.messages) == ("maya", tuple(poster.thread[4:7]))
    assert s.log.extractions[THREAD] == 7


def test_lessons_storage_refused_are_reported_in_the_thread_and_the_result() -> None:
    s = stage(policy=WINDOW)
    s.memory.refusing["carlos"] = LessonsPendingError(
        "Carlos's lesson could not be saved (disk full); it is kept and will be retried.",
        persona="Carlos",
        project="night-watch",
        count=1,
    )
    poster = RecordingPoster(history(6))
    result = s.engine.run(ask("Priya, Dev: caching"), poster)
    assert any("disk full" in notice for notice in poster.notices)
    assert any("disk full" in message for message in result.unsaved)
    assert result.deliberation.status is DeliberationStatus.DONE


def test_a_failing_log_never_fails_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    s = stage(policy=WINDOW)

    def broken(thread: str) -> int:
        raise RuntimeError("the database is gone")

    s.log.extracted = broken  # type: ignore[method-assign]
    result = s.engine.run(ask("Maya: caching"), RecordingPoster(history(6)))
    assert result.deliberation.status is DeliberationStatus.DONE
    assert s.memory.extractions == []
    assert "could not take lessons from the summarised messages" in caplog.text


class KilledError(BaseException):
    """The process went away mid-call."""
