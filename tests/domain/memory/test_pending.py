"""Lessons a storage fault keeps out of memory: kept with their interaction, retried in order, never dropped."""

from __future__ import annotations

import errno
from collections.abc import Callable
from datetime import date

import pytest

from nightwatch.domain.errors import LessonsPendingError, StorageError
from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.memory.writing import orphans
from nightwatch.domain.models import Persona
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.vectors import VectorTable
from tests.adapters.files.test_vectors import WordHashEmbedder
from tests.fakes import FakeClock, InMemoryMemoryStore, InMemoryPendingLessons, ScriptedLLM

MAYA = Persona(name="Maya", slug="maya", role="Security reviewer")
LINK = "https://example.slack.com/archives/C1/p1700000000"
CONTEXT = ReflectionContext(kind="deliberation", topic="Rotate the signing key?", summary="We agreed.", link=LINK)
LESSONS = (
    "- Signing keys rotate every ninety days, with the old key valid for one more day.\n"
    "- The key vault audit log must be checked after every rotation."
)


class FaultyStore(InMemoryMemoryStore):
    """An in-memory store whose writes (and optionally reads or vector saves) fail while `fault` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.fault: Exception | None = None
        self.reads_fail = False
        self.vectors_fail = False

    def read(self, persona_slug: str, project_slug: str) -> str:
        if self.fault is not None and self.reads_fail:
            raise self.fault
        return super().read(persona_slug, project_slug)

    def update(self, persona_slug: str, project_slug: str, change: Callable[[str], str]) -> str:
        if self.fault is not None:
            raise self.fault
        return super().update(persona_slug, project_slug, change)

    def save_vectors(
        self, persona_slug: str, project_slug: str, table: VectorTable, *, keep: frozenset[str] | None = None
    ) -> None:
        if self.vectors_fail:
            raise StorageError("agents/maya/memories/p/main.vectors in NIGHTWATCH_HOME is a symbolic link")
        super().save_vectors(persona_slug, project_slug, table, keep=keep)


FOLDER = StorageError(
    "agents/maya/memories/p/main.md in NIGHTWATCH_HOME is a folder where a file should be; "
    "move it out of the way, then try again."
)


def service(llm: ScriptedLLM | None = None) -> tuple[MemoryService, FaultyStore, InMemoryPendingLessons, FakeClock]:
    store, pending, clock = FaultyStore(), InMemoryPendingLessons(), FakeClock()
    policy = MemoryPolicy(use_model_for_curation=False)
    llm = llm or ScriptedLLM({Purpose.REFLECTION: LESSONS})
    memory = MemoryService(store=store, llm=llm, clock=clock, recall=Recall(), policy=policy, pending=pending)
    return memory, store, pending, clock


def texts(memory: MemoryService, project: str = "p") -> list[str]:
    return [lesson.text for lesson in memory.lessons(MAYA, project)]


def test_a_reflection_that_storage_refuses_is_kept_with_its_interaction_and_the_error() -> None:
    memory, store, pending, clock = service()
    store.fault = FOLDER
    with pytest.raises(LessonsPendingError) as caught:
        memory.reflect(MAYA, "p", CONTEXT)
    message = str(caught.value)
    assert message.startswith("Maya's lessons could not be saved (agents/maya/memories/p/main.md")
    assert message.endswith("they are kept and will be retried: `nightwatch memory retry`")
    assert (caught.value.persona, caught.value.project, caught.value.count) == ("Maya", "p", 2)
    assert [(row.persona, row.project, row.kind, row.link, row.day) for row in pending.rows] == [
        ("maya", "p", "deliberation", LINK, date(2026, 11, 21)),
    ] * 2
    assert [row.text for row in pending.rows] == texts_of(LESSONS)
    assert all("is a folder where a file should be" in row.error for row in pending.rows)
    assert all(row.kept_at == clock.now() for row in pending.rows)
    assert store.files == {}


def texts_of(answer: str) -> list[str]:
    return [line.removeprefix("- ") for line in answer.splitlines()]


def test_a_full_disk_is_kept_too_and_says_so() -> None:
    memory, store, pending, _ = service()
    store.fault = OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(LessonsPendingError, match="No space left on device"):
        memory.reflect(MAYA, "p", CONTEXT)
    assert len(pending.rows) == 2


def test_an_unreadable_memory_keeps_the_lessons_as_well() -> None:
    memory, store, pending, _ = service()
    store.fault, store.reads_fail = OSError(errno.EACCES, "Permission denied", "main.md"), True
    with pytest.raises(LessonsPendingError, match=r"the memory store failed \(main\.md\): Permission denied"):
        memory.reflect(MAYA, "p", CONTEXT)
    assert len(pending.rows) == 2


def test_a_retry_after_the_fault_is_fixed_writes_them_in_order_under_their_own_day() -> None:
    memory, store, pending, clock = service()
    store.fault = FOLDER
    with pytest.raises(LessonsPendingError):
        memory.reflect(MAYA, "p", CONTEXT)
    store.fault = None
    clock.advance(days=3)
    [report] = memory.retry(MAYA)
    assert (report.persona, report.project, report.written, report.waiting, report.error) == ("Maya", "p", 2, 0, "")
    assert texts(memory) == texts_of(LESSONS)
    assert f"## 2026-11-21 · deliberation · {LINK}" in store.files[("maya", "p")]
    assert pending.rows == []
    assert memory.retry(MAYA) == []


def test_a_retry_that_still_fails_keeps_everything_and_records_the_new_error() -> None:
    memory, store, pending, _ = service()
    store.fault = FOLDER
    with pytest.raises(LessonsPendingError):
        memory.reflect(MAYA, "p", CONTEXT)
    store.fault = OSError(errno.ENOSPC, "No space left on device")
    [report] = memory.retry(MAYA, "p")
    assert (report.written, report.waiting) == (0, 2)
    assert "No space left on device" in report.error
    assert [row.error for row in pending.rows] == [report.error] * 2


def test_the_next_successful_write_writes_the_kept_lessons_first() -> None:
    memory, store, pending, _ = service()
    store.fault = FOLDER
    with pytest.raises(LessonsPendingError):
        memory.remember(MAYA, "p", "Never log the session token.")
    with pytest.raises(LessonsPendingError, match=r"Maya.s lesson could not be saved .* it is kept"):
        memory.remember(MAYA, "p", "Admin endpoints need their own audit trail.")
    store.fault = None
    memory.remember(MAYA, "other", "Lessons of another project do not trigger this one's retry.")
    assert len(pending.rows) == 2
    memory.remember(MAYA, "p", "Secrets never go into thread replies.")
    assert texts(memory) == [
        "Never log the session token.",
        "Admin endpoints need their own audit trail.",
        "Secrets never go into thread replies.",
    ]
    assert pending.rows == []


def test_a_kept_lesson_that_restates_one_already_remembered_merges_into_it() -> None:
    memory, store, pending, _ = service()
    memory.remember(MAYA, "p", "Never log the session token.")
    store.fault = FOLDER
    with pytest.raises(LessonsPendingError):
        memory.remember(MAYA, "p", "never log the session token")
    store.fault = None
    memory.retry(MAYA)
    [lesson] = memory.lessons(MAYA, "p")
    assert lesson.seen == 2
    assert pending.rows == []


def test_when_keeping_fails_too_the_error_lists_the_lessons_to_add_by_hand() -> None:
    memory, store, pending, _ = service()
    store.fault, pending.broken = FOLDER, True
    with pytest.raises(StorageError) as caught:
        memory.reflect(MAYA, "p", CONTEXT)
    assert not isinstance(caught.value, LessonsPendingError)
    assert "keeping them for a retry failed too" in str(caught.value)
    assert all(text in str(caught.value) for text in texts_of(LESSONS))


def test_a_broken_pending_store_does_not_stop_a_healthy_write() -> None:
    memory, _, pending, _ = service()
    pending.broken = True
    memory.remember(MAYA, "p", "Never log the session token.")
    assert texts(memory) == ["Never log the session token."]


def test_vectors_that_cannot_be_stored_do_not_keep_lessons_that_were_written(caplog: pytest.LogCaptureFixture) -> None:
    store, pending = FaultyStore(), InMemoryPendingLessons()
    memory = MemoryService(
        store=store,
        llm=ScriptedLLM(),
        clock=FakeClock(),
        recall=Recall(encoder=WordHashEmbedder()),
        policy=MemoryPolicy(use_model_for_curation=False),
        pending=pending,
    )
    store.vectors_fail = True
    memory.remember(MAYA, "p", "Never log the session token.")
    assert [lesson.text for lesson in memory.lessons(MAYA, "p")] == ["Never log the session token."]
    assert pending.rows == []
    assert "main.vectors" in caplog.text


def test_lessons_of_a_persona_that_is_gone_are_reported_not_written() -> None:
    memory, store, pending, _ = service()
    store.fault = FOLDER
    with pytest.raises(LessonsPendingError):
        memory.reflect(MAYA, "p", CONTEXT)
    [report] = orphans(pending.waiting("maya"))
    assert (report.persona, report.project, report.written, report.waiting) == ("maya", "p", 0, 2)
    assert "agents/maya/memories/p/main.md" in report.error
    assert orphans(pending.waiting("maya"), "elsewhere") == []
