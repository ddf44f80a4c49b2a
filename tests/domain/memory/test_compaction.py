"""Compaction: validated before writing, pinned lessons kept, the previous version kept for rollback."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import LLMUnavailableError
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.format import parse
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.models import Persona
from nightwatch.domain.recall.ranking import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer")
KEY = ("priya", "p")


def _file(count: int, pinned: tuple[int, ...] = ()) -> str:
    lines = [
        f"- {'📌 ' if n in pinned else ''}Test suite{n} covers edge case {n} in module_{n}.py." for n in range(count)
    ]
    head = "# Priya · memory for p\nHand notes stay.\n\n## 2026-10-01 · pr_review · https://x/1\n"
    return head + "\n".join(lines) + "\n"


def setup(
    text: str, llm: ScriptedLLM, target: int = 5, max_lines: int = 150
) -> tuple[MemoryService, InMemoryMemoryStore]:
    store = InMemoryMemoryStore()
    store.files[KEY] = text
    policy = MemoryPolicy(compaction_target=target, max_lines=max_lines, use_model_for_curation=False)
    return MemoryService(store=store, llm=llm, clock=FakeClock(), recall=Recall(), policy=policy), store


def test_compaction_success_keeps_kept_lessons_in_place_and_adds_condensed_ones() -> None:
    answer = "- Test suite1 covers edge case 1 in module_1.py.\n- Suites 2-9 all cover module edge cases; keep them."
    llm = ScriptedLLM().script(Purpose.COMPACTION, answer)
    memory, store = setup(_file(10), llm)
    result = memory.compact(PRIYA, "p")
    assert result.compacted, result.message
    assert result.lines_after < result.lines_before
    text = store.files[KEY]
    assert "Hand notes stay." in text
    assert "## 2026-10-01 · pr_review · https://x/1\n- Test suite1 covers edge case 1 in module_1.py.\n" in text
    assert "## 2026-11-21 · compaction\n- Suites 2-9 all cover module edge cases; keep them." in text
    assert len(memory.lessons(PRIYA, "p")) == 2
    assert store.previous[KEY] == _file(10)
    request = llm.calls(Purpose.COMPACTION)[0]
    assert "at most 5 lessons" in request.system.text
    assert "QA engineer" in request.system.text


def test_pinned_lessons_dropped_by_the_model_are_re_added() -> None:
    llm = ScriptedLLM().script(Purpose.COMPACTION, "- One condensed lesson about the whole suite.")
    memory, _store = setup(_file(10, pinned=(3, 7)), llm)
    result = memory.compact(PRIYA, "p")
    assert result.compacted
    assert "re-added 2 pinned" in result.message
    live = memory.lessons(PRIYA, "p")
    assert {lesson.text for lesson in live if lesson.pinned} == {
        "Test suite3 covers edge case 3 in module_3.py.",
        "Test suite7 covers edge case 7 in module_7.py.",
    }
    assert len(live) == 3


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I would rather not.",
        "\n".join(f"- condensed lesson number {n} on topic{n}" for n in range(6)),  # over the target of 5
        LLMUnavailableError("overloaded"),
    ],
)
def test_invalid_compaction_keeps_the_file_as_it_was(reply: str | Exception) -> None:
    llm = ScriptedLLM().script(Purpose.COMPACTION, reply)
    memory, store = setup(_file(10), llm)
    result = memory.compact(PRIYA, "p")
    assert not result.compacted
    assert result.message.startswith("Memory left as it was")
    assert store.files[KEY] == _file(10)
    assert KEY not in store.previous
    assert result.lines_before == result.lines_after


def test_rollback_restores_the_previous_version() -> None:
    llm = ScriptedLLM().script(Purpose.COMPACTION, "- One condensed lesson about the whole suite.")
    memory, store = setup(_file(10), llm)
    assert memory.compact(PRIYA, "p").compacted
    assert memory.rollback(PRIYA, "p") is True
    assert store.files[KEY] == _file(10)
    assert memory.rollback(PRIYA, "p") is False


def test_nothing_to_compact_within_the_target() -> None:
    memory, store = setup(_file(3), ScriptedLLM())
    result = memory.compact(PRIYA, "p")
    assert not result.compacted
    assert "nothing to compact" in result.message
    assert store.files[KEY] == _file(3)


def test_a_lesson_written_during_compaction_is_not_lost() -> None:
    store_ref: list[MemoryService] = []

    def answer_while_someone_writes(request: LLMRequest) -> str:
        store_ref[0].remember(PRIYA, "p", "Flaky login test depends on the wall clock.")
        return "- One condensed lesson about the whole suite."

    llm = ScriptedLLM().script(Purpose.COMPACTION, answer_while_someone_writes)
    memory, _store = setup(_file(10), llm)
    store_ref.append(memory)
    result = memory.compact(PRIYA, "p")
    assert result.compacted
    texts = {lesson.text for lesson in memory.lessons(PRIYA, "p")}
    assert texts == {"One condensed lesson about the whole suite.", "Flaky login test depends on the wall clock."}


def test_reflection_past_the_line_limit_compacts_to_the_target() -> None:
    llm = ScriptedLLM().script(Purpose.REFLECTION, "- Snapshot tests break when fixture dates roll over.")
    llm.script(Purpose.COMPACTION, "\n".join(f"- Kept lesson {n} about area{n}." for n in range(5)))
    memory, store = setup(_file(20), llm, target=5, max_lines=20)
    context = ReflectionContext(kind="incident", topic="nightly failure", summary="fixtures expired")
    [found] = memory.reflect(PRIYA, "p", context)
    recorded = found.lesson
    assert recorded.text == "Snapshot tests break when fixture dates roll over."
    assert len(llm.calls(Purpose.COMPACTION)) == 1
    assert len(memory.lessons(PRIYA, "p")) == 5
    assert parse(store.previous[KEY]).live()[-1].text == recorded.text


def test_compaction_trims_history_to_the_target() -> None:
    marker = "<!-- superseded-by:abcdabcd on:2026-01-01 -->"
    history = "\n".join(f"- ~~Old rule {n} for area{n}~~ {marker}" for n in range(9))
    llm = ScriptedLLM().script(Purpose.COMPACTION, "- One condensed lesson about the whole suite.")
    memory, _store = setup(_file(10) + "\n## Superseded\n" + history + "\n", llm)
    assert memory.compact(PRIYA, "p").compacted
    kept = [lesson.text for lesson in memory.history(PRIYA, "p")]
    assert kept == [f"Old rule {n} for area{n}" for n in range(4, 9)]


class _FailingReplaceStore(InMemoryMemoryStore):
    def replace_keeping_previous(self, persona_slug: str, project_slug: str, expected: str, text: str) -> bool:
        from nightwatch.domain.errors import StorageError

        raise StorageError("disk full")


def test_a_failed_compaction_after_reflection_keeps_the_recorded_lessons(caplog: pytest.LogCaptureFixture) -> None:
    llm = ScriptedLLM().script(Purpose.REFLECTION, "- Snapshot tests break when fixture dates roll over.")
    llm.script(Purpose.COMPACTION, "- One condensed lesson about the whole suite.")
    store = _FailingReplaceStore()
    store.files[KEY] = _file(20)
    policy = MemoryPolicy(compaction_target=5, max_lines=20, use_model_for_curation=False)
    memory = MemoryService(store=store, llm=llm, clock=FakeClock(), recall=Recall(), policy=policy)
    context = ReflectionContext(kind="incident", topic="nightly failure", summary="fixtures expired")
    [recorded] = memory.reflect(PRIYA, "p", context)
    assert recorded.lesson in memory.lessons(PRIYA, "p")
    assert len(memory.lessons(PRIYA, "p")) == 21
    assert "Could not compact" in caplog.text
